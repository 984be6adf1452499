"""A few seeded runs of each mode of the mutation fuzzer (``make mutate`` runs thousands):
the fuzzer itself keeps working, and what it found stays fixed for these seeds."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile import mutate


@pytest.mark.parametrize(
    ("mode", "runs"), [(["--differential"], 40), (["--action"], 40), (["--publish"], 60)]
)
def test_seeded_mutations_find_nothing(
    mode: list[str], runs: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)  # where findings would be kept
    code = mutate.main([*mode, "--seed", "11", "--runs", str(runs)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"{runs} runs" in out and ", 0 findings" in out
    assert not (tmp_path / "mutations").exists()
