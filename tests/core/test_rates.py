"""One convention for rates (issue 15 point 7): fractions 0–1 everywhere, "20%" accepted,
and a value that could be read two ways refused with both readings."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gate.cli import main
from gate.config import load_config
from gate.errors import ConfigError
from gate.rates import parse_rate
from tests.conftest import EXAMPLES


@pytest.mark.parametrize(
    ("value", "fraction"),
    [
        (0.2, 0.2),
        ("0.2", 0.2),
        ("20%", 0.2),
        (" 20 % ", 0.2),
        ("2.5%", 0.025),
        ("100%", 1.0),
        (1, 1.0),
        (0, 0.0),
        ("1e-1", 0.1),  # YAML 1.1 reads 1e-1 as a string
    ],
)
def test_a_rate_is_a_fraction_or_a_percent(value: object, fraction: float) -> None:
    assert parse_rate(value, "rate") == pytest.approx(fraction, abs=0, rel=1e-15)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            20,
            "rate 20 can be read two ways: rates are fractions, so 20 would be 2000%; if you "
            'mean 20%, write 0.2 or "20%"',
        ),
        (
            1.5,
            "rate 1.5 can be read two ways: rates are fractions, so 1.5 would be 150%; if you "
            'mean 1.5%, write 0.015 or "1.5%"',
        ),
        ("80", "rate 80 can be read two ways"),
        (
            100,
            "rate 100 can be read two ways: rates are fractions, so 100 would be 10000%; if you "
            'mean 100%, write 1 or "100%"',
        ),
        (150, "rate 150 out of range; expected a value in [0, 1] (0%–100%)"),
        ("150%", 'rate "150%" out of range; expected a value in [0, 1]'),
        (-0.1, "rate -0.1 out of range"),
        (
            "high",
            "rate: expected a fraction from 0 to 1 or a percent such as \"20%\", found 'high'",
        ),
        (True, "rate: expected a fraction"),
        ("nan", "rate must be a finite number, found 'nan'"),
        (float("inf"), "rate must be a finite number, found inf"),
        ([0.2], "rate: expected a fraction"),
    ],
)
def test_what_is_not_a_rate_is_refused_with_what_it_could_mean(value: object, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_rate(value, "rate")
    assert message in str(caught.value)


def test_flakiness_at_most_one_is_ambiguous_above_one_half() -> None:
    """Flakiness, min(c, n-c)/n, never exceeds 0.5: as a fraction, max 1 could never fail,
    and the configuration used to read it as 1%. Both readings are named; the percent sign
    or a fraction up to 0.5 says which."""
    with pytest.raises(ConfigError) as caught:
        parse_rate(1, "gate max_flakiness max", most=0.5)
    assert str(caught.value) == (
        "gate max_flakiness max 1 can be read two ways: as a fraction it is 100%, above the 50% "
        'this can ever reach, so it could never fail; if you mean 1%, write 0.01 or "1%"'
    )
    with pytest.raises(ConfigError, match=r"0\.6 can be read two ways"):
        parse_rate(0.6, "max", most=0.5)
    assert parse_rate(0.5, "max", most=0.5) == 0.5
    assert parse_rate("1%", "max", most=0.5) == 0.01
    assert parse_rate("60%", "max", most=0.5) == 0.6  # explicit: no second reading


def test_confidence_levels_are_rates_too() -> None:
    assert parse_rate("95%", "c", low=0.5, open_low=True, open_high=True) == 0.95
    with pytest.raises(ConfigError, match=r'c 95 can be read two ways.*write 0.95 or "95%"'):
        parse_rate(95, "c", low=0.5, open_low=True, open_high=True)
    with pytest.raises(ConfigError, match=r"c 1 out of range; expected a value in \(0.5, 1\)"):
        parse_rate(1, "c", low=0.5, open_low=True, open_high=True)


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "gates.yml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_the_configuration_takes_fractions_and_percents(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            "confidence: 90%\ngates:\n  pass_rate: 70%\n  max_flakiness: {max: '20%'}\n"
            "  max_ci_half_width: 0.15\n",
        )
    )
    assert config.confidence == 0.9
    assert [(g.kind, g.target) for g in config.gates] == [
        ("pass_rate", 0.7),
        ("max_flakiness", 0.2),
        ("max_ci_half_width", 0.15),
    ]


def test_max_flakiness_20_in_a_file_names_both_readings(tmp_path: Path) -> None:
    path = write(tmp_path, "gates:\n  max_flakiness:\n    max: 20\n    scope: stimuli\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == (
        f"{path}: gate max_flakiness max 20 can be read two ways: rates are fractions, so 20 "
        'would be 2000%; if you mean 20%, write 0.2 or "20%"'
    )


@pytest.mark.parametrize(
    ("option", "value", "target"),
    [
        ("--max-flakiness", "0.2", 0.2),
        ("--max-flakiness", "20%", 0.2),
        ("--min-pass-rate", "60%", 0.6),
        ("--max-regression", "5%", 0.05),
    ],
)
def test_options_take_the_same_rates(
    option: str, value: str, target: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(EXAMPLES / "failing")
    args = ["check", "results.jsonl", option, value, "--json", "-"]
    if option == "--max-regression":
        args += ["--baseline", "baseline.jsonl"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1, 3), result.output
    import json

    kind = option.removeprefix("--").replace("-", "_").removeprefix("min_")
    gates = [g for g in json.loads(result.stdout)["gates"] if g["kind"] == kind]
    assert [g["target"] for g in gates] == [target]


def test_an_ambiguous_option_is_refused_and_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLES / "failing")
    result = CliRunner().invoke(main, ["check", "results.jsonl", "--max-flakiness", "20"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: option max_flakiness: gate max_flakiness max 20 can be read two ways: rates are "
        'fractions, so 20 would be 2000%; if you mean 20%, write 0.2 or "20%"'
    )
    # ... and so is one given on a rate-typed option of the readers or the plan.
    threshold = CliRunner().invoke(main, ["check", "results.jsonl", "--pass-threshold", "70"])
    assert threshold.exit_code == 2
    assert "Invalid value for '--pass-threshold': value 70 can be read two ways" in (
        threshold.stderr
    )
    plan = CliRunner().invoke(main, ["plan", "--expect", "90%", "--stimuli", "20"])
    assert plan.exit_code == 0, plan.output
