"""Docstring examples outside gate.metrics run too (gate.metrics has its own test)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "gate.compare",
    "gate.config_template",
    "gate.planning",
    "gate.rates",
    "gate.report.escape",
    "gate.report.markdown",
    "gate.report.wording",
    "gate.scoring",
    "gate.trials",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
