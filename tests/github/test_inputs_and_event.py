"""Inputs read by the runner's rules; the PR found from each event's payload."""

from __future__ import annotations

from pathlib import Path

import pytest

from gate.config import OVERRIDE_NAMES
from gate.github.api import GitHubApi
from gate.github.event import (
    PullRequest,
    RunContext,
    context_from_env,
    find_pull_request,
)
from gate.github.inputs import ActionInputError, env_name, read_inputs
from tests.github.contract import (
    HEAD_SHA,
    PUSH_SHA,
    REPOSITORY,
    TOKEN,
    input_env,
    pull_request_event,
    push_event,
    workflow_run_event,
    write_event,
)
from tests.github.fake_github import FakeGitHub


def test_env_name_follows_the_runner() -> None:
    assert env_name("comment_id") == "INPUT_COMMENT_ID"
    assert env_name("my input") == "INPUT_MY_INPUT"
    assert env_name("my-input") == "INPUT_MY-INPUT"  # unreadable from a shell: why snake_case


def test_defaults_as_the_runner_passes_them() -> None:
    inputs = read_inputs(input_env({"results": "a.jsonl"}))
    assert inputs.results == ("a.jsonl",)
    assert inputs.config is None and inputs.baseline == ()
    assert inputs.overrides == dict.fromkeys(OVERRIDE_NAMES)
    assert (inputs.comment, inputs.comment_id, inputs.fail_on) == ("always", "default", "gates")
    assert inputs.summary is True and inputs.report == "eval-gate-report.json"
    assert inputs.github_token.reveal() == TOKEN
    assert (inputs.format, inputs.map, inputs.pass_threshold) == ("auto", {}, None)
    assert (inputs.scorer, inputs.junit_flakefinder, inputs.suite) == (None, False, None)


def test_reader_inputs_are_parsed_as_the_cli_options() -> None:
    inputs = read_inputs(
        input_env(
            {
                "results": "r.csv",
                "format": "csv",
                "map": " stimulus=case_id, passed = ok\nduration_s=elapsed ,",
                "pass_threshold": "0.75",
                "scorer": " grade ",
                "junit_flakefinder": "true",
                "suite": "airline",
            }
        )
    )
    assert inputs.format == "csv"
    assert inputs.map == {"stimulus": "case_id", "passed": "ok", "duration_s": "elapsed"}
    assert inputs.pass_threshold == 0.75
    assert (inputs.scorer, inputs.junit_flakefinder, inputs.suite) == ("grade", True, "airline")
    as_percent = read_inputs(input_env({"results": "r.csv", "pass_threshold": "75%"}))
    assert as_percent.pass_threshold == 0.75


def test_values_are_trimmed_and_globs_read_one_per_line() -> None:
    inputs = read_inputs(
        input_env(
            {
                "results": "  results/*.jsonl\n\n  more/**/*.json  \n",
                "baseline": "base/*.jsonl",
                "min_pass_hat_k": " 0.8 ",
                "summary": "False",
            }
        )
    )
    assert inputs.results == ("results/*.jsonl", "more/**/*.json")
    assert inputs.baseline == ("base/*.jsonl",)
    assert inputs.overrides["min_pass_hat_k"] == "0.8"
    assert inputs.summary is False


def test_missing_variables_fall_back_to_defaults_outside_a_runner() -> None:
    inputs = read_inputs({"INPUT_RESULTS": "r.jsonl"})
    assert inputs.comment == "always"
    assert not inputs.github_token  # "${{ github.token }}" was never expanded: no token


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("results", "", "results is required"),
        ("summary", "yes", "not a boolean"),
        ("comment", "sometimes", "not one of off, always"),
        ("fail_on", "gate", "not one of gates, errors, never"),
        ("comment_id", "a b", "must be 1-64"),
        ("comment_id", "x-->y", "must be 1-64"),
        ("comment_id", "a--b", "without '--'"),
        ("map", "stimulus", r"input map: 'stimulus' is not FIELD=COLUMN"),
        ("map", "stimulus=", r"input map: 'stimulus=' is not FIELD=COLUMN"),
        ("map", "stimuls=case_id", r"input map: unknown field 'stimuls'; expected fields among"),
        ("map", "passed=a,passed=b", r"input map: field 'passed' is mapped twice"),
        ("pass_threshold", "2", r'pass_threshold 2 can be read two ways.* write 0.02 or "2%"'),
        ("pass_threshold", "170", r"input pass_threshold 170 out of range; expected .* \[0, 1\]"),
        ("pass_threshold", "nan", r"input pass_threshold must be a finite number"),
        ("pass_threshold", "high", r"input pass_threshold: expected a fraction from 0 to 1 or a"),
        ("junit_flakefinder", "yes", r"input junit_flakefinder: 'yes' is not a boolean"),
    ],
)
def test_bad_inputs_are_exit_code_2_errors(name: str, value: str, message: str) -> None:
    given = {"results": "r.jsonl", name: value}
    with pytest.raises(ActionInputError, match=message) as raised:
        read_inputs(input_env(given))
    assert raised.value.exit_code == 2


def _context(tmp_path: Path, event_name: str, event: dict[str, object], api_url: str) -> RunContext:
    write_event(tmp_path, event)
    return context_from_env(
        {
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
            "GITHUB_REPOSITORY": REPOSITORY,
            "GITHUB_SHA": PUSH_SHA if event_name == "push" else HEAD_SHA,
            "GITHUB_API_URL": api_url,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_RUN_ID": "99",
        }
    )


@pytest.mark.parametrize("event_name", ["pull_request", "pull_request_target"])
def test_pull_request_events_name_the_pr_without_an_api_call(
    tmp_path: Path, event_name: str, fake_github: FakeGitHub, api: GitHubApi
) -> None:
    context = _context(tmp_path, event_name, pull_request_event(7, fork=True), fake_github.url)
    assert find_pull_request(context, api) == PullRequest(7, from_fork=True)
    assert fake_github.requests == []
    assert context.run_url == "https://github.com/octo-org/agent-evals/actions/runs/99"


def test_workflow_run_uses_its_pull_requests(
    tmp_path: Path, fake_github: FakeGitHub, api: GitHubApi
) -> None:
    context = _context(
        tmp_path, "workflow_run", workflow_run_event(pull_numbers=(12,)), fake_github.url
    )
    assert find_pull_request(context, api) == PullRequest(12)
    assert fake_github.requests == []


@pytest.mark.parametrize("pull_requests", [True, 3.5, "12", {"number": 12}])
def test_workflow_run_pull_requests_of_another_json_type_name_none(
    tmp_path: Path, fake_github: FakeGitHub, api: GitHubApi, pull_requests: object
) -> None:
    """Found by tests/hostile/mutate.py --publish: a bool or a number there was iterated (an
    unexpected TypeError, which cost the comment). It names no pull request; the fork's
    lookup by head branch, which finds none here, decides."""
    event = workflow_run_event(pull_numbers=(12,))
    event["workflow_run"]["pull_requests"] = pull_requests
    context = _context(tmp_path, "workflow_run", event, fake_github.url)
    assert find_pull_request(context, api) is None
    assert [r.route for r in fake_github.requests] == [f"/repos/{REPOSITORY}/pulls"]


@pytest.mark.parametrize(("owner", "branch"), [("fork-owner", "\ud800"), ("\udfff", "feature")])
def test_workflow_run_with_a_name_that_is_no_text_names_no_pull_request(
    tmp_path: Path, fake_github: FakeGitHub, api: GitHubApi, owner: str, branch: str
) -> None:
    """Found by tests/hostile/mutate.py --publish: a lone surrogate (JSON can spell one) in
    the head branch went into the query and raised UnicodeEncodeError (a bug, to the
    comment step). It names no pull request, and nothing is asked."""
    event = workflow_run_event()
    event["workflow_run"]["head_branch"] = branch
    event["workflow_run"]["head_repository"]["owner"]["login"] = owner
    context = _context(tmp_path, "workflow_run", event, fake_github.url)
    assert find_pull_request(context, api) is None
    assert fake_github.requests == []


def test_workflow_run_of_a_fork_finds_the_pr_by_head_branch(
    tmp_path: Path, fake_github: FakeGitHub, api: GitHubApi
) -> None:
    # GitHub leaves workflow_run.pull_requests empty when the PR comes from a fork.
    fake_github.add_pull(5, head_sha="f" * 40, head_ref="feature", head_repo="someone/agent-evals")
    fake_github.add_pull(12, head_sha=HEAD_SHA, head_ref="feature", head_repo="fork-owner/x")
    context = _context(tmp_path, "workflow_run", workflow_run_event(), fake_github.url)
    assert find_pull_request(context, api) == PullRequest(12, from_fork=True)
    assert [(r.route, r.query) for r in fake_github.requests] == [
        (
            f"/repos/{REPOSITORY}/pulls",
            {"per_page": "100", "state": "open", "head": "fork-owner:feature"},
        )
    ]


def test_push_finds_the_open_pr_that_contains_the_commit(
    tmp_path: Path, fake_github: FakeGitHub, api: GitHubApi
) -> None:
    fake_github.add_pull(3, head_sha=PUSH_SHA, state="closed")
    fake_github.add_pull(8, head_sha=PUSH_SHA)
    context = _context(tmp_path, "push", push_event(), fake_github.url)
    assert find_pull_request(context, api) == PullRequest(8)
    assert [r.route for r in fake_github.requests] == [
        f"/repos/{REPOSITORY}/commits/{PUSH_SHA}/pulls"
    ]


def test_push_without_an_open_pr_and_other_events_find_none(
    tmp_path: Path, fake_github: FakeGitHub, api: GitHubApi
) -> None:
    assert find_pull_request(_context(tmp_path, "push", push_event(), fake_github.url), api) is None
    assert find_pull_request(_context(tmp_path, "schedule", {}, fake_github.url), api) is None


def test_an_unreadable_event_file_is_an_empty_event(tmp_path: Path) -> None:
    (tmp_path / "event.json").write_text("not json")
    context = context_from_env(
        {"GITHUB_EVENT_PATH": str(tmp_path / "event.json"), "GITHUB_REPOSITORY": "a/b;rm"}
    )
    assert context.event == {} and context.repository == "" and context.run_url is None
