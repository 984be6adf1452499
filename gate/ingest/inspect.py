"""Inspect AI logs: ``.eval`` archives and ``.json`` logs, read without inspect_ai.

A ``.eval`` log is a zip archive: ``header.json`` (task, scorers, status),
``summaries.json`` (one summary per sample and epoch), ``samples/*.json``
(full transcripts), ``reductions.json`` (scores already averaged over epochs:
not trials) and ``_journal/`` (what an unfinished run wrote so far). Recent
versions compress members with zstd (zip method 93), which Python's zipfile
before 3.14 cannot read: the ``zstandard`` package decompresses them here.
A ``.json`` log is one document with the same header fields and ``samples``.

* Each epoch of a sample is a trial: stimulus = sample id, trial = epoch - 1.
* One scorer decides: ``--scorer NAME``, else Inspect's headline scorer (the
  first scorer unless the task chose another); a warning names the others. A scorer whose
  value is a dict (``{"accuracy": 1, "relevance": 0}``: Inspect reports one score per key)
  decides by one key: ``--scorer NAME.KEY``, else the headline's key (else the first).
* Its value becomes a score as Inspect's ``value_to_float`` does (C → 1,
  P → 0.5, I → 0, N → 0, booleans, numbers, numeric strings, yes/no/true/false);
  the trial passes when the score reaches ``--pass-threshold`` (default 1).
* Inspect writes a score it could not give as the JSON constant ``NaN`` (its "unscored"
  marker, left out of its metrics), so its logs are parsed with NaN/Infinity allowed; a NaN
  (or the ``null`` that some versions wrote for it) from the deciding scorer makes the
  trial ``skipped``, and a warning counts them.
* A sample with an ``error`` is a trial with status ``error`` and its message.
* A sample invalidated after the run (``invalidation``, set by inspect_ai's
  ``invalidate_samples``) is a ``skipped`` trial: Inspect re-runs such samples in
  ``eval-set`` and ``eval-retry`` as it does errored ones, so its result is void; a warning
  counts them. Summaries do not carry the field: when the header says ``invalidated``, the
  samples of an ``.eval`` are read for it.

An ``.eval`` archive may come from anywhere (a fork's artifact): its members are read by
:class:`gate.ingest.archive.Archive`, within a budget of unpacked bytes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any, NamedTuple

from gate.errors import InputError, Provenance
from gate.ingest import IngestOptions, Record
from gate.ingest.archive import Archive
from gate.ingest.blocks import BLOCK_TRIALS, Rows, flushed_first
from gate.ingest.duplicates import parse_time
from gate.ingest.jsonstream import STREAMED, JsonStream
from gate.ingest.values import (
    clip_unit,
    json_found,
    json_type,
    message_text,
    metadata_number,
    warn,
)
from gate.reading import read_head
from gate.trials import DEFAULT_SUITE, Status, Trial, TrialColumns

_JOURNAL_SUMMARY = re.compile(r"^_journal/summaries/(\d+)\.json$")

#: Inspect's value_to_float for its letter grades.
LETTER_GRADES = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}


class _Sample(NamedTuple):
    """One sample epoch, reduced to what its trial needs (a sample holds its transcript)."""

    stimulus: str
    epoch: int
    error: str | None
    #: scorer name → (value, explanation), or None for an entry that is no score; the
    #: mapping is None when the sample has no scores object.
    scores: dict[str, tuple[Any, Any] | None] | None
    metadata: dict[str, Any]
    #: where the sample was read; for an element of a streamed array only its file, the
    #: rest being ``element`` (see :attr:`where`)
    place: Provenance | str
    #: who invalidated the sample after the run, and why (None: it stands).
    invalidation: str | None = None
    #: (the array's JSON pointer, the index) when the sample is an element of a streamed
    #: array, as ``where.element()`` would parse it back
    element: tuple[str, int] | None = None

    @property
    def where(self) -> Provenance:
        """The sample's place in messages, built when one is written: a Provenance per
        sample read costs 5% of reading an .eval log of 100,000 samples."""
        return _place(self.place, self.element)


def _place(place: Provenance | str, element: tuple[str, int] | None) -> Provenance:
    """The Provenance of a sample read at ``place`` (see :attr:`_Sample.place`)."""
    if isinstance(place, Provenance):
        return place
    assert element is not None  # a bare file is given only with the element's place
    array, index = element
    return Provenance(place, None, f"{array}/{index}")


class _Samples:
    """The samples of a log as they are read: checked, reduced, the last record of each
    (id, epoch) kept (a re-run supersedes its attempt, as in Inspect), scorer names noted,
    and the keys of the scorers whose value is a dict."""

    def __init__(self) -> None:
        self.latest: dict[tuple[str, int], _Sample] = {}
        self.scorers: dict[str, None] = {}
        #: dict-valued scorer → its keys, in order of appearance (dicts as ordered sets).
        self.keys: dict[str, dict[str, None]] = {}

    def add(
        self, sample: Any, place: Provenance | str, element: tuple[str, int] | None = None
    ) -> None:
        # Parsed JSON objects are dicts: exact type tests, far cheaper than isinstance(Mapping).
        sample_id = sample.get("id") if type(sample) is dict else None
        epoch: Any = sample.get("epoch") if sample_id is not None else None
        if not (
            (type(sample_id) is str and sample_id) or type(sample_id) is int
        ) or not (type(epoch) is int and epoch >= 1):
            _check_sample(sample, _place(place, element))  # says what is wrong
        scores = sample.get("scores")
        reduced: dict[str, tuple[Any, Any] | None] | None = None
        if type(scores) is dict:
            reduced = {}
            names = self.scorers
            for name, score in scores.items():
                if name not in names:
                    names[name] = None
                if type(score) is dict and "value" in score:
                    value = score["value"]
                    reduced[name] = (value, score.get("explanation"))
                    if type(value) is dict and value:  # {} has no key to decide by
                        keys = self.keys.setdefault(name, {})
                        if not keys.keys() >= value.keys():
                            keys.update(dict.fromkeys(value))
                else:
                    reduced[name] = None
        stimulus = str(sample_id)
        error = sample.get("error")
        invalidation = sample.get("invalidation")
        self.latest[(stimulus, epoch)] = _Sample(
            stimulus,
            epoch,
            _error_message(error) if error else None,
            reduced,
            _metadata(sample, place, element),
            place,
            _invalidation_message(invalidation) if invalidation else None,
            element,
        )

    def invalidate(self, sample: Any, where: Provenance) -> None:
        """Note the ``invalidation`` of a full sample (an .eval's ``samples/*.json``) on the
        record read from its summary, which lacks the field."""
        _check_sample(sample, where)
        invalidation = sample.get("invalidation")
        key = (str(sample["id"]), sample["epoch"])
        record = self.latest.get(key)
        if invalidation and record is not None:
            self.latest[key] = record._replace(invalidation=_invalidation_message(invalidation))

    def add_pieces(self, stream: JsonStream) -> None:
        for piece in stream.pieces():
            array = piece.pointer
            source = stream.source
            for position, sample in enumerate(piece.values, piece.start):
                self.add(sample, source, (array, position))


def read(path: str, options: IngestOptions) -> Iterator[Record | TrialColumns]:
    """Read an Inspect ``.eval`` archive or ``.json`` log (told apart by content)."""
    if read_head(path, 4).startswith(b"PK"):
        header, samples = _read_eval(path)
    else:
        header, samples = _read_json(path)
    yield from _trials(path, header, samples, options)


def started(path: str) -> datetime | None:
    """When the run of this log started (``stats.started_at``, else ``eval.created``), read
    from the header alone (a .json log's header comes before its samples)."""
    if read_head(path, 4).startswith(b"PK"):
        with Archive(path) as archive:
            names = archive.names
            name = "header.json" if "header.json" in names else "_journal/start.json"
            header = archive.json(name, non_finite=True) if name in names else None
    else:
        stream = JsonStream(path, [("samples",)], non_finite=True)
        for _ in stream.pieces():
            break  # the members before the samples are read
        header = stream.document
    if not isinstance(header, Mapping):
        return None
    stats, evaluation = header.get("stats"), header.get("eval")
    for holder, key in ((stats, "started_at"), (evaluation, "created")):
        if isinstance(holder, Mapping) and (moment := parse_time(holder.get(key))):
            return moment
    return None


# --- .eval archives -----------------------------------------------------------------------


def _read_eval(path: str) -> tuple[Mapping[str, Any], _Samples]:
    with Archive(path) as archive:
        names = archive.names
        if "header.json" in names:
            header = archive.json("header.json", non_finite=True)
        elif "_journal/start.json" in names:
            # A run that has not finished yet has only its start record.
            header = archive.json("_journal/start.json", non_finite=True)
        else:
            raise InputError(
                "not an Inspect .eval log",
                Provenance(path),
                expected="a zip archive with header.json or _journal/start.json",
            )
        if not isinstance(header, dict):
            raise InputError("header is not an object", Provenance(path, pointer="header.json"))
        samples = _Samples()
        if "summaries.json" in names:
            sources = ["summaries.json"]
        else:
            journal = [(int(m.group(1)), n) for n in names if (m := _JOURNAL_SUMMARY.match(n))]
            sources = [name for _, name in sorted(journal)]
        for source in sources:
            # Streamed: a run of 100,000 samples writes 60 MB of summaries.
            stream = JsonStream(
                path, [()], handle=archive.stream(source), prefix=f"{source}#", non_finite=True
            )
            samples.add_pieces(stream)
            if not stream.streamed:
                raise InputError(
                    "summaries are not an array",
                    Provenance(path, pointer=source),
                    found=json_type(stream.document),
                )
        full = sorted(n for n in names if n.startswith("samples/") and n.endswith(".json"))
        if not sources:
            # Old logs may lack summaries; the full samples carry the same fields.
            for name in full:
                samples.add(archive.json(name, non_finite=True), Provenance(path, pointer=name))
        elif header.get("invalidated") is True:
            # Summaries lack the samples' invalidation; only a log whose header says some
            # were invalidated pays for reading the full samples (streamed: the transcript's
            # messages and events are read piece by piece and dropped).
            for name in full:
                stream = JsonStream(
                    path,
                    [("messages",), ("events",)],
                    handle=archive.stream(name),
                    prefix=f"{name}#",
                    non_finite=True,
                )
                for _ in stream.pieces():
                    pass
                samples.invalidate(stream.document, Provenance(path, pointer=name))
    return header, samples


# --- .json logs ---------------------------------------------------------------------------


def _read_json(path: str) -> tuple[Mapping[str, Any], _Samples]:
    stream = JsonStream(path, [("samples",)], non_finite=True)
    samples = _Samples()
    samples.add_pieces(stream)
    document = stream.document
    if not isinstance(document, dict) or "eval" not in document:
        raise InputError(
            "not an Inspect log",
            Provenance(path, pointer=""),
            expected='an .eval archive or a JSON log with "eval" and "samples"',
        )
    if document.get("samples") not in (None, STREAMED):
        raise InputError("samples is not an array", Provenance(path, pointer="/samples"))
    return document, samples


# --- samples to trials --------------------------------------------------------------------


def value_to_float(value: Any, sample: _Sample, scorer: str) -> float:
    """Inspect's default value_to_float, but an unreadable value is an error (placed at the
    ``sample`` that gave it), not 0."""
    if isinstance(value, str) and value in LETTER_GRADES:
        return LETTER_GRADES[value]
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:  # an integer of 400 digits: as infinite as 1e400
            number = math.inf
    elif isinstance(value, str) and value.strip().lower() in ("yes", "true"):
        return 1.0
    elif isinstance(value, str) and value.strip().lower() in ("no", "false"):
        return 0.0
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            raise InputError(
                f"scorer {scorer!r} gave a value that is not a grade",
                sample.where,
                expected="C/I/P/N, a boolean, a number, yes/no or true/false",
                found=repr(value),
            ) from None
    else:
        if isinstance(value, dict) and value:
            # A dict-valued scorer chosen by its name alone: say how to choose one key.
            choices = " or ".join(f"--scorer {_label(scorer, key)}" for key in value)
            expected = f"a single value: choose one of its scores with {choices}"
        else:
            expected = (
                "a single value (C/I/P/N, boolean or number); choose a scorer "
                "with a scalar value with --scorer"
            )
        raise InputError(
            f"scorer {scorer!r} gave a {type(value).__name__} value",
            sample.where,
            expected=expected,
            found=repr(value)[:80],
        )
    if not math.isfinite(number):
        raise InputError(
            f"scorer {scorer!r} gave a non-finite value", sample.where, found=repr(value)
        )
    return number


def _named(entries: Any, where: Provenance, field: str = "name") -> list[Any]:
    """The scorer names of a header's list: each entry's ``field``, else its ``name``
    (entries without one are not scorers)."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise InputError("not an array of scorers", where, found=json_found(entries))
    return [
        entry.get(field, entry.get("name")) for entry in entries if isinstance(entry, Mapping)
    ]


class _Choice(NamedTuple):
    """What decides a trial: a scorer, and for a dict-valued one the key of its value."""

    scorer: str
    key: str | None

    @property
    def label(self) -> str:
        return _label(self.scorer, self.key)


def _label(scorer: str, key: str | None) -> str:
    """How --scorer names a score: the scorer, or ``scorer.key`` for one key of a dict."""
    return scorer if key is None else f"{scorer}.{key}"


def _scorer_names(path: str, header: Mapping[str, Any], samples: _Samples) -> list[str]:
    names: list[Any] = []
    results = header.get("results")
    if isinstance(results, Mapping):
        # An entry's "scorer" is the key of the samples' scores; its "name" is a key of the
        # value for a dict-valued scorer (Inspect reports one score per key).
        where = Provenance(path, pointer="/results/scores")
        names += _named(results.get("scores"), where, field="scorer")
    evaluation = header.get("eval")
    if isinstance(evaluation, Mapping):
        names += _named(evaluation.get("scorers"), Provenance(path, pointer="/eval/scorers"))
    names += samples.scorers
    # In order of appearance, each once (a dict keeps insertion order; a list search per
    # name was quadratic in the number of samples).
    return list(dict.fromkeys(n for n in names if isinstance(n, str)))


def _choose_scorer(
    path: str, header: Mapping[str, Any], samples: _Samples, options: IngestOptions
) -> _Choice:
    names = _scorer_names(path, header, samples)
    keys = samples.keys
    # What --scorer can name: each scorer, or each key of a dict-valued one.
    choices = [
        _Choice(name, key) for name in names for key in keys.get(name, [None])
    ]
    if options.scorer is not None:
        return _given_choice(path, options.scorer, names, keys, choices)
    if not names:
        raise InputError("the log has no scores", Provenance(path), expected="a scored Inspect log")
    # Inspect's headline: the one the task chose (results.headline), else the first score
    # of results.scores, else the first scorer; for a dict-valued scorer, its key.
    results = header.get("results")
    headline = results.get("headline") if isinstance(results, Mapping) else None
    entries = results.get("scores") if isinstance(results, Mapping) else None
    first = entries[0] if isinstance(entries, list) and entries else None
    scorer, key = names[0], None
    if isinstance(headline, Mapping) and headline.get("scorer") in names:
        scorer, key = headline["scorer"], headline.get("score")
    elif isinstance(first, Mapping) and first.get("scorer") in names:
        scorer, key = first["scorer"], first.get("name")
    if scorer in keys:
        key = key if key in keys[scorer] else next(iter(keys[scorer]))
    chosen = _Choice(scorer, key if scorer in keys else None)
    if len(choices) > 1:
        others = ", ".join(repr(c.label) for c in choices if c != chosen)
        what, headline = f"{len(choices)} scorers", "scorer"
        if keys:
            what = f"{len(choices)} scores (a dict-valued scorer gives one per key)"
            headline = "score"
        warn(
            path,
            f"the log has {what}; trials are decided by {chosen.label!r} "
            f"(Inspect's headline {headline}), not {others}: choose with --scorer",
        )
    return chosen


def _given_choice(
    path: str,
    given: str,
    names: list[str],
    keys: Mapping[str, Mapping[str, None]],
    choices: list[_Choice],
) -> _Choice:
    """What ``--scorer given`` names: a scorer, else ``scorer.key`` of a dict-valued scorer
    (the longest scorer name that prefixes it, since names and keys may hold dots)."""
    if given in names:
        return _Choice(given, None)  # a dict-valued one is refused at its first value
    prefixes = [n for n in names if n in keys and given.startswith(n + ".")]
    if prefixes:
        scorer = max(prefixes, key=len)
        key = given[len(scorer) + 1 :]
        if key in keys[scorer]:
            return _Choice(scorer, key)
    raise InputError(
        f"no scorer {given!r} in this log",
        Provenance(path),
        expected="one of " + (", ".join(repr(c.label) for c in choices) or "(no scorer)"),
    )


def _error_message(error: Any) -> str | None:
    if isinstance(error, Mapping):
        error = error.get("message")
    return message_text(str(error)) if error else None


class _SampleRows:
    """Decided samples handed to the table as columns (:class:`~gate.ingest.blocks.Rows`) a
    block at a time: a ``Trial`` per sample, added one by one, was two fifths of reading a
    100,000-sample log. A block holds the elements of one array (its source and JSON
    pointer); a sample found elsewhere is handed on alone, as a Trial."""

    USAGE = ("duration_s", "tokens")

    def __init__(self, suite: str) -> None:
        self.suite = suite
        self.rows: Rows | None = None

    def add(
        self,
        sample: _Sample,
        status: Status,
        passed: bool | None,
        score: float | None,
        message: str | None,
        metadata: dict[str, Any],
    ) -> Iterator[Trial | TrialColumns]:
        element = sample.element
        if element is None:
            yield from self.flush()
            yield Trial(
                stimulus=sample.stimulus,
                trial=sample.epoch - 1,
                suite=self.suite,
                status=status,
                passed=passed,
                score=score,
                message=message,
                metadata=metadata,
                provenance=sample.where,
            )
            return
        rows = self.rows
        array, index = element
        place = sample.place
        file = place if isinstance(place, str) else place.file
        if rows is None or rows.file != file or rows.pointer != array:
            yield from self.flush()
            rows = self.rows = Rows(file, self.USAGE, pointer=array)
        rows.rows.append(
            (index, sample.stimulus, self.suite, sample.epoch - 1, status, passed, score,
             message, *map(metadata.get, self.USAGE))
        )  # fmt: skip
        if len(rows) >= BLOCK_TRIALS:
            yield rows.columns()

    def flush(self) -> Iterator[TrialColumns]:
        """The rows gathered so far, if any."""
        if self.rows is not None:
            yield from self.rows.flush()


def _invalidation_message(invalidation: Any) -> str:
    """``invalidated by AUTHOR on DATE: REASON`` from Inspect's provenance record."""
    text = "invalidated"
    if isinstance(invalidation, Mapping):
        author, moment, reason = (invalidation.get(k) for k in ("author", "timestamp", "reason"))
        if isinstance(author, str) and author:
            text += f" by {author}"
        if isinstance(moment, str) and moment:
            text += f" on {moment[:10]}"
        if isinstance(reason, str) and reason:
            text += f": {reason}"
    return message_text(text) or text


def _metadata(
    sample: Mapping[str, Any], place: Provenance | str, element: tuple[str, int] | None
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"epoch": sample.get("epoch")}
    total_time = sample.get("total_time")
    if type(total_time) is not float and total_time is not None:
        total_time = metadata_number(total_time, _place(place, element), "total_time")
    if total_time is not None:
        metadata["duration_s"] = total_time
    usage = sample.get("model_usage")
    if type(usage) is dict and usage:
        # Tokens are the total over every model the sample used (input + output where a
        # model reports no total).
        tokens = 0
        for per_model in usage.values():
            if type(per_model) is dict:
                total = per_model.get("total_tokens")
                if type(total) is not int:
                    parts = (per_model.get("input_tokens"), per_model.get("output_tokens"))
                    total = sum(part for part in parts if type(part) is int)
                tokens += total
        metadata["tokens"] = tokens
    if sample.get("limit"):
        metadata["limit"] = sample["limit"]
    return metadata


def _check_sample(sample: Any, where: Provenance) -> None:
    if not isinstance(sample, Mapping):
        raise InputError("sample is not an object", where, found=type(sample).__name__)
    sample_id = sample.get("id")
    if isinstance(sample_id, bool) or not isinstance(sample_id, int | str) or sample_id == "":
        raise InputError("sample has no id", where, found=repr(sample_id))
    epoch = sample.get("epoch")
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        raise InputError("sample has no epoch", where, expected="an integer ≥ 1", found=repr(epoch))


def _trials(
    path: str, header: Mapping[str, Any], samples: _Samples, options: IngestOptions
) -> Iterator[Trial | TrialColumns]:
    raw_evaluation = header.get("eval")
    evaluation: Mapping[str, Any] = raw_evaluation if isinstance(raw_evaluation, Mapping) else {}
    task = evaluation.get("task")
    suite = task if isinstance(task, str) and task else options.suite or DEFAULT_SUITE
    status = header.get("status")
    if not samples.latest:
        raise InputError(
            "the log has no samples",
            Provenance(path),
            expected="samples (a log written with --no-log-samples has only aggregate scores)",
            found=f"status {status!r}" if status else None,
        )
    _report_incomplete(path, header, evaluation, len(samples.latest))
    choice = _choose_scorer(path, header, samples, options)
    scorer, key, label = choice.scorer, choice.key, choice.label
    threshold = 1.0 if options.pass_threshold is None else options.pass_threshold
    model = evaluation.get("model")
    outside = unscored = invalidated = 0
    rows = _SampleRows(suite)

    def decided() -> Iterator[Trial | TrialColumns]:
        nonlocal outside, unscored, invalidated
        for sample in samples.latest.values():
            metadata = sample.metadata
            if isinstance(model, str):
                metadata["model"] = model
            if sample.invalidation is not None:
                # Void, as Inspect treats it (eval-set and eval-retry run it again, as an
                # errored sample): neither a pass nor a failure, nor an error of the agent's.
                invalidated += 1
                yield from rows.add(sample, "skipped", None, None, sample.invalidation, metadata)
                continue
            if sample.error is not None:
                yield from rows.add(sample, "error", None, None, sample.error, metadata)
                continue
            scores = sample.scores
            score = scores.get(scorer) if scores is not None else None
            if score is None:
                available = ", ".join(map(repr, scores)) if scores else ""
                raise InputError(
                    f"sample {sample.stimulus!r} epoch {sample.epoch} has no score from {scorer!r}",
                    sample.where,
                    expected=f"a {scorer!r} score (or choose another scorer with --scorer)",
                    found=f"scores {available}" if available else "no scores",
                )
            raw, explanation = score
            if key is not None and not _unscored(raw):
                raw = _value_at(raw, scorer, key, sample.where)
            if _unscored(raw):
                # Inspect's "unscored" marker (Score.unscored(), a grader whose grade could
                # not be parsed): it leaves the sample out of the scorer's metrics, so the
                # trial is skipped, neither a pass nor a failure.
                unscored += 1
                unscored_by = f"unscored by {label!r}" + (f": {explanation}" if explanation else "")
                metadata = {**metadata, "scorer": label}
                yield from rows.add(
                    sample, "skipped", None, None, message_text(unscored_by), metadata
                )
                continue
            value = value_to_float(raw, sample, label)
            outside += not 0.0 <= value <= 1.0
            metadata.update(scorer=label, value=raw)
            passed = value >= threshold
            message = None if passed else message_text(explanation)
            yield from rows.add(sample, "ok", passed, clip_unit(value), message, metadata)

    yield from flushed_first(rows, decided())
    yield from rows.flush()
    if invalidated:
        warn(
            path,
            f"{invalidated} trial(s) were invalidated after the run (inspect_ai "
            "invalidate_samples; Inspect runs them again in eval-set and eval-retry): "
            "counted as skipped",
        )
    if unscored:
        warn(
            path,
            f"{unscored} trial(s) are unscored by {label!r} (its value is NaN, Inspect's "
            "mark for a score it could not give, left out of its metrics; some Inspect "
            "versions wrote it as null): counted as skipped",
        )
    if outside:
        warn(
            path,
            f"{outside} value(s) of scorer {label!r} lie outside [0, 1]; scores are clipped to "
            "[0, 1] (pass/fail compares the raw value with --pass-threshold)",
        )


def _unscored(value: Any) -> bool:
    """Inspect's "unscored" marker: NaN, or ``null``, which is how pydantic wrote that NaN in
    the logs of some Inspect versions (always inside dict- and list-valued scores, and in
    every score while score editing was first released; Inspect itself reads such a null as
    NaN)."""
    return value is None or (type(value) is float and math.isnan(value))


def _value_at(value: Any, scorer: str, key: str, where: Provenance) -> Any:
    """The ``key`` entry of a dict-valued scorer's value (a NaN entry is that key unscored)."""
    if type(value) is not dict:
        raise InputError(
            f"scorer {scorer!r} gave a {type(value).__name__} value, not a dict of scores",
            where,
            expected=f"a dict with the key {key!r} (or choose with --scorer {scorer})",
            found=repr(value)[:80],
        )
    if key not in value:
        raise InputError(
            f"scorer {scorer!r} gave no {key!r} score",
            where,
            expected=f"a dict with the key {key!r}",
            found="keys " + (", ".join(map(repr, value)) or "(none)"),
        )
    return value[key]


def _report_incomplete(
    path: str, header: Mapping[str, Any], evaluation: Mapping[str, Any], found: int
) -> None:
    status = header.get("status")
    dataset = evaluation.get("dataset")
    config = evaluation.get("config")
    ids = dataset.get("sample_ids") if isinstance(dataset, Mapping) else None
    epochs = config.get("epochs") if isinstance(config, Mapping) else None
    expected = len(ids) * epochs if isinstance(ids, list) and isinstance(epochs, int) else None
    if status not in (None, "success") or (expected is not None and found < expected):
        planned = f" of {expected} planned" if expected is not None else ""
        warn(
            path,
            f"the Inspect run is incomplete (status {status!r}): {found}{planned} "
            "sample epochs are in the log",
        )
