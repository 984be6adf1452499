"""Every JSON reader, fed every wrong type at every place of a valid document.

For each format a minimal valid document is generated; then each value in it, one at a time,
is replaced by each hostile value (null, a boolean, numbers past the float range or 5,000
digits long, whole floats such as 3.0 that JSON Schema's integer admits, a string, a lone
surrogate, an empty or nested array or object) or removed. The reader must either read the
document or refuse it with an input error (exit code 2): any other exception is a bug (a
traceback, or exit code 1 before the guard).
"""

from __future__ import annotations

import json
import warnings
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gate.errors import EvalGateError
from gate.ingest import IngestOptions, load

#: written as JSON text: 10**400 and the 5,000-digit integer are beyond what a float holds.
HOSTILE: list[str] = [
    "null",
    "true",
    "-1",
    "0.5",
    "1" + "0" * 400,
    "-" + "9" * 5000,
    "1e400",
    # floats JSON Schema's "integer" admits (a whole number, or one past 64 bits)
    "3.0",
    "1e308",
    '""',
    '"x"',
    '"\\ud800"',
    "[]",
    "{}",
    "[[[]]]",
    '{"a": {"b": []}}',
    '[{"name": []}]',
]
REMOVED = object()

TRIAL = {
    "suite": "s",
    "stimulus": "a",
    "trial": 0,
    "passed": True,
    "score": 0.5,
    "metadata": {"duration_s": 1.5, "tokens": {"total": 3}},
    "tags": ["t"],
}
SUITE = {
    "type": "suite",
    "schema_version": "1.0",
    "suite": "s",
    "grader_weights": {"g": 1},
    "pass_threshold": 0.5,
}
INSPECT = {
    "version": 2,
    "status": "success",
    "eval": {
        "task": "t",
        "model": "m",
        "scorers": [{"name": "match"}],
        "dataset": {"sample_ids": ["a"]},
        "config": {"epochs": 1},
    },
    "results": {"scores": [{"name": "match"}], "headline": {"scorer": "match"}},
    "samples": [
        {
            "id": "a",
            "epoch": 1,
            "total_time": 2,
            "error": None,
            "scores": {"match": {"value": "C"}},
            "model_usage": {"m": {"input_tokens": 1, "output_tokens": 2}},
        }
    ],
}
PROMPTFOO = {
    "evalId": "e",
    "results": {
        "version": 3,
        "results": [
            {
                "testCase": {
                    "vars": {"q": "x"},
                    "description": "d",
                    "assert": [{"type": "x", "weight": 2}],
                },
                "provider": {"id": "p", "label": "P"},
                "prompt": {"label": "pr"},
                "promptIdx": 0,
                "testIdx": 0,
                "success": True,
                "score": 1,
                "latencyMs": 5,
                "cost": 0.1,
                "failureReason": 0,
                "error": None,
                "response": {"tokenUsage": {"prompt": 1, "completion": 2, "total": 3}},
                "gradingResult": {
                    "pass": True,
                    "reason": "ok",
                    "componentResults": [
                        {"pass": True, "score": 1, "assertion": {"type": "x", "metric": "m"}}
                    ],
                },
            }
        ],
    },
}
TAU = [{"task_id": 1, "trial": 0, "reward": 1.0, "info": {"error": None}}]
TAU2 = {
    "info": {"num_trials": 1, "environment_info": {"domain_name": "retail"}},
    "tasks": [],
    "simulations": [
        {
            "task_id": "1",
            "trial": 0,
            "termination_reason": "user_stop",
            "reward_info": {"reward": 1.0},
            "duration": 3,
            "agent_cost": 0.1,
        }
    ],
}
VALLY = {
    "type": "trial-result",
    "evalName": "e",
    "stimulus": "s",
    "trialIndex": 0,
    "status": "success",
    "durationMs": 10,
    "model": "m",
    "itemId": "i",
    "gradeResult": {"passed": True, "score": 0.9},
    "trajectory": {"metrics": {"tokenUsage": {"totalTokens": 5}}},
}
COUNTS = {
    "suite": "s",
    "stimulus": "a",
    "n": 3,
    "c": 2,
    "errors": 0,
    "skipped": 0,
    "score_sum": 2.0,
    "tags": ["t"],
    "messages": ["m"],
}
GENERIC = {"case": "a", "run": 0, "ok": True, "grade": {"score": 0.5}, "duration_s": 1}

# name: (format, file name, document, one record per line?, options)
FORMATS: dict[str, tuple[str, str, Any, bool, dict[str, Any]]] = {
    "native-jsonl": ("native", "r.jsonl", [SUITE, TRIAL], True, {}),
    "native-document": (
        "native",
        "r.json",
        {
            "schema_version": "1.0",
            "suite": "s",
            "stimuli": [
                {"id": "a", "tags": ["t"], "trials": [{"trial": 0, "passed": True, "score": 0.5}]}
            ],
        },
        False,
        {},
    ),
    "inspect-json": ("inspect", "log.json", INSPECT, False, {}),
    "promptfoo": ("promptfoo", "results.json", PROMPTFOO, False, {}),
    "tau-bench": ("tau-bench", "tau.json", TAU, False, {}),
    "tau2-bench": ("tau2-bench", "tau2.json", TAU2, False, {}),
    "vally": ("vally", "results.jsonl", [VALLY], True, {}),
    "counts": ("counts", "counts.jsonl", [COUNTS], True, {}),
    "generic-jsonl": (
        "jsonl",
        "g.jsonl",
        [GENERIC],
        True,
        {
            "column_map": {
                "stimulus": "case",
                "trial": "run",
                "passed": "ok",
                "score": "grade.score",
            }
        },
    ),
}


def _places(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value inside ``value`` (the root excluded)."""
    children = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, child in children:
        yield (*path, key)
        yield from _places(child, (*path, key))


_MARK = "\u0000HOSTILE\u0000"


def _mutated(document: Any, path: tuple[Any, ...], replacement: Any) -> Any:
    copy = json.loads(json.dumps(document))
    holder = copy
    for key in path[:-1]:
        holder = holder[key]
    if replacement is REMOVED:
        del holder[path[-1]]
    else:
        holder[path[-1]] = _MARK
    return copy


def _text(document: Any, lines: bool, replacement: Any) -> str:
    def dump(value: Any) -> str:
        text = json.dumps(value)
        return text.replace(json.dumps(_MARK), replacement) if replacement is not REMOVED else text

    if lines:
        return "".join(dump(record) + "\n" for record in document)
    return dump(document)


def _cases() -> Iterator[Any]:
    for name, (format_name, file_name, document, lines, options) in FORMATS.items():
        places = list(_places(document))
        yield pytest.param(name, format_name, file_name, document, lines, options, places, id=name)


@pytest.mark.parametrize(
    ("name", "format_name", "file_name", "document", "lines", "options", "places"), list(_cases())
)
def test_every_wrong_type_is_read_or_refused_with_an_input_error(
    tmp_path: Path,
    name: str,
    format_name: str,
    file_name: str,
    document: Any,
    lines: bool,
    options: dict[str, Any],
    places: list[tuple[Any, ...]],
) -> None:
    path = tmp_path / file_name
    path.write_text(_text(document, lines, REMOVED))
    _load(path, format_name, options)  # the unmutated document is valid
    bugs = []
    for place in places:
        for replacement in [*HOSTILE, REMOVED]:
            path.write_text(_text(_mutated(document, place, replacement), lines, replacement))
            try:
                _load(path, format_name, options)
            except EvalGateError:
                pass
            except Exception as error:  # a bug: collected so that one run shows them all
                shown = "removed" if replacement is REMOVED else replacement[:20]
                bugs.append(
                    f"{'/'.join(map(str, place))} = {shown}: {type(error).__name__}: {error}"
                )
    assert not bugs, f"{name}: " + "\n".join(bugs[:20])


def _load(path: Path, format_name: str, options: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        load([str(path)], IngestOptions(format=format_name, **options))


def test_inspect_eval_archives_get_the_same_treatment(tmp_path: Path) -> None:
    """The .eval archive's header and summaries, each value replaced as above."""
    header = {k: v for k, v in INSPECT.items() if k != "samples"}
    summaries = INSPECT["samples"]
    bugs = []
    for member, document in (("header.json", header), ("summaries.json", summaries)):
        for place in _places(document):
            for replacement in [*HOSTILE, REMOVED]:
                texts = {"header.json": json.dumps(header), "summaries.json": json.dumps(summaries)}
                texts[member] = _text(_mutated(document, place, replacement), False, replacement)
                path = tmp_path / "log.eval"
                with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
                    for name, text in texts.items():
                        archive.writestr(name, text)
                try:
                    _load(path, "inspect", {})
                except EvalGateError:
                    pass
                except Exception as error:
                    bugs.append(f"{member} {place} = {replacement!s:.20}: {error!r}")
    assert not bugs, "\n".join(bugs[:20])
