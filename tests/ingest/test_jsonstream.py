"""jsonstream: a JSON document's large array read in pieces gives what json.loads gives.

The pieces, blocks and scan windows are made tiny here so that every cut falls everywhere:
inside strings, after backslashes, inside nested values, between elements.
"""

from __future__ import annotations

import io
import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from gate.errors import InputError
from gate.ingest import jsonstream
from gate.ingest.jsonstream import STREAMED, JsonStream


def _stream(document: bytes, paths: list[tuple[str, ...]]) -> tuple[Any, list[Any], JsonStream]:
    """The document (streamed arrays marked), the elements of every streamed array in order."""
    stream = JsonStream("f.json", paths, handle=io.BytesIO(document))
    elements: list[Any] = []
    read: dict[str, int] = {}
    for piece in stream.pieces():
        assert piece.start == read.get(piece.pointer, 0)  # each array's pieces follow on
        read[piece.pointer] = piece.start + len(piece.values)
        elements.extend(piece.values)
    return stream.document, elements, stream


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> random.Random:
    rng = random.Random(20240607)
    monkeypatch.setattr(jsonstream, "PIECE_BYTES", 7)
    monkeypatch.setattr(jsonstream, "BLOCK_BYTES", 5)
    monkeypatch.setattr(jsonstream, "_SCAN_BYTES", 3)
    return rng


def _value(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value with the characters that trouble a scanner: quotes, backslashes,
    brackets and commas inside strings, nesting, non-ASCII text."""
    kind = rng.random()
    if depth > 3 or kind < 0.35:
        return rng.choice(
            [0, -2.5, 1e-7, 10**20, True, False, None, "", 'a"b', "c\\", "x,]}{[", 'é\\\\"', "\n"]
        )
    if kind < 0.65:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {f'k{i}"\\': _value(rng, depth + 1) for i in range(rng.randint(0, 3))}


def test_every_cut_gives_what_json_loads_gives(
    tiny: random.Random, monkeypatch: pytest.MonkeyPatch
) -> None:
    for _ in range(150):
        samples = [{"id": i, "v": _value(tiny)} for i in range(tiny.randint(0, 12))]
        document = {"eval": _value(tiny), "samples": samples, "reductions": _value(tiny)}
        for indent in (None, 2):
            monkeypatch.setattr(jsonstream, "PIECE_BYTES", tiny.randint(1, 120))
            monkeypatch.setattr(jsonstream, "BLOCK_BYTES", tiny.randint(1, 90))
            monkeypatch.setattr(jsonstream, "_SCAN_BYTES", tiny.randint(1, 40))
            text = json.dumps(document, indent=indent, ensure_ascii=indent is None).encode()
            found, elements, stream = _stream(text, [("samples",)])
            assert elements == samples
            assert stream.streamed == [("samples",)]
            assert found == {**document, "samples": STREAMED}
            rooted, elements, _ = _stream(json.dumps(samples, indent=indent).encode(), [()])
            assert rooted is STREAMED and elements == samples


def test_nested_and_several_arrays(tiny: random.Random) -> None:
    document = {
        "evalId": "e",
        "results": {"version": 3, "results": [{"a": 1}, {"a": [2, {"b": "]"}]}], "stats": {}},
        "simulations": [],
        "simulation_index": [{"id": "x"}],
    }
    paths = [("results", "results"), ("simulations",), ("simulation_index",)]
    found, elements, stream = _stream(json.dumps(document).encode(), paths)
    assert elements == [{"a": 1}, {"a": [2, {"b": "]"}]}, {"id": "x"}]
    assert stream.streamed == paths
    assert found["results"] == {"version": 3, "results": STREAMED, "stats": {}}


def test_the_document_is_never_held_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonstream, "BLOCK_BYTES", 64 * 1024)
    path = tmp_path / "big.json"
    records = [
        {"task_id": i % 100, "trial": i // 100, "reward": 1.0, "traj": ["x" * 50]}
        for i in range(50_000)
    ]
    path.write_text(json.dumps(records))  # about 5 MB
    largest = 0
    stream = JsonStream(str(path), [()])
    count = 0
    for piece in stream.pieces():
        largest = max(largest, len(stream._buffer))
        count += len(piece.values)
        assert len(piece.values) < 1000  # pieces of about 32 KiB
    assert count == 50_000
    assert largest < 300 * 1024


def test_errors_name_the_element_the_field_and_the_place_in_the_file(
    tiny: random.Random,
) -> None:
    cases = {
        b'[{"a":1},{"a":NaN}]': "f.json at /1/a: NaN is not valid JSON (use null or a finite "
        "number) (line 1, column 15)",
        b'[{"a":1},\n {"a":1,"a":2}]': "f.json at /1/a: duplicate key 'a' in one object "
        "(line 2, column 9)",
        b'[{"a":1},\n{"b": 1e400}]': "f.json at /1/b: the number 1e400 is too large (use a "
        "finite number) (line 2, column 7)",
        b'[{"a":1} {"a":2}]': "f.json: not valid JSON: expected ',' or ']' after an element of "
        "the array (line 1, column 10); found '{'",
        b'[{"a":1},': "f.json at /1: not valid JSON: Expecting value (line 1, column 10)",
        b"[1,2] x": "f.json: unexpected data after the JSON value (line 1, column 7); expected "
        "one JSON value per file (or use .jsonl for one record per line)",
        b'{"samples":[1], "samples": []}': "f.json at /samples: duplicate key 'samples' in one "
        "object (line 1, column 26)",
        b'[{"a": [1, 2}]': "f.json at /0: not valid JSON: Expecting ',' delimiter (line 1, "
        "column 13)",
        b'\xef\xbb\xbf[{"a":"\xff"}]': "f.json at /0: not UTF-8 text (invalid start byte, line 1)",
    }
    for document, message in cases.items():
        with pytest.raises(InputError) as raised:
            _stream(document, [(), ("samples",)])
        assert str(raised.value) == message


def test_blanks_cost_no_memory() -> None:
    blanks = b" " * (20 * 1024 * 1024)
    stream = JsonStream("f.json", [()], handle=io.BytesIO(blanks + b"[1]" + blanks))
    assert [list(piece.values) for piece in stream.pieces()] == [[1]]
    assert len(stream._buffer) <= jsonstream.BLOCK_BYTES


def test_one_element_of_too_many_values_is_refused_before_it_is_parsed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EVAL_GATE_MAX_JSON_VALUES", "1000")
    zeros = b"[" + b"0," * 5000 + b"0]"
    with pytest.raises(InputError, match=r"at /1: the number of JSON values is over"):
        _stream(b'[{"id": 1}, {"zeros": ' + zeros + b"}]", [()])


def test_an_element_over_the_document_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVAL_GATE_MAX_DOCUMENT_BYTES", "100000")
    with pytest.raises(InputError, match=r"at /0: one element of the array is over the"):
        _stream(b'[{"text": "' + b"x" * 300_000 + b'"}]', [()])


def test_non_finite_constants_are_read_only_when_asked(tiny: random.Random) -> None:
    """Inspect AI writes NaN, Infinity and -Infinity on purpose; its reader asks for them, and
    every other reader stays strict (the NaN case of the test above)."""
    document = b'{"h": -Infinity, "samples": [{"a": 1}, {"a": NaN, "b": [Infinity]}, {"a": 2}]}'
    stream = JsonStream("f.json", [("samples",)], handle=io.BytesIO(document), non_finite=True)
    values = [value for piece in stream.pieces() for value in piece.values]
    assert values[0] == {"a": 1} and values[2] == {"a": 2}
    assert math.isnan(values[1]["a"]) and values[1]["b"] == [math.inf]
    assert stream.document == {"h": -math.inf, "samples": STREAMED}
    # Only the three constants: a duplicate key, a number past the float range and a
    # misspelt constant are refused as strictly, and located past the NaN before them.
    refusals = {
        b'[{"a":NaN},\n {"a":NaN,"a":2}]': "f.json at /1/a: duplicate key 'a' in one object "
        "(line 2, column 11)",
        b'[{"a":NaN},\n{"b": 1e400}]': "f.json at /1/b: the number 1e400 is too large (use a "
        "finite number) (line 2, column 7)",
        b'[{"a":nan}]': "f.json at /0: not valid JSON: Expecting value (line 1, column 7)",
    }
    for text, message in refusals.items():
        with pytest.raises(InputError) as raised:
            for _ in JsonStream("f.json", [()], handle=io.BytesIO(text), non_finite=True).pieces():
                pass
        assert str(raised.value) == message


def test_pieces_orjson_refuses_are_parsed_whole_not_element_by_element(monkeypatch) -> None:
    """A lone surrogate (a JavaScript string cut inside an emoji) or a doubt about the key
    count in every element: each piece is read by the strict decoder in one call. Element by
    element, each element's end was found by scanning the rest of the buffer: a 14 MB
    tau-bench file like this took over 5 minutes."""
    elements = [
        {"task_id": i, "info": {"note": "cut \ud83d" if i % 2 else "<b>", "k:y": i}}
        for i in range(400)
    ]
    document = json.dumps(elements).encode()  # ensure_ascii: the lone surrogate as \ud83d
    document = document.replace(b'"k:y"', b'"k\\u003ay"')
    assert b"\\ud83d" in document and b"\\u003a" in document

    def no_element_route(*args: Any) -> Any:
        raise AssertionError("read element by element")

    monkeypatch.setattr(JsonStream, "_strict_elements", no_element_route)
    _, read, _ = _stream(document, [()])
    assert read == json.loads(document)
    # A real refusal still goes the located way, which words it.
    bad = document.replace(b'"task_id": 7,', b'"task_id": 7, "task_id": 8,')
    monkeypatch.undo()
    with pytest.raises(InputError, match=r"at /7/task_id: duplicate key 'task_id'"):
        _stream(bad, [()])


def test_a_piece_with_nan_is_parsed_whole_not_element_by_element() -> None:
    # orjson refuses the piece; the decoder that reads NaN takes it in one call (the element
    # by element route scans the rest of the buffer for each element's end).
    data = b'{"a": NaN}, {"a": 1}'
    values = jsonstream.fast_elements(data, non_finite=True)
    assert values is not None and math.isnan(values[0]["a"]) and values[1] == {"a": 1}
    assert jsonstream.fast_elements(data) is None  # strict readers: the strict parser words it
    # A doubt still goes the located way: a repeated key, nesting past the limit.
    assert jsonstream.fast_elements(b'{"a": NaN, "a": 1}', non_finite=True) is None
    deep = b"[" * 300 + b"NaN" + b"]" * 300
    assert jsonstream.fast_elements(deep, non_finite=True) is None


def test_the_elements_before_a_bad_one_are_given_first(monkeypatch: pytest.MonkeyPatch) -> None:
    # A piece with a syntax error is read element by element to place the error; the good
    # elements before it reach the reader first, as they would in smaller pieces, so that a
    # reader's own error about one of them comes first whatever the piece size.
    good = [{"id": i} for i in range(6)]
    text = ("[" + ", ".join(json.dumps(x) for x in good) + ', {"id": 6 "x": 1}, {"id": 7}]')
    for size in (7, 40, 1 << 15):
        monkeypatch.setattr(jsonstream, "PIECE_BYTES", size)
        stream = JsonStream("f.json", [()], handle=io.BytesIO(text.encode()))
        given: list[Any] = []
        with pytest.raises(InputError, match=r"f\.json at /6: not valid JSON"):
            for piece in stream.pieces():
                given.extend(piece.values)
        assert given == good, size
