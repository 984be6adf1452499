"""The action's real run, publishing to a fake GitHub, for ``tests/hostile/mutate.py --publish``.

A dry run stops before the API; this one goes all the way: ``gate.github.entrypoint.main``
with the variables a container step gets (file commands, event payload, workspace), every
action input random (valid or hostile), a mutated results file (or one of thousands of
stimuli named with hostile text, whose summary is folded and comment trimmed; the token is
among the hostile values), and a fake GitHub on loopback (tests/github/fake_github.py)
whose pull request may already carry comments (an earlier sticky comment, one with a forged
marker, a hundred others) and whose answers may be faults (5xx, 403, 404, rate limits,
bodies of the wrong JSON type or not JSON at all).

What a run must hold, each broken one a finding:

- the token, whole or any beginning, end or middle the redactor masks, appears nowhere but
  in the Authorization header: not in stdout, stderr, the job summary, the step outputs, a
  file written to the workspace, or any request's body;
- the exit code is the verdict's (``evaluate`` alone, no API): a comment that fails never
  changes it; no "unexpected" error is swallowed by the comment step;
- the job summary and every comment body written read as text when GitHub renders them (no
  HTML but the product's own, no link but the run's, no image, autolink, mention, bidi
  control, or table split by the data: tests/github/test_markdown_safety.py's rules);
- no log line is a workflow command the data wrote (a name holding ``\\n::notice ...``);
- a pull request never ends with two sticky comments of one id from the action.
"""

from __future__ import annotations

import copy
import io
import json
import os
import random
import re
import shutil
from pathlib import Path
from typing import Any

from tests.github.contract import (
    HEAD_SHA,
    PUSH_SHA,
    REPOSITORY,
    input_env,
    pull_request_event,
    push_event,
    runner_env,
    runner_folders,
    workflow_run_event,
)
from tests.github.fake_github import INTEGRATION_DENIED, FakeGitHub, Fault
from tests.github.test_markdown_safety import AUTOLINK, BIDI, MENTION, OUR_HTML, renderer, walk
from tests.hostile.mutate import FORGERIES, HOSTILE, INJECTED, files_of, mutate_value, written

#: the bot the action comments as, and the run its comment links
BOT = "github-actions[bot]"
RUN_URL = f"https://github.com/{REPOSITORY}/actions/runs/4242"
#: answers the fake may give instead of the normal one: (method, route, status, headers, body)
FAULTS: list[tuple[str, str, int, dict[str, str], Any]] = [
    ("GET", r".*", 500, {}, {"message": "Server Error"}),
    ("POST", r".*", 502, {}, b"<html>Bad Gateway</html>"),
    ("POST", r".*", 403, {}, {"message": INTEGRATION_DENIED}),
    ("PATCH", r".*", 403, {}, {"message": "Must have admin rights to Repository."}),
    ("PATCH", r".*", 404, {}, {"message": "Not Found"}),
    ("DELETE", r".*", 404, {}, {"message": "Not Found"}),
    ("GET", r".*/comments", 404, {}, {"message": "Not Found"}),
    ("GET", r".*", 429, {"retry-after": "1e9"}, {"message": "rate"}),
    (
        "GET",
        r".*",
        403,
        {"retry-after": "abc"},
        {"message": "You have exceeded a secondary rate limit"},
    ),
    (
        "POST",
        r".*",
        403,
        {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "-5"},
        {"message": "API rate limit exceeded"},
    ),
    ("GET", r".*/comments", 200, {}, {"not": "a list"}),
    ("GET", r".*/comments", 200, {}, [None, 1, "x", {"id": "7", "body": 3, "user": None}]),
    ("GET", r".*/pulls", 200, {}, [{"number": "7"}, {"number": 10**30}, {}]),
    ("GET", r".*", 200, {}, b"not json \xff"),
    ("POST", r".*", 201, {}, {"id": None, "html_url": "javascript:alert(1)"}),
    ("POST", r".*", 201, {}, ["a list"]),
    ("PATCH", r".*", 200, {}, "a string"),
    ("GET", r".*/comments", 200, {"link": '<http://127.0.0.1:9/x?page=2>; rel="next"'}, []),
    ("POST", r".*", 422, {}, {"message": "Body is too long (maximum is 65536 characters)"}),
    ("GET", r".*", 401, {}, {"message": "Bad credentials"}),
    ("GET", r".*/comments", 200, {}, b"[" * 100_000 + b"]" * 100_000),
    ("GET", r".*", 200, {}, b"[" + b" " * (17 << 20) + b"]"),
    ("POST", r".*", 201, {}, {"id": 10**30, "html_url": "\ud800"}),
]


def write_many(path: Path, rng: random.Random) -> None:
    """A native JSONL file of hundreds to thousands of stimuli named and failing with hostile
    text: a summary past the comment's 65,536 characters, so its tables are folded and the
    comment trimmed, through escaped names."""
    texts = [t for t in HOSTILE + FORGERIES if isinstance(t, str) and t]
    lines = []
    for s in range(rng.randint(300, 2500)):
        name = f"{rng.choice(texts)[:80]} {s}"
        for t in range(rng.randint(2, 4)):
            record: dict[str, Any] = {"suite": rng.choice(texts)[:40], "stimulus": name,
                                      "trial": t, "passed": rng.random() < 0.6}  # fmt: skip
            if not record["passed"]:
                record["message"] = rng.choice(texts)
            lines.append(json.dumps(record).encode("utf-8", "surrogatepass"))
    path.write_bytes(b"\n".join(lines) + b"\n")


def start_fake() -> FakeGitHub:
    """The fake every publishing run talks to; :func:`reset` before each."""
    return FakeGitHub(repository=REPOSITORY).start()


def reset(fake: FakeGitHub, rng: random.Random, token: str) -> int | None:
    """A fresh pull request state for one run: pulls 7 and 8, comments already there, faults
    queued. Returns how many sticky comments of id ``default`` the bot already has on 7, or
    None when a fault may answer the list of comments with another list (a sticky comment
    the fake hides cannot be found: a second one is then no fault of the action's)."""
    fake.clear()
    fake.users[token] = None
    if rng.random() < 0.1:
        fake.read_only.add(token)
    fake.add_pull(7, head_sha=HEAD_SHA)
    fake.add_pull(8, head_sha=PUSH_SHA, head_ref="other")
    earlier = 0
    roll = rng.random()
    if roll < 0.3:  # the sticky comment of an earlier commit
        fake.add_comment(7, f"<!-- eval-gate:sticky id=default digest={'1' * 16} -->\nold", BOT)
        earlier = 1
    elif roll < 0.45:  # somebody's copy of the marker
        fake.add_comment(7, f"<!-- eval-gate:sticky id=default digest={'2' * 16} -->\n", "mallory")
    elif roll < 0.55:  # many comments: the sticky one on a later page
        for i in range(rng.randint(30, 130)):
            fake.add_comment(7, f"comment {i}", "octocat")
        fake.add_comment(7, f"<!-- eval-gate:sticky id=default digest={'3' * 16} -->\n", BOT)
        earlier = 1
    for _ in range(rng.choice((0, 0, 1, 2, 4))):
        method, route, status, headers, body = rng.choice(FAULTS)
        times = rng.choice((1, 1, 2, 5))
        fake.faults.append(Fault(method, route, status, dict(headers), copy.deepcopy(body), times))
    if any(f.method == "GET" and f.status == 200 and f.route != ".*/pulls" for f in fake.faults):
        return None
    return earlier


def hostile_environment(rng: random.Random, work: Path) -> dict[str, str]:
    """Now and then a runner variable that points at what cannot be used: a file command or
    event path that is a directory, a FIFO, a device, missing or outside the workspace; a
    variable left out (``docker run`` by hand: the summary goes to stdout)."""
    if rng.random() > 0.2:
        return {}
    odd = work / "odd"
    shutil.rmtree(odd, ignore_errors=True)
    odd.mkdir()
    fifo = odd / "fifo"
    os.mkfifo(fifo)
    (odd / "link").symlink_to("/etc/hostname")
    place = rng.choice([str(odd), str(fifo), "/dev/zero", "/dev/full", str(odd / "missing" / "x"),
                        str(odd / "link"), "", "relative/path"])  # fmt: skip
    name = rng.choice(["GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_EVENT_PATH"])
    return {name: place}


def event_for(rng: random.Random) -> tuple[str, dict[str, Any], str]:
    """An event name, its payload (sometimes mutated) and the commit it is for."""
    name = rng.choice(
        [
            "pull_request",
            "pull_request",
            "push",
            "pull_request_target",
            "workflow_run",
            "schedule",
            "",
        ]
    )
    if name == "push":
        event, sha = push_event(), PUSH_SHA
    elif name == "workflow_run":
        event, sha = workflow_run_event(pull_numbers=(7,)), HEAD_SHA
    else:
        event, sha = pull_request_event(7, fork=rng.random() < 0.2), HEAD_SHA
    if rng.random() < 0.4:
        event = mutate_value(event, rng)
    return name, event, sha


def publish_run(
    fake: FakeGitHub,
    rng: random.Random,
    target: Path,
    work: Path,
    original: Path,
    inputs: dict[str, str],
    token: str,
) -> tuple[int, str, str | None]:
    """One action run on ``target`` in the workspace ``work``; its exit code, its log, and
    what it broke (None when nothing)."""
    from gate.github.entrypoint import evaluate, main

    event_name, event, sha = event_for(rng)
    earlier = reset(fake, rng, token)
    commands, workflow = work / "fc", work / "wf"
    for folder in (commands, workflow):  # the last run's
        shutil.rmtree(folder, ignore_errors=True)
    runner_folders(commands, workflow, event)
    shutil.copy(original, work / f"original{original.suffix}")
    env = runner_env(
        workspace=str(work),
        file_commands=str(commands),
        workflow=str(workflow),
        event_name=event_name,
        api_url=fake.url,
        sha=sha,
    )
    env.update(hostile_environment(rng, work))
    given = {"results": target.name, **inputs}
    env.update(input_env(given, token=token))
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    before = files_of(work)
    os.chdir(work)
    try:
        code = main(env, stdout=out, stderr=err, sleep=lambda _seconds: None)
        expected = evaluate(env, write_report=False).exit_code
    finally:
        os.chdir(here)
    log = out.getvalue() + err.getvalue()
    outputs = {f.name: f.read_text("utf-8", "replace") for f in written(work, before)}
    problems = _broken(fake, log, code, expected, commands, outputs, token, earlier)
    return code, log, "; ".join(problems) or None


def _broken(
    fake: FakeGitHub,
    log: str,
    code: int,
    expected: int,
    commands: Path,
    outputs: dict[str, str],
    token: str,
    earlier: int | None,
) -> list[str]:
    problems: list[str] = []
    # Its beginning and end, and 16 characters from its middle: the redactor masks what is
    # left of a token in a name cut to fit as well as the whole token (gate.redact).
    parts = [token[:8], token[4:20], token[-8:]] if len(token) >= 20 else []
    summary = (commands / "step_summary").read_text("utf-8", "replace")
    texts = {
        "the log": log,
        "the job summary": summary,
        "the step outputs": (commands / "set_output").read_text("utf-8", "replace"),
    }
    texts.update(outputs)
    # What is sent to GitHub's API goes where the token goes; only what it publishes (a
    # comment's body) is an output. (A branch named with the token is looked up by it.)
    for request in fake.requests:
        texts[f"{request.method} {request.route}"] = json.dumps(request.body)
    if parts:
        problems += [
            f"the token shows in {where}"
            for where, text in texts.items()
            if any(part in text for part in parts)
        ]
    if code != expected:
        problems.append(f"exit code {code}, the verdict's {expected}")
    if re.search(r"comment: unexpected|internal error|Traceback", log):
        problems.append("an unexpected error: " + log[-600:])
    forged = [
        line for line in log.splitlines() if re.match(rf"::[\w-]+ (title|name)={INJECTED}", line)
    ]
    problems += [f"a forged workflow command: {line[:80]!r}" for line in forged]
    problems += [f"the job summary: {p}" for p in unsafe_markdown(summary)]
    for request in fake.requests:
        body = request.body.get("body") if isinstance(request.body, dict) else None
        if request.method in ("POST", "PATCH") and isinstance(body, str):
            problems += [f"a comment body: {p}" for p in unsafe_markdown(body, (RUN_URL,))]
    for number, comments in fake.comments.items():
        sticky = [
            c
            for c in comments
            if c["user"]["login"] == BOT
            and c["body"].startswith("<!-- eval-gate:sticky id=default ")
        ]
        if earlier is not None and len(sticky) > max(1, earlier):
            problems.append(f"pull request {number} has {len(sticky)} sticky comments")
    return problems


def unsafe_markdown(markdown: str, links: tuple[str, ...] = ()) -> list[str]:
    """What in ``markdown``, rendered as GitHub renders it, did not stay text."""
    problems = []
    for token in walk(renderer().parse(markdown)):
        if token.type in ("html_block", "html_inline"):
            if not any(p.fullmatch(token.content) for p in OUR_HTML):
                problems.append(f"HTML {token.content[:60]!r}")
        elif token.type == "link_open" and token.attrGet("href") not in links:
            problems.append(f"a link to {str(token.attrGet('href'))[:60]!r}")
        elif token.type in ("image", "autolink"):
            problems.append(f"an {token.type}")
        elif token.type in ("text", "code_inline"):
            for name, pattern in (("mention", MENTION), ("autolink", AUTOLINK), ("bidi", BIDI)):
                if pattern.search(token.content):
                    problems.append(f"a {name} in {token.content[:60]!r}")
    return problems
