"""Text a user reads names its sources (Vally's scoring guide, mcptest), never the numbers of
this repository's specification folder ("reference 001"), which no user can look up."""

import json
import re
from pathlib import Path

from click.testing import CliRunner

from gate.cli import main
from gate.metrics.registry import METRICS
from tests.conftest import ROOT

INTERNAL_NUMBER = re.compile(r"reference[ -]?0\d\d", re.IGNORECASE)
RELIABILITY = tuple(
    f"reliability.{name}"
    for name in ("decay_curve", "variance_amplification", "graceful_degradation")
)


def test_registry_text_shown_to_users_names_no_internal_document() -> None:
    for name, info in METRICS.items():
        for text in (
            info.summary,
            info.estimator,
            info.estimand,
            info.interval_method,
            info.order_note,
        ):
            assert not INTERNAL_NUMBER.search(text or ""), (name, text)
    assert METRICS["reliability.variance_amplification"].estimator == (
        "mcptest's variance amplification (rounded percent)"
    )


def test_every_output_of_a_check_names_no_internal_document(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    records = [
        {"stimulus": f"s{i}", "trial": t, "passed": (i + t) % 3 != 0}
        for i in range(6)
        for t in range(4)
    ]
    results.write_text("".join(json.dumps(r) + "\n" for r in records))
    config = tmp_path / "gates.yml"
    config.write_text(
        "gates:\n  metric:\n" + "".join(f"    - {{metric: {m}, min: 0}}\n" for m in RELIABILITY)
    )
    runner = CliRunner()
    outputs = []
    for extra in ([], ["--config", str(config)]):
        report = tmp_path / f"report{len(extra)}.json"
        result = runner.invoke(main, ["check", str(results), "--json", str(report), *extra])
        assert result.exit_code in (0, 1, 3), result.output
        outputs += [result.output, report.read_text()]
    default_summary = outputs[0]
    assert "(Vally's scoring guide for a CI gate: pass rate ≥ 0.7" in default_summary
    for name in RELIABILITY:
        assert name in outputs[3]
    for text in outputs:
        assert not INTERNAL_NUMBER.search(text), INTERNAL_NUMBER.search(text)


def test_the_shipped_schemas_and_the_docs_name_no_internal_document() -> None:
    """`eval-gate schema report` printed "Reference 004's reliability summary"; the docs
    cited the same numbers, which no reader of them can look up."""
    for name in ("results", "trial-record", "counts", "config", "report", "common"):
        printed = CliRunner().invoke(main, ["schema", name])
        assert printed.exit_code == 0, printed.output
        assert not INTERNAL_NUMBER.search(printed.output), (name, printed.output[:200])
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        found = INTERNAL_NUMBER.search(page.read_text(encoding="utf-8"))
        assert found is None, (page.name, found)
