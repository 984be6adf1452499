"""The text of a generated module of constants and one tuple of numbers (the tables that
tests/compare/exact_shift_table.py and exact_matched_table.py write into gate/metrics)."""

from __future__ import annotations

from collections.abc import Sequence


def number_lines(numbers: Sequence[object], per_line: int, indent: str) -> list[str]:
    """``numbers`` as lines of ``per_line`` each, comma-ended, indented."""
    texts = [repr(x) for x in numbers]
    return [
        indent + ", ".join(texts[i : i + per_line]) + "," for i in range(0, len(texts), per_line)
    ]


def module_text(doc: str, constants: dict[str, object], name: str, body: str) -> str:
    """A module: its docstring, each constant, then ``name = (`` ``body`` ``)`` kept
    from the formatter."""
    header = "".join(f"{key} = {value!r}\n" for key, value in constants.items())
    return f'"""{doc}"""\n\n{header}# fmt: off\n{name} = (\n{body}\n)\n# fmt: on\n'
