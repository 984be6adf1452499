"""promptfoo results: ``promptfoo eval -o results.json`` and ``-o results.jsonl``.

The JSON file is one document whose ``results.results`` array holds the results. The JSONL
file holds one result per line: promptfoo's evaluator streams each ``EvaluateResult`` as it
completes (``Evaluator.persistEvalRow``, ``JsonlFileWriter`` in
src/util/exportToFile/writeToFile.ts), in the order they finish, and recent versions rewrite
the file from the eval's stored results when the run ends (``writeOutput`` in
src/util/output.ts). Both hold the same result objects and are read by the same rules.

promptfoo gives repeats no label: ``--repeat 3`` runs each test three times
under three new ``testIdx`` values. A stimulus is therefore one group of
results with the same test case (compared as canonical JSON), prompt and
provider; its trials are the group's results in ``testIdx`` order.

* ``success`` is the verdict, ``score`` the score (clipped to [0, 1]); they must be
  a JSON boolean and a JSON number (``"success": "yes"`` is an error, not a pass).
* ``failureReason`` 2 is an error of the provider or harness, not a failure of
  the model: status ``error`` with promptfoo's ``error`` text as the message
  (``error`` alone is no signal: promptfoo also fills it on assertion failures).
* ``gradingResult.componentResults`` become graders, one per assertion.
* Groups of unequal size (some repeat missing or one test case duplicated) are
  reported as a warning.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

import orjson

from gate.errors import InputError, Provenance
from gate.ingest import IngestOptions, Record
from gate.ingest._json import jsonl_chunks
from gate.ingest.detect import SNIFF_BYTES, first_line, promptfoo_result_line
from gate.ingest.duplicates import parse_time
from gate.ingest.jsonstream import JsonStream
from gate.ingest.values import (
    clip_unit,
    json_boolean,
    json_found,
    json_number,
    message_text,
    metadata_number,
    warn,
)
from gate.reading import read_head
from gate.trials import DEFAULT_SUITE, GraderResult, Status, Trial

_ERROR = 2  # promptfoo ResultFailureReason.ERROR
_EVAL_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?$")


class _Entry(NamedTuple):
    """One result, reduced to what its trial needs (a result holds its whole transcript)."""

    order: int  # testIdx, the order of the repeats
    position: int  # index in the results array
    where: Provenance
    status: Status
    passed: bool | None
    score: float | None
    graders: tuple[GraderResult, ...]
    message: str | None
    metadata: dict[str, Any]


@dataclass
class _Group:
    test_case: Mapping[str, Any]
    prompt_idx: Any
    provider: str
    prompt: str  # promptId, else the label: promptIdx numbers (prompt, provider) columns
    prompt_label: str | None
    results: list[_Entry] = field(default_factory=list)


#: where results files keep the results array: v2/v3 in results.results, older in results.
RESULTS_PATHS = [("results", "results"), ("results",)]


def _canonical(value: Any) -> bytes | str:
    """A key equal for equal JSON values and different for different ones (sorted keys)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONEncodeError, TypeError):  # a 100-digit integer, or deeper than 254
        return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _provider(result: Mapping[str, Any]) -> str:
    provider = result.get("provider")
    if isinstance(provider, Mapping):
        label = provider.get("label") or provider.get("id")
        return str(label) if label else "unknown provider"
    return str(provider) if provider else "unknown provider"


def _vars_summary(test_case: Mapping[str, Any]) -> str:
    variables = test_case.get("vars")
    if not isinstance(variables, Mapping) or not variables:
        return ""
    parts = []
    for key, value in variables.items():
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        parts.append(f"{key}={text}")
    summary = ", ".join(parts).replace("\n", " ")
    return summary if len(summary) <= 60 else summary[:59] + "…"


def _graders(result: Mapping[str, Any], where: Provenance) -> tuple[GraderResult, ...]:
    grading = result.get("gradingResult")
    if not isinstance(grading, Mapping):
        return ()
    components = grading.get("componentResults") or ()
    if not isinstance(components, list | tuple):
        raise InputError(
            "gradingResult.componentResults is not an array",
            where,
            found=json_found(components),
        )
    graders: list[GraderResult] = []
    seen: Counter[str] = Counter()
    for position, component in enumerate(components):
        if not isinstance(component, Mapping):
            continue
        assertion = component.get("assertion")
        name = None
        if isinstance(assertion, Mapping):
            name = assertion.get("metric") or assertion.get("type")
        name = str(name or f"assertion-{position}")
        seen[name] += 1
        if seen[name] > 1:
            name = f"{name}#{seen[name]}"
        # Under the result's pointer in a JSON document, or after its line in JSONL.
        here = Provenance(
            where.file,
            where.line,
            f"{where.pointer or ''}/gradingResult/componentResults/{position}",
        )
        score = component.get("score")
        graders.append(
            GraderResult(
                name,
                None if score is None else clip_unit(json_number(score, here, "score")),
                json_boolean(component.get("pass"), here, "pass"),
            )
        )
    return tuple(graders)


def _metadata(result: Mapping[str, Any], provider: str, where: Provenance) -> dict[str, Any]:
    metadata: dict[str, Any] = {"provider": provider, "test_idx": result.get("testIdx")}
    latency = metadata_number(result.get("latencyMs"), where, "latencyMs")
    if latency is not None:
        metadata["duration_s"] = latency / 1000
    cost = metadata_number(result.get("cost"), where, "cost")
    if cost is not None:
        metadata["cost_usd"] = cost
    response = result.get("response")
    usage = response.get("tokenUsage") if isinstance(response, Mapping) else None
    if isinstance(usage, Mapping):
        tokens = {
            target: usage[source]
            for source, target in (
                ("prompt", "input"),
                ("completion", "output"),
                ("total", "total"),
            )
            if isinstance(usage.get(source), int)
        }
        if tokens:
            metadata["tokens"] = tokens
    return metadata


def _stimulus_names(groups: list[_Group]) -> list[str]:
    """Readable ids: description (or vars) and provider, made unique where they collide."""
    several_prompts = len({group.prompt for group in groups}) > 1
    names = []
    for position, group in enumerate(groups):
        case = group.test_case
        label = str(case.get("description") or "") or _vars_summary(case)
        if not label:
            label = f"test {group.results[0].order if group.results else position}"
        name = f"{label} [{group.provider}]"
        if several_prompts:
            name += f" prompt {group.prompt_label or group.prompt_idx}"
        names.append(name)
    counts = Counter(names)
    seen: Counter[str] = Counter()
    unique = []
    for name in names:
        if counts[name] > 1:
            seen[name] += 1
            name = f"{name} #{seen[name]}"
        unique.append(name)
    return unique


def _entry(result: Mapping[str, Any], position: int, where: Provenance, provider: str) -> _Entry:
    """The trial of one result, checked, without its stimulus and trial number."""
    test_idx = result.get("testIdx")
    order = test_idx if isinstance(test_idx, int) and not isinstance(test_idx, bool) else -1
    metadata = _metadata(result, provider, where)
    if result.get("failureReason") == _ERROR:
        error = message_text(result.get("error")) or "promptfoo reported an error"
        return _Entry(order, position, where, "error", None, None, (), error, metadata)
    passed = json_boolean(result.get("success"), where, "success")
    raw_score = result.get("score")
    score = None
    if raw_score is not None:
        number = json_number(raw_score, where, "score")
        score = clip_unit(number)
        if score != number:
            metadata["raw_score"] = number
    if passed is None and score is None:
        raise InputError("result has neither success nor score", where)
    graders = _graders(result, where)
    message = None if passed else _reason(result)
    return _Entry(order, position, where, "ok", passed, score, graders, message, metadata)


def started(path: str) -> datetime | None:
    """When the eval ran: ``results.timestamp``, else the time in the ``evalId``
    (``eval-XYZ-2026-11-23T02:06:16``), read before the results. A JSONL file records neither
    (its lines are results only): None."""
    if holds_result_lines(path):
        return None
    stream = JsonStream(path, RESULTS_PATHS)
    for _ in stream.pieces():
        break  # the members before the results are read
    document = stream.document
    if not isinstance(document, Mapping):
        return None
    results = document.get("results")
    if isinstance(results, Mapping) and (moment := parse_time(results.get("timestamp"))):
        return moment
    eval_id = document.get("evalId")
    if isinstance(eval_id, str) and (found := _EVAL_TIME.search(eval_id)):
        return parse_time(found.group())
    return None


def holds_result_lines(path: str) -> bool:
    """Whether ``path`` is promptfoo's JSONL output (one result per line) rather than its JSON
    document: told by the first line, as detection tells it."""
    head = read_head(path, SNIFF_BYTES).decode("utf-8", errors="replace")
    return promptfoo_result_line(first_line(head))


class _Groups:
    """The results of one file gathered into stimuli as they are read: one group per test
    case (as canonical JSON), ``promptIdx`` and provider, each result reduced to its trial."""

    def __init__(self) -> None:
        self._groups: dict[tuple[bytes | str, bytes | str, str], _Group] = {}

    def add(self, result: Any, position: int, where: Provenance) -> None:
        """Add one result (``position``: its place in the file, the tie-break of the order)."""
        if not isinstance(result, dict):
            raise InputError("result is not an object", where, found=type(result).__name__)
        test_case = result.get("testCase")
        if not isinstance(test_case, dict):
            raise InputError("result has no testCase", where, expected="an object")
        provider = _provider(result)
        key = (_canonical(test_case), _canonical(result.get("promptIdx")), provider)
        group = self._groups.get(key)
        if group is None:
            prompt = result.get("prompt")
            prompt_label = prompt.get("label") if isinstance(prompt, Mapping) else None
            prompt_key = str(result.get("promptId") or prompt_label or result.get("promptIdx"))
            group = self._groups[key] = _Group(
                test_case, result.get("promptIdx"), provider, prompt_key, prompt_label
            )
        group.results.append(_entry(result, position, where, provider))

    def trials(self, path: str, options: IngestOptions) -> Iterator[Trial]:
        """Every group's results as trials, in ``testIdx`` order, with the warnings the whole
        file gives (weighted assertions, groups of unequal size)."""
        ordered = list(self._groups.values())
        if any(_weighted(group.test_case) for group in ordered):
            warn(
                path,
                "some assertions carry a weight: pass/fail is promptfoo's own verdict, but the "
                "trial score is the unweighted mean of the assertion scores",
            )
        for group in ordered:
            group.results.sort(key=lambda entry: (entry.order, entry.position))
        suite = options.suite or DEFAULT_SUITE
        names = _stimulus_names(ordered)
        for name, group in zip(names, ordered, strict=True):
            for index, entry in enumerate(group.results):
                yield Trial(
                    stimulus=name,
                    trial=index,
                    suite=suite,
                    status=entry.status,
                    passed=entry.passed,
                    score=entry.score,
                    graders=entry.graders,
                    message=entry.message,
                    metadata=entry.metadata,
                    provenance=entry.where,
                )
        sizes = Counter(len(group.results) for group in ordered)
        if len(sizes) > 1:
            usual = sizes.most_common(1)[0][0]
            odd = [
                f"{name} ({len(group.results)})"
                for name, group in zip(names, ordered, strict=True)
                if len(group.results) != usual
            ]
            warn(
                path,
                f"repeat groups differ in size: most have {usual} results, but "
                + ", ".join(odd[:5])
                + (" …" if len(odd) > 5 else "")
                + " (a repeat is missing, or two tests share the same test case)",
            )


#: bytes of JSONL lines parsed at a time (as Vally's reader: a chunk stays in the cache)
CHUNK_BYTES = 64 * 1024


def read(path: str, options: IngestOptions) -> Iterator[Record]:
    """Read a promptfoo results.json or results.jsonl, grouping unlabelled repeats into
    stimuli.

    The results array of the JSON document is streamed (:mod:`gate.ingest.jsonstream`), the
    JSONL file read a chunk of lines at a time; each result is reduced to its trial as it is
    read, since the grouping is known only at the end.
    """
    groups = _Groups()
    if holds_result_lines(path):
        for chunk in jsonl_chunks(path, CHUNK_BYTES):
            numbered = (
                chunk.strict
                if chunk.records is None
                else enumerate(chunk.records, chunk.first_line)
            )
            for line, result in numbered:
                groups.add(result, line, Provenance(path, line))
        yield from groups.trials(path, options)
        return
    stream = JsonStream(path, RESULTS_PATHS)
    for piece in stream.pieces():
        for position, result in enumerate(piece.values, piece.start):
            groups.add(result, position, Provenance(path, None, f"{piece.pointer}/{position}"))
    if not stream.streamed:
        raise InputError(
            "not a promptfoo results file",
            Provenance(path, pointer=""),
            expected='an object with "results": {"results": [...]} '
            "(promptfoo eval -o results.json), or one result per line "
            "(promptfoo eval -o results.jsonl)",
        )
    yield from groups.trials(path, options)


def _reason(result: Mapping[str, Any]) -> str | None:
    """Why a result failed: the grading reason, else promptfoo's error text."""
    grading = result.get("gradingResult")
    reason = grading.get("reason") if isinstance(grading, Mapping) else None
    return message_text(reason) or message_text(result.get("error"))


def _weighted(test_case: Mapping[str, Any]) -> bool:
    asserts = test_case.get("assert")
    return isinstance(asserts, list) and any(
        isinstance(a, Mapping) and a.get("weight", 1) != 1 for a in asserts
    )
