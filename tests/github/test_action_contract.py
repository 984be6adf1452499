"""action.yml, the code and the documentation name the same inputs and outputs.

No input may be declared but unread, read but undeclared, or undocumented; defaults agree;
the tables in docs/action.md (and README.md once pasted there) are the ones generated from
action.yml. The image's files are checked too: pinned base, hash-locked dependencies.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

from gate.config import OVERRIDE_NAMES
from gate.github.inputs import INPUT_DEFAULTS, REQUIRED_INPUTS, ActionInputs
from tests.github.action_docs import MARKERS, between_markers, blocks, load_action

ROOT = Path(__file__).resolve().parents[2]
GITHUB_PACKAGE = ROOT / "gate" / "github"


def test_inputs_in_action_yml_are_the_inputs_the_code_reads() -> None:
    declared = load_action()["inputs"]
    assert list(declared) == list(INPUT_DEFAULTS)
    for name, spec in declared.items():
        assert str(spec.get("default", "")) == INPUT_DEFAULTS[name], name
        assert bool(spec.get("required", False)) == (name in REQUIRED_INPUTS), name
        assert re.fullmatch(r"[a-z][a-z0-9_]*", name), f"{name}: inputs are snake_case"


def test_every_gate_option_is_an_input() -> None:
    assert set(OVERRIDE_NAMES) <= set(load_action()["inputs"])


def test_every_input_is_used_by_the_action() -> None:
    """Each ActionInputs field is read somewhere in gate/github outside inputs.py."""
    used: set[str] = set()
    for path in GITHUB_PACKAGE.glob("*.py"):
        if path.name == "inputs.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute):
                used.add(node.attr)
    fields = set(ActionInputs.__dataclass_fields__)
    assert fields - used == set()
    # Grouped fields: every override and the token reach the code through these.
    declared = set(load_action()["inputs"])
    assert declared == (fields - {"overrides"}) | set(OVERRIDE_NAMES)


def test_outputs_in_action_yml_are_the_outputs_the_code_sets() -> None:
    pytest.importorskip("gate.pipeline")
    from gate.github.entrypoint import OUTPUT_NAMES

    assert list(load_action()["outputs"]) == list(OUTPUT_NAMES)


def test_the_action_runs_a_prebuilt_image_with_no_args_or_env() -> None:
    """A published image, not the Dockerfile (no build per workflow run); inputs reach it as
    INPUT_* variables only. Which image: tests/github/test_release.py."""
    runs = load_action()["runs"]
    assert set(runs) == {"using", "image"}
    assert runs["using"] == "docker"
    assert runs["image"].startswith("docker://ghcr.io/")


@pytest.mark.parametrize("which", list(MARKERS))
def test_docs_action_md_tables_are_current(which: str) -> None:
    docs = (ROOT / "docs" / "action.md").read_text(encoding="utf-8")
    found = between_markers(docs, which)
    assert found is not None, f"docs/action.md lacks the {which} markers {MARKERS[which]}"
    assert found == blocks(load_action())[which], (
        "regenerate with: python -m tests.github.action_docs"
    )


@pytest.mark.parametrize("which", list(MARKERS))
def test_readme_tables_are_current(which: str) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = between_markers(readme, which)
    if found is None:
        pytest.skip(f"README.md has no {MARKERS[which][0]} block yet (the lead pastes it)")
    assert found == blocks(load_action())[which], (
        "regenerate with: python -m tests.github.action_docs"
    )


@pytest.mark.parametrize("document", ["README.md", "docs/action.md"])
def test_docker_run_usage_builds_the_image_first_and_sets_real_inputs(document: str) -> None:
    text = (ROOT / document).read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    runs = [b for b in blocks if "docker run" in b]
    assert runs, f"{document} shows no docker run"
    inputs = set(load_action()["inputs"])
    for block in runs:
        commands = block.replace("\\\n", " ")
        assert "docker build -t eval-gate ." in commands
        assert commands.index("docker build -t eval-gate .") < commands.index("docker run")
        assert re.search(r"docker run .* eval-gate\s*$", commands, re.M)
        for name, value in re.findall(r"-e INPUT_([A-Z_]+)='?([^' ]*)'?", commands):
            assert name.lower() in inputs, name
            if name in ("RESULTS", "CONFIG"):
                assert (ROOT / value).is_file(), value


# -- the image's files ------------------------------------------------------------------------


def _requirement_name(text: str) -> str:
    """The project name of a requirement, normalised as PEP 503 says."""
    name = re.split(r"[<>=!~;\[ ]", text.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_lock_pins_every_runtime_dependency_with_hashes() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wanted = {_requirement_name(d) for d in pyproject["project"]["dependencies"]}
    lock = (ROOT / "docker" / "requirements.lock").read_text(encoding="utf-8")
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", lock, re.MULTILINE))
    assert wanted <= {_requirement_name(name) for name in pins}, "run docker/lock.sh"
    for block in re.split(r"\n(?=[A-Za-z])", lock.split("\n", 2)[2]):
        assert "--hash=sha256:" in block, block


def test_the_build_lock_pins_the_build_backend() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    backend = {_requirement_name(r) for r in pyproject["build-system"]["requires"]}
    lock = (ROOT / "docker" / "build-requirements.lock").read_text(encoding="utf-8")
    pinned = {_requirement_name(m) for m in re.findall(r"^([A-Za-z0-9_.-]+)==", lock, re.M)}
    assert backend <= pinned


def test_the_base_image_is_pinned_by_digest() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    pinned = r"^ARG BASE=python:3\.12[\w.-]*-slim[\w-]*@sha256:[0-9a-f]{64}$"
    assert re.search(pinned, dockerfile, re.M)
    assert re.findall(r"^FROM (\S+)", dockerfile, re.M) == ["${BASE}", "${BASE}"]
