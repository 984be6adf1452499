"""Configuration: YAML validated by schemas/config.schema.json, options override it."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest
import yaml

from gate.config import GateConfig, GateSpec, load_config
from gate.errors import ConfigError
from tests.conftest import ROOT


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "gate.yml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_shorthand_object_and_list_forms(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            """
version: 1
k: 3
bound: lower
gates:
  threshold: 0.7
  pass_hat_k: {k: 3, min: 0.8}
  max_flakiness:
    - {max: 0.2, scope: stimuli}
    - {max: 5%, scope: suite, tag: critical}
""",
        )
    )
    assert config.k == 3
    assert config.gates == (
        GateSpec("threshold", 0.7, "score"),
        GateSpec("pass_hat_k", 0.8, "pass_hat_k", k=3, bound="lower"),
        GateSpec("max_flakiness", 0.2, "flakiness", scope="stimuli"),
        GateSpec("max_flakiness", 0.05, "flakiness", scope="suite", tag="critical"),
    )


def test_options_override_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "gates:\n  threshold: 0.7\n  max_flakiness: 0.3\n")
    config = load_config(path, {"threshold": "0.9", "confidence": "0.9", "errors": "exclude"})
    assert config.confidence == 0.9 and config.errors == "exclude"
    assert [(g.kind, g.target) for g in config.gates] == [
        ("threshold", 0.9),
        ("max_flakiness", 0.3),
    ]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("gates:\n  treshold: 0.7\n", "unknown field 'treshold'"),
        ("gates:\n  threshold: 1.7\n", "threshold min 1.7 can be read two ways"),
        ("gates:\n  threshold: 170\n", "min 170 out of range; expected a value in [0, 1]"),
        ("k: 0\n", "at /k"),
        ("gates:\n  pass_hat_k: {k: 3}\n", "needs 'min'"),
        ("gates:\n  max_flakiness: {min: 3}\n", "takes 'max', not 'min'"),
        ("gates:\n  threshold: {min: 0.7, bound: lower}\n", "has no interval"),
        ("gates:\n  threshold: 0.7\n  threshold: 0.8\n", "duplicate key 'threshold'"),
        ("gates: [\n", "not valid YAML"),
        ("interval: wald\n", "at /interval"),
    ],
)
def test_bad_configuration_is_explained(tmp_path: Path, text: str, fragment: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert fragment in str(caught.value)
    assert str(path) in str(caught.value) or "configuration" in str(caught.value)


def test_bad_option_values(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="option threshold: expected a number, found 'high'"):
        load_config(None, {"threshold": "high"})
    with pytest.raises(ConfigError, match="expected a finite number"):
        load_config(None, {"max_flakiness": "nan"})
    with pytest.raises(ConfigError, match="unknown option"):
        load_config(None, {"colour": "blue"})


def test_default_file_is_used_when_present(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".eval-gate.yml").write_text("gates:\n  pass_rate: 0.5\n")
    monkeypatch.chdir(tmp_path)
    config = load_config(None)
    assert config.source == ".eval-gate.yml"
    assert [g.kind for g in config.gates] == ["pass_rate"]


def test_the_readme_configuration_is_valid(tmp_path: Path) -> None:
    from tests.conftest import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("A configuration (`.eval-gate.yml` by default):", 1)[1]
    yaml_text = block.split("```yaml\n", 1)[1].split("```", 1)[0]
    config = load_config(write(tmp_path, yaml_text))
    assert [g.kind for g in config.gates] == [
        "threshold",
        "pass_hat_k",
        "max_flakiness",
        "pass_rate",
        "max_ci_half_width",
    ]
    assert config.gates[1] == GateSpec("pass_hat_k", 0.8, "pass_hat_k", k=3, bound="lower")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("confidence: .nan\n", "confidence must be a finite number, found nan"),
        ("confidence: .inf\n", "confidence must be a finite number, found inf"),
        ("gates:\n  threshold: .nan\n", "gate threshold min must be a finite number"),
        ("gates:\n  max_flakiness: {max: -.inf}\n", "gate max_flakiness max must be a finite"),
        (
            "gates:\n  pass_rate: {min: 0.5, bound: lower, confidence: .nan}\n",
            "gate pass_rate confidence must be a finite number, found nan",
        ),
        ("gates:\n  max_regression: {max: .nan}\n", "gate max_regression max must be a finite"),
    ],
)
def test_non_finite_numbers_are_config_errors(tmp_path: Path, text: str, fragment: str) -> None:
    # YAML reads .nan/.inf as floats and JSON Schema's range keywords let NaN through.
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert fragment in str(caught.value)
    assert str(path) in str(caught.value)


def test_whole_number_k_is_an_integer(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "k: 3.0\ngates:\n  pass_hat_k: {k: 2.0, min: 0.5}\n"))
    assert config.k == 3 and type(config.k) is int
    assert config.gates[0].k == 2 and type(config.gates[0].k) is int
    with pytest.raises(ConfigError, match="at /k"):
        load_config(write(tmp_path, "k: 2.5\n"))


def test_per_gate_confidence_is_read(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            "confidence: 0.9\ngates:\n"
            "  pass_rate: {min: 0.5, bound: lower, confidence: 0.99}\n"
            "  max_ci_half_width: {max: 0.2, confidence: 0.8}\n"
            "  max_regression: {max: 0.05, confidence: 0.975}\n",
        )
    )
    assert config.confidence == 0.9
    assert [g.confidence for g in config.gates] == [0.99, 0.8, 0.975]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        # confidence on a gate that decides on the point estimate would change nothing
        ("gates:\n  pass_rate: {min: 0.5, confidence: 0.99}\n", "confidence has no effect"),
        ("gates:\n  threshold: {min: 0.5, confidence: 0.99}\n", "confidence has no effect"),
        ("gates:\n  max_flakiness: {max: 0.2, confidence: 0.99}\n", "confidence has no effect"),
        # regression gates decide on a fixed bound and the unbiased values
        ("gates:\n  max_regression: {max: 0.05, bound: estimate}\n", "remove bound: estimate"),
        ("gates:\n  pass_rate: {min: 0.5, detectable: 0.1}\n", "takes no detectable margin"),
        ("gates:\n  max_regression: {max: 0.05, detectable: 0.01}\n", "must lie between"),
        (
            "gates:\n  max_regression: {max: 0.05, metric: pass_hat_k, estimator: plugin}\n",
            "remove estimator: plugin",
        ),
        ("gates:\n  min_improvement: {min: 0, scope: stimuli}\n", "remove scope: stimuli"),
        ("gates:\n  max_regression: {max: 0.05, scope: stimuli}\n", "use max: 0, not 0.05"),
    ],
)
def test_keys_that_would_be_ignored_are_rejected(tmp_path: Path, text: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text))
    assert fragment in str(caught.value)


def test_regression_bound_may_be_spelled_out(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            "bound: lower\ngates:\n  max_regression: {max: 0.05, bound: upper}\n"
            "  min_improvement: 0.0\n",
        )
    )
    assert [(g.kind, g.bound) for g in config.gates] == [
        ("max_regression", "upper"),
        ("min_improvement", "lower"),
    ]


def test_interval_methods_and_default_agree_everywhere(tmp_path: Path) -> None:
    """Library, CLI, config schema, action input: the same methods, mid-p the default."""
    from gate import metrics
    from gate.cli import check
    from gate.metrics.intervals import INTERVAL_METHODS
    from gate.scoring import score_table

    schema = json.loads((ROOT / "schemas" / "config.schema.json").read_text("utf-8"))
    offered = schema["properties"]["interval"]["enum"]
    assert set(offered) == set(INTERVAL_METHODS) - {"wald"}  # Wald plans runs, never gates
    option = next(p for p in check.params if p.name == "interval")
    assert set(option.type.choices) == set(offered)  # type: ignore[attr-defined]
    assert "(default mid-p)" in (option.help or "")
    action = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))
    description = action["inputs"]["interval"]["description"]
    assert set(re.findall(r"`([a-z-]+)`", description)) == set(offered)
    assert "`mid-p` (configuration default)" in description
    assert load_config(write(tmp_path, "version: 1\n")).interval == "mid-p"
    assert GateConfig().interval == "mid-p"
    assert inspect.signature(score_table).parameters["interval"].default == "mid-p"
    assert metrics.rate_interval(1, 2).method == "mid-p with a coverage floor"


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        (  # a pattern error says what a rate is, not the pattern's regular expression
            'gates:\n  pass_rate: {min: "high"}\n',
            ["at /gates/pass_rate/min", "expected a rate: a fraction from 0 to 1", 'found "high"'],
        ),
        (  # neither choice of the rate's oneOf: the choice's words, not jsonschema's sentence
            "gates:\n  pass_rate: {min: [0.5]}\n",
            ["value not allowed", "expected a rate: a fraction from 0 to 1", "found [0.5]"],
        ),
        (
            'gates:\n  metric: {metric: pass_at_k, k: 2, min: "70%"}\n',
            ["wrong type", "expected number (on the metric's own scale", "no percent strings"],
        ),
    ],
)
def test_schema_errors_use_the_fields_description(
    tmp_path: Path, text: str, fragments: list[str]
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text))
    message = str(caught.value)
    assert all(fragment in message for fragment in fragments), message
    assert "matching" not in message and "is not valid under" not in message


def test_a_default_configuration_link_that_leads_nowhere_is_an_error_not_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dangling .eval-gate.yml was taken for no file: the default gate applied without a
    word, where the team's own gates were meant."""
    from click.testing import CliRunner

    from gate.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / ".eval-gate.yml").symlink_to("moved-away.yml")
    with pytest.raises(ConfigError, match=r"\.eval-gate\.yml: cannot read: No such file"):
        load_config(None)
    results = str(ROOT / "examples" / "failing" / "results.jsonl")
    result = CliRunner().invoke(main, ["check", results, "-q"])
    assert result.exit_code == 2
    assert "cannot read the configuration: .eval-gate.yml" in result.stderr
