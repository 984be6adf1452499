"""Scale benchmark of the tool adapters: each format's file through ``eval-gate check``.

Run:  .venv/bin/python bench/scale_adapters.py [--rounds 3] [--format NAME ...] [--trials-scale 0.1]

Each format is one entry of :data:`FORMATS`: a generator that writes a file in the shape the
tool itself writes (records modelled on the real outputs in tests/ingest/fixtures, with the
fields the tool always writes, trimmed transcripts), the reference — the standard library's
plain parse of the same file, nothing kept — and the ``eval-gate check`` options that read it.
JUnit, tau-bench, tau2-bench and Vally hold 10,000 stimuli x 100 trials; promptfoo and Inspect
1,000 x 100 (their records are larger: a promptfoo result or an Inspect sample is 1-2 KB).
``tau-bench-min`` is tau-bench cut to task_id, trial and reward (the shape of the repository's
fixture): 47 bytes a trial, the hardest ratio.
Files are generated once and cached in ``bench/.data/`` (git-ignored).

For every format, each in its own subprocess so that time and peak RSS (``os.wait4``) are the
child's alone, interleaved over ``--rounds`` rounds (the machine is shared; the best time
counts, the largest RSS): the reference parse, then ``eval-gate check`` end to end (reading,
validation, scoring, three gates, the Markdown summary and the JSON report written to files),
each child timing its reading alone too (see bench/scale.py).

Goals (issue 12): check <= 1.5x its reference, its reading (``gate.ingest.load``) <= 1.5x the
reference parse, peak RSS <= 300 MB. Exit status 1 when a goal is missed. The output has the
shape of bench/scale.py's.
"""

from __future__ import annotations

import io
import json
import sys
import tempfile
import zipfile
from functools import partial
from pathlib import Path
from xml.sax.saxutils import quoteattr

# Run as a script (bench/ is sys.path[0]): the harness, the trials and the goals are
# bench/scale.py's, so both benchmarks measure and print the same way.
from scale import (
    JSON_LOAD,
    JSON_LOADS_PER_LINE,
    Format,
    Row,
    Spec,
    arguments,
    generate,
    measure_round,
    prepare,
    print_goals,
    print_table,
    trial_rows,
)

#: the version of this file's generators, in the cached files' names
VERSION = 1


def by_stimulus(spec: Spec) -> list[list[Row]]:
    """The same trials, stimulus-major (every trial of the first stimulus, then ...)."""
    stimuli: list[list[Row]] = [[] for _ in range(spec.stimuli)]
    for rows in trial_rows(spec):
        for s, row in enumerate(rows):
            stimuli[s].append(row)
    return stimuli


# -- generators, one per format -------------------------------------------------------------


def write_junit(path: Path, spec: Spec) -> None:
    """pytest-repeat ``--count N`` as pytest writes it: the whole report on one line, the
    repeats of a test one after the other."""
    with open(path, "w", encoding="utf-8") as out:
        out.write('<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">')
        out.write(
            f'<testsuite name="pytest" errors="0" failures="0" skipped="0" '
            f'tests="{spec.stimuli * spec.trials}" time="1.0" hostname="bench">'
        )
        for rows in by_stimulus(spec):
            parts = []
            for row in rows:
                name = f"test_solves[{row.stimulus}-{row.trial + 1}-{spec.trials}]"
                head = (
                    f'<testcase classname="tests.test_agent" name="{name}" time="{row.duration_s}"'
                )
                if row.status == "error":
                    message = quoteattr(f'failed on setup with "RuntimeError: {row.message}"')
                    parts.append(
                        f"{head}><error message={message}>request = &lt;FixtureRequest&gt;\n"
                        f"E   RuntimeError: {row.message}\n\nconftest.py:12: RuntimeError"
                        "</error></testcase>"
                    )
                elif not row.passed:
                    message = quoteattr(f"AssertionError: {row.message}")
                    parts.append(
                        f"{head}><failure message={message}>agent = &lt;Agent&gt;\n\n"
                        f"    def test_solves(agent):\n&gt;       assert agent.answer() == 42\n"
                        f"E       AssertionError: {row.message}\n\ntests/test_agent.py:9: "
                        "AssertionError</failure></testcase>"
                    )
                else:
                    parts.append(head + " />")
            out.write("".join(parts))
        out.write("</testsuite></testsuites>")


def _tau_record(row: Row) -> dict[str, object]:
    task_id = int(row.stimulus.rpartition("-")[2])
    if row.status == "error":
        return {
            "task_id": task_id,
            "reward": 0.0,
            "info": {
                "error": f"RuntimeError('{row.message}')",
                "traceback": "Traceback (most recent call last):\n  ...\nRuntimeError",
            },
            "traj": [],
            "trial": row.trial,
        }
    reward = 1.0 if row.passed else 0.0
    return {
        "task_id": task_id,
        "reward": reward,
        "info": {
            "source": "user",
            "user_cost": round(row.tokens * 1e-6, 6),
            "reward_info": {"reward": reward, "info": {"r_actions": row.passed}},
        },
        "traj": [{"role": "user", "content": "Hi, I want to change my flight."}],
        "trial": row.trial,
    }


def write_tau_bench(path: Path, spec: Spec) -> None:
    """tau-bench's run.py: ``json.dump([r.model_dump() for r in results], f, indent=2)``."""
    with open(path, "w", encoding="utf-8") as out:
        out.write("[")
        first = True
        for rows in trial_rows(spec):
            for row in rows:
                text = json.dumps(_tau_record(row), indent=2)
                out.write(("\n  " if first else ",\n  ") + text.replace("\n", "\n  "))
                first = False
        out.write("\n]")


def write_tau_bench_min(path: Path, spec: Spec) -> None:
    """tau-bench reduced to task_id, trial and reward, as the repository's fixture of the
    public gpt-4o airline run stores it: the smallest record per trial, so the hardest
    ratio (the parse is cheap, the per-trial work is not)."""
    with open(path, "w", encoding="utf-8") as out:
        out.write("[")
        first = True
        for rows in trial_rows(spec):
            for row in rows:
                record = _tau_record(row)
                small = {
                    "task_id": record["task_id"],
                    "trial": row.trial,
                    "reward": record["reward"],
                }
                out.write(("" if first else ", ") + json.dumps(small))
                first = False
        out.write("]")


def write_tau2_bench(path: Path, spec: Spec) -> None:
    """tau2-bench's Results: ``info``, ``tasks`` and ``simulations``, pretty-printed."""
    info = {
        "git_commit": "0f8e3c1",
        "num_trials": spec.trials,
        "max_steps": 200,
        "max_errors": 10,
        "agent_info": {"implementation": "llm_agent", "llm": "gpt-4.1-mini"},
        "environment_info": {"domain_name": "bench", "policy": "# Policy\n...", "tool_defs": None},
        "seed": 300,
    }
    with open(path, "w", encoding="utf-8") as out:
        out.write('{\n  "timestamp": "2025-06-12T10:00:00.000000",\n  "info": ')
        out.write(json.dumps(info, indent=2).replace("\n", "\n  "))
        tasks = [
            {"id": f"problem-{s:05d}", "description": {"purpose": "exchange a keyboard"}}
            for s in range(spec.stimuli)
        ]
        out.write(',\n  "tasks": ' + json.dumps(tasks, indent=2).replace("\n", "\n  "))
        out.write(',\n  "simulations": [')
        first = True
        for rows in trial_rows(spec):
            for row in rows:
                ok = row.status == "ok"
                simulation = {
                    "id": f"{row.stimulus}-{row.trial}",
                    "task_id": row.stimulus,
                    "duration": row.duration_s,
                    "termination_reason": "user_stop" if ok else "infrastructure_error",
                    "agent_cost": round(row.tokens * 1e-6, 6),
                    "user_cost": 0.0001,
                    "reward_info": {
                        "reward": 1.0 if row.passed else 0.0,
                        "reward_basis": ["DB"],
                    }
                    if ok
                    else None,
                    "messages": [{"role": "user", "content": "Hi, I want to exchange a keyboard."}],
                    "trial": row.trial,
                    "seed": 300 + row.trial,
                }
                text = json.dumps(simulation, indent=2).replace("\n", "\n    ")
                out.write(("\n    " if first else ",\n    ") + text)
                first = False
        out.write("\n  ]\n}\n")


def write_vally(path: Path, spec: Spec) -> None:
    """``vally eval``'s results.jsonl: one trial-result per line, then a run-summary."""
    with open(path, "w", encoding="utf-8") as out:
        for rows in trial_rows(spec):
            for row in rows:
                record: dict[str, object] = {
                    "type": "trial-result",
                    "itemId": f"bench::{row.stimulus}",
                    "evalName": "bench",
                    "stimulus": row.stimulus,
                    "trialIndex": row.trial,
                    "totalTrials": spec.trials,
                    "model": "claude-sonnet-4",
                    "status": "success" if row.status == "ok" else "error",
                    "durationMs": int(row.duration_s * 1000),
                }
                if row.status == "ok":
                    record["gradeResult"] = {
                        "passed": row.passed,
                        "score": row.score,
                        "details": [
                            {"grader": "file-exists", "passed": row.passed, "score": row.score}
                        ],
                    }
                    record["trajectory"] = {
                        "output": "done",
                        "metrics": {
                            "wallTimeMs": int(row.duration_s * 1000),
                            "tokenUsage": {"totalTokens": row.tokens},
                        },
                    }
                else:
                    record["error"] = row.message
                out.write(json.dumps(record, separators=(",", ":")) + "\n")
        out.write(
            f'{{"type":"run-summary","evalName":"bench","trials":{spec.stimuli * spec.trials}}}\n'
        )


def _promptfoo_result(row: Row, index: int, test_index: int) -> dict[str, object]:
    ok = row.status == "ok"
    reason = (
        "All assertions passed" if row.passed else f"Expected output to contain 42: {row.message}"
    )
    result: dict[str, object] = {
        "cost": round(row.tokens * 1e-6, 6),
        "gradingResult": {
            "pass": row.passed,
            "score": row.score,
            "reason": reason,
            "namedScores": {},
            "tokensUsed": {"total": 0, "prompt": 0, "completion": 0, "cached": 0},
            "componentResults": [
                {
                    "pass": row.passed,
                    "score": row.score,
                    "reason": "Assertion passed" if row.passed else reason,
                    "assertion": {"type": "contains", "value": "42"},
                }
            ],
            "assertion": None,
        }
        if ok
        else None,
        "id": f"{index:08x}-ec2a-47d0-8008-2920d5eb47e2",
        "latencyMs": int(row.duration_s * 1000),
        "namedScores": {},
        "prompt": {"raw": f"Solve {row.stimulus}", "label": "Solve {{problem}}"},
        "promptId": "c0335cedbab6917393d9ab742bc01762985fa6e4ff63b984e1428115ef9167c4",
        "promptIdx": 0,
        "provider": {"id": "openai:gpt-4o", "label": ""},
        "response": {
            "output": "The answer is 42" if row.passed else "The answer is 7",
            "tokenUsage": {"total": row.tokens, "prompt": row.tokens - 50, "completion": 50},
            "cost": round(row.tokens * 1e-6, 6),
        },
        "score": row.score if ok else 0,
        "success": row.passed if ok else False,
        "testCase": {
            "description": f"solves {row.stimulus}",
            "vars": {"problem": row.stimulus},
            "assert": [{"type": "contains", "value": "42"}],
            "options": {},
            "metadata": {},
        },
        "testIdx": test_index,
        "vars": {"problem": row.stimulus},
        "metadata": {"_promptfooFileMetadata": {}},
        "failureReason": 0 if row.passed else (1 if ok else 2),
    }
    if not ok:
        result["error"] = f"upstream 503: {row.message}"
    elif not row.passed:
        result["error"] = reason
    return result


def write_promptfoo(path: Path, spec: Spec) -> None:
    """``promptfoo eval --repeat N -o results.json`` (results version 3, pretty-printed):
    each repeat of a test is a new testIdx."""
    with open(path, "w", encoding="utf-8") as out:
        out.write('{\n  "evalId": "eval-bench-2026-01-01T00:00:00",\n  "results": {\n')
        out.write('    "version": 3,\n    "timestamp": "2026-01-01T00:00:00.000Z",\n')
        out.write('    "prompts": [{"raw": "Solve {{problem}}", "label": "Solve {{problem}}"}],\n')
        out.write('    "results": [')
        index = 0
        for rows in trial_rows(spec):
            for s, row in enumerate(rows):
                result = _promptfoo_result(row, index, row.trial * spec.stimuli + s)
                text = json.dumps(result, indent=2).replace("\n", "\n      ")
                out.write(("\n      " if index == 0 else ",\n      ") + text)
                index += 1
        out.write('\n    ],\n    "stats": {"successes": 0, "failures": 0, "errors": 0}\n  },\n')
        out.write('  "config": {"description": "bench"},\n  "shareableUrl": null\n}\n')


def _inspect_header(spec: Spec, status: str = "success") -> dict[str, object]:
    ids = [f"problem-{s:05d}" for s in range(spec.stimuli)]
    return {
        "version": 2,
        "status": status,
        "eval": {
            "eval_id": "ZxGU4KrUHnEdv7iqMuaJYt",
            "run_id": "3nsErjdG296LUmiWM3GkKi",
            "created": "2026-01-01T00:00:00+00:00",
            "task": "bench",
            "task_id": "JhFSxx2tHw7khyEPTwj5MR",
            "task_version": 0,
            "dataset": {"samples": spec.stimuli, "sample_ids": ids, "shuffled": False},
            "model": "openai/gpt-4o",
            "config": {"epochs": spec.trials, "fail_on_error": False},
            "packages": {"inspect_ai": "0.3.285"},
            "scorers": [
                {"name": "match", "options": {}, "metrics": [{"name": "accuracy"}], "metadata": {}}
            ],
        },
        "plan": {"name": "plan", "steps": [{"solver": "generate", "params": {}}], "config": {}},
        "results": {
            "total_samples": spec.stimuli * spec.trials,
            "completed_samples": spec.stimuli * spec.trials,
            "scores": [{"name": "match", "scorer": "match", "metrics": {}}],
            "headline": {"scorer": "match", "score": "match", "metric": "accuracy"},
        },
        "stats": {"started_at": "2026-01-01T00:00:00+00:00", "model_usage": {}},
    }


def _inspect_sample(row: Row, full: bool) -> dict[str, object]:
    """A sample of an Inspect log (``full``: with its transcript, as in a .json log; else
    the summary a .eval archive keeps in summaries.json)."""
    answer = "42" if row.passed else "7"
    sample: dict[str, object] = {"id": row.stimulus, "epoch": row.trial + 1, "input": row.stimulus}
    sample["target"] = "42"
    if full:
        sample["messages"] = [
            {"id": f"m{row.trial}a", "content": row.stimulus, "source": "input", "role": "user"},
            {"id": f"m{row.trial}b", "content": answer, "source": "generate", "role": "assistant"},
        ]
        sample["output"] = {"model": "openai/gpt-4o", "completion": answer, "choices": []}
    if row.status == "ok":
        sample["scores"] = {
            "match": {
                "value": "C" if row.passed else "I",
                "answer": answer,
                "explanation": answer if row.passed else f"{row.message}",
                "history": [],
            }
        }
    else:
        sample["scores"] = {}
    sample["metadata"] = {}
    usage = {"input_tokens": row.tokens - 50, "output_tokens": 50, "total_tokens": row.tokens}
    sample["model_usage"] = {"openai/gpt-4o": usage}
    sample["started_at"] = "2026-01-01T00:00:00.000000+00:00"
    sample["completed_at"] = "2026-01-01T00:00:01.000000+00:00"
    sample["total_time"] = row.duration_s
    sample["working_time"] = row.duration_s
    sample["uuid"] = f"{row.stimulus}-{row.trial}"
    if row.status != "ok":
        sample["error"] = {
            "message": f"RuntimeError('{row.message}')",
            "traceback": "Traceback (most recent call last):\n(trimmed)",
            "traceback_ansi": "(trimmed)",
        }
    if full:
        sample["events"] = []
        sample["attachments"] = {}
    else:
        sample["completed"] = True
        sample["message_count"] = 2
    return sample


def write_inspect_json(path: Path, spec: Spec) -> None:
    """An Inspect ``.json`` log (``--log-format json``): the header, then every sample."""
    header = _inspect_header(spec)
    with open(path, "w", encoding="utf-8") as out:
        text = json.dumps(header, indent=2)
        out.write(text[: text.rfind("}")].rstrip() + ',\n  "samples": [')
        first = True
        for rows in trial_rows(spec):
            for row in rows:
                sample = json.dumps(_inspect_sample(row, True), indent=2)
                out.write(("\n    " if first else ",\n    ") + sample.replace("\n", "\n    "))
                first = False
        out.write('\n  ],\n  "reductions": []\n}')


def write_inspect_eval(path: Path, spec: Spec) -> None:
    """An Inspect ``.eval`` archive as older versions wrote it (deflate, which the standard
    library reads): header.json, summaries.json, reductions.json."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("_journal/start.json", json.dumps(_inspect_header(spec, "started")))
        summaries = io.StringIO()
        summaries.write("[")
        first = True
        for rows in trial_rows(spec):
            for row in rows:
                summaries.write(("" if first else ",") + json.dumps(_inspect_sample(row, False)))
                first = False
        summaries.write("]")
        archive.writestr("summaries.json", summaries.getvalue())
        archive.writestr("reductions.json", "[]")
        archive.writestr("header.json", json.dumps(_inspect_header(spec)))


# -- references: the standard library's plain parse, nothing kept ---------------------------

ITERPARSE = """
import sys
from xml.etree.ElementTree import iterparse
for event, element in iterparse(sys.argv[1]):
    pass
"""
ZIP_JSON = """
import json, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as archive:
    json.loads(archive.read("header.json"))
    json.loads(archive.read("summaries.json"))
"""


#: this file's formats: their cached files carry this file's VERSION
_Format = partial(Format, version=VERSION)
FORMATS: list[Format] = [
    _Format("junit", ".xml", write_junit, "iterparse", ITERPARSE),
    _Format("tau-bench", ".json", write_tau_bench, "json.load", JSON_LOAD),
    _Format("tau-bench-min", ".json", write_tau_bench_min, "json.load", JSON_LOAD),
    _Format("tau2-bench", ".json", write_tau2_bench, "json.load", JSON_LOAD),
    _Format("vally", ".jsonl", write_vally, "json.loads per line", JSON_LOADS_PER_LINE),
    _Format("promptfoo", ".json", write_promptfoo, "json.load", JSON_LOAD,
           spec=Spec(1_000, 100)),
    _Format("inspect-json", ".json", write_inspect_json, "json.load", JSON_LOAD,
           spec=Spec(1_000, 100)),
    _Format("inspect-eval", ".eval", write_inspect_eval, "zipfile + json.loads", ZIP_JSON,
           spec=Spec(1_000, 100)),
]  # fmt: skip


def main() -> int:
    args = arguments(FORMATS, __doc__ or "")
    if args.generate:
        return generate(FORMATS, args)
    results = prepare(FORMATS, args, __file__)
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            measure_round(results, Path(tmp), round_ == 0)
    return print_goals(print_table(results))


if __name__ == "__main__":
    sys.exit(main())
