"""A nested results document is streamed (a structural scan, then bounded pieces): the same
table as the strict reader's, the same errors, whatever the layout, and no whole tree."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gate.errors import InputError
from gate.ingest import IngestOptions, _jsonscan, native
from gate.ingest import load as load_any
from gate.scoring import score_table
from tests.scale.conftest import snapshot, strict_table

AWKWARD = ['plain', 'quote " inside', "back\\slash", 'ends with \\', "brackets [{]}", "a, b: c",
           "\\\\\"", "ünï 🎲", "\u2028line"]  # fmt: skip


def reference_frame(text: bytes, keep: int) -> list[tuple[int, int, int]]:
    """Structural characters outside strings with their depth, the slow obvious way."""
    found, depth, inside, escaped = [], 0, False, False
    for at, byte in enumerate(text):
        if inside:
            if escaped:
                escaped = False
            elif byte == ord("\\"):
                escaped = True
            elif byte == ord('"'):
                inside = False
            continue
        if byte == ord('"'):
            inside = True
        elif byte in b"{[":
            depth += 1
            if depth <= keep:
                found.append((at, byte, depth))
        elif byte in b"}]":
            if depth <= keep:
                found.append((at, byte, depth))
            depth -= 1
        elif byte in b",:" and depth <= keep:
            found.append((at, byte, depth))
    return found


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64, 1 << 20])
def test_the_scan_finds_the_structure_across_block_edges(block: int) -> None:
    rng = random.Random(block)
    value = {"a": [{"k": rng.choice(AWKWARD), "n": [1, {"x": rng.choice(AWKWARD)}]}
                   for _ in range(30)], "b\\\"": AWKWARD, "c": {}}  # fmt: skip
    text = json.dumps(value, ensure_ascii=False, indent=rng.choice([None, 1])).encode()
    frame = _jsonscan.scan(io.BytesIO(text), "x", keep=3, block=block)  # type: ignore[arg-type]
    got = list(zip(frame.position.tolist(), frame.char.tolist(), frame.depth.tolist(), strict=True))
    assert got == reference_frame(text, 3)
    assert frame.deepest == 5 and frame.end == len(text)


def random_document(rng: random.Random, stimuli: int) -> dict[str, Any]:
    out = []
    for s in range(stimuli):
        trials = []
        for t in range(rng.choice([1, 2, 5, 40, 120])):
            trial: dict[str, Any] = {"passed": rng.random() < 0.5}
            if rng.random() < 0.5:
                trial["trial"] = t
            if rng.random() < 0.3:
                trial["score"] = round(rng.random(), 3)
            if rng.random() < 0.2:
                trial["message"] = rng.choice(AWKWARD)
            if rng.random() < 0.2:
                trial["metadata"] = {"duration_s": 1.5, "note": {"deep": [rng.choice(AWKWARD)]}}
            if rng.random() < 0.05:
                trial = {"status": "error", "message": rng.choice(AWKWARD)}
            trials.append(trial)
        stimulus: dict[str, Any] = {"id": f"{rng.choice(AWKWARD)} {s}", "trials": trials}
        if rng.random() < 0.3:
            stimulus["tags"] = [rng.choice(["x", "y,z", "[q]"])]
        if rng.random() < 0.5:  # the id after the trials
            stimulus = dict(reversed(list(stimulus.items())))
        out.append(stimulus)
    document: dict[str, Any] = {"stimuli": out, "schema_version": "1.0", "suite": "doc"}
    if rng.random() < 0.5:
        document = {"schema_version": "1.0", "pass_threshold": 0.5, "suite": "d", "stimuli": out}
    return document


def stream_only(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Record every fall back to the whole-document reader."""
    calls: list[Any] = []
    whole = native._read_whole_document

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs.get("skip"))
        return whole(*args, **kwargs)

    monkeypatch.setattr(native, "_read_whole_document", spy)
    return calls


@pytest.mark.parametrize("seed", range(6))
def test_streamed_documents_equal_the_strict_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    monkeypatch.setattr(native, "PIECE_BYTES", rng.choice([300, 2000, 1 << 20]))
    monkeypatch.setattr(native, "_VALIDATE_TRIALS", rng.choice([1, 50, 4096]))
    monkeypatch.setattr(_jsonscan, "BLOCK_BYTES", rng.choice([5, 1000, 1 << 22]))
    document = random_document(rng, 25)
    path = tmp_path / "doc.json"
    text = json.dumps(document, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 2]))
    path.write_text(text, encoding="utf-8")
    fallbacks = stream_only(monkeypatch)
    fast, _ = load([str(path)])
    assert fallbacks == []  # streamed all the way
    slow = strict_table([path])
    assert snapshot(fast) == snapshot(slow)
    assert score_table(fast) == score_table(slow)


def test_lone_surrogates_and_escaped_colons_are_streamed_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """orjson refuses a lone surrogate, and a colon written as \\u003a once put the key count
    in doubt: each sent the whole document to the strict reader (a tree of it in memory)."""
    monkeypatch.setattr(native, "PIECE_BYTES", 2000)
    document = random_document(random.Random(7), 25)
    for stimulus in document["stimuli"]:
        for trial in stimulus["trials"][::3]:
            trial["message"] = "cut inside an emoji \ud83d"
            trial["metadata"] = {"at": "12:30 <b>"}
    text = json.dumps(document).replace("12:30", "12\\u003a30").replace("<", "\\u003c")
    assert "\\ud83d" in text and "\\u003a" in text
    path = tmp_path / "doc.json"
    path.write_text(text, encoding="utf-8")
    fallbacks = stream_only(monkeypatch)
    fast, _ = load([str(path)])
    assert fallbacks == []
    slow = strict_table([path])
    assert snapshot(fast) == snapshot(slow)
    messages = [m for record in fast.stimuli.values() for m in record.messages]
    assert "cut inside an emoji \ud83d" in messages


def load(paths: list[str]) -> Any:
    """Read as native (detection reads only a file's head; these put the stimuli first)."""
    return load_any(paths, IngestOptions(format="native"))


def outcome(read: Any) -> str:
    try:
        table = read()
    except InputError as error:
        return str(error)
    return "ok " + repr(snapshot(table))


GOOD = {"schema_version": "1.0", "suite": "d", "stimuli": [
    {"id": f"s{s}", "trials": [{"passed": True}, {"passed": False, "trial": 1}]} for s in range(4)
]}  # fmt: skip
GOOD_TEXT = json.dumps(GOOD)


@pytest.mark.parametrize(
    "text",
    [
        GOOD_TEXT.replace('"suite": "d"', '"suite": "d", "suite": "e"'),
        GOOD_TEXT.replace('{"passed": true}', '{"passed": true, "passed": false}', 1),
        GOOD_TEXT.replace('"id": "s3"', '"id": "s3", "id": "s4"'),
        GOOD_TEXT.replace('"trial": 1}', '"trial": 1, "score": NaN}', 1),
        GOOD_TEXT.replace('"trial": 1}]}, {"id": "s2"', '"trial": 1, "x": 2}]}, {"id": "s2"'),
        GOOD_TEXT.replace('"trial": 1}]}]', '"trial": 100000000000000000000000}]}]'),
        GOOD_TEXT.replace('"trial": 1}]}]', '"trial": 0}]}]'),  # a duplicate in the last one
        GOOD_TEXT + " {}",
        GOOD_TEXT + " x",
        GOOD_TEXT[:-3],
        "[" + GOOD_TEXT + "]",
        GOOD_TEXT.replace(
            '"trials": [{"passed": true}, {"passed": false, "trial": 1}]}]', '"trials": []}]'
        ),
        GOOD_TEXT.replace('"stimuli": [', '"stimuli": [7, '),
        GOOD_TEXT.replace('"stimuli": [', '"junk": [1], "stimuli": ['),
        GOOD_TEXT.replace('"suite": "d"', '"suite": [1]'),
        GOOD_TEXT.replace('"schema_version"', '"schema\\u005fversion"'),
        GOOD_TEXT.replace('{"passed": true}', '{"passed": true, "metadata": {"a\\u003a": 1}}', 1),
        GOOD_TEXT.replace('"stimuli": [', '"stimuli": ' + "[" * 300 + "]" * 300 + ', "x": ['),
        GOOD_TEXT.replace("}, {", "},, {", 1),
        "\ufeff" + GOOD_TEXT,
        GOOD_TEXT.replace('"stimuli": [', '"stimuli" : [ ').replace("]}", " ] }"),
    ],
)
def test_errors_and_odd_layouts_read_as_the_strict_reader_reads_them(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "doc.json"
    path.write_text(text, encoding="utf-8")
    assert outcome(lambda: load([str(path)])[0]) == outcome(lambda: strict_table([path]))


def test_a_fall_back_midway_gives_nothing_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the stream loses certainty halfway (here: at the 3rd piece of a big stimulus's
    trials), the whole-document reader gives only what was not given yet, even part of a
    stimulus."""
    document = {"schema_version": "1.0", "stimuli": [
        {"id": f"s{s}", "trials": [{"passed": t % 3 == 0} for t in range(400 if s == 3 else 3)]}
        for s in range(7)
    ]}  # fmt: skip
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    monkeypatch.setattr(native, "PIECE_BYTES", 1000)
    monkeypatch.setattr(native, "_VALIDATE_TRIALS", 1)
    parse = native._parse
    calls = [0]

    def flaky(raw: bytes) -> Any:
        calls[0] += raw.startswith(b"[")  # a piece of a big stimulus's trials
        if calls[0] == 3:
            raise native._Fallback
        return parse(raw)

    monkeypatch.setattr(native, "_parse", flaky)
    fallbacks = stream_only(monkeypatch)
    fast, _ = load([str(path)])
    assert len(fallbacks) == 1 and fallbacks[0][0] == 3 and fallbacks[0][1] > 0  # mid-stimulus
    assert snapshot(fast) == snapshot(strict_table([path]))


def test_memory_holds_a_piece_not_the_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every orjson call parses at most a piece (one small stimulus, or PIECE_BYTES of a big
    one's trials): never the document."""
    document = {"schema_version": "1.0", "stimuli": [
        {"id": f"s{s}", "trials": [{"passed": True, "score": 0.5}] * (2000 if s == 3 else 20)}
        for s in range(50)
    ]}  # fmt: skip
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    monkeypatch.setattr(native, "PIECE_BYTES", 4096)
    sizes: list[int] = []
    parse = native._parse

    def measured(raw: bytes) -> Any:
        sizes.append(len(raw))
        return parse(raw)

    monkeypatch.setattr(native, "_parse", measured)
    table, _ = load([str(path)])
    assert len(table) == 49 * 20 + 2000
    assert max(sizes) <= 4096 + 2 < path.stat().st_size // 10
    big = table.stimuli[("default", "s3")]
    assert big.indices == list(range(2000))
    assert big.where[1999] is not None and big.where[1999].pointer == "/stimuli/3/trials/1999"
    assert np.all(np.array(big.scores) == 0.5)
