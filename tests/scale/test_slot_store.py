"""The slot store against a plain dictionary of cells, on shapes that use every home a cell
can have: the dense arrays, a row's own arrays (a stimulus with far more trials than the
others), and the per-row dictionaries (sparse and past-64-bit indices)."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest

import gate.table.store as store_module
from gate.table.store import HUGE_INDEX, Column, SlotStore, neumaier

COLUMNS = (
    Column("code", "uint8"),
    Column("score", "float64"),
    Column("where", "int64"),
    Column("category", "int16", lazy=True),
    Column("tokens", "float64", math.nan, lazy=True),
)
Cells = dict[tuple[int, int], dict[str, Any]]


def _batch(rng: random.Random, rows: int, heavy_next: list[int]) -> list[tuple[int, int]]:
    """(row, trial index) pairs: mostly small indices, a heavy row's next run, a few sparse
    or past-64-bit ones, and now and then a repeat."""
    keys: list[tuple[int, int]] = []
    for _ in range(rng.randrange(1, 400)):
        shape = rng.random()
        if shape < 0.55:
            keys.append((rng.randrange(rows), rng.randrange(12)))
        elif shape < 0.9:
            row = rng.randrange(len(heavy_next))  # rows that get far more trials than the rest
            keys.append((row, heavy_next[row]))
            heavy_next[row] += rng.choice((1, 1, 1, 2))
        elif shape < 0.97:
            keys.append((rng.randrange(rows), rng.randrange(10**4, 10**7)))
        elif shape < 0.985:
            keys.append((rng.randrange(rows), 2**64 + rng.randrange(3)))
        elif keys:
            keys.append(rng.choice(keys))
    return keys


def _check(store: SlotStore, cells: Cells, rows: int, names: list[str]) -> None:
    by_row: dict[int, list[int]] = {}
    for row, t in sorted(cells):
        by_row.setdefault(row, []).append(t)
    for row in range(rows):
        indices = by_row.get(row, [])
        got_indices, lists = store.cells(row, names)
        assert got_indices == indices, row
        for name, values in zip(names, lists, strict=True):
            expected = [cells[row, t][name] for t in indices]
            assert np.array_equal(np.array(values, dtype=float), np.array(expected, dtype=float),
                                  equal_nan=True), (row, name)  # fmt: skip
        codes = bytes(cells[row, t]["code"] for t in indices)
        assert store.row_bytes(row).replace(b"\0", b"") == codes
        for t in indices[:3] + indices[-3:]:
            assert store.occupied(row, t)
            assert store.value(row, t, "where") == cells[row, t]["where"]
        assert not store.occupied(row, (indices[-1] if indices else 0) + 1)
    counts = store.count_values(rows, (1, 2, 3))
    for row in range(rows):
        for value in (1, 2, 3):
            expected = sum(cells[row, t]["code"] == value for t in by_row.get(row, []))
            assert counts[row, value] == expected
    sums = store.ordered_sums("score", rows)
    for row in range(rows):
        total, compensation = neumaier(
            0.0, 0.0, [cells[row, t]["score"] for t in by_row.get(row, [])]
        )
        assert sums[row] == total + compensation
    row_of, (where,) = store.gather(list(range(rows)), ["where"])
    assert (np.diff(row_of) >= 0).all()  # row after row
    for row in range(rows):
        expected = [cells[row, t]["where"] for t in by_row.get(row, [])]
        assert where[row_of == row].tolist() == expected
    block, whole = store.rows_block(np.arange(rows, dtype=np.int64))
    for row in np.flatnonzero(whole).tolist():
        assert block[row].tobytes().replace(b"\0", b"") == store.row_bytes(row).replace(b"\0", b"")


@pytest.mark.parametrize("seed", range(12))
def test_the_store_keeps_what_a_dictionary_keeps(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A small floor, so that a few hundred trials already need every home.
    monkeypatch.setattr(store_module, "DENSE_FLOOR", 64)
    monkeypatch.setattr(store_module, "WIDE_FLOOR", 8 if seed % 2 else 64)
    monkeypatch.setattr(store_module, "WIDE_SLOTS", 4 if seed % 3 else 2)
    rng = random.Random(seed)
    store = SlotStore(COLUMNS)
    cells: Cells = {}
    rows = rng.randrange(3, 40)
    heavy_next = [0] * min(rows, rng.choice((1, 2, 6)))
    names = ["code", "score", "where"]
    for step in range(rng.randrange(10, 30)):
        keys = _batch(rng, rows, heavy_next)
        exact = [t for _, t in keys]
        huge = any(t >= HUGE_INDEX for t in exact)
        indices = np.array([min(t, HUGE_INDEX) for t in exact], dtype=np.int64)
        row_array = np.array([r for r, _ in keys], dtype=np.int64)
        seen: set[tuple[int, int]] = set()
        expected = None
        for i, key in enumerate(keys):
            if key in cells or key in seen:
                expected = i
                break
            seen.add(key)
        store.fit(rows, indices, len(keys))
        duplicate = store.first_duplicate(row_array, indices, exact if huge else None)
        assert duplicate == expected
        stop = len(keys) if duplicate is None else duplicate
        values: dict[str, Any] = {
            "code": np.array([rng.choice((1, 2, 3)) for _ in range(stop)], dtype=np.uint8),
            "score": np.array([rng.choice((0.1, 0.2, 1 / 3, 0.7, 1e-17)) for _ in range(stop)]),
            "where": np.arange(step * 1000, step * 1000 + stop, dtype=np.int64),
        }
        if step == 4:  # a lazy column arrives: the cells stored so far get its init value
            store.ensure("category", lambda occupancy: occupancy == 1)
            store.ensure("tokens", lambda occupancy: np.full(occupancy.shape, math.nan))
            names += ["category", "tokens"]
            for cell in cells.values():
                cell["category"] = int(cell["code"] == 1)
                cell["tokens"] = math.nan
        if step >= 4:
            values["category"] = np.array([rng.randrange(5) for _ in range(stop)], dtype=np.int16)
            values["tokens"] = np.array([rng.choice((math.nan, 12.0)) for _ in range(stop)])
        store.put(row_array[:stop], indices[:stop], values, exact[:stop] if huge else None)
        for i, key in enumerate(keys[:stop]):
            cells[key] = {name: values[name][i].item() for name in values}
        assert store.stored == len(cells)
        if step % 5 == 0:
            _check(store, cells, rows, names)
    _check(store, cells, rows, names)
    store.compact(rows)
    _check(store, cells, rows, names)


def test_a_stimulus_of_very_many_trials_among_many_small_ones_gets_a_segment_of_its_own() -> None:
    # 10,000 stimuli of 10 trials, then one of 400,000: its trials were a tuple each in a
    # dictionary (a million of them: 5.7 s and 350 MB for the check, now 2.9 s, 169 MB).
    store = SlotStore(COLUMNS)
    small_rows = np.repeat(np.arange(1, 10_001, dtype=np.int64), 10)
    small_indices = np.tile(np.arange(10, dtype=np.int64), 10_000)
    blocks = [(small_rows, small_indices)]
    for start in range(0, 400_000, 65_536):
        indices = np.arange(start, min(start + 65_536, 400_000), dtype=np.int64)
        blocks.append((np.zeros(indices.size, dtype=np.int64), indices))
    for rows, indices in blocks:
        store.fit(10_001, indices, indices.size)
        assert store.first_duplicate(rows, indices) is None
        codes = (indices % 3 + 1).astype(np.uint8)
        store.put(rows, indices, {"code": codes, "score": indices / 1e6, "where": indices})
    assert store._extra == {}
    assert store._length.tolist().count(0) == len(store._length) - 1
    assert store.slots <= 4 * store.stored
    indices, (codes,) = store.cells(0, ["code"])
    assert indices == list(range(400_000))
    assert codes == (np.arange(400_000) % 3 + 1).tolist()
    assert store.count_values(10_001, (1, 2, 3))[0].tolist() == [0, 133_334, 133_333, 133_333]
    assert store.first_duplicate(np.array([0, 0]), np.array([400_000, 399_999])) == 1
    store.compact(10_001)
    assert store.slots == 10_001 * 10 + 400_000
