"""promptfoo results.json and results.jsonl: repeats grouped into stimuli, errors apart from
failures.

fixtures/promptfoo/results.json is the real output of promptfoo 0.118.0 on the
promptfooconfig.yaml beside it (``promptfoo eval --repeat 3 -o results.json``):
4 tests x 2 providers x 3 repeats; the flaky-echo provider fails with an upstream
503 on every other call for the "boom" test. fixtures/promptfoo/results.jsonl is the real
output of another run of the same (``promptfoo eval --repeat 3 --no-cache -j 1
-o results.jsonl``), which gave the same outcomes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gate.errors import InputError, Provenance
from tests.ingest.conftest import FIXTURES, load_one

RESULTS = FIXTURES / "promptfoo" / "results.json"
RESULT_LINES = FIXTURES / "promptfoo" / "results.jsonl"


def test_repeats_become_trials_per_test_and_provider() -> None:
    loaded = load_one(RESULTS)
    assert [x.format for x in loaded.inputs] == ["promptfoo"]
    assert loaded.outcomes() == {
        "capital of France [flaky-echo]": "PPP",
        "capital of France [echo]": "PPP",
        "question=coin [flaky-echo]": "PFP",
        "question=coin [echo]": "PPF",
        "always wrong [flaky-echo]": "FFF",
        "always wrong [echo]": "FFF",
        "sometimes errors [flaky-echo]": "EPE",
        "sometimes errors [echo]": "PPP",
    }
    # promptfoo's own stats for this run: 14 successes, 8 failures, 2 errors.
    assert loaded.counts() == (24, 14, 2, 0)
    assert loaded.warnings == []


def test_errors_messages_graders_and_metadata() -> None:
    loaded = load_one(RESULTS)
    errors = loaded.table.stimuli[("default", "sometimes errors [flaky-echo]")]
    assert errors.messages == ["upstream 503: service unavailable"] * 2
    capital = loaded.table.stimuli[("default", "capital of France [flaky-echo]")]
    assert capital.has_graders
    where = capital.where[0]
    assert where is not None and where.pointer == "/results/results/0"


def _write(tmp_path: Path, results: list[dict[str, Any]]) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"evalId": "e", "results": {"version": 3, "results": results}}))
    return path


def _result(test_idx: int, description: str, success: bool, **extra: Any) -> dict[str, Any]:
    return {
        "testIdx": test_idx,
        "promptIdx": 0,
        "provider": {"id": "openai:gpt-4o"},
        "testCase": {"description": description, "vars": {"q": description}},
        "success": success,
        "score": float(success),
        "failureReason": 0 if success else 1,
        **extra,
    }


def test_groups_of_unequal_size_are_reported(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            _result(0, "a", True),
            _result(1, "a", True),
            _result(2, "b", False),
            _result(3, "b", True),
            _result(4, "c", True),
        ],
    )
    loaded = load_one(path)
    assert loaded.outcomes() == {
        "a [openai:gpt-4o]": "PP",
        "b [openai:gpt-4o]": "FP",
        "c [openai:gpt-4o]": "P",
    }
    (warning,) = loaded.warnings
    assert "results.json" in warning and "c [openai:gpt-4o] (1)" in warning


def test_trial_order_follows_test_idx_and_same_labels_stay_apart(tmp_path: Path) -> None:
    first = _result(5, "same", False)
    second = _result(4, "same", True)
    other = _result(6, "same", True)
    other["testCase"]["vars"] = {"q": "different"}
    loaded = load_one(_write(tmp_path, [first, second, other]))
    assert loaded.outcomes() == {"same [openai:gpt-4o] #1": "PF", "same [openai:gpt-4o] #2": "P"}


def test_malformed_result_names_its_pointer(tmp_path: Path) -> None:
    broken = _result(1, "a", True)
    del broken["testCase"]
    path = _write(tmp_path, [_result(0, "a", True), broken])
    with pytest.raises(
        InputError, match=r"results\.json at /results/results/1: result has no testCase"
    ):
        load_one(path, format="promptfoo")


# -- promptfoo eval -o results.jsonl: one EvaluateResult per line -----------------------------


def _evaluate_result(
    test_idx: int, description: str, success: bool, **extra: Any
) -> dict[str, Any]:
    """One line as promptfoo's evaluator streams it (Evaluator.persistEvalRow writes the
    EvaluateResult: provider, prompt, vars, response, then the verdict and indices)."""
    return {
        "provider": {"id": "openai:gpt-4o", "label": "gpt-4o"},
        "prompt": {"raw": f"Answer: {description}", "label": "Answer: {{q}}"},
        "vars": {"q": description},
        "response": {"output": "...", "tokenUsage": {"total": 30, "prompt": 20, "completion": 10}},
        "success": success,
        "failureReason": 0 if success else 1,
        "score": float(success),
        "namedScores": {},
        "latencyMs": 850,
        "cost": 0.0004,
        "metadata": {},
        "promptIdx": 0,
        "testIdx": test_idx,
        "testCase": {"description": description, "vars": {"q": description}},
        "promptId": "5e1f",
        **extra,
    }


def _write_lines(tmp_path: Path, lines: list[Any], name: str = "results.jsonl") -> Path:
    """One JSON value per line; a string is written as it is (a blank line)."""
    path = tmp_path / name
    text = (line if isinstance(line, str) else json.dumps(line) for line in lines)
    path.write_text("".join(line + "\n" for line in text))
    return path


def test_real_jsonl_output_gives_the_table_of_the_json_output() -> None:
    """promptfoo 0.118.0's own results.jsonl: one EvaluateResult per line, read by the JSON
    reader's rules into the same stimuli, trials and messages; each trial at its line."""
    from_lines, from_document = load_one(RESULT_LINES), load_one(RESULTS)
    assert [x.format for x in from_lines.inputs] == ["promptfoo"]
    assert from_lines.outcomes() == from_document.outcomes()
    assert from_lines.counts() == (24, 14, 2, 0)
    for key, record in from_document.table.stimuli.items():
        assert from_lines.table.stimuli[key].messages == record.messages
        assert from_lines.table.stimuli[key].has_graders == record.has_graders
    boom = from_lines.table.stimuli[("default", "sometimes errors [flaky-echo]")]
    assert boom.messages == ["upstream 503: service unavailable"] * 2
    # With -j 1 promptfoo finished the results in testIdx order, a line per provider: the
    # three repeats of flaky-echo's "boom" test (testIdx 9, 10, 11) are lines 19, 21 and 23.
    assert [boom.where[trial] for trial in boom.indices] == [
        Provenance(str(RESULT_LINES), line) for line in (19, 21, 23)
    ]
    assert from_lines.warnings == []


def test_jsonl_output_reads_as_the_json_output_of_the_same_run(tmp_path: Path) -> None:
    """The same results, one per line in the order they finished (not testIdx order), give
    the same stimuli, trials and messages as results.json; each trial keeps its line."""
    results = json.loads(RESULTS.read_text())["results"]["results"]
    finished = sorted(results, key=lambda r: (r["testIdx"] * 7) % 24)  # a shuffled order
    path = _write_lines(tmp_path, finished)
    from_lines, from_document = load_one(path), load_one(RESULTS)
    assert [x.format for x in from_lines.inputs] == ["promptfoo"]
    assert from_lines.outcomes() == from_document.outcomes()
    assert from_lines.counts() == (24, 14, 2, 0)
    for key, record in from_document.table.stimuli.items():
        assert from_lines.table.stimuli[key].messages == record.messages
    coin = from_lines.table.stimuli[("default", "question=coin [echo]")]
    lines = [coin.where[trial].line for trial in coin.indices]
    # Trials in testIdx order, each at its own line of the file.
    assert [finished[line - 1]["testIdx"] for line in lines] == sorted(
        r["testIdx"]
        for r in results
        if r["testCase"]["vars"] == {"question": "coin"} and r["provider"]["id"] == "echo"
    )
    assert from_lines.warnings == []


def test_jsonl_groups_repeats_by_test_case_prompt_and_provider(tmp_path: Path) -> None:
    lines = [
        _evaluate_result(5, "refund", False, gradingResult={"pass": False, "reason": "no refund"}),
        _evaluate_result(4, "refund", True),
        _evaluate_result(3, "refund", True),
        _evaluate_result(1, "greeting", True),
        _evaluate_result(0, "greeting", True, provider={"id": "anthropic:claude"}),
        _evaluate_result(2, "greeting", False, failureReason=2, error="HTTP 529 overloaded"),
    ]
    path = _write_lines(tmp_path, ["", *lines[:3], "  ", *lines[3:]])  # blank lines are skipped
    loaded = load_one(path)
    assert loaded.outcomes() == {
        "refund [gpt-4o]": "PPF",
        "greeting [gpt-4o]": "PE",
        "greeting [anthropic:claude]": "P",
    }
    refund = loaded.table.stimuli[("default", "refund [gpt-4o]")]
    assert refund.messages == ["no refund"]
    assert [refund.where[trial].line for trial in refund.indices] == [4, 3, 2]
    greeting = loaded.table.stimuli[("default", "greeting [gpt-4o]")]
    assert greeting.messages == ["HTTP 529 overloaded"]
    (warning,) = loaded.warnings
    assert "repeat groups differ in size" in warning


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (["not", "an", "object"], r"results\.jsonl:2: result is not an object"),
        ({"testIdx": 1, "prompt": {"raw": "x"}}, r"results\.jsonl:2: result has no testCase"),
        (
            {"success": "yes"},
            r"results\.jsonl:2: success is not a boolean.*found string \"yes\"",
        ),
        ({"score": 10**400}, r"results\.jsonl:2: score is not finite"),
        (
            {"gradingResult": {"componentResults": [{"pass": 1, "assertion": {"type": "x"}}]}},
            r"results\.jsonl:2 at /gradingResult/componentResults/0: pass is not a boolean",
        ),
    ],
)
def test_jsonl_errors_name_the_file_line_and_field(tmp_path: Path, line: Any, says: str) -> None:
    # The second line: a change to a valid result, or the whole line when it is no result.
    whole = not isinstance(line, dict) or "prompt" in line
    second = line if whole else {**_evaluate_result(1, "a", True), **line}
    path = _write_lines(tmp_path, [_evaluate_result(0, "a", True), second])
    with pytest.raises(InputError, match=says):
        load_one(path, format="promptfoo")


def test_jsonl_line_that_is_not_json_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(_evaluate_result(0, "a", True)) + '\n{"testIdx": 1, "testCase": \n')
    with pytest.raises(InputError, match=r"results\.jsonl:2: "):
        load_one(path, format="promptfoo")


def test_jsonl_line_over_the_limit_is_refused_before_it_is_whole(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A result holds its whole transcript: a line longer than EVAL_GATE_MAX_LINE_BYTES is
    refused, naming its line, before it is read whole (checked a 64 KiB block at a time)."""
    transcript = {"output": "x" * 200_000}
    lines = [_evaluate_result(0, "a", True), _evaluate_result(1, "a", True, response=transcript)]
    path = _write_lines(tmp_path, lines)
    assert load_one(path).counts() == (2, 2, 0, 0)
    monkeypatch.setenv("EVAL_GATE_MAX_LINE_BYTES", "100000")
    over = r"results\.jsonl:2: the line is over the line length limit"
    with pytest.raises(InputError, match=over):
        load_one(path, format="promptfoo")


def test_jsonl_records_no_start_time(tmp_path: Path) -> None:
    """A JSONL file holds results only (no evalId, no timestamp): --duplicates newest cannot
    order it and says so; pool reads both files."""
    first = _write_lines(tmp_path, [_evaluate_result(0, "a", True)], "one.jsonl")
    second = _write_lines(tmp_path, [_evaluate_result(0, "a", False)], "two.jsonl")
    from gate.ingest import IngestOptions, load
    from gate.ingest.promptfoo import started

    assert started(str(first)) is None
    with pytest.raises(InputError, match="record when they started"):
        load([str(first), str(second)], IngestOptions(duplicates="newest"))
    with pytest.warns(UserWarning, match="--duplicates pool: 1 stimulus"):
        table, _ = load([str(first), str(second)], IngestOptions(duplicates="pool"))
    assert table.stimuli[("default", "a [gpt-4o]")].passed == [True, False]
