"""The entrypoint as the runner starts it: environment, file commands, event payloads, API.

A few runs start ``python -m gate.github`` as a subprocess with exactly the variables a
container step gets; the rest call :func:`gate.github.entrypoint.main` in-process with the
same environment (faster, and the client's sleeps can be injected).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gate.github.api import GitHubApi
from gate.github.inputs import Secret
from tests.conftest import EXAMPLES, ROOT
from tests.github.conftest import AUTH, Sleeps, assert_requests
from tests.github.contract import (
    HEAD_SHA,
    PUSH_SHA,
    REPOSITORY,
    TOKEN,
    input_env,
    parse_outputs,
    pull_request_event,
    push_event,
    runner_env,
    runner_folders,
    workflow_run_event,
)
from tests.github.fake_github import FakeGitHub
from tests.ingest.conftest import FIXTURES

pytest.importorskip("gate.pipeline")
from gate.github.entrypoint import OUTPUT_NAMES, evaluate, main

COMMENTS_7 = f"/repos/{REPOSITORY}/issues/7/comments"


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str
    summary: str
    outputs: dict[str, str]
    workspace: Path
    #: in-process runs: the comment body the action computed (what a POST must carry).
    comment_text: str | None = None

    def annotations(self, level: str) -> list[str]:
        return [line for line in self.stdout.splitlines() if line.startswith(f"::{level} ")]


def _example(name: str, workspace: Path) -> str:
    """Copy examples/<name> into the workspace; the results file's name."""
    source = EXAMPLES / name
    if source.is_dir():
        shutil.copytree(source, workspace)
        return next(p.name for p in sorted(source.iterdir()) if p.name.startswith("results"))
    # Before the lead's examples exist: a tiny native JSONL of the same kind.
    workspace.mkdir(parents=True)
    passing = name == "passing"
    records = [
        {"suite": "demo", "stimulus": f"s{s}", "trial": t, "passed": passing or (s + t) % 2 == 0}
        for s in range(3)
        for t in range(3)
    ]
    (workspace / "results.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    (workspace / ".eval-gate.yml").write_text("version: 1\ngates:\n  pass_hat_k: 0.8\n")
    return "results.jsonl"


class Harness:
    def __init__(self, root: Path, api_url: str) -> None:
        self.root = root
        self.api_url = api_url
        self.count = 0

    def prepare(
        self,
        example: str,
        *,
        event_name: str,
        event: dict[str, Any],
        inputs: dict[str, str] | None = None,
        token: str = TOKEN,
        sha: str = HEAD_SHA,
        files: dict[str, str | bytes] | None = None,
        summary_so_far: str = "",
    ) -> tuple[dict[str, str], Path, Path]:
        """``files``: more files for the workspace; ``summary_so_far``: what earlier steps
        already wrote to the step summary file."""
        self.count += 1
        folder = self.root / f"run{self.count}"
        workspace, commands, workflow = (folder / n for n in ("ws", "fc", "wf"))
        results = _example(example, workspace)
        for name, content in (files or {}).items():
            raw = content.encode("utf-8") if isinstance(content, str) else content
            (workspace / name).write_bytes(raw)
        runner_folders(commands, workflow, event)
        (commands / "step_summary").write_text(summary_so_far, encoding="utf-8")
        env = runner_env(
            workspace=str(workspace),
            file_commands=str(commands),
            workflow=str(workflow),
            event_name=event_name,
            api_url=self.api_url,
            sha=sha,
        )
        env.update(input_env({"results": results, **(inputs or {})}, token=token))
        return env, workspace, commands

    def collect(
        self, code: int, out: str, err: str, workspace: Path, commands: Path, token: str
    ) -> Run:
        run = Run(
            code,
            out,
            err,
            (commands / "step_summary").read_text(encoding="utf-8"),
            parse_outputs((commands / "set_output").read_text(encoding="utf-8")),
            workspace,
        )
        for text in (out, err, run.summary, json.dumps(run.outputs)):
            assert token not in text
        return run

    def subprocess(self, example: str, **kwargs: Any) -> Run:
        env, workspace, commands = self.prepare(example, **kwargs)
        keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "SYSTEMROOT")}
        # -s -P and an explicit PYTHONPATH: the checkout under test, not whichever one the
        # environment's editable install points to, and nothing from the user's site or cwd.
        result = subprocess.run(
            [sys.executable, "-s", "-P", "-m", "gate.github"],
            cwd=workspace,
            env={**keep, **env, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        token = kwargs.get("token", TOKEN)
        return self.collect(
            result.returncode, result.stdout, result.stderr, workspace, commands, token
        )

    def in_process(
        self, example: str, monkeypatch: pytest.MonkeyPatch, sleeps: Sleeps, **kwargs: Any
    ) -> Run:
        env, workspace, commands = self.prepare(example, **kwargs)
        token = kwargs.get("token", TOKEN)
        monkeypatch.chdir(workspace)
        out, err = io.StringIO(), io.StringIO()
        api = GitHubApi(self.api_url, Secret(token), sleep=sleeps, timeout=5)
        code = main(env, stdout=out, stderr=err, api=api)
        run = self.collect(code, out.getvalue(), err.getvalue(), workspace, commands, token)
        computed = evaluate(env, write_report=False).comment
        run.comment_text = computed.text if computed else None
        return run


@pytest.fixture
def harness(tmp_path: Path, fake_github: FakeGitHub) -> Harness:
    fake_github.add_pull(7, head_sha=HEAD_SHA)
    fake_github.add_pull(8, head_sha=PUSH_SHA, head_ref="other")
    return Harness(tmp_path, fake_github.url)


def test_pull_request_failing_gates(harness: Harness, fake_github: FakeGitHub) -> None:
    run = harness.subprocess("failing", event_name="pull_request", event=pull_request_event(7))
    assert run.exit_code == 1, run.stderr
    assert run.summary.startswith("## ❌ eval-gate: FAIL")
    assert set(run.outputs) == set(OUTPUT_NAMES)
    assert run.outputs["verdict"] == "fail"
    assert run.outputs["report"] == "eval-gate-report.json"
    report = json.loads((run.workspace / "eval-gate-report.json").read_text())
    assert report["verdict"] == "fail"
    assert int(run.outputs["failed_gates"]) >= 1
    assert run.annotations("error")[0].startswith("::error title=eval-gate%3A gate failed%3A ")
    posts = [r for r in fake_github.requests if r.method == "POST"]
    assert [p.path for p in posts] == [COMMENTS_7]
    assert posts[0].headers["authorization"] == f"Bearer {TOKEN}"
    comment = fake_github.comments[7][0]
    assert comment["body"].startswith("<!-- eval-gate:sticky id=default digest=")
    assert "## ❌ eval-gate: FAIL" in comment["body"]
    assert "/octo-org/agent-evals/actions/runs/4242" in comment["body"]
    assert run.outputs["comment_url"] == comment["html_url"]
    # The action's log tallies the gates in the words of check's last line (wording.gate_tally).
    assert "eval-gate: FAIL (1 failed, 0 inconclusive, of 3 gates)\n" in run.stderr
    assert "as native (detected)" in run.stdout + run.stderr  # the log says what it detected


def test_push_with_passing_results_comments_on_the_open_pr(
    harness: Harness, fake_github: FakeGitHub
) -> None:
    run = harness.subprocess("passing", event_name="push", event=push_event(), sha=PUSH_SHA)
    assert run.exit_code == 0, run.stderr
    assert run.outputs["verdict"] == "pass"
    assert run.summary.startswith("## ✅ eval-gate: PASS")
    assert run.annotations("error") == []
    # examples/passing gates cost and p95 duration too: their values are action outputs.
    metrics = json.loads(run.outputs["metrics"])
    assert set(metrics) == {"cost_usd.mean_per_trial", "duration_s.p95"}
    assert metrics["cost_usd.mean_per_trial"] == pytest.approx(0.3575 / 30, abs=1e-6)  # by hand
    assert (f"/repos/{REPOSITORY}/commits/{PUSH_SHA}/pulls") in [
        r.route for r in fake_github.requests
    ]
    assert len(fake_github.comments[8]) == 1


def test_workflow_run_for_a_fork_comments_on_the_fork_pr(
    harness: Harness, fake_github: FakeGitHub
) -> None:
    fake_github.add_pull(12, head_sha=HEAD_SHA, head_ref="feature", head_repo="fork-owner/x")
    run = harness.subprocess("failing", event_name="workflow_run", event=workflow_run_event())
    assert run.exit_code == 1, run.stderr
    report = json.loads((run.workspace / "eval-gate-report.json").read_text())
    suite = report["suite"]
    # Summary: the verdict first, the numbers of the report, no comment notice.
    assert run.summary.startswith("## ❌ eval-gate: FAIL")
    assert f"{suite['stimuli']} stimuli · {suite['trials']} trials" in run.summary
    assert "could not" not in run.summary
    # Outputs: every one, from the same outcome as the report, and the comment's URL.
    comment = fake_github.comments[12][0]
    failed = [g for g in report["gates"] if not g["passed"]]
    numbers = ("pass_rate", "pass_at_k", "pass_hat_k")
    assert {name: float(run.outputs[name]) for name in numbers} == {
        name: pytest.approx(suite[name], abs=1e-6) for name in numbers
    }
    assert {name: value for name, value in run.outputs.items() if name not in numbers} == {
        "verdict": "fail",
        "report": "eval-gate-report.json",
        "k": str(suite["k"]),
        "stimuli": str(suite["stimuli"]),
        "trials": str(suite["trials"]),
        "flaky_stimuli": str(suite["flaky_stimuli"]),
        "failed_gates": str(len(failed)),
        "inconclusive_gates": "0",
        "metrics": "{}",
        "comment_url": comment["html_url"],
    }
    # Annotations: one error per failed gate, one warning per stimulus that never passed (at
    # the line of its first failed trial) and per flaky stimulus, nothing else.
    errors, warnings = run.annotations("error"), run.annotations("warning")
    assert len(errors) == len(failed) >= 1
    assert all(e.startswith("::error title=eval-gate%3A gate failed%3A ") for e in errors)
    never = [s for s in report["stimuli"] if s["passes"] == 0]
    assert len(warnings) == len(never) + suite["flaky_stimuli"] >= 2
    assert warnings[0].startswith(
        "::warning file=results.jsonl,line=5,title=eval-gate%3A failing stimulus "
        "Fix off-by-one in paginator::Fix off-by-one in paginator: 0/3 trials passed; first: "
        "trial 0 failed (results.jsonl:5): test_last_page: expected 10 items, got 9"
    )
    flaky = warnings[len(never) :]
    assert all(w.startswith("::warning file=results.jsonl,line=") for w in flaky)
    assert all("title=eval-gate%3A flaky stimulus " in w for w in flaky)
    assert len(run.stdout.splitlines()) == len(errors) + len(warnings)
    # The fork's PR is found by its head branch, then commented on, with the token.
    auth = f"Bearer {TOKEN}"
    comments_12 = f"/repos/{REPOSITORY}/issues/12/comments"
    assert_requests(
        fake_github,
        [
            (
                "GET",
                f"/repos/{REPOSITORY}/pulls?per_page=100&state=open&head=fork-owner%3Afeature",
                None,
                auth,
            ),
            ("GET", "/user", None, auth),
            ("GET", f"{comments_12}?per_page=100", None, auth),
            ("POST", comments_12, {"body": comment["body"]}, auth),
        ],
    )
    assert comment["body"].startswith("<!-- eval-gate:sticky id=default digest=")
    assert "## ❌ eval-gate: FAIL" in comment["body"]
    assert "eval-gate: FAIL" in run.stderr and "exit code 1" in run.stderr


def test_bad_input_is_exit_code_2_with_an_error_annotation(harness: Harness) -> None:
    run = harness.subprocess(
        "failing",
        event_name="pull_request",
        event=pull_request_event(7),
        inputs={"results": "missing/*.jsonl"},
    )
    assert run.exit_code == 2
    assert run.outputs["verdict"] == "error"
    assert run.summary.startswith("## ⚠️ eval-gate: ERROR")
    assert "missing\\/\\*\\.jsonl" in run.summary  # the message, escaped
    assert run.annotations("error")[0].startswith("::error title=eval-gate%3A bad input")


def test_an_error_replaces_the_verdict_an_earlier_commit_left_in_the_comment(
    harness: Harness, fake_github: FakeGitHub
) -> None:
    """An error posted no comment, so the pull request kept showing an earlier commit's PASS
    as if it were this one's."""
    event = pull_request_event(7)
    passed = harness.subprocess("passing", event_name="pull_request", event=event)
    assert passed.exit_code == 0 and "## ✅ eval-gate: PASS" in fake_github.comments[7][0]["body"]
    broken = {"results": "missing/*.jsonl"}
    run = harness.subprocess("passing", event_name="pull_request", event=event, inputs=broken)
    assert run.exit_code == 2
    (comment,) = fake_github.comments[7]  # the same sticky comment, updated in place
    assert comment["body"].startswith("<!-- eval-gate:sticky id=default digest=")
    assert "## ⚠️ eval-gate: ERROR — bad input or configuration" in comment["body"]
    assert "missing\\/\\*\\.jsonl" in comment["body"] and "PASS" not in comment["body"]
    assert run.outputs["comment_url"] == comment["html_url"]


def test_a_read_only_token_still_exits_with_the_gates_verdict(
    harness: Harness, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, sleeps: Sleeps
) -> None:
    fake_github.read_only.add(TOKEN)
    run = harness.in_process(
        "failing",
        monkeypatch,
        sleeps,
        event_name="pull_request",
        event=pull_request_event(7, fork=True),
    )
    assert run.exit_code == 1
    assert "could not comment on pull request 7" in run.summary
    assert "`permissions: pull-requests: write`" in run.summary
    assert any("no PR comment" in line for line in run.annotations("warning"))
    assert run.outputs["comment_url"] == ""
    assert_requests(
        fake_github,
        [
            ("GET", "/user", None, AUTH),
            ("GET", f"{COMMENTS_7}?per_page=100", None, AUTH),
            ("POST", COMMENTS_7, {"body": run.comment_text}, AUTH),  # 403, not retried
        ],
    )


def test_an_api_that_keeps_failing_never_changes_the_verdict(
    harness: Harness, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, sleeps: Sleeps
) -> None:
    fake_github.fail("GET", COMMENTS_7, 500, times=100)
    run = harness.in_process(
        "passing", monkeypatch, sleeps, event_name="pull_request", event=pull_request_event(7)
    )
    assert run.exit_code == 0
    assert "could not post its pull request comment" in run.summary
    assert len(sleeps) == 3 and all(s <= 60 for s in sleeps)


def test_5xx_then_success_posts_the_comment(
    harness: Harness, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, sleeps: Sleeps
) -> None:
    fake_github.fail("GET", COMMENTS_7, 503, times=1)
    run = harness.in_process(
        "failing", monkeypatch, sleeps, event_name="pull_request", event=pull_request_event(7)
    )
    assert run.exit_code == 1
    assert len(fake_github.comments[7]) == 1 and sleeps == [1.0]
    assert "could not" not in run.summary
    assert_requests(
        fake_github,
        [
            ("GET", "/user", None, AUTH),
            ("GET", f"{COMMENTS_7}?per_page=100", None, AUTH),  # 503
            ("GET", f"{COMMENTS_7}?per_page=100", None, AUTH),
            ("POST", COMMENTS_7, {"body": run.comment_text}, AUTH),
        ],
    )
    assert fake_github.comments[7][0]["body"] == run.comment_text


@pytest.mark.parametrize(
    ("fail_on", "example", "expected"),
    [("errors", "failing", 0), ("never", "failing", 0), ("gates", "passing", 0)],
)
def test_fail_on_softens_the_exit_code(
    harness: Harness,
    monkeypatch: pytest.MonkeyPatch,
    sleeps: Sleeps,
    fail_on: str,
    example: str,
    expected: int,
) -> None:
    run = harness.in_process(
        example,
        monkeypatch,
        sleeps,
        event_name="pull_request",
        event=pull_request_event(7),
        inputs={"fail_on": fail_on, "comment": "off"},
    )
    assert run.exit_code == expected
    # A green step under a red summary was left unexplained.
    heading, note = run.summary.split("\n\n")[:2]
    if example == "failing":
        meaning = {"errors": "fails the step only on bad input"}.get(fail_on, "reports without")
        assert heading.startswith("## ❌ eval-gate: FAIL")
        assert note.startswith(f"The step's exit code is 0, not 1: fail_on: {fail_on} {meaning}")
        assert note in (run.comment_text or "")
    else:
        assert "exit code" not in run.summary


def test_summary_false_and_comment_off_publish_nothing_but_outputs(
    harness: Harness, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, sleeps: Sleeps
) -> None:
    run = harness.in_process(
        "failing",
        monkeypatch,
        sleeps,
        event_name="pull_request",
        event=pull_request_event(7),
        inputs={"summary": "false", "comment": "off"},
    )
    assert run.summary == "" and fake_github.requests == []
    assert run.outputs["verdict"] == "fail" and run.exit_code == 1


def test_inputs_override_the_gates(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, sleeps: Sleeps
) -> None:
    run = harness.in_process(
        "failing",
        monkeypatch,
        sleeps,
        event_name="pull_request",
        event=pull_request_event(7),
        inputs={"min_pass_hat_k": "0.1", "comment": "off"},
    )
    report = json.loads((run.workspace / "eval-gate-report.json").read_text())
    hat_gates = [g for g in report["gates"] if g["kind"] == "pass_hat_k"]
    assert hat_gates and all(g["target"] == 0.1 for g in hat_gates)


def test_a_schedule_run_makes_no_comment(
    harness: Harness, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, sleeps: Sleeps
) -> None:
    run = harness.in_process("failing", monkeypatch, sleeps, event_name="schedule", event={})
    assert run.exit_code == 1 and fake_github.writes() == []
    assert "no open pull request" in run.stderr


# -- notices survive trimming and the annotation cap ------------------------------------------


def test_the_no_comment_notice_is_under_the_verdict_and_survives_trimming(
    harness: Harness, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, sleeps: Sleeps
) -> None:
    fake_github.read_only.add(TOKEN)
    # Earlier steps left about 2.5 KiB of the 1 MiB, the limit less the 1 KiB kept for
    # later steps: less than this summary (with the notice) needs, so it must be cut short.
    earlier = "earlier step output\n" * ((1024 * 1024 - 1024 - 1500) // 20)
    run = harness.in_process(
        "failing",
        monkeypatch,
        sleeps,
        event_name="pull_request",
        event=pull_request_event(7, fork=True),
        summary_so_far=earlier,
    )
    assert run.exit_code == 1
    assert len(run.summary.encode("utf-8")) <= 1024 * 1024
    ours = run.summary[len(earlier) :]
    assert "trimmed to fit GitHub's 1 MiB limit" in ours
    assert "### Stimuli, worst first" not in ours  # the end of the report was cut ...
    verdict, blank, notice = ours.split("\n")[:3]
    assert verdict.startswith("## ❌ eval-gate: FAIL") and blank == ""
    assert notice == "> [!NOTE]"  # ... but not the notice right under the verdict
    assert "could not comment on pull request 7" in ours
    assert "`permissions: pull-requests: write`" in ours


#: A gate every run passes: these tests are about reading and publishing, not verdicts
#: (without any gate the default one would decide, and few trials leave it inconclusive).
READER_ONLY = "version: 1\ngates:\n  pass_rate: 0.0\n"


def _many_flaky(stimuli: int) -> str:
    records = [
        {"suite": "s", "stimulus": f"flaky-{i:02d}", "trial": t, "passed": t != 1}
        for i in range(stimuli)
        for t in range(3)
    ]
    return "\n".join(json.dumps(r) for r in records) + "\n"


def test_the_no_comment_warning_is_ranked_before_the_annotation_cap(
    harness: Harness, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, sleeps: Sleeps
) -> None:
    fake_github.read_only.add(TOKEN)
    run = harness.in_process(
        "passing",
        monkeypatch,
        sleeps,
        event_name="pull_request",
        event=pull_request_event(7, fork=True),
        files={"many.jsonl": _many_flaky(14), "gate.yml": READER_ONLY},
        inputs={"results": "many.jsonl", "config": "gate.yml"},
    )
    assert run.exit_code == 0 and run.outputs["flaky_stimuli"] == "14"
    warnings = run.annotations("warning")
    assert len(warnings) == 10  # the cap
    assert warnings[0].startswith("::warning title=eval-gate%3A no PR comment::comment not perm")
    assert all("flaky stimulus flaky-" in w for w in warnings[1:])
    # 14 flaky stimuli + the comment warning = 15 warnings: 5 counted in one notice.
    assert run.annotations("notice") == [
        "::notice title=eval-gate%3A more annotations::5 more warning(s) not shown as "
        "annotations: see the job summary and the JSON report."
    ]


def test_a_token_in_a_name_shows_nowhere_even_cut(
    harness: Harness, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, sleeps: Sleeps
) -> None:
    """Found by tests/hostile/mutate.py --publish: a name holding the token is cut where it
    is shown (a chart label's 32 characters, a table cell's 200), and the part left showed
    in the job summary and the comment, where no whole form of the token matched."""
    names = [f"x{TOKEN}y", "b" * 190 + TOKEN]
    records = [
        {"suite": "s", "stimulus": name, "trial": t, "passed": t == 0, "message": name}
        for name in names
        for t in range(3)
    ]
    run = harness.in_process(
        "passing",
        monkeypatch,
        sleeps,
        event_name="pull_request",
        event=pull_request_event(7),
        files={
            "named.jsonl": "".join(json.dumps(r) + "\n" for r in records),
            "gate.yml": READER_ONLY,
        },
        inputs={"results": "named.jsonl", "config": "gate.yml"},
    )
    assert run.exit_code == 0
    report = (run.workspace / "eval-gate-report.json").read_text(encoding="utf-8")
    comment = fake_github.comments[7][0]["body"]
    assert "xychart-beta" in run.summary and "…" in run.summary  # labels and cells were cut
    for text in (run.stdout, run.stderr, run.summary, comment, report):
        assert TOKEN[:8] not in text and TOKEN[-8:] not in text
        assert TOKEN[:8].replace("_", "\\_") not in text  # as Markdown escapes it


# -- an input's bad value is blamed on the input ----------------------------------------------


@pytest.mark.parametrize(
    ("name", "value", "rest"),
    [
        ("threshold", "2", "gate threshold"),
        ("max_flakiness", "200", "gate max_flakiness"),
        ("k", "x", "expected an integer, found 'x'"),
        ("interval", "fancy", "value not allowed"),
        ("confidence", "2", ""),
    ],
)
def test_a_bad_input_value_names_the_input_not_the_config_file(
    harness: Harness,
    monkeypatch: pytest.MonkeyPatch,
    sleeps: Sleeps,
    name: str,
    value: str,
    rest: str,
) -> None:
    run = harness.in_process(
        "failing",
        monkeypatch,
        sleeps,
        event_name="pull_request",
        event=pull_request_event(7),
        inputs={name: value, "comment": "off"},
    )
    assert (run.workspace / ".eval-gate.yml").is_file()  # the file it used to be blamed on
    assert run.exit_code == 2 and run.outputs["verdict"] == "error"
    errors = run.annotations("error")
    prefix = f"::error title=eval-gate%3A bad input or configuration::input {name}: {rest}"
    assert len(errors) == 1 and errors[0].startswith(prefix), errors
    assert ".eval-gate.yml" not in errors[0]
    assert "input " + name.replace("_", "\\_") in run.summary  # Markdown-escaped


def test_a_bad_config_file_is_still_blamed_on_the_file(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, sleeps: Sleeps
) -> None:
    run = harness.in_process(
        "failing",
        monkeypatch,
        sleeps,
        event_name="pull_request",
        event=pull_request_event(7),
        files={".eval-gate.yml": "version: 1\ngates:\n  threshold: 2\n"},
        inputs={"min_pass_rate": "0.5", "comment": "off"},
    )
    assert run.exit_code == 2
    errors = run.annotations("error")
    assert len(errors) == 1
    assert errors[0].startswith(
        "::error title=eval-gate%3A bad input or configuration::.eval-gate.yml: gate threshold"
    )


# -- the reader inputs reach the readers -------------------------------------------------------


def _stimuli(run: Run) -> dict[tuple[str, str], tuple[int, int]]:
    report = json.loads((run.workspace / "eval-gate-report.json").read_text())
    return {(s["suite"], s["name"]): (s["trials"], s["passes"]) for s in report["stimuli"]}


def _reader_run(
    harness: Harness,
    monkeypatch: pytest.MonkeyPatch,
    sleeps: Sleeps,
    fixture: Path,
    inputs: dict[str, str],
) -> Run:
    return harness.in_process(
        "passing",
        monkeypatch,
        sleeps,
        event_name="pull_request",
        event=pull_request_event(7),
        files={fixture.name: fixture.read_bytes(), "gate.yml": READER_ONLY},
        inputs={"results": fixture.name, "config": "gate.yml", "comment": "off", **inputs},
    )


def test_input_map_names_the_columns_of_a_csv(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, sleeps: Sleeps
) -> None:
    csv_file = FIXTURES / "tabular" / "runs.csv"
    unmapped = _reader_run(harness, monkeypatch, sleeps, csv_file, {})
    assert unmapped.exit_code == 2 and "no stimulus column" in unmapped.annotations("error")[0]
    mapping = "stimulus=case_id, trial=run, passed=ok,\nscore=quality, status=state"
    run = _reader_run(harness, monkeypatch, sleeps, csv_file, {"map": mapping})
    assert run.exit_code == 0, run.stdout
    assert _stimuli(run) == {
        ("default", "refund-policy"): (3, 2),
        ("default", "cancel, then rebook"): (3, 1),
        ("default", "greeting"): (2, 2),  # and one skipped trial, which never counts
    }


def test_input_pass_threshold_and_suite_reach_the_tau_bench_reader(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, sleeps: Sleeps, tmp_path: Path
) -> None:
    runs = [
        {"task_id": 0, "trial": 0, "reward": 0.75},
        {"task_id": 0, "trial": 1, "reward": 1.0},
        {"task_id": 1, "trial": 0, "reward": 0.5},
    ]
    results = tmp_path / "tau.json"
    results.write_text(json.dumps(runs))
    default = _reader_run(harness, monkeypatch, sleeps, results, {})
    assert _stimuli(default) == {("default", "0"): (2, 1), ("default", "1"): (1, 0)}
    lenient = _reader_run(
        harness, monkeypatch, sleeps, results, {"pass_threshold": "0.7", "suite": "airline"}
    )
    assert _stimuli(lenient) == {("airline", "0"): (2, 2), ("airline", "1"): (1, 0)}


def test_input_scorer_chooses_the_inspect_scorer(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, sleeps: Sleeps
) -> None:
    log = FIXTURES / "inspect" / "mock_reliability.eval"
    headline = _reader_run(harness, monkeypatch, sleeps, log, {})
    assert _stimuli(headline)[("mock_reliability", "flaky")] == (4, 2)  # 'match': C/I
    graded = _reader_run(
        harness, monkeypatch, sleeps, log, {"scorer": "grade", "pass_threshold": "0.5"}
    )
    assert _stimuli(graded)[("mock_reliability", "flaky")] == (4, 4)  # 'grade': C/P ≥ 0.5
    unknown = _reader_run(harness, monkeypatch, sleeps, log, {"scorer": "accuracy"})
    assert unknown.exit_code == 2 and "no scorer 'accuracy'" in unknown.annotations("error")[0]


def test_input_junit_flakefinder_groups_the_runs(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, sleeps: Sleeps
) -> None:
    xml = FIXTURES / "junit" / "pytest-flake.xml"
    plain = _stimuli(_reader_run(harness, monkeypatch, sleeps, xml, {}))
    literal = {name: counts for (_, name), counts in plain.items()}
    assert literal["test_sample::test_ok[0]"] == (1, 1) and "test_sample::test_ok" not in literal
    runs = _stimuli(_reader_run(harness, monkeypatch, sleeps, xml, {"junit_flakefinder": "true"}))
    by_name = {name: counts for (_, name), counts in runs.items()}
    assert by_name["test_sample::test_ok"] == (3, 3)
    assert by_name["test_sample::test_flaky"] == (3, 2)
