"""tau-bench and tau2-bench: trials, the success rule, and pass^k on the public gpt-4o run."""

from __future__ import annotations

import json
from collections import defaultdict
from fractions import Fraction
from math import comb
from pathlib import Path

import pytest

from gate.config import GateConfig
from gate.errors import InputError
from gate.pipeline import CheckRequest, run_check
from tests.ingest.conftest import FIXTURES, load_one

# The public gpt-4o airline run (50 tasks × 4 trials), copied from shared/fixtures so the
# test does not depend on a folder outside the repository.
TAU_BENCH = FIXTURES / "tau-bench" / "gpt-4o-airline.trials.json"


SHARED_TAU_BENCH = (
    Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "tau-bench" / TAU_BENCH.name
)


def tau_bench_pass_hat_k(path: Path) -> dict[int, Fraction]:
    """tau-bench's own pass^k (tau_bench/run.py display_metrics), on the raw file, in exact
    arithmetic: a trial succeeds when its reward is within 1e-6 of 1; n is the number of
    distinct trials; pass^k = mean over tasks of C(c, k) / C(n, k), for k = 1..n."""
    runs = json.loads(path.read_text())
    num_trials = len({run["trial"] for run in runs})
    successes: dict[object, int] = {}
    for run in runs:
        won = (1 - 1e-6) <= run["reward"] <= (1 + 1e-6)
        successes[run["task_id"]] = successes.get(run["task_id"], 0) + won
    return {
        k: sum((Fraction(comb(c, k), comb(num_trials, k)) for c in successes.values()), Fraction())
        / len(successes)
        for k in range(1, num_trials + 1)
    }


@pytest.fixture(scope="module")
def airline() -> Path:
    return TAU_BENCH


def test_the_committed_airline_run_is_the_shared_fixture(airline: Path) -> None:
    if SHARED_TAU_BENCH.is_file():  # outside this checkout's workspace there is only the copy
        assert airline.read_bytes() == SHARED_TAU_BENCH.read_bytes()
    runs = json.loads(airline.read_text())
    assert len(runs) == 200 and len({r["task_id"] for r in runs}) == 50


def test_the_tau_bench_definition_gives_the_published_numbers(airline: Path) -> None:
    # Worked by hand from the per-task success counts: 21/50, 41/150, 11/50, 1/5.
    assert tau_bench_pass_hat_k(airline) == {
        1: Fraction(21, 50),
        2: Fraction(41, 150),
        3: Fraction(11, 50),
        4: Fraction(1, 5),
    }


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_eval_gate_pass_hat_k_matches_the_tau_bench_definition(airline: Path, k: int) -> None:
    """eval-gate's whole pipeline (detection, reader, scoring) against tau-bench's formula."""
    expected = float(tau_bench_pass_hat_k(airline)[k])
    outcome = run_check(CheckRequest(results=(str(airline),), config=GateConfig(k=k)))
    assert [x.format for x in outcome.inputs] == ["tau-bench"]
    suite = outcome.suite
    assert (suite.k, len(suite.stimuli), suite.trials, suite.passes) == (k, 50, 200, 84)
    assert suite.pass_hat_k == pytest.approx(expected, abs=1e-12)
    assert outcome.headline()["pass_hat_k"] == round(expected, 6)
    # pass^1 is the plain success rate, which tau-bench also reports as its average reward.
    if k == 1:
        assert suite.pass_rate == pytest.approx(0.42, abs=1e-12)


def test_tau_bench_table_counts_match_the_raw_file(airline: Path) -> None:
    loaded = load_one(airline)
    assert loaded.counts() == (200, 84, 0, 0)
    from_table = {
        stimulus: (len(record.indices), sum(record.passed))
        for (_, stimulus), record in loaded.table.stimuli.items()
    }
    independent: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for run in json.loads(airline.read_text()):
        independent[str(run["task_id"])][0] += 1
        independent[str(run["task_id"])][1] += abs(run["reward"] - 1) <= 1e-6
    assert from_table == {task: (n, c) for task, (n, c) in independent.items()}


def test_tau_bench_trials_keep_their_order_and_provenance(airline: Path) -> None:
    loaded = load_one(airline)
    record = loaded.table.stimuli[("default", "1")]
    assert record.indices == [0, 1, 2, 3]
    assert record.passed == [False, True, False, False]
    # Entry 51 of the array is task 1's second trial.
    assert record.where[1] is not None and record.where[1].pointer == "/51"


def test_tau_bench_threshold_and_rewards_outside_the_unit_range(tmp_path: Path) -> None:
    path = tmp_path / "partial.json"
    runs = [
        {"task_id": 0, "trial": 0, "reward": 0.75},
        {"task_id": 0, "trial": 1, "reward": 1.0000001},
        {"task_id": 1, "reward": 1.5},
        {"task_id": 1, "reward": 0.0, "info": {"error": "litellm.APIError: 529 overloaded"}},
    ]
    path.write_text(json.dumps(runs))
    default = load_one(path, format="tau-bench")
    assert default.outcomes() == {"0": "FP", "1": "FE"}
    assert default.table.stimuli[("default", "1")].scores[0] == 1.0  # clipped
    assert any("outside [0, 1]" in w for w in default.warnings)
    lenient = load_one(path, format="tau-bench", pass_threshold=0.7)
    assert lenient.outcomes() == {"0": "PP", "1": "PE"}


def test_tau2_simulations_map_termination_reasons() -> None:
    loaded = load_one(FIXTURES / "tau2" / "retail.results.json")
    assert [x.format for x in loaded.inputs] == ["tau2-bench"]
    assert loaded.table.suite_names() == ["retail"]
    assert loaded.outcomes() == {"0": "PPP", "1": "PFP", "2": "FEF"}
    assert loaded.counts() == (9, 5, 1, 0)
    record = loaded.table.stimuli[("retail", "2")]
    # Every trial that did not pass says why: failures, and the errored placeholder with the
    # exception tau2 kept in its info.
    assert record.messages == [
        "reward 0 (DB 0.0, COMMUNICATE 1.0): database state differs",
        "termination_reason infrastructure_error: InternalServerError: "
        "litellm.InternalServerError: AnthropicException - Overloaded",
        "reward 0 (DB 0.0, COMMUNICATE 1.0): database state differs; "
        "termination_reason too_many_errors",
    ]
    assert loaded.warnings == [
        f"{FIXTURES / 'tau2' / 'retail.results.json'}: 1 simulation(s) ended with "
        "termination_reason infrastructure_error (never evaluated: tau2 leaves them out of its "
        "metrics and runs them again when the run is resumed): read as errored trials, which "
        "--errors exclude leaves out as tau2 does"
    ]


def _tau2_results(simulations: list[dict[str, object]]) -> dict[str, object]:
    """A tau2-bench Results document (src/tau2/data_model/simulation.py) around simulations."""
    return {
        "timestamp": "2026-08-04T10:00:00.000000",
        "info": {"num_trials": 1, "environment_info": {"domain_name": "airline"}},
        "tasks": [],
        "simulations": simulations,
    }


def _evaluated(task_id: str, reason: str, reward: float) -> dict[str, object]:
    """A simulation as tau2's run_simulation leaves it: evaluated, reward_info attached."""
    note = {"note": f"Simulation terminated prematurely. Termination reason: {reason}"}
    return {
        "id": f"sim-{task_id}",
        "task_id": task_id,
        "trial": 0,
        "duration": 31.0,
        "termination_reason": reason,
        "agent_cost": 0.02,
        "reward_info": {
            "reward": reward,
            "reward_basis": None if reason not in ("agent_stop", "user_stop") else ["DB"],
            "info": None if reason in ("agent_stop", "user_stop") else note,
        },
        "messages": [],
        "seed": 300,
    }


#: tau2's evaluate_simulation (src/tau2/evaluator/evaluator.py) gives reward 0 to every reason
#: but agent_stop and user_stop, and compute_metrics counts those simulations as failures.
TAU2_PREMATURE_REASONS = [
    "max_steps",
    "timeout",
    "too_many_errors",
    "agent_error",
    "user_error",
    "context_window_exceeded",
    "unexpected_error",
]


@pytest.mark.parametrize("reason", TAU2_PREMATURE_REASONS)
def test_tau2_reasons_tau2_counts_as_failures_are_failed_trials(
    reason: str, tmp_path: Path
) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(_tau2_results([_evaluated("5", reason, 0.0)])))
    loaded = load_one(path)
    assert loaded.outcomes() == {"5": "F"}
    assert loaded.counts() == (1, 0, 0, 0)
    assert loaded.table.stimuli[("airline", "5")].messages == [
        f"reward 0; termination_reason {reason}"
    ]
    assert loaded.warnings == []


@pytest.mark.parametrize("reason", ["agent_stop", "user_stop"])
def test_tau2_reasons_that_end_a_conversation_are_judged_by_the_reward(
    reason: str, tmp_path: Path
) -> None:
    path = tmp_path / "results.json"
    simulations = [_evaluated("5", reason, 1.0), {**_evaluated("6", reason, 0.0), "trial": 0}]
    path.write_text(json.dumps(_tau2_results(simulations)))
    loaded = load_one(path)
    assert loaded.outcomes() == {"5": "P", "6": "F"}
    assert loaded.table.stimuli[("airline", "6")].messages == ["reward 0"]


def test_tau2_infrastructure_errors_are_errors_whatever_their_reward(tmp_path: Path) -> None:
    """tau2's metrics drop infrastructure_error before looking at the reward, so even one
    written with a reward (by another writer) is an errored trial, not a pass."""
    placeholder = {
        "id": "sim-7",
        "task_id": "7",
        "trial": 0,
        "duration": 0.0,
        "termination_reason": "infrastructure_error",
        "agent_cost": None,
        "reward_info": None,
        "messages": [],
        "info": {"error": "worker died", "error_type": "WorkerFailure"},
    }
    rewarded = {**placeholder, "task_id": "8", "reward_info": {"reward": 1.0}, "info": None}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(_tau2_results([placeholder, rewarded])))
    loaded = load_one(path)
    assert loaded.outcomes() == {"7": "E", "8": "E"}
    assert loaded.counts() == (2, 0, 2, 0)  # two trials read, both errored
    assert loaded.table.stimuli[("airline", "7")].messages == [
        "termination_reason infrastructure_error: WorkerFailure: worker died"
    ]
    assert loaded.table.stimuli[("airline", "8")].messages == [
        "termination_reason infrastructure_error"
    ]
    assert len(loaded.warnings) == 1 and "2 simulation(s)" in loaded.warnings[0]


def test_tau2_a_simulation_without_a_reward_is_an_error(tmp_path: Path) -> None:
    """Nothing graded it (tau2 writes no reward only for its infrastructure-error
    placeholders): a harness fault, not a failure of the agent."""
    ungraded = {**_evaluated("5", "user_stop", 1.0), "reward_info": None}
    no_reason = {**ungraded, "task_id": "6", "termination_reason": None}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(_tau2_results([ungraded, no_reason])))
    loaded = load_one(path)
    assert loaded.outcomes() == {"5": "E", "6": "E"}
    assert loaded.table.stimuli[("airline", "5")].messages == [
        "termination_reason user_stop (no reward)"
    ]
    assert loaded.table.stimuli[("airline", "6")].messages == ["no reward"]


def test_tau2_an_unknown_termination_reason_is_kept_short(tmp_path: Path) -> None:
    """A reason tau2 never writes is judged by the reward like the others; quoted in a
    message, it is cut to the trial-message limit (1,000 characters)."""
    long = {**_evaluated("5", "x" * 5000, 0.0), "reward_info": None}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(_tau2_results([long])))
    (message,) = load_one(path).table.stimuli[("airline", "5")].messages
    assert message.startswith("termination_reason xxx") and len(message) <= 1000


def test_tau2_infrastructure_errors_count_as_tau2_counts_them_under_errors_exclude(
    tmp_path: Path,
) -> None:
    """End to end: two tasks, one with an infrastructure error among its trials. tau2's
    compute_metrics leaves it out (task 1's success rate 1/1, not 1/2), as --errors exclude
    does; the default --errors fail counts it as a failure, as every format's errors."""
    simulations = [
        {**_evaluated("1", "user_stop", 1.0), "trial": 0},
        {**_evaluated("1", "infrastructure_error", 0.0), "trial": 1, "reward_info": None},
        {**_evaluated("2", "user_stop", 1.0), "trial": 0},
        {**_evaluated("2", "max_steps", 0.0), "trial": 1},
    ]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(_tau2_results(simulations)))
    excluded = run_check(
        CheckRequest(results=(str(path),), config=GateConfig(k=1, errors="exclude"))
    ).suite
    assert (excluded.trials, excluded.passes) == (3, 2)
    assert excluded.pass_hat_k == pytest.approx((1.0 + 0.5) / 2, abs=1e-12)
    failed = run_check(CheckRequest(results=(str(path),), config=GateConfig(k=1))).suite
    assert (failed.trials, failed.passes, failed.errors) == (4, 2, 1)
    assert failed.pass_hat_k == pytest.approx((0.5 + 0.5) / 2, abs=1e-12)


def test_tau2_directory_format_reads_the_simulation_index() -> None:
    loaded = load_one(FIXTURES / "tau2" / "dir-format.results.json")
    assert loaded.outcomes() == {"0": "PPP", "1": "PFP", "2": "FEF"}
    where = loaded.table.stimuli[("retail", "1")].where[1]
    assert where is not None and where.pointer == "/simulation_index/4"


def test_tau2_reports_tasks_with_a_different_number_of_trials(tmp_path: Path) -> None:
    document = json.loads((FIXTURES / "tau2" / "retail.results.json").read_text())
    document["simulations"] = document["simulations"][:-1]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document))
    loaded = load_one(path)
    assert any("num_trials is 3" in w and "2" in w for w in loaded.warnings)


def test_the_same_tau_bench_run_twice_is_a_duplicate(airline: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.json"
    copy.write_bytes(airline.read_bytes())
    from gate.ingest import load

    with pytest.raises(InputError, match=r"appears twice: first at .*gpt-4o-airline.* at /0"):
        load([str(airline), str(copy)])


def test_an_integer_past_the_float_range_is_refused_not_a_traceback(tmp_path: Path) -> None:
    # The strict parser keeps 10**400 as a Python int; float() of it overflows.
    path = tmp_path / "huge.json"
    path.write_text('[{"task_id": 0, "trial": 0, "reward": 1' + "0" * 400 + "}]")
    with pytest.raises(InputError, match=r"huge\.json at /0: reward is not finite"):
        load_one(path, format="tau-bench")


def test_errors_come_in_the_files_order_whatever_the_block_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An entry without a task_id before a syntax error: the entry's error is the one given,
    # whether the entries wait in one block (a small file) or are read a few at a time.
    from gate.ingest import jsonstream, tau

    entries = [json.dumps({"task_id": i % 3, "trial": i // 3, "reward": 1.0}) for i in range(40)]
    entries[5] = json.dumps({"trial": 9, "reward": 1.0})
    entries[30] = '{"task_id": 1 "trial": 2}'
    path = tmp_path / "results.json"
    path.write_text("[" + ", ".join(entries) + "]")
    for piece_bytes, block in ((1 << 15, 4096), (100, 4)):
        monkeypatch.setattr(jsonstream, "PIECE_BYTES", piece_bytes)
        monkeypatch.setattr(tau, "BLOCK_TRIALS", block)
        monkeypatch.setattr(tau, "_WAITING_TRIALS", 4 * block)
        with pytest.raises(InputError, match=r"results\.json at /5: task_id is missing"):
            load_one(path, format="tau-bench")
