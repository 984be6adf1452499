"""The fast path (orjson, jsonschema-rs, column-wise reduction) equals the plain one exactly."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from gate.errors import InputError
from gate.ingest import IngestOptions, _json, load, native
from gate.scoring import score_table
from tests.scale.conftest import random_jsonl, snapshot, strict_table


@pytest.mark.parametrize("order", ["round", "shuffled"])
def test_streamed_table_and_scores_equal_the_strict_reading(
    tmp_path: Path, small_chunks: None, order: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(7 if order == "round" else 8)
    paths = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    random_jsonl(paths[0], rng, stimuli=60, trials=40, order=order)
    # The second file: other stimuli (a stimulus's trials may not repeat across files here).
    lines = paths[0].read_text(encoding="utf-8").splitlines()
    declarations = [line for line in lines if '"type": "suite"' in line]
    other = [line.replace('"case-', '"other-') for line in lines if line not in declarations]
    paths[1].write_text("\r\n".join(declarations + other) + "\r\n", encoding="utf-8")

    strict_chunks: list[int] = []
    strict_lines = _json.strict_lines

    def counted(path: str, first: int, lines: list[bytes]) -> Iterator[tuple[int, object]]:
        strict_chunks.append(first)
        return strict_lines(path, first, lines)

    monkeypatch.setattr(native, "strict_lines", counted)  # one invalid line's fallback
    monkeypatch.setattr(_json, "strict_lines", counted)  # a whole chunk's fallback
    fast, _ = load([str(p) for p in paths])
    assert strict_chunks == []  # every chunk took the fast path
    slow = strict_table(paths)
    assert len(fast) == len(slow) == 2 * 60 * 40
    assert snapshot(fast) == snapshot(slow)
    for errors in ("fail", "exclude"):
        assert score_table(fast, errors=errors) == score_table(slow, errors=errors)


def test_nested_document_equals_the_strict_reading(tmp_path: Path) -> None:
    rng = random.Random(3)
    stimuli = []
    for s in range(30):
        count = rng.choice([1, 3, 40, 70])  # small batches go trial by trial, big ones at once
        reverse = rng.random() < 0.5
        trials = []
        for t in range(count):
            trial: dict[str, object] = {"passed": rng.random() < 0.5}
            if rng.random() < 0.3:
                trial["score"] = round(rng.random(), 2)
            if rng.random() < 0.05:
                trial = {"status": "error", "message": "boom"}
            if reverse:
                trial["trial"] = count - 1 - t  # written in reverse order
            trials.append(trial)
        stimuli.append({"id": f"s{s}", "tags": ["t"] if s % 3 else [], "trials": trials})
    path = tmp_path / "doc.json"
    document = {"schema_version": "1.0", "suite": "doc", "pass_threshold": 0.5, "stimuli": stimuli}
    path.write_text(json.dumps(document), encoding="utf-8")
    fast, _ = load([str(path)])
    slow = strict_table([path])
    assert snapshot(fast) == snapshot(slow)
    assert score_table(fast) == score_table(slow)


BAD_LINES = [
    '{"stimulus": "a", "trial": 0, "score": NaN}',
    '{"stimulus": "a", "trial": 0, "passed": true, "passed": false}',
    '{"stimulus": "a", "trial": 0, "metadata": {"k": "x:y", "k": 1}, "passed": true}',
    '{"stimulus": "a", "trial": 0, "passed": true, "metadata": {"a\\u003a": 1, "a:": 2}}',
    '{"stimulus": "a", "trial": 0, "score": 1.5}',
    '{"stimulus": "a", "trial": 0}',
    '{"stimulus": "a", "trial": 0, "pased": true}',
    '{"stimulus": "a", "trial": "0", "passed": true}',
    '{"stimulus": "a", "trial": 0, "passed": true',
    '{"stimulus": "a", "trial": 0, "status": "crashed"}',
    '{"stimulus": "a", "trial": 0, "outcome": "right"}',
    '{"stimulus": "a", "trial": 0, "graders": [{"name": "g"}]}',
    "[1, 2]",
    "\ufeff" + '{"stimulus": "bom", "trial": 0, "passed": true}',
    '{"stimulus": "b", "trial": 3, "passed": true}',  # a duplicate of an earlier good line
]


@pytest.mark.parametrize("bad", BAD_LINES)
def test_errors_are_the_strict_readings_errors_in_the_middle_of_a_chunk(
    tmp_path: Path, bad: str
) -> None:
    good = [json.dumps({"stimulus": "b", "trial": t, "passed": t % 2 == 0}) for t in range(50)]
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join([*good[:40], bad, *good[40:]]) + "\n", encoding="utf-8")

    def outcome(read: object) -> str:
        try:
            read_table = read()  # type: ignore[operator]
        except InputError as error:
            return str(error)
        return "ok " + repr(snapshot(read_table))

    fast = outcome(lambda: load([str(path)])[0])
    slow = outcome(lambda: strict_table([path]))
    assert fast == slow
    if bad.startswith("\ufeff"):
        assert fast.startswith("ok")  # the strict parser skips a byte order mark
    else:
        assert f"{path}:41" in fast


def test_duplicates_name_both_places_across_files_chunks_and_within_a_chunk(
    tmp_path: Path, small_chunks: None
) -> None:
    lines = [json.dumps({"stimulus": f"s{s}", "trial": t, "passed": True})
             for t in range(20) for s in range(10)]  # fmt: skip
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    one.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for again in (lines[5], lines[150]):  # early: another chunk; late: the same chunk
        two.write_text("\n".join([*lines[:0], again]) + "\n", encoding="utf-8")
        with pytest.raises(InputError) as caught:
            load([str(one), str(two)])
        first = lines.index(again) + 1
        assert f"first at {one}:{first}, again at {two}:1" in str(caught.value)
    within = tmp_path / "within.jsonl"
    within.write_text("\n".join([*lines[:100], lines[90], *lines[100:]]) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load([str(within)])
    assert f"first at {within}:91, again at {within}:101" in str(caught.value)


def test_sparse_huge_and_float_indices_equal_the_strict_reading(
    tmp_path: Path, small_chunks: None
) -> None:
    indices = [0, 1, 2, 3.0, 10**6, 2**63 - 1, 2**63, 10**30, 7, 5000]
    lines = [json.dumps({"stimulus": "a", "trial": t, "passed": i % 3 == 0})
             for i, t in enumerate(indices)]  # fmt: skip
    lines += [json.dumps({"stimulus": f"b{s}", "trial": t, "passed": True})
              for s in range(200) for t in range(5)]  # fmt: skip
    path = tmp_path / "sparse.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fast, _ = load([str(path)])
    slow = strict_table([path])
    assert snapshot(fast) == snapshot(slow)
    assert fast.stimuli[("default", "a")].indices == sorted(int(t) for t in indices)
    duplicate = tmp_path / "dup.jsonl"
    duplicate.write_text(
        "\n".join([*lines, json.dumps({"stimulus": "a", "trial": 10**30, "passed": True})]) + "\n"
    )
    with pytest.raises(InputError, match=f"first at {duplicate}:8, again at {duplicate}:1011"):
        load([str(duplicate)])


def test_a_ragged_suite_stays_within_its_memory_budget(tmp_path: Path) -> None:
    # One stimulus with 20,000 trials, then 5,000 with 3: a dense stimuli x max-index array
    # would hold 100 million slots.
    lines = [json.dumps({"stimulus": "long", "trial": t, "passed": t % 2 == 0})
             for t in range(20_000)]  # fmt: skip
    lines += [json.dumps({"stimulus": f"s{s}", "trial": t, "passed": True})
              for s in range(5_000) for t in range(3)]  # fmt: skip
    path = tmp_path / "ragged.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table, _ = load([str(path)])
    assert table._store.slots <= max(1 << 20, 4 * len(table))
    assert table.stimuli[("default", "long")].passed == [t % 2 == 0 for t in range(20_000)]
    assert len(table) == 35_000


def test_a_stimulus_far_longer_than_the_others_is_read_and_checked_like_any(
    tmp_path: Path,
) -> None:
    # 10,000 stimuli of one trial leave the dense arrays 8 slots wide; the long stimulus,
    # its trials out of order, gets a segment of its own, and a repeat of one of them is
    # reported at both lines.
    rng = random.Random(5)
    order = list(range(3_000))
    rng.shuffle(order)
    lines = [json.dumps({"stimulus": f"s{s}", "trial": 0, "passed": s % 4 == 0})
             for s in range(10_000)]  # fmt: skip
    lines += [json.dumps({"stimulus": "long", "trial": t, "passed": t % 3 == 0}) for t in order]
    path = tmp_path / "long.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fast, _ = load([str(path)])
    assert snapshot(fast) == snapshot(strict_table([path]))
    assert np.flatnonzero(fast._store._length).tolist() == [fast.stimuli[("default", "long")]._row]
    assert fast._store._extra == {}
    assert fast.stimuli[("default", "long")].passed == [t % 3 == 0 for t in range(3_000)]
    line = 10_001 + order.index(1_500)
    again = json.dumps({"stimulus": "long", "trial": 1_500, "passed": True})
    path.write_text("\n".join([*lines, again]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=f"first at {path}:{line}, again at {path}:13001"):
        load([str(path)])


def test_options_suite_and_bare_carriage_returns(tmp_path: Path) -> None:
    lines = [json.dumps({"stimulus": "a", "trial": t, "passed": True}) for t in range(40)]
    path = tmp_path / "old-mac.jsonl"
    path.write_bytes(("\r".join(lines) + "\r").encode())
    options = IngestOptions(suite="mine")
    fast, _ = load([str(path)], options)
    assert snapshot(fast) == snapshot(strict_table([path], options))
    assert list(fast.stimuli) == [("mine", "a")]
    assert fast.stimuli[("mine", "a")].where[39].line == 40  # type: ignore[union-attr]


def test_one_outlier_index_does_not_push_everyone_into_the_overflow(tmp_path: Path) -> None:
    lines = [json.dumps({"stimulus": "odd", "trial": 10**7, "passed": True})]
    lines += [json.dumps({"stimulus": f"s{s}", "trial": t, "passed": t % 3 == 0})
              for t in range(200) for s in range(600)]  # fmt: skip
    path = tmp_path / "outlier.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table, _ = load([str(path)])
    assert {row: list(cells) for row, cells in table._store._extra.items()} == {0: [10**7]}
    assert table._store.width >= 200
    assert table.stimuli[("default", "odd")].indices == [10**7]
    assert table.stimuli[("default", "s5")].passed == [t % 3 == 0 for t in range(200)]


def test_one_stimulus_of_very_many_trials_is_stored_densely(tmp_path: Path) -> None:
    # Rows were allocated 64 at a time, so a lone stimulus had a 64th of the slot budget and
    # 15/16 of its trials went to the overflow dicts (a tuple each): a CSV of 16 million
    # trials of one stimulus ran past 120 s and 4 GB. Its score sum, summed row by row now
    # (the table is one row wide), is the same compensated sum in trial order to the bit.
    from gate.table.store import neumaier

    rng = np.random.default_rng(3)
    scores = rng.random(300_000).round(3)
    path = tmp_path / "one.csv"
    rows = "".join(f"a,{t},{s}\n" for t, s in enumerate(scores.tolist()))
    path.write_text("stimulus,trial,score\n" + rows, encoding="utf-8")
    table, _ = load([str(path)], IngestOptions(format="csv"))
    assert table._store._extra == {}
    summary = table.summary()
    total, compensation = neumaier(0.0, 0.0, scores.tolist())
    assert summary.score_sum.tolist() == [total + compensation]
    assert summary.n.tolist() == [300_000]
