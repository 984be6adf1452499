"""Generic CSV and JSONL read as columns equal the same files read row by row (_row_trial):
the same table, usage, messages and warnings, and the same errors."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import random
import warnings
from pathlib import Path
from typing import Any

import pytest

from gate.errors import InputError
from gate.ingest import IngestOptions, load, tabular
from gate.trials import Trial, TrialColumns
from tests.scale.conftest import snapshot

CSV_MAP = {"stimulus": "case", "trial": "run", "passed": "ok", "score": "quality",
           "status": "state", "message": "why", "duration_s": "secs"}  # fmt: skip
JSONL_MAP = {"stimulus": "case", "passed": "grade.ok", "score": "grade.score", "status": "state",
             "message": "why", "tokens": "usage.tokens", "outcome": "kind"}  # fmt: skip


def read(path: Path, options: IngestOptions, columnar: bool, monkeypatch: Any) -> str:
    """Everything a read says (table and warnings), or its error."""
    with monkeypatch.context() as patch:
        if not columnar:

            def whole_file_by_rows(*args: Any) -> Any:
                return (0, 2)  # the csv module reads the whole file, as it always could
                yield

            patch.setattr(tabular, "_columns", _refuse)
            patch.setattr(tabular, "_csv_blocks", whole_file_by_rows)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                table, _ = load([str(path)], options)
        except InputError as error:
            return "error " + str(error)
    usage = table.usage()
    said = [str(w.message) for w in caught]
    kept = {k: r.trial_messages for k, r in table.stimuli.items()}
    columns = None if usage is None else [usage.values(f).tolist() for f in
                                          ("cost_usd", "duration_s", "tokens")]  # fmt: skip
    return repr((snapshot(table), said, kept, columns, table.usage_dropped))


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise tabular._NotColumnar


def random_csv(rng: random.Random, rows: int) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator=rng.choice(["\n", "\r\n"]))
    writer.writerow(["case", "run", "ok", "quality", "state", "why", "secs", "tokens", "extra"])
    for i in range(rows):
        state = rng.choice(["done", "done", "error", "skipped", "pass", "FAIL", " ok "])
        ok = rng.choice(["yes", "no", "1", "0", "", "True"])
        quality = rng.choice(["", "0.5", "1", "0", " 0.25 "])
        if state in ("done", " ok ") and not ok and not quality:
            ok = "no"  # every row decided: a row without an outcome is an error (tested below)
        writer.writerow([
            rng.choice(["a", "b", " c ", "d, e", "é"]) + str(i % 7), i // 7, ok, quality, state,
            rng.choice(["", "boom", "x, y", 'say "hi"']),
            rng.choice(["", "1.5", "3", "-2"]), rng.choice(["", "120", "lots"]), "z",
        ])  # fmt: skip
    return out.getvalue()


@pytest.mark.parametrize("seed", range(4))
def test_csv_columns_equal_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    path = tmp_path / "r.csv"
    path.write_text(random_csv(rng, 700), encoding="utf-8")
    options = IngestOptions(format="csv", column_map=CSV_MAP)
    fast, slow = (read(path, options, c, monkeypatch) for c in (True, False))
    assert fast == slow and not fast.startswith("error")
    assert {type(x).__name__ for x in tabular.read_csv(str(path), options)} == {"TrialColumns"}


@pytest.mark.parametrize(
    "bad",
    ["a9,1,maybe,,done,,,,z", "a9,1,yes,1.5,done,,,,z", "a9,x,yes,,done,,,,z",
     ",1,yes,,done,,,,z", "a9,1,,,done,,,,z", "a9,1,yes,,crashing,,,,z", "a9,1,yes",
     "a9,1,yes,,done,,nan,,z", 'a9,1,yes,,done,"two\nlines",,,z', "a9,0,yes,,done,,,,z",
     "a9," + "9" * 5000 + ",yes,,done,,,,z"],
)  # fmt: skip
def test_csv_errors_are_the_row_readers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    rng = random.Random(1)
    text = random_csv(rng, 300).replace("\r\n", "\n").splitlines()
    text.insert(150, bad)
    path = tmp_path / "r.csv"
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    options = IngestOptions(format="csv", column_map=CSV_MAP)
    monkeypatch.setattr(tabular, "_csv_blocks", _small_blocks(tabular._csv_blocks))
    fast, slow = (read(path, options, c, monkeypatch) for c in (True, False))
    assert fast == slow


def _small_blocks(blocks: Any) -> Any:
    """The columnar CSV path with blocks of a few hundred bytes, so that chunk edges fall
    everywhere."""
    from gate import reading

    def with_small(*args: Any) -> Any:
        line_blocks = reading.line_blocks

        def small(handle: Any, path: str, size: int, first_line: int = 1) -> Any:
            return line_blocks(handle, path, 300, first_line)

        reading.line_blocks = small  # type: ignore[assignment]
        try:
            return (yield from blocks(*args))
        finally:
            reading.line_blocks = line_blocks

    return with_small


def random_jsonl(rng: random.Random, rows: int) -> str:
    lines = []
    for i in range(rows):
        record: dict[str, Any] = {"case": rng.choice(["a", "b", 7, "é"]) if i % 50 else "z"}
        if rng.random() < 0.9:
            record["grade"] = {"ok": rng.choice([True, False, None])}
            if rng.random() < 0.5:
                record["grade"]["score"] = rng.choice([0, 1, 0.5, None])
        record["state"] = rng.choice(["done", "error", "skipped", None, "pass"])
        if rng.random() < 0.3:
            record["why"] = rng.choice(["boom", "", "x, y"])
        if rng.random() < 0.3:
            record["usage"] = {"tokens": rng.choice([5, {"input": 3, "output": 4}, -1, None])}
        if rng.random() < 0.1:
            record["kind"] = "odd"
        if rng.random() < 0.2:
            record["duration_s"] = rng.choice([1.5, "2", -3])
        grade = record.get("grade", {})
        decided = record["state"] in ("error", "skipped", "pass") or "kind" in record
        if not decided and grade.get("ok") is None and grade.get("score") is None:
            record["grade"] = {"ok": True}  # every row decided (an undecided one: tested below)
        lines.append(json.dumps(record))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(4))
def test_jsonl_columns_equal_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    path = tmp_path / "r.jsonl"
    path.write_text(random_jsonl(rng, 900), encoding="utf-8")
    options = IngestOptions(format="jsonl", column_map=JSONL_MAP)
    fast, slow = (read(path, options, c, monkeypatch) for c in (True, False))
    assert fast == slow
    with pytest.warns(UserWarning, match="numbered in order of appearance"):
        read_as = [type(x).__name__ for x in tabular.read_jsonl(str(path), options)]
    assert "TrialColumns" in read_as


@pytest.mark.parametrize(
    "bad",
    ['{"case": "a", "grade": {"ok": "yes"}}', '{"case": "a", "grade": {"score": 2}}',
     '{"case": true, "grade": {"ok": true}}', '{"grade": {"ok": true}}',
     '{"case": "a", "state": 3}', '{"case": "a"}', "[1]", '{"case": 100000000000000000000, '
     '"grade": {"ok": true}}', '{"case": "a", "grade": {"ok": true}, "usage": {"tokens": "x"}}'],
)  # fmt: skip
def test_jsonl_errors_are_the_row_readers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    rng = random.Random(2)
    text = random_jsonl(rng, 300).splitlines()
    text.insert(150, bad)
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    options = IngestOptions(format="jsonl", column_map=JSONL_MAP)
    fast, slow = (read(path, options, c, monkeypatch) for c in (True, False))
    assert fast == slow


JSONL_RUNS_MAP = {"stimulus": "case", "trial": "run", "passed": "ok", "score": "quality",
                  "status": "state", "message": "why", "duration_s": "elapsed",
                  "tokens": "usage.tokens"}  # fmt: skip


def random_runs_jsonl(rng: random.Random, rows: int, elapsed_from: int) -> str:
    """Records with a trial index, suites, tags, scores as integers and floats, usage given
    as numbers, token objects and nulls; the mapped duration only from record
    ``elapsed_from`` on, some records before it giving a ``duration_s`` key of that name."""
    lines = []
    seen: dict[str, int] = {}
    for i in range(rows):
        case = rng.choice(["a", "b", " c ", "d"])
        seen[case] = seen.get(case, -1) + 1
        record: dict[str, Any] = {"case": case, "run": seen[case]}
        record["ok"] = rng.choice([True, False, None])
        if rng.random() < 0.7:
            record["quality"] = rng.choice([0, 1, 0.5, 0.25, None])
        record["state"] = rng.choice(["done", "error", "skipped", None, "fail"])
        if record["ok"] is None and record.get("quality") is None and record["state"] in (
            "done",
            None,
        ):
            record["ok"] = True  # every row decided
        if rng.random() < 0.5:
            record["suite"] = rng.choice(["s1", " s2 ", "", None])
        if rng.random() < 0.3:
            record["tags"] = rng.choice([["x", "y"], "p; q", "", None])
        if rng.random() < 0.3:
            record["why"] = rng.choice(["boom", "", "  ", None, 3])
        if i >= elapsed_from and rng.random() < 0.8:
            record["elapsed"] = rng.choice([1, 2.5, 0, None, 3e9, 2**40, -2])
        if i < elapsed_from and rng.random() < 0.5:
            record["duration_s"] = rng.choice([1, 2.5, "3", None])
        if rng.random() < 0.7:
            record["usage"] = rng.choice(
                [{"tokens": 10}, {"tokens": {"input": 3, "output": 4}}, {}, {"tokens": None}]
            )
        lines.append(json.dumps(record))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("seed", "elapsed_from"), [(0, 0), (1, 0), (2, 700), (3, 700)])
def test_jsonl_columns_with_trials_suites_and_usage_equal_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, elapsed_from: int
) -> None:
    # Chunks of about 30 records: in the first ones no record has the mapped duration, and
    # a column that no record of a chunk has is no column: a key of the field's own name is
    # read as metadata, as row by row (the columnar read once kept the mapped nothing).
    from gate.ingest import _json

    chunks = _json.jsonl_chunks
    monkeypatch.setattr(_json, "jsonl_chunks", lambda path, size: chunks(path, 4096))
    rng = random.Random(seed)
    path = tmp_path / "r.jsonl"
    path.write_text(random_runs_jsonl(rng, 900, elapsed_from), encoding="utf-8")
    options = IngestOptions(format="jsonl", column_map=JSONL_RUNS_MAP)
    fast, slow = (read(path, options, c, monkeypatch) for c in (True, False))
    assert fast == slow and not fast.startswith("error")
    read_as = [type(x).__name__ for x in tabular.read_jsonl(str(path), options)]
    assert set(read_as) == {"TrialColumns"} and len(read_as) > 20


def test_records_numbered_counted_once_across_columnar_and_row_chunks(tmp_path: Path) -> None:
    # Three chunks of about a megabyte: the middle one holds an integer past 64 bits, so it
    # is read row by row; the warning counts every record numbered, each once (the count
    # was once a sum over every stimulus per record: quadratic in the row reader).
    lines = [json.dumps({"case": f"s{i % 997}", "ok": i % 3 == 0}) for i in range(90_000)]
    lines[45_000] = json.dumps({"case": 10**20, "ok": True})
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    options = IngestOptions(format="jsonl", column_map={"stimulus": "case", "passed": "ok"})
    with pytest.warns(UserWarning, match="^.*90,?000 record") as caught:
        kinds = [type(x).__name__ for x in tabular.read_jsonl(str(path), options)]
    assert {"TrialColumns", "Trial"} <= set(kinds)
    assert sum(kind == "Trial" for kind in kinds) > 1_000  # the middle chunk, row by row
    assert len(caught) == 1


def awkward_csv(rng: random.Random, rows: int, newline: str) -> str:
    """Rows with what the columnar split cannot take: messages over several lines, blank
    lines, rows of blank cells, a quote inside an unquoted cell (literal to the csv module,
    so quotes in a block may not pair up)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator=newline)
    writer.writerow(["case", "run", "ok", "quality", "state", "why", "secs", "tokens", "extra"])
    for i in range(rows):
        why = rng.choice(["", "boom", "x, y", "two\nlines", "a\r\nb", 'say "hi"\n\n"ok"'])
        writer.writerow([f"c{i % 9}", i // 9, rng.choice(["yes", "no"]), "", "done", why,
                         rng.choice(["", "1.5"]), "", "z"])  # fmt: skip
        odd = rng.random()
        if odd < 0.03:
            out.write(newline)
        elif odd < 0.06:
            out.write(",,,,,,,," + newline)
        elif odd < 0.08:
            out.write(f'q{i},{i // 9 + 10_000},yes,,done,ab"c,,,z{newline}')
    return out.getvalue()


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("small", [True, False])
def test_csv_awkward_blocks_equal_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, newline: str, small: bool
) -> None:
    path = tmp_path / "r.csv"
    path.write_bytes(awkward_csv(random.Random(seed), 600, newline).encode())
    options = IngestOptions(format="csv", column_map=CSV_MAP)
    if small:  # block edges everywhere, inside quoted cells too
        monkeypatch.setattr(tabular, "_csv_blocks", _small_blocks(tabular._csv_blocks))
    fast, slow = (read(path, options, c, monkeypatch) for c in (True, False))
    assert fast == slow and not fast.startswith("error")


def test_csv_blocks_after_one_with_multiline_cells_stay_columnar(tmp_path: Path) -> None:
    rows = ["case,run,ok,why"] + [f"s{i % 50},{i // 50},yes," for i in range(200_000)]
    rows[3] = 's2,0,no,"first line\n\nthird line"'  # a quoted cell over three lines
    rows[5] = ""  # and a blank line: still read as columns, by the csv module's rows
    rows[7] = rows[100_007] = ",,,"  # rows of blank cells (a spreadsheet's), left out too
    path = tmp_path / "r.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    options = IngestOptions(format="csv", column_map={"stimulus": "case", "trial": "run",
                                                     "passed": "ok", "message": "why"})  # fmt: skip
    read_as = [type(x).__name__ for x in tabular.read_csv(str(path), options)]
    assert len(read_as) > 2 and set(read_as) == {"TrialColumns"}
    table, _ = load([str(path)], options)
    assert table.stimuli[("default", "s2")].trial_messages[0].text == "first line\n\nthird line"
    # Lines are still counted right after it: the last row is on line 200,003 (two more
    # lines for the cell, and the header).
    path.write_text("\n".join([*rows[:-1], "s0,9999,maybe,"]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"r\.csv:200003: .*'ok'"):
        load([str(path)], options)


def test_csv_line_numbers_after_the_row_reader_takes_over(tmp_path: Path) -> None:
    # A stray carriage return on line 3 hands the rest of the file to the csv module; a
    # line of 70,000 commas further on is refused naming its own line, counted from the
    # file's start (it was once counted from where the csv module took over).
    rows = ["case,ok"] + [f"s{i},yes" for i in range(100_000)]
    rows[2] = "s1,yes\r"
    rows[80_000] = "s9," + "," * 70_000
    path = tmp_path / "r.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    options = IngestOptions(format="csv", column_map={"stimulus": "case", "passed": "ok"})
    with pytest.raises(InputError, match=r"r\.csv:80001: .*cells"):
        load([str(path)], options)


def test_csv_one_literal_quote_does_not_hold_back_the_rest(tmp_path: Path) -> None:
    # A quote inside an unquoted cell makes the first block's quote count odd for good; the
    # csv module still reads that block to its end, so it is whole and every block after it
    # is read as columns (it once held blocks back for 16 MB, then read the rest row by row).
    rows = ["case,ok,why", 's0,yes,ab"c'] + [f"s{i % 50},yes,fine" for i in range(300_000)]
    path = tmp_path / "r.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    options = IngestOptions(format="csv", column_map={"stimulus": "case", "passed": "ok",
                                                     "message": "why"})  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numbered in order of appearance
        read_as = [type(x).__name__ for x in tabular.read_csv(str(path), options)]
    assert len(read_as) > 3 and set(read_as) == {"TrialColumns"}


def test_two_column_blocks_are_split_without_the_csv_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Looking for a row of blank cells as width - 1 delimiters in a row found one in every
    # block of a two-column file (any delimiter), and sent it through the csv module.
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the csv module was used")

    with monkeypatch.context() as patch:
        patch.setattr(tabular.csv, "reader", refuse)
        assert tabular._plain_cells("a,1\r\nb,0\n", ",", 2, 2) == ([2, 3], ["a", "1", "b", "0"])
        # Lines of delimiters and white space (str.isspace's) are left out, as the row reader
        # does, without the csv module too (it took 100 s for 100 MB of blank lines).
        for blank in (",", " , ", "\u00a0,\u3000", "\x1c,", "", "\t"):
            text = f"a,1\n{blank}\nb,0\n"
            assert tabular._plain_cells(text, ",", 2, 2) == ([2, 4], ["a", "1", "b", "0"])
        assert tabular._plain_cells("\n , \r\n\n", ",", 2, 7) == ([], [])


def test_a_file_of_blank_lines_is_read_without_the_csv_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.csv"
    path.write_text("case,ok\n" + "\n" * 300_000 + " , \nz,yes\n" + "\r\n" * 1_000, "utf-8")
    options = IngestOptions(format="csv", column_map={"stimulus": "case", "passed": "ok"})
    slow = read(path, options, False, monkeypatch)
    readers = []
    real = tabular.csv.reader

    def counted(*args: Any, **kwargs: Any) -> Any:
        readers.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(tabular.csv, "reader", counted)
    fast = read(path, options, True, monkeypatch)
    assert fast == slow and "line=300003" in fast
    assert not [r for r in readers if isinstance(r[0], io.StringIO)]  # none for a block


def test_a_blank_line_is_found_on_every_line_the_first_too() -> None:
    # The search starts at line ends (the regex engine jumps between them; a (?m)^ search
    # tried every character, 0.25 s of a 54 MB CSV): the first line is looked at on its own.
    import re

    rng = random.Random(8)
    alphabet = ["a", ",", ";", " ", "\n", "\r", "\t", "\x85", "\u2028", "\x0c", '"']
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
        for delimiter in (",", ";", "\t"):
            line_start = re.compile(rf"(?m)^[\s{re.escape(delimiter)}]*\n")
            found = line_start.search(text) is not None
            assert tabular._has_blank_line(text, delimiter) == found, (text, delimiter)
    assert tabular._plain_cells(" ,\na,1\n", ",", 2, 2) == ([3], ["a", "1"])


def test_a_jsonl_block_gives_each_row_as_the_row_reader_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Numbers come as float arrays (NaN: none); a row taken back out of the block (for an
    # error, or to be decided one by one) has None there and Python floats, as row by row.
    rng = random.Random(5)
    path = tmp_path / "r.jsonl"
    path.write_text(random_runs_jsonl(rng, 300, 0), encoding="utf-8")
    options = IngestOptions(format="jsonl", column_map=JSONL_RUNS_MAP)
    (block,) = tabular.read_jsonl(str(path), options)
    assert isinstance(block, TrialColumns)
    monkeypatch.setattr(tabular, "_columns", _refuse)
    rows = list(tabular.read_jsonl(str(path), options))
    usage = ("duration_s", "tokens", "cost_usd")
    for i, row in enumerate(rows):
        assert isinstance(row, Trial)
        taken = block.trial_at(i)
        kept = {k: v for k, v in row.metadata.items() if k in usage}
        assert taken == dataclasses.replace(row, metadata=kept)
        assert type(taken.metadata.get("duration_s", 0.0)) is float
        assert taken.score is None or type(taken.score) is float
    assert sum(row.score is None for row in rows) > 50
    assert sum("duration_s" in row.metadata for row in rows) > 50
