"""Read result files of every supported format into one :class:`~gate.trials.TrialTable`.

Each format lives in its own module exposing ``read(path, options)`` that yields
:class:`~gate.trials.SuiteSpec` declarations and :class:`~gate.trials.Trial`
records with provenance. Modules are imported only when their format is used,
so a check on native JSONL never pays for the XML or zip readers.
"""

from __future__ import annotations

import glob
import importlib
import itertools
import os
import re
import unicodedata
import warnings
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from gate.errors import InputError, Provenance
from gate.gcpause import no_cycle_collection
from gate.table import TrialTable
from gate.trials import SuiteSpec, Trial

Record = Trial | SuiteSpec
Reader = Callable[[str, "IngestOptions"], Iterator[Record]]

#: format name → module under gate.ingest that implements ``read``, or
#: ``module:function`` when one module reads several formats.
FORMAT_MODULES: dict[str, str] = {
    "native": "native",
    "inspect": "inspect",
    "promptfoo": "promptfoo",
    "junit": "junit",
    "tau-bench": "tau:read_tau",
    "tau2-bench": "tau:read_tau2",
    "vally": "vally",
    "csv": "tabular:read_csv",
    "jsonl": "tabular:read_jsonl",
    "counts": "counts",
}


#: files a directory argument contributes (other files in it, like configs, are skipped).
RESULT_SUFFIXES = (".json", ".jsonl", ".eval", ".xml", ".csv")


@dataclass(frozen=True)
class IngestOptions:
    """How to read inputs; format-specific knobs are ignored by formats they don't concern."""

    format: str = "auto"
    #: generic CSV/JSONL: trial-table field → source column (``stimulus=case_id``).
    column_map: Mapping[str, str] = field(default_factory=dict)
    #: score-only formats (Inspect numeric scores, tau-bench reward): pass when score ≥ this.
    pass_threshold: float | None = None
    #: Inspect AI: which scorer decides a trial when a log has several.
    scorer: str | None = None
    #: JUnit: names like ``test_x[0]`` are pytest-flakefinder repeats, not parameters.
    junit_flakefinder: bool = False
    #: suite name for formats that carry none.
    suite: str | None = None
    #: the same trial in several files: "error", "pool" or "newest" (gate.ingest.duplicates).
    duplicates: str = "error"


@dataclass(frozen=True)
class LoadedInput:
    """One input file and the format it was read as."""

    path: str
    format: str
    detected: bool


def expand(patterns: Sequence[str]) -> list[str]:
    """Expand globs (``**`` too) and folders in order, each file once; no match is an error.
    A pattern that names an existing path is that path, whatever characters it holds.

    Folders and ``**`` do not follow symbolic links to folders (:mod:`gate.reading`). What
    they find leaves out the manifests Inspect AI writes beside its logs (``eval-set.json``,
    ``logs.json``, ``listing.json``: :func:`gate.ingest.detect.inspect_manifest`), silently:
    they are part of a log folder, not results, and a name given alone is still read.
    """
    from gate.ingest.detect import inspect_manifest
    from gate.reading import match_glob, walk_folder

    files: list[str] = []
    seen: set[str] = set()
    for pattern in patterns:
        # A name that exists is that file or folder, brackets and all ("results[gpt-4].jsonl").
        named = False
        if glob.has_magic(pattern) and not os.path.lexists(pattern):
            matches = match_glob(pattern)
        elif os.path.isdir(pattern):
            matches = walk_folder(pattern, RESULT_SUFFIXES)
        else:
            matches, named = [pattern], True
        if not matches:
            raise InputError(f"{pattern}: no file matches this pattern")
        if not named:
            matches = [path for path in matches if inspect_manifest(path) is None]
        for path in matches:
            if not os.path.exists(path):
                raise InputError(f"{path}: no such file")
            key = os.path.realpath(path)
            if key not in seen:
                seen.add(key)
                files.append(path)
    return files


def input_files(*pattern_lists: Sequence[str], config: str | None = None) -> list[str]:
    """Every file the patterns name now (a pattern that names none is left out), plus the
    configuration file: what an output must not overwrite. Nothing is opened."""
    from gate.errors import EvalGateError

    found: list[str] = [config] if config else []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a skipped link is reported when the files are read
        for patterns in pattern_lists:
            for pattern in patterns:
                try:
                    found.extend(expand([pattern]))
                except EvalGateError:
                    continue  # reported when the files are read
    return found


def reader(format_name: str) -> Reader:
    module_name = FORMAT_MODULES.get(format_name)
    if module_name is None:
        known = ", ".join(["auto", *FORMAT_MODULES])
        raise InputError(f"unknown format {format_name!r}", expected=f"one of {known}")
    module_name, _, function = module_name.partition(":")
    module = importlib.import_module(f"gate.ingest.{module_name}")
    read: Reader = getattr(module, function or "read")
    return read


def load(
    patterns: Sequence[str], options: IngestOptions | None = None
) -> tuple[TrialTable, list[LoadedInput]]:
    """Read every file matched by ``patterns`` into one trial table."""
    from gate.ingest.detect import detect
    from gate.ingest.duplicates import Duplicates

    options = options or IngestOptions()
    table = TrialTable()
    loaded: list[LoadedInput] = []
    with no_cycle_collection():
        detected = options.format == "auto"
        inputs = [
            (path, detect(path) if detected else options.format, detected)
            for path in expand(patterns)
        ]
        duplicates = Duplicates(options.duplicates, inputs)  # may read newest first
        for path, format_name, detected in duplicates.order:
            try:
                table.extend(duplicates.records(path, reader(format_name)(path, options)))
            except InputError as error:
                if options.duplicates != "error":
                    raise
                raise _with_a_way_out(error, table.sources) from None
            _refuse_too_many_suites(table, path)
            table.sources.append(path)
            loaded.append(LoadedInput(path, format_name, detected))
    if not table.stimuli:
        raise InputError("no trials found in " + ", ".join(table.sources or list(patterns)))
    for note in [*duplicates.notes, *look_alike_names(table.stimuli)]:
        warnings.warn(note, UserWarning, stacklevel=2)
    if table.usage_dropped:
        warnings.warn(
            f"{table.usage_dropped} usage value(s) (cost_usd, duration_s, tokens) are not a "
            "number from 0 to 1e12 and were left out, as if not reported",
            UserWarning,
            stacklevel=2,
        )
    return table.finish(), loaded


def _refuse_too_many_suites(table: TrialTable, path: str) -> None:
    """Past :data:`gate.limits.SUITES` suites, an input error naming the first one over."""
    from gate import limits
    from gate.reading import too_large

    allowed = limits.SUITES.value()
    if len(table.suites) > allowed:
        first_over = next(itertools.islice(table.suites, allowed, None))
        raise too_large(
            Provenance(path),
            limits.SUITES,
            len(table.suites),
            f"the number of suites (the first past the limit: {first_over[:80]!r})",
        )


def _with_a_way_out(error: InputError, earlier: Sequence[str]) -> InputError:
    """A trial that an earlier file already gave: say how to keep both or the newest."""
    text = str(error)
    if error.expected is not None or not any(f"first at {path}" in text for path in earlier):
        return error
    return InputError(
        text.removeprefix(f"{error.where}: ") if error.where else text,
        error.where,
        expected="each trial in one file; for re-runs, --duplicates pool keeps every file's "
        "trials (numbered on) and --duplicates newest the newest file's",
    )


#: the report shows a name up to this many characters, and (as gate.report.escape.md_text
#: does) runs of control characters as one space, bidirectional controls as U+FFFD.
SHOWN_CHARACTERS = 200
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
_BIDI = re.compile(r"[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _hidden(name: str) -> str:
    return _BIDI.sub("\ufffd", _CONTROLS.sub(" ", name))


def _plain(name: str) -> bool:
    """Shown as it is: nothing to normalise, hide or cut (nearly every name)."""
    return name.isascii() and name.isprintable() and len(name) <= SHOWN_CHARACTERS


def _shown(name: str) -> str:
    """What the report shows of ``name``, as far as telling names apart goes."""
    shown = _hidden(unicodedata.normalize("NFC", name))
    return shown if len(shown) <= SHOWN_CHARACTERS else shown[: SHOWN_CHARACTERS - 1]


def _around(a: str, b: str) -> str:
    """Both names, quoted with escapes, around where they first differ."""
    at = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    start = max(0, at - 20)

    def show(name: str) -> str:
        return (
            ("…" if start else "")
            + ascii(name[start : at + 20])
            + ("…" if at + 20 < len(name) else "")
        )

    return f"{show(a)} and {show(b)}"


def look_alike_names(keys: Collection[tuple[str, str]], limit: int = 5) -> list[str]:
    """Notes for stimuli of a suite whose names differ but would look the same in the report:
    equal once Unicode-normalised (NFC and NFD spellings of "é"), equal up to where the report
    cuts names, or differing only in control or bidirectional characters.

    Only names that are not plain (:func:`_plain`) are remembered, so a million ordinary
    names cost two passes and no table of them.
    """
    odd: dict[tuple[str, str], str] = {}
    pairs: list[tuple[str, str, str]] = []
    for suite, name in keys:
        if not _plain(name):
            first = odd.setdefault((suite, _shown(name)), name)
            if first != name:
                pairs.append((suite, first, name))
    if odd:
        pairs.extend(
            (suite, name, odd[(suite, name)])
            for suite, name in keys
            if _plain(name) and (suite, name) in odd
        )
    notes = []
    for suite, first, name in pairs[:limit]:
        if unicodedata.normalize("NFC", first) == unicodedata.normalize("NFC", name):
            how = "in Unicode normalisation (NFC/NFD)"
        elif _hidden(first) == _hidden(name):
            how = "in control or bidirectional characters"
        else:
            how = f"after character {SHOWN_CHARACTERS - 1}, where the report cuts names"
        notes.append(
            f"stimuli {_around(first, name)} of suite {suite!r} look the same in the report: "
            f"they differ only {how}"
        )
    if len(pairs) > limit:
        notes.append(f"{len(pairs) - limit} more pair(s) of stimuli look the same in the report")
    return notes
