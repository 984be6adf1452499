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
  first scorer unless the task chose another); a warning names the others.
* Its value becomes a score as Inspect's ``value_to_float`` does (C → 1,
  P → 0.5, I → 0, N → 0, booleans, numbers, numeric strings, yes/no/true/false);
  the trial passes when the score reaches ``--pass-threshold`` (default 1).
* A sample with an ``error`` is a trial with status ``error`` and its message.

An ``.eval`` archive may come from anywhere (a fork's artifact): its members are read by
:class:`gate.ingest.archive.Archive`, within a budget of unpacked bytes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from gate.errors import InputError, Provenance
from gate.ingest import IngestOptions, Record
from gate.ingest._json import load_file, pointer
from gate.ingest.archive import Archive
from gate.ingest.values import clip_unit, json_found, metadata_number, warn
from gate.reading import read_head
from gate.trials import DEFAULT_SUITE, Trial

_JOURNAL_SUMMARY = re.compile(r"^_journal/summaries/(\d+)\.json$")

#: Inspect's value_to_float for its letter grades.
LETTER_GRADES = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}

Sample = tuple[Mapping[str, Any], Provenance]


def read(path: str, options: IngestOptions) -> Iterator[Record]:
    """Read an Inspect ``.eval`` archive or ``.json`` log (told apart by content)."""
    if read_head(path, 4).startswith(b"PK"):
        header, samples = _read_eval(path)
    else:
        header, samples = _read_json(path)
    yield from _trials(path, header, samples, options)


# --- .eval archives -----------------------------------------------------------------------


def _read_eval(path: str) -> tuple[Mapping[str, Any], list[Sample]]:
    with Archive(path) as archive:
        names = archive.names
        if "header.json" in names:
            header = archive.json("header.json")
        elif "_journal/start.json" in names:
            # A run that has not finished yet has only its start record.
            header = archive.json("_journal/start.json")
        else:
            raise InputError(
                "not an Inspect .eval log",
                Provenance(path),
                expected="a zip archive with header.json or _journal/start.json",
            )
        if not isinstance(header, dict):
            raise InputError("header is not an object", Provenance(path, pointer="header.json"))
        samples: list[Sample] = []
        if "summaries.json" in names:
            sources = ["summaries.json"]
        else:
            journal = [(int(m.group(1)), n) for n in names if (m := _JOURNAL_SUMMARY.match(n))]
            sources = [name for _, name in sorted(journal)]
        for source in sources:
            summaries = archive.json(source)
            if not isinstance(summaries, list):
                raise InputError(
                    "summaries are not an array",
                    Provenance(path, pointer=source),
                    found=type(summaries).__name__,
                )
            for position, summary in enumerate(summaries):
                where = Provenance(path, pointer=f"{source}#{pointer(position)}")
                # Checked here, before a provenance is kept for each of fifty million zeros.
                _check_sample(summary, where)
                samples.append((summary, where))
        if not sources:
            # Old logs may lack summaries; the full samples carry the same fields.
            for name in sorted(
                n for n in names if n.startswith("samples/") and n.endswith(".json")
            ):
                samples.append((archive.json(name), Provenance(path, pointer=name)))
    return header, samples


# --- .json logs ---------------------------------------------------------------------------


def _read_json(path: str) -> tuple[Mapping[str, Any], list[Sample]]:
    document = load_file(path)
    if not isinstance(document, dict) or "eval" not in document:
        raise InputError(
            "not an Inspect log",
            Provenance(path, pointer=""),
            expected='an .eval archive or a JSON log with "eval" and "samples"',
        )
    samples = document.get("samples") or []
    if not isinstance(samples, list):
        raise InputError("samples is not an array", Provenance(path, pointer="/samples"))
    return document, [
        (sample, Provenance(path, pointer=pointer("samples", position)))
        for position, sample in enumerate(samples)
    ]


# --- samples to trials --------------------------------------------------------------------


def value_to_float(value: Any, where: Provenance, scorer: str) -> float:
    """Inspect's default value_to_float, but an unreadable value is an error, not 0."""
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
                where,
                expected="C/I/P/N, a boolean, a number, yes/no or true/false",
                found=repr(value),
            ) from None
    else:
        raise InputError(
            f"scorer {scorer!r} gave a {type(value).__name__} value",
            where,
            expected="a single value (C/I/P/N, boolean or number); choose a scorer "
            "with a scalar value with --scorer",
            found=repr(value)[:80],
        )
    if not math.isfinite(number):
        raise InputError(f"scorer {scorer!r} gave a non-finite value", where, found=repr(value))
    return number


def _named(entries: Any, where: Provenance) -> list[Any]:
    """The names of a header's scorer list (entries without a name are not scorers)."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise InputError("not an array of scorers", where, found=json_found(entries))
    return [entry.get("name") for entry in entries if isinstance(entry, Mapping)]


def _scorer_names(path: str, header: Mapping[str, Any], samples: Iterable[Sample]) -> list[str]:
    names: list[Any] = []
    results = header.get("results")
    if isinstance(results, Mapping):
        names += _named(results.get("scores"), Provenance(path, pointer="/results/scores"))
    evaluation = header.get("eval")
    if isinstance(evaluation, Mapping):
        names += _named(evaluation.get("scorers"), Provenance(path, pointer="/eval/scorers"))
    for sample, _ in samples:
        scores = sample.get("scores")
        if isinstance(scores, Mapping):
            names += list(scores)
    # In order of appearance, each once (a dict keeps insertion order; a list search per
    # name was quadratic in the number of samples).
    return list(dict.fromkeys(n for n in names if isinstance(n, str)))


def _choose_scorer(
    path: str, header: Mapping[str, Any], samples: list[Sample], options: IngestOptions
) -> str:
    names = _scorer_names(path, header, samples)
    if options.scorer is not None:
        if options.scorer not in names:
            raise InputError(
                f"no scorer {options.scorer!r} in this log",
                Provenance(path),
                expected="one of " + (", ".join(map(repr, names)) or "(no scorer)"),
            )
        return options.scorer
    if not names:
        raise InputError("the log has no scores", Provenance(path), expected="a scored Inspect log")
    results = header.get("results")
    headline = results.get("headline") if isinstance(results, Mapping) else None
    chosen = names[0]
    if isinstance(headline, Mapping) and headline.get("scorer") in names:
        chosen = headline["scorer"]
    if len(names) > 1:
        others = ", ".join(repr(n) for n in names if n != chosen)
        warn(
            path,
            f"the log has {len(names)} scorers; trials are decided by {chosen!r} "
            f"(Inspect's headline scorer), not {others}: choose with --scorer",
        )
    return chosen


def _error_message(error: Any) -> str | None:
    if isinstance(error, Mapping):
        error = error.get("message")
    return str(error) if error else None


def _metadata(sample: Mapping[str, Any], model: Any, where: Provenance) -> dict[str, Any]:
    metadata: dict[str, Any] = {"epoch": sample.get("epoch")}
    if isinstance(model, str):
        metadata["model"] = model
    total_time = metadata_number(sample.get("total_time"), where, "total_time")
    if total_time is not None:
        metadata["duration_s"] = total_time
    usage = sample.get("model_usage")
    if isinstance(usage, Mapping) and usage:
        tokens = {"input": 0, "output": 0, "total": 0}
        for per_model in usage.values():
            if isinstance(per_model, Mapping):
                for source, target in (
                    ("input_tokens", "input"),
                    ("output_tokens", "output"),
                    ("total_tokens", "total"),
                ):
                    value = per_model.get(source)
                    if isinstance(value, int) and not isinstance(value, bool):
                        tokens[target] += value
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


def _deduplicate(samples: list[Sample]) -> list[Sample]:
    """Keep the last record per (id, epoch), as Inspect does: a re-run supersedes its attempt."""
    latest: dict[tuple[str, Any], Sample] = {}
    for sample, where in samples:
        latest[(str(sample.get("id")), sample.get("epoch"))] = (sample, where)
    return list(latest.values())


def _trials(
    path: str, header: Mapping[str, Any], samples: list[Sample], options: IngestOptions
) -> Iterator[Trial]:
    for sample, where in samples:
        _check_sample(sample, where)
    samples = _deduplicate(samples)
    raw_evaluation = header.get("eval")
    evaluation: Mapping[str, Any] = raw_evaluation if isinstance(raw_evaluation, Mapping) else {}
    task = evaluation.get("task")
    suite = task if isinstance(task, str) and task else options.suite or DEFAULT_SUITE
    status = header.get("status")
    if not samples:
        raise InputError(
            "the log has no samples",
            Provenance(path),
            expected="samples (a log written with --no-log-samples has only aggregate scores)",
            found=f"status {status!r}" if status else None,
        )
    _report_incomplete(path, header, evaluation, len(samples))
    scorer = _choose_scorer(path, header, samples, options)
    threshold = 1.0 if options.pass_threshold is None else options.pass_threshold
    outside = 0
    for sample, where in samples:
        sample_id, epoch = sample["id"], sample["epoch"]
        metadata = _metadata(sample, evaluation.get("model"), where)
        message = _error_message(sample.get("error"))
        if message is not None:
            yield Trial(
                stimulus=str(sample_id),
                trial=epoch - 1,
                suite=suite,
                status="error",
                message=message,
                metadata=metadata,
                provenance=where,
            )
            continue
        scores = sample.get("scores")
        score = scores.get(scorer) if isinstance(scores, Mapping) else None
        if not isinstance(score, Mapping) or "value" not in score:
            available = ", ".join(map(repr, scores)) if isinstance(scores, Mapping) else ""
            raise InputError(
                f"sample {sample_id!r} epoch {epoch} has no score from {scorer!r}",
                where,
                expected=f"a {scorer!r} score (or choose another scorer with --scorer)",
                found=f"scores {available}" if available else "no scores",
            )
        value = value_to_float(score["value"], where, scorer)
        outside += not 0.0 <= value <= 1.0
        metadata.update(scorer=scorer, value=score["value"])
        yield Trial(
            stimulus=str(sample_id),
            trial=epoch - 1,
            suite=suite,
            passed=value >= threshold,
            score=clip_unit(value),
            metadata=metadata,
            provenance=where,
        )
    if outside:
        warn(
            path,
            f"{outside} value(s) of scorer {scorer!r} lie outside [0, 1]; scores are clipped to "
            "[0, 1] (pass/fail compares the raw value with --pass-threshold)",
        )


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
