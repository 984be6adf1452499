"""What to do when several result files hold the same trial: ``--duplicates``.

A folder of logs often holds a run and its re-run (Inspect writes a new log per ``inspect eval``
call): the same (suite, stimulus, trial) then appears twice. Three policies, chosen by name:

* ``error`` (the default): a trial given twice is an input error naming both places. Nothing is
  guessed.
* ``pool``: every file's trials are kept as separate trials: a stimulus that an earlier file
  already has gets its trials numbered on after that file's (file order, as the command line
  names them, folders and globs sorted). Twelve epochs from three logs of four are twelve
  trials.
* ``newest``: for each (suite, stimulus, trial) in several files, the one from the newest file
  by its own start time counts (Inspect: ``stats.started_at``, else ``eval.created``; promptfoo:
  ``results.timestamp``; tau2-bench: ``timestamp``; JUnit: the first testsuite's
  ``timestamp``); files are read newest first. A format that records no start time cannot be
  ordered this way and is refused, naming the file.

Inside one file a trial given twice stays an error (Inspect's own re-runs inside a log are
resolved by the Inspect reader, as Inspect does).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Literal

from gate.errors import InputError
from gate.trials import (
    CountsColumns,
    StimulusCounts,
    SuiteSpec,
    Trial,
    TrialBatch,
    TrialColumns,
)

Policy = Literal["error", "pool", "newest"]
POLICIES: tuple[Policy, ...] = ("error", "pool", "newest")

#: format → "module:function" giving a file's own start time (None when it records none).
STARTED: dict[str, str] = {
    "inspect": "inspect:started",
    "promptfoo": "promptfoo:started",
    "junit": "junit:started",
    "tau2-bench": "tau:started_tau2",
}

Item = Trial | TrialBatch | TrialColumns | StimulusCounts | CountsColumns | SuiteSpec


def parse_time(value: Any) -> datetime | None:
    """An ISO 8601 time as an aware datetime (a time without zone is taken as UTC)."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def started(path: str, format_name: str) -> datetime | None:
    """The start time ``path`` records for itself (None when its format records none)."""
    target = STARTED.get(format_name)
    if target is None:
        return None
    module_name, _, function = target.partition(":")
    module = importlib.import_module(f"gate.ingest.{module_name}")
    reader: Callable[[str], datetime | None] = getattr(module, function)
    return reader(path)


class Duplicates:
    """One ``load``'s policy: the order to read the files in, and each file's records as
    the policy passes them on. :attr:`notes` says what the policy did (warnings)."""

    def __init__(self, policy: str, inputs: Sequence[tuple[str, str, bool]]) -> None:
        if policy not in POLICIES:
            raise InputError(
                f"unknown duplicates policy {policy!r}", expected="one of " + ", ".join(POLICIES)
            )
        self.policy = policy
        self.notes: list[str] = []
        self.order: list[tuple[str, str, bool]] = list(inputs)
        # pool: per (suite, stimulus), the trial numbers earlier files used.
        self._offsets: dict[tuple[str, str], int] = {}
        self._pooled: dict[tuple[str, str], None] = {}
        # newest: per (suite, stimulus), the trial numbers newer files gave (-1: all of them).
        self._taken: dict[tuple[str, str], set[int]] = {}
        self._times: dict[str, datetime] = {}
        if policy == "newest" and len(self.order) > 1:
            for path, format_name, _ in self.order:
                moment = started(path, format_name)
                if moment is None:
                    raise InputError(
                        f"--duplicates newest needs each file's own start time, and a "
                        f"{format_name} file records none",
                        expected="logs that record when they started (Inspect, promptfoo, "
                        "tau2-bench, JUnit with a testsuite timestamp), or --duplicates pool",
                        found=path,
                    )
                self._times[path] = moment
            # Newest first (the first file given wins a tie): then the first trial read wins.
            self.order.sort(key=lambda item: self._times[item[0]], reverse=True)

    def records(self, path: str, items: Iterable[Item]) -> Iterator[Item]:
        """``path``'s records as the policy passes them on."""
        if self.policy == "error" or len(self.order) < 2:
            yield from items
        elif self.policy == "pool":
            yield from self._pool(path, _rows(items))
        else:
            yield from self._newest(path, _rows(items))

    def _pool(self, path: str, items: Iterable[Item]) -> Iterator[Item]:
        offsets = self._offsets
        highest: dict[tuple[str, str], int] = {}
        for item in items:
            if isinstance(item, Trial):
                key = (item.suite, item.stimulus)
                highest[key] = max(highest.get(key, -1), item.trial)
                offset = offsets.get(key, 0)
                if offset:
                    self._pooled[key] = None
                    item = replace(item, trial=item.trial + offset)
            elif isinstance(item, TrialBatch):
                item = self._pool_batch(item, highest)
            yield item
        for key, top in highest.items():
            offsets[key] = offsets.get(key, 0) + top + 1
        if self._pooled:
            count = len(self._pooled)
            self.notes.append(
                f"--duplicates pool: {count} {'stimulus' if count == 1 else 'stimuli'} "
                f"also in an earlier file got {path}'s trials numbered on after it"
            )
            self._pooled = {}

    def _pool_batch(self, batch: TrialBatch, highest: dict[tuple[str, str], int]) -> TrialBatch:
        offsets = self._offsets
        shifted = []
        changed = False
        for record, (suite, stimulus, index) in zip(batch.records, _keys(batch), strict=True):
            key = (suite, stimulus)
            highest[key] = max(highest.get(key, -1), index)
            offset = offsets.get(key, 0)
            if offset:
                self._pooled[key] = None
                record = {**record, "trial": index + offset}
                changed = True
            shifted.append(record)
        return replace(batch, records=shifted, indices=None) if changed else batch

    def _newest(self, path: str, items: Iterable[Item]) -> Iterator[Item]:
        taken: dict[tuple[str, str], set[int]] = self._taken
        given: dict[tuple[str, str], set[int]] = {}
        superseded = 0
        for item in items:
            if isinstance(item, TrialBatch):
                keys = list(_keys(item))
                drop = [_already(taken, *key) for key in keys]
                for suite, stimulus, index in keys:
                    given.setdefault((suite, stimulus), set()).add(index)
                if not any(drop):
                    yield item
                    continue
                superseded += sum(drop)
                # Some records go: the rest go one by one, each keeping its own place.
                for position, dropped in enumerate(drop):
                    if not dropped:
                        yield item.trial(position)
                continue
            if isinstance(item, Trial):
                if _already(taken, item.suite, item.stimulus, item.trial):
                    superseded += 1
                    continue
                given.setdefault((item.suite, item.stimulus), set()).add(item.trial)
            elif isinstance(item, StimulusCounts):
                if (item.suite, item.stimulus) in taken:
                    superseded += item.n + item.skipped
                    continue
                given[(item.suite, item.stimulus)] = {-1}
            yield item
        for key, numbers in given.items():
            taken.setdefault(key, set()).update(numbers)
        if superseded:
            moment = self._times[path].isoformat()
            self.notes.append(
                f"--duplicates newest: {superseded} trial(s) of {path} (started {moment}) are "
                "left out: newer files have the same trials"
            )


def _rows(items: Iterable[Item]) -> Iterator[Item]:
    """The items with each block of columns given row by row: renumbering or leaving out a
    trial (or a counts row) is done per trial (only when two files are pooled or ordered)."""
    for item in items:
        if isinstance(item, TrialColumns):
            for position in range(len(item)):
                yield item.trial_at(position)
        elif isinstance(item, CountsColumns):
            for position in range(len(item)):
                yield item.row(position)
        else:
            yield item


def _keys(batch: TrialBatch) -> Iterator[tuple[str, str, int]]:
    """(suite, stimulus, trial index) of each record of a batch, as the table reads them."""
    if batch.stimulus is None:
        for record in batch.records:
            yield record.get("suite", batch.suite), record["stimulus"], record["trial"]
    else:
        for position, record in enumerate(batch.records, start=batch.first_position):
            yield batch.suite, batch.stimulus, record.get("trial", position)


def _already(taken: dict[tuple[str, str], set[int]], suite: str, stimulus: str, trial: int) -> bool:
    numbers = taken.get((suite, stimulus))
    return numbers is not None and (trial in numbers or -1 in numbers)
