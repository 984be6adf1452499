"""The DuckDB query in docs/scale.md makes counts that gate like the trials they came from."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from gate.config import build_config
from gate.ingest import IngestOptions
from gate.pipeline import CheckRequest, run_check
from tests.conftest import ROOT

duckdb = pytest.importorskip("duckdb")
pytestmark = pytest.mark.filterwarnings("ignore:.*given as counts:UserWarning")


def documented_query() -> str:
    text = (ROOT / "docs" / "scale.md").read_text(encoding="utf-8")
    marker = text.index("tests/scale/test_counts_sql.py runs this query")
    match = re.search(r"```sql\n(.*?)```", text[marker:], re.DOTALL)
    assert match is not None
    return match.group(1)


def test_the_documented_query_gives_the_verdicts_of_the_trials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(4)
    results = tmp_path / "results"
    results.mkdir()
    lines = []
    for s in range(40):
        for t in range(8):
            record: dict[str, object] = {"suite": "s", "stimulus": f"p{s}", "trial": t}
            roll = rng.random()
            if roll < 0.05:
                record.update(status="error", message="boom")
            elif roll < 0.08:
                record["status"] = "skipped"
            elif roll < 0.5:
                record["passed"] = rng.random() < 0.6
            else:
                record["score"] = rng.choice([1.0, 0.5, round(rng.random(), 3)])
            lines.append(record)
    (results / "part.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    monkeypatch.chdir(tmp_path)
    duckdb.sql(documented_query())
    config = build_config({"k": 4, "gates": {"threshold": 0.5, "pass_hat_k": 0.3}})
    trials = run_check(CheckRequest((str(results / "part.jsonl"),), config))
    counts = run_check(CheckRequest(("counts.jsonl",), config, IngestOptions(format="counts")))
    # GROUP BY returns rows in any order, so suite means may differ in the last bit.
    assert [g.passed for g in counts.gates] == [g.passed for g in trials.gates]
    assert [g.value for g in counts.gates] == pytest.approx([g.value for g in trials.gates])
    by_name = {s.name: s for s in counts.suite.stimuli}
    for stimulus in trials.suite.stimuli:
        other = by_name[stimulus.name]
        assert (other.trials, other.passes, other.errors, other.skipped) == (
            stimulus.trials,
            stimulus.passes,
            stimulus.errors,
            stimulus.skipped,
        )
        assert other.aggregate_score == pytest.approx(stimulus.aggregate_score, abs=1e-12)
        assert other.unscored == stimulus.unscored
