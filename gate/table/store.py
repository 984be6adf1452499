"""Columnar storage of per-trial cells, indexed by (row, trial index): the table's engine.

A row is one stimulus; its trial ``t`` lives in column ``t`` of a dense array per field,
so a row's trials are always in trial order without sorting, and an occupied slot is how
a duplicate is found. The first column is the occupancy column: 0 marks an empty slot.
The dense arrays never hold more than 4 slots per trial stored in them (or a floor of a
million), so a trial index past their width has two other homes:

- a row that fills slots past the width densely (one stimulus of a million trials among
  ten thousand of ten) leaves the dense arrays for arrays of its own, one per column, at
  most 4 slots per trial of that row, holding every trial index below their length;
- what fills no slots densely (a sparse 10**30) goes to a small per-row dictionary.

Provenance is packed into one integer per trial (:class:`ProvenancePacker`): a source id
(the file, or a JSON-pointer prefix) and the line or position, so the sources grow with
files and stimuli, not with trials. Nothing here knows what a column means: the domain
model (:mod:`gate.table.model`) does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
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
#: A row's own arrays (see above) are never shorter: fewer cells stay in its dictionary.
WIDE_FLOOR = 64
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
    """Cells of (row, trial index) slots in dense arrays, overflow in per-row dicts."""

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
        # Rows stored in arrays of their own: row → name → 1-D array; its row of the dense
        # arrays stays empty, and its trial indices past their length are in _extra.
        self._wide: dict[int, dict[str, npt.NDArray[Any]]] = {}
        self._is_wide = np.zeros(0, dtype=bool)
        # Trial indices no array holds: row → index → cell (values in _names order); a
        # row's indices here are at or past the dense width, or past its own arrays.
        self._extra: dict[int, dict[int, tuple[Any, ...]]] = {}

    @property
    def width(self) -> int:
        return self._width

    @property
    def slots(self) -> int:
        """Slots of each column: the dense arrays' (rows × width) and the wide rows'."""
        return self._cap * self._width + sum(len(a[self.occupancy]) for a in self._wide.values())

    def has(self, name: str) -> bool:
        return name in self._dense

    def ensure(self, name: str, init: Callable[[npt.NDArray[Any]], npt.NDArray[Any]]) -> None:
        """Allocate lazy column ``name``; ``init`` maps occupancy values to its values."""
        if name in self._dense:
            return
        column = self._columns[name]
        self._dense[name] = init(self._dense[self.occupancy]).astype(column.dtype)
        for arrays in self._wide.values():
            arrays[name] = init(arrays[self.occupancy]).astype(column.dtype)
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
        wide = int(self._counts[list(self._wide)].sum()) if self._wide else 0
        budget = max(DENSE_FLOOR, 4 * (self.stored - wide + incoming))
        room = 1 << ((budget // cap).bit_length() - 1)  # the widest power of two in budget
        fitting = int(indices[indices < room].max(initial=-1))
        width = self._width
        if fitting >= width:
            width = max(8, 1 << fitting.bit_length())
        width = min(width, room)
        if cap != self._cap or width != self._width:
            self._reshape(cap, width)

    def compact(self, rows: int) -> None:
        """Give back the room growth left (rows and slots grow by doubling): keep ``rows``
        rows, the ones in use, and the slots up to the highest trial index stored densely.
        A table of 10,000 stimuli × 100 trials kept 16,384 × 128 slots; now 10,000 × 100."""
        import numpy as np

        if not self._cap:
            return
        used = self._dense[self.occupancy][:rows].any(axis=0)
        width = int(np.flatnonzero(used)[-1]) + 1 if used.any() else 1
        cap = max(1, min(rows, self._cap))
        if cap < self._cap or width < self._width:
            self._reshape(cap, min(width, self._width))
        for arrays in self._wide.values():
            length = int(np.flatnonzero(arrays[self.occupancy])[-1]) + 1
            for name, array in arrays.items():
                arrays[name] = array[:length].copy()

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
        for name in ("_counts", "_is_wide"):
            old = getattr(self, name)
            new = np.zeros(cap, dtype=old.dtype)
            new[:used] = old[:used]
            setattr(self, name, new)
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
            if row in self._wide:
                continue
            cells = self._extra[row]
            for t in [t for t in cells if t < self._width]:
                for name, value in zip(self._names, cells.pop(t), strict=True):
                    self._dense[name][row, t] = value
            if not cells:
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
        order = np.lexsort((indices, rows))
        order = order[indices[order] < HUGE_INDEX]
        same = (rows[order[1:]] == rows[order[:-1]]) & (indices[order[1:]] == indices[order[:-1]])
        candidates += order[1:][same].tolist()  # later ones of equal keys (lexsort is stable)
        held = self._is_wide[rows]
        if self._extra:
            held |= np.isin(rows, np.fromiter(self._extra, dtype=np.int64))
        held &= indices < HUGE_INDEX
        for row, mine in _by_row(rows, np.flatnonzero(held)):
            arrays = self._wide.get(row)
            if arrays is not None:
                occupancy = arrays[self.occupancy]
                inside = mine[indices[mine] < occupancy.size]
                hits = inside[occupancy[indices[inside]] != 0]
                candidates += hits[:1].tolist()
            cells = self._extra.get(row)
            if cells:
                hit = next((i for i in mine.tolist() if int(indices[i]) in cells), None)
                candidates += [] if hit is None else [hit]
        return min(candidates, default=None)

    def _dense_mask(
        self, rows: npt.NDArray[np.int64], indices: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.bool_]:
        """Which (row, index) cells belong in the dense arrays."""
        dense = indices < self._width
        if self._wide:
            dense &= ~self._is_wide[rows]
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
        row's own arrays, made or grown here while they stay within 4 slots per trial of
        the row (counted already), or else in ``_extra``."""
        import numpy as np

        counts = self._counts[rows]
        # A row can have arrays of its own if 4 slots per trial reach past its dense width.
        roomy = self._is_wide[rows] | ((4 * counts > width) & (4 * counts >= WIDE_FLOOR))
        roomy &= indices < HUGE_INDEX
        parts = [np.flatnonzero(~roomy)]  # the cells for _extra
        for row, mine in _by_row(rows, np.flatnonzero(roomy)):
            own = indices[mine]
            room = 1 << ((4 * int(self._counts[row])).bit_length() - 1)
            length = self._widen(row, own[own < room], room, width)
            inside = own < length
            if length:
                arrays = self._wide[row]
                for name in self._names:
                    given = values.get(name)
                    arrays[name][own[inside]] = (
                        given[mine[inside]] if given is not None else self._columns[name].fill
                    )
            parts.append(mine[~inside])
        loose = np.sort(np.concatenate(parts))
        if loose.size:
            keys = exact if exact is not None else indices.tolist()
            columns = [
                values[n][loose].tolist() if n in values else None for n in self._names
            ]  # fmt: skip
            for j, i in enumerate(loose.tolist()):
                cell = tuple(
                    column[j] if column is not None else self._columns[name].fill
                    for name, column in zip(self._names, columns, strict=True)
                )
                self._extra.setdefault(int(rows[i]), {})[int(keys[i])] = cell

    def _widen(self, row: int, incoming: npt.NDArray[np.int64], room: int, width: int) -> int:
        """Make or grow ``row``'s own arrays to hold ``incoming`` indices (all below
        ``room``); the length of its arrays after, 0 if it stays in the dense arrays."""
        import numpy as np

        arrays = self._wide.get(row)
        length = width if arrays is None else len(arrays[self.occupancy])
        top = int(incoming.max(initial=-1))
        if top < length:
            return 0 if arrays is None else length
        grown = min(room, max(WIDE_FLOOR, 1 << top.bit_length()))
        new: dict[str, npt.NDArray[Any]] = {}
        for name in self._names:
            fill = self._columns[name].fill
            dense = self._dense[name]
            old = dense[row, : min(width, dense.shape[1])] if arrays is None else arrays[name]
            array = np.empty(grown, dtype=dense.dtype)
            array[: old.size] = old
            array[old.size :] = fill
            new[name] = array
            if arrays is None:
                dense[row] = fill
        self._wide[row] = new
        self._is_wide[row] = True
        cells = self._extra.get(row, {})
        for t in [t for t in cells if t < grown]:
            for name, value in zip(self._names, cells.pop(t), strict=True):
                new[name][t] = value
        if row in self._extra and not cells:
            del self._extra[row]
        return grown

    # -- reading ------------------------------------------------------------------------

    def occupied(self, row: int, t: int) -> bool:
        arrays = self._wide.get(row)
        if arrays is not None:
            if t < len(arrays[self.occupancy]):
                return bool(arrays[self.occupancy][t])
        elif t < self._width:
            return bool(self._dense[self.occupancy][row, t])
        return t in self._extra.get(row, ())

    def value(self, row: int, t: int, name: str) -> Any:
        """The ``name`` value of an occupied slot."""
        arrays = self._wide.get(row)
        if arrays is not None:
            if t < len(arrays[name]):
                return arrays[name][t].item()
        elif t < self._width:
            return self._dense[name][row, t].item()
        return self._extra[row][t][self._names.index(name)]

    def cells(self, row: int, names: Sequence[str]) -> tuple[list[int], list[list[Any]]]:
        """(trial indices, one list per name) of the occupied slots of ``row``, in trial order."""
        import numpy as np

        if row < 0 or row >= self._cap:
            return [], [[] for _ in names]
        arrays = self._wide.get(row)
        if arrays is None:
            arrays = {name: self._dense[name][row, : self._width] for name in self._names}
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
        wide = self._wide.get(row)
        occupancy = (
            self._dense[self.occupancy][row, : self._width]
            if wide is None
            else wide[self.occupancy]
        )
        data = occupancy.tobytes()
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
        if self._extra or self._wide:
            aside = np.fromiter([*self._extra, *self._wide], dtype=np.int64)
            whole &= ~np.isin(rows, aside)
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
            for row, arrays in self._wide.items():
                counts[row, value] += np.count_nonzero(arrays[self.occupancy] == value)
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
        for row, arrays in self._wide.items():  # their dense rows are empty: sums of 0
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
        """(row of each occupied slot, one array per name) over ``rows``; each row's dense
        slots in trial order, then its overflow ones."""
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
        positions = [self._names.index(name) for name in names]
        for row in chosen.tolist():
            wide = self._wide.get(row)
            if wide is not None:
                occupied = np.flatnonzero(wide[self.occupancy])
                parts_rows.append(np.full(occupied.size, row, dtype=np.int64))
                for part, name in zip(parts, names, strict=True):
                    part.append(wide[name][occupied])
            cells = self._extra.get(row)
            if cells:
                ordered = sorted(cells)
                parts_rows.append(np.full(len(ordered), row, dtype=np.int64))
                for part, position in zip(parts, positions, strict=True):
                    values = [cells[t][position] for t in ordered]
                    part.append(np.array(values, dtype=part[0].dtype))
        if len(parts_rows) > 1:
            row_of = np.concatenate(parts_rows)
            arrays = [np.concatenate(part) for part in parts]
        return row_of, arrays


def _by_row(
    rows: npt.NDArray[np.int64], at: npt.NDArray[np.int64]
) -> Iterator[tuple[int, npt.NDArray[np.int64]]]:
    """The positions ``at`` grouped by their row: (row, its positions in ascending order)."""
    import numpy as np

    order = at[np.argsort(rows[at], kind="stable")]
    bounds = [*np.flatnonzero(np.diff(rows[order], prepend=-1)).tolist(), order.size]
    for start, end in pairwise(bounds):
        yield int(rows[order[start]]), order[start:end]


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
