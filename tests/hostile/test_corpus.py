"""Every hostile probe ends within 30 s under 2 GiB with the right exit code, says why, prints
no traceback, starts no workflow command of its own, and no output holds the token.

The probes are generated (tests/hostile/corpus.py); each runs in its own process so that its
exit code, stderr, time and peak memory are the real ones.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tests.github.fake_github import dripping_api
from tests.hostile.corpus import MEMORY_LIMIT, TIME_LIMIT, TOKEN, Probe, probes, run

PROBES = {probe.name: probe for probe in probes()}
#: the token as it might leak: raw, in base64 (basic auth), and any long piece of it.
LEAKS = [
    TOKEN,
    base64.b64encode(TOKEN.encode()).decode()[:24],
    base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()[:24],
    TOKEN[5:25],
    "ghs_firstHalfOfAToken01",
    "secondHalfOfAToken23",
]


def _check(probe: Probe, tmp_path: Path) -> None:
    invocation = probe.build(tmp_path)
    result = run(invocation)
    said = result.stdout + result.stderr + "".join(result.sinks.values())
    context = f"{probe.name}: exit {result.exit_code}\n{result.stderr[-2000:]}"
    assert result.seconds < TIME_LIMIT, context
    assert result.peak_bytes < MEMORY_LIMIT, context
    assert result.exit_code == probe.exit_code, context
    assert "Traceback" not in result.stdout + result.stderr, context
    assert "internal error" not in said, context
    assert probe.says in said, context
    for text in (result.stdout, result.stderr, *result.sinks.values()):
        for leak in LEAKS:
            assert leak not in text, f"{probe.name}: the token leaked: {leak}"
    for line in (result.stdout + "\n" + result.stderr).splitlines():
        # The only workflow commands are the action's own annotations.
        if line.startswith("::"):
            assert invocation.entry == "action" or "--dry-run" in invocation.args, line
            assert line.startswith(("::error title=eval-gate", "::warning title=eval-gate")), line


@pytest.mark.parametrize("name", list(PROBES))
def test_probe(name: str, tmp_path: Path) -> None:
    _check(PROBES[name], tmp_path)


def test_an_api_that_drips_bytes_ends_the_action_at_the_deadline(tmp_path: Path) -> None:
    """The comment is given up at EVAL_GATE_API_DEADLINE_SECONDS; the verdict stands."""
    from tests.hostile.corpus import _action_passing

    with dripping_api() as url:
        invocation = _action_passing(
            tmp_path,
            inputs={"comment": "always"},
            env={
                "GITHUB_API_URL": url,
                "GITHUB_EVENT_NAME": "pull_request",
                "EVAL_GATE_API_DEADLINE_SECONDS": "3",
            },
            event=b'{"pull_request": {"number": 7}}',
        )
        result = run(invocation)
    assert result.exit_code == 0, result.stderr
    assert 2.5 < result.seconds < 15
    assert "gave up: the GitHub API calls of this step may take 3 s" in result.stderr
