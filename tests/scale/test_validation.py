"""jsonschema-rs (the fast yes/no) and jsonschema (the reference) agree on our schemas,
and the exact duplicate-key check never lets a duplicate through."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from gate import schemas
from gate.ingest._json import _keys_unique, fast_loads_block
from tests.scale.conftest import random_record

pytest.importorskip("jsonschema_rs")

BAD_VALUES: list[Any] = [None, True, -1, 1.5, 2**70, "", "x", [], {}, ["a", "a"], {"x": 1}, 0.5]
KEYS = ["suite", "stimulus", "trial", "status", "passed", "score", "outcome", "graders", "tags",
        "message", "metadata", "type", "schema_version", "n", "c", "errors", "skipped",
        "score_sum", "categories", "name", "tokens", "input", "pased"]  # fmt: skip


def mutate(rng: random.Random, value: Any) -> Any:
    """Change one thing somewhere inside ``value``: drop, add or replace a key or an item."""
    value = copy.deepcopy(value)
    containers = [value]
    stack = [value]
    while stack:
        item = stack.pop()
        children = list(item.values()) if isinstance(item, dict) else item
        for child in children if isinstance(item, dict | list) else ():
            if isinstance(child, dict | list):
                containers.append(child)
                stack.append(child)
    target = rng.choice(containers)
    if isinstance(target, dict):
        action = rng.random()
        if action < 0.3 and target:
            del target[rng.choice(list(target))]
        elif action < 0.6:
            target[rng.choice(KEYS)] = rng.choice(BAD_VALUES)
        elif target:
            target[rng.choice(list(target))] = rng.choice(BAD_VALUES)
    elif target:
        target[rng.randrange(len(target))] = rng.choice(BAD_VALUES)
    else:
        target.append(rng.choice(BAD_VALUES))
    return value


def corpus(rng: random.Random) -> dict[str, list[Any]]:
    trials = [random_record(rng, rng.choice(["plain", "graded", "rated"]), "s", t)
              for t in range(150)]  # fmt: skip
    trials.append({"type": "suite", "suite": "s", "categories": {"a": 0, "b": 1}})
    documents = [
        {"schema_version": "1.2", "suite": "x", "pass_threshold": 0.5,
         "stimuli": [{"id": "a", "tags": ["t"],
                      "trials": [{k: v for k, v in t.items() if k not in ("suite", "stimulus")}
                                 for t in trials[i : i + 3]]}]}
        for i in range(0, 60, 3)
    ]  # fmt: skip
    counts = [{"suite": "s", "stimulus": f"c{i}", "n": 10, "c": i % 10, "errors": 0,
               "skipped": None, "score_sum": 2.5, "categories": {"a": 4, "b": 6}, "tags": ["t"]}
              for i in range(50)]  # fmt: skip
    counts.append({"type": "suite", "suite": "s", "pass_threshold": 0.5})
    return {"trial-record": trials, "results": documents, "counts": counts}


def test_both_validators_agree_on_valid_and_mutated_records() -> None:
    rng = random.Random(1)
    for name, valid in corpus(rng).items():
        reference = schemas.validator(name)
        assert all(reference.is_valid(x) for x in valid), name
        assert schemas.first_invalid(valid, name) is None
        cases = valid + [mutate(rng, x) for x in valid for _ in range(6)]
        verdicts = [reference.is_valid(x) for x in cases]
        assert [schemas.is_valid(x, name) for x in cases] == verdicts, name
        assert not all(verdicts)
        first = next(i for i, ok in enumerate(verdicts) if not ok)
        assert schemas.first_invalid(cases, name) == first


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 2}',
        '{"a": {"b": 1, "b": 1}}',
        '{"a": [{"k": "x:y", "k": "x:y"}]}',
        '{"m": "a:b:c", "m": ""}',
        '{"a" : 1, "a" : 2}',
        '{"a\\u003a": 1, "a:": 2, "a:": 3}',
        '{"\\u0061": 1, "a": 2}',
    ],
)
def test_a_duplicate_key_never_passes_the_fast_parser(text: str) -> None:
    raw = text.encode()
    assert fast_loads_block(raw) is None
    with pytest.raises(ValueError):
        json.loads(text, object_pairs_hook=_refuse_duplicates)


@pytest.mark.parametrize(
    "text",
    ['{"a": "x:y", "b": {"c:": [":", {"d": ":"}]}}', '{"k": 1}', '[{"a": 1}, {"a": 2}]'],
)
def test_colons_inside_strings_do_not_fool_the_key_count(text: str) -> None:
    raw = text.encode()
    assert fast_loads_block(raw) == [json.loads(text)]
    assert _keys_unique(raw, json.loads(text))


def _escaped(text: str, rng: random.Random) -> str:
    """``text`` as a JSON string, some characters written as \\uXXXX escapes (a colon, a
    backslash, a 'u' among them), as JSON from Go or a hostile writer may have them."""
    out = []
    for char in text:
        if rng.random() < 0.4:
            out.append(f"\\u{ord(char):04x}" if rng.random() < 0.5 else f"\\u{ord(char):04X}")
        elif char in '"\\':
            out.append("\\" + char)
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def test_the_key_count_is_exact_with_escaped_colons_and_backslashes() -> None:
    """Colons written as \\u003a (in keys and values) keep the fast parser (it had refused
    every text with one), and no spelling of a backslash or 'u' lets a repeated key through."""
    rng = random.Random(20261126)
    alphabet = ':\\u003aA"x'
    kept = 0
    for _ in range(3000):
        pairs = []
        for _ in range(rng.randint(1, 4)):
            key = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
            value = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
            pairs.append((key, value))
        repeated = len({k for k, _ in pairs}) < len(pairs)
        text = "{" + ", ".join(f"{_escaped(k, rng)}: {_escaped(v, rng)}" for k, v in pairs) + "}"
        raw = text.encode()
        assert json.loads(text, object_pairs_hook=list) == pairs  # the escaping is right
        unique = _keys_unique(raw, json.loads(text))
        assert unique is not repeated, text
        kept += unique and b"\\u003" in raw
    assert kept > 1000  # texts with an escaped colon-like sequence do take the fast path
    raw = b'{"a": "<b>\\u003c/b>", "k\\u003ay": 1}'  # Go's escaped '<', an escaped colon
    assert fast_loads_block(raw) == [{"a": "<b></b>", "k:y": 1}]


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate")
    return dict(pairs)


def test_values_json_has_no_word_for_fall_back_to_jsonschema() -> None:
    import datetime

    from gate.errors import InputError, Provenance

    # YAML configurations can hold dates and integer keys; jsonschema-rs refuses to look.
    for instance in ({"version": datetime.date(2024, 1, 1)}, {1: 2}):
        assert not schemas.is_valid(instance, "config")
        assert schemas.first_invalid([instance], "config") == 0
        with pytest.raises(InputError, match=r"c\.yml"):
            schemas.validate(instance, "config", Provenance("c.yml"))


#: Pieces of JSONL lines: whole values, and the ways a block parsed at once could go wrong
#: (two values on a line, a string open across a line end, blank lines, a BOM, a bare comma).
LINE_PIECES = [
    '{"a": 1}', '{"a": "x, y"}', '[1, 2]', '"s"', "3", "null", '{"k:": ["]", "}"]}',
    '{"a": 1}, {"b": 2}', '{"a": 1} {"b": 2}', '{"a": "open', 'closed"}', "", "   ", ",",
    "\ufeff{}", '{"a": 1,', '"b": 2}', "[", "]", '{"a": 1, "a": 2}', '{"a": 1}\r',
]  # fmt: skip


def test_a_block_parsed_at_once_is_its_lines_parsed_one_by_one() -> None:
    """The block parse (one JSON array) gives each line's value exactly when every line holds
    one value (the strict reading agrees), and None otherwise: never a value that straddles
    two lines or shares one."""
    rng = random.Random(20261127)
    parsed = refused = 0
    for _ in range(4000):
        lines = [rng.choice(LINE_PIECES) for _ in range(rng.randint(1, 5))]
        if rng.random() < 0.8:  # mostly whole values: the fast path is then taken
            lines = [rng.choice(LINE_PIECES[:7]) for _ in lines]
        text = "\n".join(lines) + ("\n" if rng.random() < 0.7 else "")
        got = fast_loads_block(text.encode())
        lines = text.split("\n")[: -1 if text.endswith("\n") else None]  # as a file has them
        try:
            expected = [json.loads(line, object_pairs_hook=_refuse_duplicates) for line in lines]
        except ValueError:  # a line that is not one JSON value (or repeats a key)
            assert got is None, text
            refused += 1
            continue
        if got is None:  # in doubt is allowed only where the strict reader would also decide
            assert "\ufeff" in text or '"a": 1, "a": 2' in text, text
            refused += 1
            continue
        assert got == expected, text
        parsed += 1
    assert parsed > 2500 and refused > 500
