"""The release: action.yml names the image, the release workflow pushes exactly that image.

docker/release_image.py is what .github/workflows/release.yml runs on a pushed tag; here it
runs on this repository's own action.yml and pyproject.toml, and on altered copies of them.
The workflow itself is read as YAML: trigger, permissions, pins, platforms, and that the
pushed tags are the ones that script printed.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

import gate
from tests.github.action_docs import load_action

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docker" / "release_image.py"
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
MAJOR = VERSION.split(".")[0]


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("release_image", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


release_image = _module()


def workflow() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    # YAML 1.1 reads the key `on` as True.
    data["on"] = data.pop(True, data.get("on"))
    return data


def steps() -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = workflow()["jobs"]["image"]["steps"]
    return result


# -- one source of truth ------------------------------------------------------------------------


def test_action_yml_runs_the_image_of_this_version() -> None:
    assert load_action()["runs"] == {
        "using": "docker",
        "image": f"docker://ghcr.io/org/eval-gate:v{VERSION}",
    }
    assert gate.__version__ == VERSION


def test_the_script_reads_runs_image_as_yaml_does() -> None:
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    image = release_image.image_reference(text)
    assert f"docker://{image}" == load_action()["runs"]["image"]
    # Quoted, commented, or after other keys of runs: still the same line.
    for variant in (
        "runs:\n  using: docker\n  image: 'docker://ghcr.io/o/n:v1.2.3'\n",
        'runs:\n  using: docker\n\n  image: "docker://ghcr.io/o/n:v1.2.3"  # pinned\n',
        "runs:\n  image: docker://ghcr.io/o/n:v1.2.3\n  using: docker\n",
    ):
        assert yaml.safe_load(variant)["runs"]["image"] == "docker://ghcr.io/o/n:v1.2.3"
        assert str(release_image.image_reference(variant)) == "ghcr.io/o/n:v1.2.3"


def test_the_workflow_pushes_what_action_yml_runs() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--tag", f"v{VERSION}", "--repository", "org/eval-gate"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    outputs = dict(line.split("=", 1) for line in result.stdout.splitlines())
    runs_image = load_action()["runs"]["image"].removeprefix("docker://")
    assert outputs == {
        "image": "ghcr.io/org/eval-gate",
        "version": VERSION,
        "tags": f"{runs_image},ghcr.io/org/eval-gate:v{MAJOR}",
    }
    # The build step pushes exactly those tags, from that step's outputs.
    (image_step,) = [s for s in steps() if s.get("id") == "image"]
    assert "docker/release_image.py" in image_step["run"]
    assert image_step["run"].rstrip().endswith('>> "$GITHUB_OUTPUT"')
    (build,) = [s for s in steps() if str(s.get("uses", "")).startswith("docker/build-push")]
    assert build["with"]["tags"] == "${{ steps.image.outputs.tags }}"
    assert build["with"]["push"] is True
    assert build["with"]["file"] == "Dockerfile" and build["with"]["context"] == "."


def test_the_repository_owner_is_compared_in_lowercase_as_ghcr_names_are() -> None:
    outputs = release_image.release_outputs(f"v{VERSION}", "Org/Eval-Gate")
    assert outputs["image"] == "ghcr.io/org/eval-gate"


def _copy(tmp_path: Path, image: str, version: str = VERSION) -> Path:
    shutil.copy(ROOT / "action.yml", tmp_path / "action.yml")
    action = tmp_path / "action.yml"
    action.write_text(
        re.sub(r"(?m)^  image: .*$", f"  image: {image}", action.read_text(encoding="utf-8")),
        encoding="utf-8",
    )
    (tmp_path / "pyproject.toml").write_text(f'[project]\nversion = "{version}"\n')
    return tmp_path


@pytest.mark.parametrize(
    ("tag", "repository", "image", "version", "message"),
    [
        ("v1", "org/eval-gate", None, None, "tag 'v1' is not a release tag vX.Y.Z"),
        ("v1.2", "org/eval-gate", None, None, "is not a release tag"),
        ("v1.2.3-rc.1", "org/eval-gate", None, None, "is not a release tag"),
        ("1.2.3", "org/eval-gate", None, None, "is not a release tag"),
        (
            "v9.9.9",
            "org/eval-gate",
            None,
            None,
            f"tag v9.9.9 but action.yml runs ghcr.io/org/eval-gate:v{VERSION}: set runs.image "
            "to docker://ghcr.io/org/eval-gate:v9.9.9",
        ),
        (
            f"v{VERSION}",
            "alice/eval-gate",
            None,
            None,
            "which this repository (alice/eval-gate) cannot publish: point runs.image at "
            f"docker://ghcr.io/alice/eval-gate:v{VERSION}",
        ),
        (
            "v2.0.0",
            "org/eval-gate",
            "docker://ghcr.io/org/eval-gate:v2.0.0",
            "1.9.0",
            "pyproject.toml says version 1.9.0",
        ),
        ("v2.0.0", "org/eval-gate", "Dockerfile", "2.0.0", "expected docker://ghcr.io/OWNER/"),
        ("v2.0.0", "org/eval-gate", "docker://ghcr.io/org/eval-gate:v2", "2.0.0", "expected"),
        (
            "v2.0.0",
            "org/eval-gate",
            "docker://docker.io/org/eval-gate:v2.0.0",
            "2.0.0",
            "releases are published to ghcr.io",
        ),
    ],
)
def test_a_release_that_does_not_add_up_stops_before_the_build(
    tmp_path: Path,
    tag: str,
    repository: str,
    image: str | None,
    version: str | None,
    message: str,
) -> None:
    root = ROOT if image is None else _copy(tmp_path, image, version or VERSION)
    with pytest.raises(release_image.ReleaseError, match=re.escape(message)):
        release_image.release_outputs(tag, repository, root)


def test_the_script_exits_1_with_one_line_on_stderr() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--tag", "v0.0.0-x", "--repository", "org/eval-gate"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == "release: tag 'v0.0.0-x' is not a release tag vX.Y.Z\n"


# -- the workflow --------------------------------------------------------------------------------


def test_the_workflow_runs_on_version_tags_only() -> None:
    assert workflow()["on"] == {"push": {"tags": ["v[0-9]+.[0-9]+.[0-9]+"]}}


def test_the_workflow_has_the_least_permissions() -> None:
    data = workflow()
    assert data["permissions"] == {}
    assert data["jobs"]["image"]["permissions"] == {"contents": "read", "packages": "write"}


def test_every_action_is_pinned_by_a_full_commit_sha_with_its_version() -> None:
    text = WORKFLOW.read_text(encoding="utf-8")
    uses = re.findall(r"^\s*(?:- )?uses: (\S+)(.*)$", text, re.M)
    assert {u.split("@")[0] for u, _ in uses} == {
        "actions/checkout",
        "docker/setup-qemu-action",
        "docker/setup-buildx-action",
        "docker/login-action",
        "docker/build-push-action",
    }
    for ref, comment in uses:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", ref), ref
        assert re.fullmatch(r" # v\d+\.\d+\.\d+", comment), (ref, comment)


def test_the_image_is_built_for_amd64_and_arm64_and_logs_in_with_the_job_token() -> None:
    by_action = {str(s.get("uses", "")).split("@")[0]: s for s in steps()}
    assert by_action["docker/build-push-action"]["with"]["platforms"] == ("linux/amd64,linux/arm64")
    assert by_action["docker/setup-qemu-action"]["with"]["platforms"] == "arm64"
    assert by_action["docker/login-action"]["with"] == {
        "registry": "ghcr.io",
        "username": "${{ github.actor }}",
        "password": "${{ secrets.GITHUB_TOKEN }}",
    }
    assert by_action["actions/checkout"]["with"] == {"persist-credentials": False}
    # No build cache that another workflow could have written.
    assert not {"cache-from", "cache-to"} & set(by_action["docker/build-push-action"]["with"])


def test_no_expression_is_expanded_inside_a_run_step() -> None:
    """Values reach shell steps through env:, never by ${{ }} inside the script."""
    for step in steps():
        if "run" in step:
            assert "${{" not in step["run"], step["run"]
