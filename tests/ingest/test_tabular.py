"""Generic CSV and JSONL tables with a column mapping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate.errors import InputError
from tests.ingest.conftest import FIXTURES, load_one

TABULAR = FIXTURES / "tabular"
CSV_MAP = {
    "stimulus": "case_id",
    "trial": "run",
    "passed": "ok",
    "score": "quality",
    "status": "state",
    "duration_s": "elapsed",
}


def test_csv_with_a_column_map() -> None:
    loaded = load_one(TABULAR / "runs.csv", column_map=CSV_MAP)
    assert [x.format for x in loaded.inputs] == ["csv"]
    assert loaded.outcomes() == {
        "refund-policy": "PFP",
        "cancel, then rebook": "PEF",
        "greeting": "PPS",
    }
    assert loaded.counts() == (9, 5, 1, 1)
    where = loaded.table.stimuli[("default", "cancel, then rebook")].where[1]
    assert where is not None and where.line == 6


def test_csv_with_literal_column_names_and_no_trial_column() -> None:
    loaded = load_one(TABULAR / "plain.csv")
    assert loaded.outcomes() == {"a": "PFP", "b": "FP"}  # order of appearance per stimulus
    assert loaded.table.stimuli[("default", "a")].scores == [1.0, 0.4, 0.9]


def test_jsonl_with_dotted_paths() -> None:
    loaded = load_one(
        TABULAR / "runs.jsonl",
        format="jsonl",
        column_map={
            "stimulus": "case.id",
            "trial": "attempt",
            "passed": "grade.ok",
            "score": "grade.score",
            "message": "error",
        },
    )
    assert loaded.outcomes() == {"summarise-pr": "PPF", "triage-issue": "FEP"}
    assert loaded.table.stimuli[("default", "triage-issue")].messages == ["rate limited"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("yes", True), ("No", False), ("1", True), ("0", False), ("PASS", True), ("fail", False)],
)
def test_boolean_spellings(tmp_path: Path, text: str, expected: bool) -> None:
    path = tmp_path / "t.csv"
    path.write_text(f"stimulus,passed\ns,{text}\n")
    assert load_one(path).table.stimuli[("default", "s")].passed == [expected]


def test_tsv_and_status_verdicts(tmp_path: Path) -> None:
    path = tmp_path / "t.tsv"
    path.write_text("stimulus\tstatus\ns\tpassed\ns\tfailed\ns\terror\n")
    assert load_one(path).outcomes() == {"s": "PFE"}


@pytest.mark.parametrize(
    ("content", "options", "message"),
    [
        ("stimulus,passed\ns,maybe\n", {}, r"t\.csv:2: column 'passed' is not a boolean"),
        ("stimulus,score\ns,1.5\n", {}, r"t\.csv:2: column 'score' is out of range"),
        (
            "stimulus;passed;score\ns;yes;0,91\n",
            {},
            r"t\.csv:2: column 'score' is not a number; expected a number with a decimal point "
            r"\(0\.91, not 0,91\); found '0,91'",
        ),
        ("stimulus,passed\ns,true,extra\n", {}, r"t\.csv:2: row has the wrong number of cells"),
        ("case,passed\ns,true\n", {}, r"t\.csv:1: no stimulus column"),
        ("stimulus,note\ns,hi\n", {}, r"t\.csv:1: no outcome column"),
        # Columns named as such columns usually are: the message says which --map to try.
        ("Case_ID,passed\ns,true\n", {}, r"COLUMN; here perhaps --map stimulus=Case_ID;"),
        ("stimulus,ok\ns,yes\n", {}, r"COLUMN; here perhaps --map passed=ok\);"),
        ("identifier,passed\ns,true\n", {}, r"stimulus=COLUMN; found columns"),
        ("stimulus,passed\ns,true\n", {"stimuls": "x"}, r"unknown field\(s\) 'stimuls'"),
        ("stimulus,passed\ns,true\n", {"trial": "run"}, r"not in the header: trial=run"),
        (
            "stimulus,trial,passed\ns,-1,true\n",
            {},
            r"t\.csv:2: column 'trial' is not a trial index",
        ),
        ('stimulus,passed\n"s,true\n', {}, r"t\.csv"),
    ],
)
def test_malformed_csv(tmp_path: Path, content: str, options: dict[str, str], message: str) -> None:
    path = tmp_path / "t.csv"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        load_one(path, column_map=options)


def test_jsonl_map_typo_is_caught(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"id": "a", "ok": true}\n{"id": "a", "ok": false}\n')
    with pytest.raises(
        InputError, match=r"t\.jsonl:1: row has no outcome.*no passed=okk in this row"
    ):
        load_one(path, format="jsonl", column_map={"stimulus": "id", "passed": "okk"})
    with pytest.raises(
        InputError, match=r"t\.jsonl: --map names column\(s\) that no record has: er"
    ):
        load_one(
            path, format="jsonl", column_map={"stimulus": "id", "passed": "ok", "message": "er"}
        )
    with pytest.raises(InputError, match=r"t\.jsonl:1: no stimulus in column 'stimulus'"):
        load_one(path, format="jsonl")


@pytest.mark.parametrize(
    ("record", "suggested"),
    [
        ({"id": "a", "ok": True}, "; here perhaps --map stimulus=id)"),
        ({"case": {"id": "a"}, "ok": True}, "; here perhaps --map stimulus=case.id)"),
        ({"Task_ID": 7, "ok": True}, "; here perhaps --map stimulus=Task_ID)"),
        # An object or a boolean is no id; a key that is not a plain name is not suggested.
        ({"case": {"x": 1}, "test": True, "ok": True}, ")"),
        ({"a b": {"id": "a"}, "ok": True}, ")"),
    ],
)
def test_a_jsonl_row_without_a_stimulus_suggests_a_likely_key(
    tmp_path: Path, record: dict, suggested: str
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(InputError) as raised:
        load_one(path, format="jsonl")
    assert f"(name the column with --map stimulus=COLUMN{suggested}" in str(raised.value)


def test_a_huge_integer_trial_index_is_an_index_and_a_negative_one_is_refused() -> None:
    from gate.errors import Provenance
    from gate.ingest.values import json_index, trial_index

    where = Provenance("x.json")
    assert json_index(10**400, where) == 10**400  # never turned into a float
    assert trial_index(10**400, where) == 10**400
    assert json_index(3.0, where) == 3
    for bad in (-1, 2.5, float("inf"), "3", True):
        with pytest.raises(InputError, match=r"is not a trial index|is not an integer"):
            json_index(bad, where)
    for bad in (-1, "2.5", "1e400", True):
        with pytest.raises(InputError, match=r"is not a trial index|is not an integer"):
            trial_index(bad, where)


def test_a_long_trial_index_in_text_is_read_exactly_and_a_too_long_one_is_refused(
    tmp_path: Path,
) -> None:
    from gate.errors import Provenance
    from gate.ingest.values import trial_index

    where = Provenance("x.csv")
    # Through a float both would be 11111111111111110656: one trial given twice.
    assert trial_index(" 11111111111111111111 ", where) == 11111111111111111111
    assert trial_index("11111111111111111110", where) == 11111111111111111110
    assert trial_index("3.0", where) == 3 and trial_index("1e2", where) == 100
    with pytest.raises(InputError, match=r"x\.csv: trial is too long: 5000 digits; "
                       r"expected a trial index \(at most 4,300 digits\)"):  # fmt: skip
        trial_index("9" * 5000, where)
    path = tmp_path / "long.csv"
    path.write_text(
        "stimulus,trial,passed\na,11111111111111111111,yes\na,11111111111111111110,no\n"
    )
    # Two trials (in index order: ...110 failed, ...111 passed), not one given twice.
    assert load_one(path, format="csv").outcomes() == {"a": "FP"}
    path.write_text("stimulus,trial,passed\na," + "9" * 5000 + ",yes\nb,0,no\n")
    with pytest.raises(InputError, match=r"long\.csv:2: column 'trial' is too long: 5000 digits"):
        load_one(path, format="csv")
