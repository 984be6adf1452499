"""docs/limits.md lists every limit of gate/limits.py with its default and variable."""

from __future__ import annotations

from gate import limits
from tests.conftest import ROOT


def limits_table() -> str:
    rows = ["| Limit | Default | Variable | What it bounds |", "| --- | --- | --- | --- |"]
    for limit in limits.ALL:
        variable = f"`{limit.variable}`" if limit.variable else ""
        rows.append(
            f"| {limit.name} | {limit.describe(limit.default)} | {variable} | {limit.what} |"
        )
    return "\n".join(rows)


def test_the_documented_limits_are_the_limits() -> None:
    text = (ROOT / "docs" / "limits.md").read_text(encoding="utf-8")
    documented = text.split("<!-- limits:start -->\n", 1)[1].split("\n<!-- limits:end -->", 1)[0]
    assert documented == limits_table()


def test_every_variable_is_named_once_and_starts_with_eval_gate() -> None:
    variables = [limit.variable for limit in limits.ALL if limit.variable]
    assert len(set(variables)) == len(variables)
    assert all(v.startswith("EVAL_GATE_") for v in variables)
