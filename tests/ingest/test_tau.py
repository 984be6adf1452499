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
    # Every trial that did not pass says why, failures as well as the error.
    assert record.messages == [
        "reward 0 (DB 0.0, COMMUNICATE 1.0): database state differs",
        "termination_reason infrastructure_error (no reward)",
        "reward 0 (DB 0.0, COMMUNICATE 1.0): database state differs; "
        "termination_reason too_many_errors",
    ]
    assert loaded.warnings == []


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
