"""Columnar storage of per-trial cells, indexed by (row, trial index): the table's engine.

A row is one stimulus; its trial ``t`` lives in column ``t`` of a dense array per field,
so a row's trials are always in trial order without sorting, and an occupied slot is how
a duplicate is found. The first column is the occupancy column: 0 marks an empty slot.
The dense arrays never hold more than 4 slots per trial stored in them (or a floor of a
million), so a trial index past their width has two other homes:

- a row that fills slots past the width densely (one stimulus of a million trials among
  ten thousand of ten) leaves the dense arrays for a segment of its own in a pool (one
  1-D array per column), at most 2 slots per trial of that row, holding every trial
  index below its length; segments grow by doubling, at the pool's top, and are written
  and read for many rows at once;
- what fills no slots densely (a sparse 10**30) goes to a small per-row dictionary.

Provenance is packed into one integer per trial (:class:`ProvenancePacker`): a source id
(the file, or a JSON-pointer prefix) and the line or position, so the sources grow with
files and stimuli, not with trials. Nothing here knows what a column means: the domain
model (:mod:`gate.table.model`) does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gate.errors import Provenance

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: A dense slot array never holds more than this many slots, or 4 per trial stored,
#: whichever is larger; trial indices past its width go to a per-row dict.
DENSE_FLOOR = 1 << 20
#: A packed provenance: (source id + 1) << POS_BITS | position; 0 means unknown.
POS_BITS = 40
POS_MASK = (1 << POS_BITS) - 1
MAX_SOURCES = (1 << 22) - 1
#: A wide row's segment (see above) is never shorter: fewer cells stay in its dictionary.
WIDE_FLOOR = 64
#: A wide row's segment has at most this many slots per trial of the row: rows whose trials
#: fill no more than every other slot (indices 0, 4, 8, ...) stay in the dictionaries, which
#: then take less memory (60,000 such stimuli of 16 trials: 322 MB at 4 slots, 265 at 2).
WIDE_SLOTS = 2
#: A stand-in for a trial index past 64 bits: never dense, so its true value is kept aside.
HUGE_INDEX = 1 << 62


class ProvenancePacker:
    """Provenance as one int64 per trial: a source (file, pointer prefix) and a position."""

    def __init__(self) -> None:
        # Sources are (file, pointer prefix), or (file, None) for a line number.
        self._sources: list[tuple[str, str | None]] = []
        self._ids: dict[tuple[str, str | None], int] = {}
        self._verbatim: list[Provenance] = []

    def source(self, file: str, prefix: str | None) -> int:
        key = (file, prefix)
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = len(self._sources)
            self._sources.append(key)
        return found

    def pack(self, where: Provenance | None) -> int:
        if where is None:
            return 0
        if where.pointer is None and where.line is not None and 0 <= where.line <= POS_MASK:
            source = self.source(where.file, None)
            if source < MAX_SOURCES:
                return (source + 1) << POS_BITS | where.line
        elif (element := where.element()) is not None and element[1] <= POS_MASK:
            # "/stimuli/3/trials/7" → source ("/stimuli/3/trials/") and position 7, so that
            # the sources grow with stimuli, not trials.
            source = self.source(where.file, element[0] + "/")
            if source < MAX_SOURCES:
                return (source + 1) << POS_BITS | element[1]
        self._verbatim.append(where)
        return len(self._verbatim)

    def pack_run(
        self, file: str, prefix: str | None, start: int, size: int, each: Callable[[int], Any]
    ) -> npt.NDArray[np.int64]:
        """``size`` consecutive positions from ``start`` in one source (lines of a file,
        elements of one array); ``each(i)`` gives the i-th's Provenance when they do not fit."""
        import numpy as np

        source = self.source(file, prefix)
        if source < MAX_SOURCES and start + size <= POS_MASK:
            base = (source + 1) << POS_BITS | start
            return base + np.arange(size, dtype=np.int64)
        return np.array([self.pack(each(i)) for i in range(size)], dtype=np.int64)

    def pack_lines(
        self,
        file: str,
        lines: npt.NDArray[np.int64],
        each: Callable[[int], Any],
        pointer: str | None = None,
    ) -> npt.NDArray[np.int64]:
        """Lines of one file (with ``pointer``: positions in the array at that JSON pointer);
        ``each(i)`` gives the i-th's record (its ``provenance``) when they do not fit."""
        import numpy as np

        source = self.source(file, None if pointer is None else pointer + "/")
        if source < MAX_SOURCES and (not lines.size or int(lines.max()) <= POS_MASK):
            result: npt.NDArray[np.int64] = ((source + 1) << POS_BITS) | lines
            return result
        return np.array([self.pack(each(i).provenance) for i in range(lines.size)])

    def fields(self, packed: int) -> tuple[str | None, int | None, str | None]:
        """The file, line and pointer of :meth:`unpack`'s Provenance (all None for none),
        without making it."""
        return (None, None, None) if packed == 0 else self._parts(packed)

    def unpack(self, packed: int) -> Provenance | None:
        return None if packed == 0 else Provenance(*self._parts(packed))

    def _parts(self, packed: int) -> tuple[str, int | None, str | None]:
        source, position = (packed >> POS_BITS) - 1, packed & POS_MASK
        if source < 0:
            where = self._verbatim[position - 1]
            return where.file, where.line, where.pointer
        file, prefix = self._sources[source]
        if prefix is None:
            return file, position, None
        return file, None, f"{prefix}{position}"


@dataclass(frozen=True)
class Column:
    """One field of every slot: its numpy dtype and the value of a slot that holds no trial.

    A ``lazy`` column is allocated only when :meth:`SlotStore.ensure` is first called for
    it (a category index most suites never need, usage values most trials do not report).
    """

    name: str
    dtype: str
    fill: float = 0
    lazy: bool = False


def _flat(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    return array.reshape(-1)


class SlotStore:
    """Cells of (row, trial index) slots: dense arrays, wide rows' segments of a pool, and
    per-row dicts for the rest (see the module docstring)."""

    def __init__(self, columns: Sequence[Column]) -> None:
        import numpy as np

        self._columns = {c.name: c for c in columns}
        self.occupancy = columns[0].name
        #: the columns allocated so far, in this order in every overflow cell
        self._names = [c.name for c in columns if not c.lazy]
        self._dense: dict[str, npt.NDArray[Any]] = {
            name: np.zeros((0, 0), dtype=self._columns[name].dtype) for name in self._names
        }
        self._cap = 0
        self._width = 0
        self.stored = 0
        #: cells stored per row, wherever they are
        self._counts = np.zeros(0, dtype=np.int64)
        # Wide rows: row r's trial t < _length[r] is at _offset[r] + t of the pool (one
        # 1-D array per column); its row of the dense arrays stays empty, and its indices
        # at or past _length[r] are in _extra. _length 0: not a wide row. A row that grows
        # moves to the pool's top, leaving its old segment unused until the pool is packed.
        self._offset = np.zeros(0, dtype=np.int64)
        self._length = np.zeros(0, dtype=np.int64)
        self._pool: dict[str, npt.NDArray[Any]] = {
            name: np.zeros(0, dtype=self._columns[name].dtype) for name in self._names
        }
        self._top = 0  # the pool's slots in use or left behind
        self._live = 0  # the wide rows' slots
        # Trial indices no array holds: row → index → cell (values in _names order); a
        # row's indices here are at or past the dense width, or past its wide length.
        self._extra: dict[int, dict[int, tuple[Any, ...]]] = {}

    @property
    def width(self) -> int:
        return self._width

    @property
    def slots(self) -> int:
        """Slots allocated for each column: the dense arrays' (rows × width) and the pool's."""
        return self._cap * self._width + len(self._pool[self.occupancy])

    def has(self, name: str) -> bool:
        return name in self._dense

    def ensure(self, name: str, init: Callable[[npt.NDArray[Any]], npt.NDArray[Any]]) -> None:
        """Allocate lazy column ``name``; ``init`` maps occupancy values to its values."""
        if name in self._dense:
            return
        column = self._columns[name]
        self._dense[name] = init(self._dense[self.occupancy]).astype(column.dtype)
        self._pool[name] = init(self._pool[self.occupancy]).astype(column.dtype)
        position = self._names.index(self.occupancy)
        for cells in self._extra.values():
            for t, cell in cells.items():
                occupancy = cell[position]
                cells[t] = (*cell, init(_array_of([occupancy]))[0].item())
        self._names.append(name)

    # -- shape --------------------------------------------------------------------------

    def fit(self, rows: int, indices: npt.NDArray[np.int64], incoming: int) -> None:
        """Make room for ``rows`` rows and, within the memory budget, for ``indices``."""
        cap = self._cap
        if rows > cap:
            cap = 1 << (rows - 1).bit_length()
        wide = int(self._counts[self._length > 0].sum()) if self._live else 0
        budget = max(DENSE_FLOOR, 4 * (self.stored - wide + incoming))
        room = 1 << ((budget // cap).bit_length() - 1)  # the widest power of two in budget
        fitting = int(indices[indices < room].max(initial=-1))
        width = self._width
        if fitting >= width:
            # Four times as wide at each growth: trials read a round at a time (index 0 of
            # every stimulus, then 1, ...) widen the arrays again and again, and each
            # widening copies them all (doubling: 5 copies to 128 trials, 0.13 s at 10,000
            # stimuli; now 3). The room bounds it, and compact() gives the rest back.
            width = max(8, 1 << fitting.bit_length(), 4 * width)
        width = min(width, room)
        if cap != self._cap or width != self._width:
            self._reshape(cap, width)

    def compact(self, rows: int) -> None:
        """Give back the room growth left (rows and slots grow by doubling): keep ``rows``
        rows, the ones in use, and the slots up to the highest trial index stored densely;
        each wide row's segment up to its highest trial index, nothing left behind.
        A table of 10,000 stimuli × 100 trials kept 16,384 × 128 slots; now 10,000 × 100."""
        import numpy as np

        if not self._cap:
            return
        used = self._dense[self.occupancy][:rows].any(axis=0)
        width = int(np.flatnonzero(used)[-1]) + 1 if used.any() else 1
        cap = max(1, min(rows, self._cap))
        if cap < self._cap or width < self._width:
            self._reshape(cap, min(width, self._width))
        if self._live:
            wide = np.flatnonzero(self._length)
            occupancy = self._pool[self.occupancy]
            for row, offset, length in zip(
                wide.tolist(), self._offset[wide].tolist(), self._length[wide].tolist(), strict=True
            ):
                self._length[row] = np.flatnonzero(occupancy[offset : offset + length])[-1] + 1
            self._pack(0, exact=True)

    def _reshape(self, cap: int, width: int) -> None:
        """Reallocate to ``cap`` rows × ``width`` slots; cells move so that a trial index is
        in the dense arrays exactly when it is below the width."""
        import numpy as np

        used = min(self._cap, cap)
        if width < self._width:
            self._spill(width)
        keep = min(width, self._width)
        for name, old in self._dense.items():
            # Each cell written once: a fill of the whole array first writes those kept
            # twice (reshaping for a million round-major trials: 0.24 s, now 0.16 s).
            fill = self._columns[name].fill
            new = np.empty((cap, width), dtype=old.dtype)
            new[:used, :keep] = old[:used, :keep]
            new[:used, keep:] = fill
            new[used:] = fill
            self._dense[name] = new
        for attribute in ("_counts", "_offset", "_length"):
            old = getattr(self, attribute)
            resized = np.zeros(cap, dtype=old.dtype)
            resized[:used] = old[:used]
            setattr(self, attribute, resized)
        self._cap, self._width = cap, width
        if self._extra:
            self._unspill()

    def _spill(self, width: int) -> None:
        """Move the cells at indices ≥ ``width`` aside (:meth:`_put_aside`)."""
        import numpy as np

        rows, columns = np.nonzero(self._dense[self.occupancy][: self._cap, width:])
        if rows.size:
            values = {name: self._dense[name][rows, columns + width] for name in self._names}
            self._put_aside(rows, columns + width, values, None, width)

    def _unspill(self) -> None:
        """Move overflow cells that the (wider) dense arrays can now hold into them."""
        for row in list(self._extra):
            if self._length[row]:
                continue
            cells = self._extra[row]
            for t in [t for t in cells if t < self._width]:
                for name, value in zip(self._names, cells.pop(t), strict=True):
                    self._dense[name][row, t] = value
            if not cells:
                del self._extra[row]

    # -- the pool of wide rows ------------------------------------------------------------

    def _segments(
        self, rows: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(row, pool position) of every slot of the wide ``rows``, each row's in trial
        order, the rows in the order given."""
        import numpy as np

        lengths = self._length[rows]
        row_of = np.repeat(rows, lengths)
        starts = np.cumsum(lengths) - lengths
        t_of = np.arange(row_of.size, dtype=np.int64) - np.repeat(starts, lengths)
        return row_of, np.repeat(self._offset[rows], lengths) + t_of

    def _pack(self, extra: int, exact: bool = False) -> None:
        """Rewrite the pool with only the wide rows' segments, in row order, and room for
        ``extra`` more slots (doubling, unless ``exact``)."""
        import numpy as np

        wide = np.flatnonzero(self._length)
        _, positions = self._segments(wide)
        live = positions.size
        size = live + extra if exact else max(live + extra, 2 * live)
        for name, old in self._pool.items():
            new = np.empty(size, dtype=old.dtype)
            new[:live] = old[positions]
            self._pool[name] = new
        lengths = self._length[wide]
        self._offset[wide] = np.cumsum(lengths) - lengths
        self._top = self._live = live

    def _reserve(self, size: int) -> None:
        """Room for ``size`` more slots at the pool's top."""
        import numpy as np

        capacity = len(self._pool[self.occupancy])
        if self._top + size <= capacity:
            return
        if self._top - self._live > self._live:  # more left behind than in use: pack
            self._pack(size)
            return
        grown = max(self._top + size, 2 * capacity)
        for name, old in self._pool.items():
            new = np.empty(grown, dtype=old.dtype)
            new[: self._top] = old[: self._top]
            self._pool[name] = new

    def _widen(self, row: int, length: int, width: int) -> None:
        """Make ``row`` a wide row of ``length`` slots, or grow it to that: its cells move
        from the dense arrays (``width`` slots a row there), its old segment and ``_extra``."""
        old_length = int(self._length[row])
        self._reserve(length)  # which may pack the pool: the row's offset is read after
        old_offset = int(self._offset[row])
        at_top = bool(old_length) and old_offset + old_length == self._top
        offset = old_offset if at_top else self._top
        for name in self._names:
            pool = self._pool[name]
            fill = self._columns[name].fill
            if at_top:
                pool[offset + old_length : offset + length] = fill
                continue
            if old_length:
                kept = pool[old_offset : old_offset + old_length]
            else:
                dense = self._dense[name]
                kept = dense[row, : min(width, dense.shape[1])]
            pool[offset : offset + kept.size] = kept
            pool[offset + kept.size : offset + length] = fill
            if not old_length:
                dense[row] = fill
        self._top = offset + length
        self._live += length - old_length
        self._offset[row], self._length[row] = offset, length
        cells = self._extra.get(row, {})
        for t in [t for t in cells if t < length]:
            for name, value in zip(self._names, cells.pop(t), strict=True):
                self._pool[name][offset + t] = value
        if row in self._extra and not cells:
            del self._extra[row]

    # -- writing ------------------------------------------------------------------------

    def first_duplicate(
        self,
        rows: npt.NDArray[np.int64],
        indices: npt.NDArray[np.int64],
        exact: Sequence[int] | None = None,
    ) -> int | None:
        """The first position whose (row, index) is stored already or came earlier in this
        batch. ``exact``: the true indices, where ``indices`` holds stand-ins past 64 bits."""
        import numpy as np

        width = self._width
        dense = self._dense_mask(rows, indices)
        dense_at = np.flatnonzero(dense)
        flat = rows[dense_at] * width + indices[dense_at]
        seen_before = dense_at[_flat(self._dense[self.occupancy])[flat] != 0]
        order = np.argsort(flat, kind="stable")
        repeats = order[1:][flat[order[1:]] == flat[order[:-1]]]  # later ones of equal keys
        candidates = []
        if seen_before.size:
            candidates.append(int(seen_before.min()))
        if repeats.size:
            candidates.append(int(dense_at[repeats].min()))
        aside = np.flatnonzero(~dense)
        if aside.size:
            found = self._first_aside_duplicate(
                rows[aside],
                indices[aside],
                None if exact is None else [exact[i] for i in aside.tolist()],
            )
            if found is not None:
                candidates.append(int(aside[found]))
        return min(candidates, default=None)

    def _first_aside_duplicate(
        self,
        rows: npt.NDArray[np.int64],
        indices: npt.NDArray[np.int64],
        exact: Sequence[int] | None,
    ) -> int | None:
        """:meth:`first_duplicate` among cells past the dense arrays."""
        import numpy as np

        candidates: list[int] = []
        if exact is not None:  # indices past 64 bits: few, and only their exact values tell
            seen: set[tuple[int, int]] = set()
            for i in np.flatnonzero(indices >= HUGE_INDEX).tolist():
                key = (int(rows[i]), exact[i])
                if key in seen or self.occupied(*key):
                    candidates.append(i)
                    break
                seen.add(key)
        small = indices < HUGE_INDEX
        order = np.lexsort((indices, rows))
        order = order[small[order]]
        same = (rows[order[1:]] == rows[order[:-1]]) & (indices[order[1:]] == indices[order[:-1]])
        later = order[1:][same]  # the later ones of equal keys (lexsort is stable)
        candidates += [int(later.min())] if later.size else []
        inside = np.flatnonzero(indices < self._length[rows])
        position = self._offset[rows[inside]] + indices[inside]
        candidates += inside[self._pool[self.occupancy][position] != 0][:1].tolist()
        if self._extra:
            maybe = small & np.isin(rows, np.fromiter(self._extra, dtype=np.int64))
            maybe[inside] = False
            for i in np.flatnonzero(maybe).tolist():
                if int(indices[i]) in self._extra[int(rows[i])]:
                    candidates.append(i)
                    break
        return min(candidates, default=None)

    def _dense_mask(
        self, rows: npt.NDArray[np.int64], indices: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.bool_]:
        """Which (row, index) cells belong in the dense arrays."""
        dense = indices < self._width
        if self._live:
            dense &= self._length[rows] == 0
        return dense

    def put(
        self,
        rows: npt.NDArray[np.int64],
        indices: npt.NDArray[np.int64],
        values: Mapping[str, npt.NDArray[Any]],
        exact: Sequence[int] | None = None,
    ) -> None:
        """Store cells at (rows[i], indices[i]), known to be free; a column not in ``values``
        gets its fill value."""
        import numpy as np

        width = self._width
        dense = self._dense_mask(rows, indices)
        take = np.flatnonzero(dense)
        flat = rows[take] * width + indices[take]
        for name in self._names:
            given = values.get(name)
            _flat(self._dense[name])[flat] = (
                given[take] if given is not None else self._columns[name].fill
            )
        self._counts += np.bincount(rows, minlength=self._cap)
        self.stored += len(indices)
        spill = np.flatnonzero(~dense)
        if spill.size:
            self._put_aside(
                rows[spill],
                indices[spill],
                {name: values[name][spill] for name in self._names if name in values},
                None if exact is None else [exact[i] for i in spill.tolist()],
                width,
            )

    def _put_aside(
        self,
        rows: npt.NDArray[np.int64],
        indices: npt.NDArray[np.int64],
        values: Mapping[str, npt.NDArray[Any]],
        exact: Sequence[int] | None,
        width: int,
    ) -> None:
        """Store cells that the dense arrays (``width`` slots a row) do not hold: in their
        row's segment of the pool, made or grown here while it stays within
        :data:`WIDE_SLOTS` slots per trial of the row (counted already), or else in
        ``_extra``."""
        import numpy as np

        counts = self._counts[rows]
        lengths = self._length[rows]
        # A row can be wide if its slots reach past its dense width.
        reach = WIDE_SLOTS * counts
        roomy = (lengths > 0) | ((reach > width) & (reach >= WIDE_FLOOR))
        roomy &= indices < HUGE_INDEX
        exponent = np.frexp(np.maximum(reach, 1))[1].astype(np.int64) - 1
        room = np.left_shift(np.int64(1), exponent)  # the widest power of two in reach
        grow = np.flatnonzero(roomy & (indices >= lengths) & (indices < room))
        if grow.size:
            order = grow[np.lexsort((indices[grow], rows[grow]))]
            last = np.flatnonzero(np.diff(rows[order], append=-1))  # each row's top index
            for row, top, limit in zip(
                rows[order[last]].tolist(),
                indices[order[last]].tolist(),
                room[order[last]].tolist(),
                strict=True,
            ):
                base = int(self._length[row]) or width
                length = min(limit, max(WIDE_FLOOR, 1 << top.bit_length()))
                if top >= base and length > base:
                    self._widen(row, length, width)
            lengths = self._length[rows]
        inside = np.flatnonzero(roomy & (indices < lengths))
        if inside.size:
            position = self._offset[rows[inside]] + indices[inside]
            for name in self._names:
                given = values.get(name)
                self._pool[name][position] = (
                    given[inside] if given is not None else self._columns[name].fill
                )
        loose = np.ones(rows.size, dtype=bool)
        loose[inside] = False
        loose_at = np.flatnonzero(loose)
        if loose_at.size:
            keys = exact if exact is not None else indices.tolist()
            columns = [
                values[n][loose_at].tolist() if n in values else None for n in self._names
            ]  # fmt: skip
            for j, i in enumerate(loose_at.tolist()):
                cell = tuple(
                    column[j] if column is not None else self._columns[name].fill
                    for name, column in zip(self._names, columns, strict=True)
                )
                self._extra.setdefault(int(rows[i]), {})[int(keys[i])] = cell

    # -- reading ------------------------------------------------------------------------

    def _where(self, row: int, t: int) -> tuple[str, int]:
        """Where cell (row, t) would be: ("dense", flat position), ("pool", position) or
        ("extra", t)."""
        length = int(self._length[row]) if 0 <= row < self._cap else 0
        if length:
            if t < length:
                return "pool", int(self._offset[row]) + t
        elif t < self._width:
            return "dense", row * self._width + t
        return "extra", t

    def occupied(self, row: int, t: int) -> bool:
        home, at = self._where(row, t)
        if home == "pool":
            return bool(self._pool[self.occupancy][at])
        if home == "dense":
            return bool(_flat(self._dense[self.occupancy])[at])
        return t in self._extra.get(row, ())

    def value(self, row: int, t: int, name: str) -> Any:
        """The ``name`` value of an occupied slot."""
        home, at = self._where(row, t)
        if home == "pool":
            return self._pool[name][at].item()
        if home == "dense":
            return _flat(self._dense[name])[at].item()
        return self._extra[row][t][self._names.index(name)]

    def _row_arrays(self, row: int) -> dict[str, npt.NDArray[Any]]:
        """The slots of ``row``'s dense row, or of its segment of the pool."""
        length = int(self._length[row])
        if length:
            offset = int(self._offset[row])
            return {name: self._pool[name][offset : offset + length] for name in self._names}
        return {name: self._dense[name][row, : self._width] for name in self._names}

    def cells(self, row: int, names: Sequence[str]) -> tuple[list[int], list[list[Any]]]:
        """(trial indices, one list per name) of the occupied slots of ``row``, in trial order."""
        import numpy as np

        if row < 0 or row >= self._cap:
            return [], [[] for _ in names]
        arrays = self._row_arrays(row)
        columns = np.flatnonzero(arrays[self.occupancy])
        indices = columns.tolist()
        lists = [arrays[name][columns].tolist() for name in names]
        extra = self._extra.get(row)
        if extra:
            positions = [self._names.index(name) for name in names]
            for t in sorted(extra):
                indices.append(t)
                for values, position in zip(lists, positions, strict=True):
                    values.append(extra[t][position])
        return indices, lists

    def row_bytes(self, row: int) -> bytes:
        """The occupancy values of ``row`` in trial order, empty slots (0) included."""
        if row < 0 or row >= self._cap:
            return b""
        data = self._row_arrays(row)[self.occupancy].tobytes()
        extra = self._extra.get(row)
        if extra:
            position = self._names.index(self.occupancy)
            data += bytes(extra[t][position] for t in sorted(extra))
        return data

    def rows_block(
        self, rows: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]]:
        """The occupancy values of ``rows``, one row of slots each (a copy), and whether
        that is all of the row's: a row outside the slots or with slots kept aside (see
        :meth:`row_bytes`) is not, and its row of the block holds only zeros."""
        import numpy as np

        whole = (rows >= 0) & (rows < self._cap)
        if not whole.any():
            return np.zeros((rows.size, 0), dtype=np.uint8), whole
        if self._live:
            whole &= self._length[np.where(whole, rows, 0)] == 0
        if self._extra:
            whole &= ~np.isin(rows, np.fromiter(self._extra, dtype=np.int64))
        block = self._dense[self.occupancy][np.where(whole, rows, 0), : self._width]
        block[~whole] = 0
        return block, whole

    def count_values(self, rows: int, values: Iterable[int]) -> npt.NDArray[np.int64]:
        """(rows, max value + 1): how many slots of each row hold each occupancy value."""
        import numpy as np

        chosen = list(values)
        counts = np.zeros((rows, max(chosen) + 1), dtype=np.int64)
        occupancy = self._dense[self.occupancy][: min(rows, self._cap), : self._width]
        for value in chosen:
            counts[: occupancy.shape[0], value] = np.count_nonzero(occupancy == value, axis=1)
        if self._live:
            row_of, positions = self._segments(np.flatnonzero(self._length[:rows]))
            held = self._pool[self.occupancy][positions]
            for value in chosen:
                counts[:, value] += np.bincount(row_of[held == value], minlength=rows)
        position = self._names.index(self.occupancy)
        for row, cells in self._extra.items():
            for cell in cells.values():
                counts[row, cell[position]] += 1
        return counts

    def ordered_sums(self, name: str, rows: int) -> npt.NDArray[np.float64]:
        """Per row, the sum of column ``name`` over its slots in trial order, compensated
        (Neumaier): the same to the bit however the trials were read or stored."""
        import numpy as np

        total = np.zeros(rows, dtype=np.float64)
        compensation = np.zeros(rows, dtype=np.float64)
        used = min(rows, self._cap)
        dense = self._dense[name][:used, : self._width]
        by_row = self._width > 64 * used  # a few stimuli of very many trials: row by row
        for row, values in enumerate(dense.tolist() if by_row else ()):
            total[row], compensation[row] = neumaier(0.0, 0.0, values)
        for column in () if by_row else np.ascontiguousarray(dense.T):
            step = total[:used] + column
            compensation[:used] += np.where(
                np.abs(total[:used]) >= np.abs(column),
                (total[:used] - step) + column,
                (column - step) + total[:used],
            )
            total[:used] = step
        for row in np.flatnonzero(self._length[:used]).tolist():  # dense rows empty: sums 0
            arrays = self._row_arrays(row)
            values = arrays[name][arrays[self.occupancy] != 0].tolist()
            total[row], compensation[row] = neumaier(0.0, 0.0, values)
        position = self._names.index(name)
        for row, cells in self._extra.items():
            ordered = [cells[t][position] for t in sorted(cells)]
            total[row], compensation[row] = neumaier(
                float(total[row]), float(compensation[row]), ordered
            )
        result: npt.NDArray[np.float64] = total + compensation
        return result

    def gather(
        self, rows: Sequence[int], names: Sequence[str]
    ) -> tuple[npt.NDArray[np.int64], list[npt.NDArray[Any]]]:
        """(row of each occupied slot, one array per name) over ``rows``: row after row in
        the order given, each row's slots in trial order, wherever they are stored."""
        import numpy as np

        chosen = np.array([r for r in rows if 0 <= r < self._cap], dtype=np.int64)
        occupancy = self._dense[self.occupancy][chosen, : self._width]
        which, columns = np.nonzero(occupancy)
        row_of = chosen[which]
        del which  # a million trials: 8 MB each, not kept while the columns are gathered
        arrays = [self._dense[name][row_of, columns] for name in names]
        del columns
        parts_rows = [row_of]
        parts = [[a] for a in arrays]
        if self._live:
            wide = chosen[self._length[chosen] > 0]
            wide_rows, positions = self._segments(wide)
            held = self._pool[self.occupancy][positions] != 0
            parts_rows.append(wide_rows[held])
            for part, name in zip(parts, names, strict=True):
                part.append(self._pool[name][positions[held]])
        aside = [row for row in chosen.tolist() if row in self._extra] if self._extra else []
        positions_of = [self._names.index(name) for name in names]
        for row in aside:
            cells = self._extra[row]
            ordered = sorted(cells)
            parts_rows.append(np.full(len(ordered), row, dtype=np.int64))
            for part, position in zip(parts, positions_of, strict=True):
                part.append(np.array([cells[t][position] for t in ordered], dtype=part[0].dtype))
        if len(parts_rows) > 1:
            row_of = np.concatenate(parts_rows)
            arrays = [np.concatenate(part) for part in parts]
            # Row after row (each row's slots are in trial order within and across parts).
            rank = np.zeros(self._cap, dtype=np.int64)
            rank[chosen] = np.arange(chosen.size)
            order = np.argsort(rank[row_of], kind="stable")
            row_of = row_of[order]
            arrays = [a[order] for a in arrays]
        return row_of, arrays


def neumaier(total: float, compensation: float, values: Iterable[float]) -> tuple[float, float]:
    """Compensated (Neumaier) summation, continued from (total, compensation)."""
    for value in values:
        step = total + value
        if abs(total) >= abs(value):
            compensation += (total - step) + value
        else:
            compensation += (value - step) + total
        total = step
    return total, compensation


def _array_of(values: list[Any]) -> npt.NDArray[Any]:
    import numpy as np

    return np.array(values)
