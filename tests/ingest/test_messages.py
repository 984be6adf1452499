"""Why a trial failed, errored or was skipped, kept per trial from every format (issue 15).

Read from the real outputs in fixtures/ (see fixtures/README.md), trial by trial as each
reader yields them, with the place each came from.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from gate.errors import Provenance
from gate.ingest import IngestOptions, reader
from gate.trials import Trial, TrialBatch, TrialColumns
from tests.ingest.conftest import FIXTURES


def _messages(format_name: str, path: Path) -> dict[tuple[str, int], tuple[str, str, Provenance]]:
    """(stimulus, trial) → (status or 'failed', message, provenance) of every trial with one."""
    found = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for record in reader(format_name)(str(path), IngestOptions()):
            if isinstance(record, TrialBatch):
                trials = [record.trial(i) for i in range(len(record.records))]
            elif isinstance(record, TrialColumns):
                trials = [record.trial_at(i) for i in range(len(record))]
            else:
                trials = [record] if isinstance(record, Trial) else []
            for trial in trials:
                if trial.message is not None:
                    assert trial.provenance is not None
                    kind = "failed" if trial.status == "ok" else trial.status
                    found[(trial.stimulus, trial.trial)] = (kind, trial.message, trial.provenance)
    return found


def test_junit_failure_error_and_skipped_messages_with_their_lines() -> None:
    path = FIXTURES / "junit" / "pytest-repeat.xml"
    found = _messages("junit", path)
    assert found[("test_sample::test_flaky", 1)] == (
        "failed",
        "AssertionError: assert (2 % 2) == 1\n +  where 2 = bump('flaky')",
        Provenance(str(path), 1),
    )
    assert found[("test_sample::test_err", 0)][:2] == ("failed", "RuntimeError: harness down")
    assert found[("test_sample::test_fixture_error", 0)][:2] == (
        "error",
        'failed on setup with "OSError: no fixture"',
    )
    assert found[("test_sample::test_skip", 2)][:2] == ("skipped", "not today")
    assert not any(stimulus == "test_sample::test_ok" for stimulus, _ in found)
    surefire = FIXTURES / "junit" / "surefire-rerun.xml"
    found = _messages("junit", surefire)
    refund = "com.example.agent.CheckoutAgentTest::refundsOrder"
    assert found[(refund, 0)] == (
        "failed",
        "expected: <REFUNDED> but was: <PENDING>",
        Provenance(str(surefire), 8),
    )
    assert found[(refund, 1)][:2] == ("error", "Connection reset")


def test_junit_message_from_the_first_line_of_the_text(tmp_path: Path) -> None:
    path = tmp_path / "r.xml"
    path.write_text(
        '<testsuite name="s">\n<testcase classname="c" name="t">'
        "<failure>\n\n  assert 1 == 2  \nmore of the traceback</failure></testcase>\n"
        '<testcase classname="c" name="u"><error type="OSError"/></testcase></testsuite>'
    )
    found = _messages("junit", path)
    assert found[("c::t", 0)] == ("failed", "assert 1 == 2", Provenance(str(path), 2))
    assert found[("c::u", 0)][:2] == ("error", "OSError")


def test_promptfoo_grading_reason_and_error() -> None:
    path = FIXTURES / "promptfoo" / "results.json"
    found = _messages("promptfoo", path)
    assert found[("always wrong [echo]", 0)] == (
        "failed",
        'Expected output "Answer: wrong" to equal "nope"',
        Provenance(str(path), pointer="/results/results/13"),
    )
    assert found[("sometimes errors [flaky-echo]", 0)][:2] == (
        "error",
        "upstream 503: service unavailable",
    )


def test_inspect_score_explanation_and_sample_error() -> None:
    for name in ("mock_reliability.eval", "mock_reliability.json"):
        found = _messages("inspect", FIXTURES / "inspect" / name)
        assert found[("flaky", 1)][:2] == ("failed", "almost no")  # match's explanation
        assert found[("hard", 0)][:2] == ("failed", "no")
        assert found[("boom", 1)][:2] == ("error", "RuntimeError('sandbox exploded on epoch 2')")
        assert ("easy", 0) not in found


def test_tau_bench_info_and_tau2_reward_info() -> None:
    path = FIXTURES / "tau2" / "retail.results.json"
    found = _messages("tau2-bench", path)
    assert found[("1", 1)] == (
        "failed",
        "reward 0 (DB 0.0, COMMUNICATE 1.0): database state differs; termination_reason max_steps",
        Provenance(str(path), pointer="/simulations/4"),
    )
    assert found[("2", 1)][:2] == (
        "error",
        "termination_reason infrastructure_error: InternalServerError: "
        "litellm.InternalServerError: AnthropicException - Overloaded",
    )


def test_tau_bench_failure_renders_its_reward_info(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    runs = [
        {
            "task_id": 7,
            "reward": 0.0,
            "info": {
                "task": {"user_id": "u", "actions": [{"name": "book"}] * 50},
                "source": "user",
                "reward_info": {"reward": 0.0, "info": {"r_actions": False}, "actions": []},
            },
            "traj": [{"role": "user", "content": "hi"}],
            "trial": 0,
        },
        {"task_id": 7, "reward": 0.0, "info": {"error": "RateLimitError"}, "traj": [], "trial": 1},
        {"task_id": 7, "reward": 1.0, "info": {}, "traj": [], "trial": 2},
    ]
    path.write_text(json.dumps(runs))
    found = _messages("tau-bench", path)
    assert found == {
        ("7", 0): ("failed", 'reward 0: {"r_actions":false}', Provenance(str(path), pointer="/0")),
        ("7", 1): ("error", "RateLimitError", Provenance(str(path), pointer="/1")),
    }


def test_vally_error_and_failed_graders() -> None:
    path = FIXTURES / "vally" / "results.jsonl"
    found = _messages("vally", path)
    assert found[("edge-case-handling", 0)] == (
        "failed",
        "failed: file-exists",
        Provenance(str(path), 3),
    )
    assert found[("edge-case-handling", 2)][:2] == ("error", "agent timed out after 600s")


def test_a_long_message_is_cut_at_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "long.xml"
    path.write_text(
        '<testsuite name="s"><testcase classname="c" name="t">'
        f'<failure message="{"x" * 5000}"/></testcase></testsuite>'
    )
    ((_, message, _),) = _messages("junit", path).values()
    assert len(message) == 1000 and message.endswith("…") and message.startswith("xxx")
