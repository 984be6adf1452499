"""The image a release publishes, read from action.yml: one source of truth for name and tag.

action.yml's ``runs.image`` (``docker://ghcr.io/OWNER/NAME:vX.Y.Z``) is the image every run of
the action pulls. On a pushed tag, .github/workflows/release.yml runs this script and pushes
exactly that image (and the major tag ``vX``). It stops the release, before anything is built,
when the tag is not ``vX.Y.Z``, when action.yml names another version or pyproject.toml
another version, or when the image is not under this repository owner's ghcr.io namespace
(a fork points action.yml at its own image first).

Prints ``key=value`` lines for ``$GITHUB_OUTPUT``: ``image``, ``version``, ``tags``.
Standard library only: it runs on the runner's python3 before anything is installed.

    python3 docker/release_image.py --tag v1.2.3 --repository org/eval-gate
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = "ghcr.io"
VERSION_TAG = re.compile(r"v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")
# runs.image in action.yml, quoted or not (the file is YAML; this reads the one line it needs
# without a YAML library, and tests/github/test_release.py checks it against yaml.safe_load).
RUNS_IMAGE = re.compile(
    r"^runs:[ \t]*\n"  # the top-level key
    r"(?:(?:[ \t]+.*)?\n)*?"  # its other keys and blank lines
    r"[ \t]+image:[ \t]*(['\"]?)(?P<image>[^'\"\s#]+)\1[ \t]*(?:#.*)?$",
    re.MULTILINE,
)


class ReleaseError(Exception):
    """The tag, action.yml and pyproject.toml do not describe one release."""


class ImageReference(NamedTuple):
    """``ghcr.io/org/eval-gate:v1.2.3`` as registry, owner, name and version (1.2.3)."""

    registry: str
    owner: str
    name: str
    version: str

    @property
    def repository(self) -> str:
        return f"{self.registry}/{self.owner}/{self.name}"

    @property
    def major_tag(self) -> str:
        return "v" + self.version.split(".")[0]

    def __str__(self) -> str:
        return f"{self.repository}:v{self.version}"


def image_reference(action_yml: str) -> ImageReference:
    """The image action.yml runs, which must be ``docker://REGISTRY/OWNER/NAME:vX.Y.Z``."""
    match = RUNS_IMAGE.search(action_yml)
    if match is None:
        raise ReleaseError("action.yml: no runs.image")
    image = match.group("image")
    parsed = re.fullmatch(r"docker://([^/]+)/([^/:]+)/([^/:@]+):(v[^:@]+)", image)
    if parsed is None or VERSION_TAG.fullmatch(parsed.group(4)) is None:
        raise ReleaseError(
            f"action.yml: runs.image is {image!r}; expected docker://{REGISTRY}/OWNER/NAME:vX.Y.Z"
        )
    registry, owner, name, tag = parsed.groups()
    return ImageReference(registry, owner, name, tag[1:])


def project_version(pyproject_toml: str) -> str:
    match = re.search(r'^version\s*=\s*"([^"]+)"', pyproject_toml, re.MULTILINE)
    if match is None:
        raise ReleaseError("pyproject.toml: no version")
    return match.group(1)


def release_outputs(tag: str, repository: str, root: Path = ROOT) -> dict[str, str]:
    """What the release workflow pushes for ``tag`` of ``repository`` (``owner/name``)."""
    if VERSION_TAG.fullmatch(tag) is None:
        raise ReleaseError(f"tag {tag!r} is not a release tag vX.Y.Z")
    image = image_reference((root / "action.yml").read_text(encoding="utf-8"))
    if image.registry != REGISTRY:
        raise ReleaseError(f"action.yml runs {image}; releases are published to {REGISTRY}")
    # ghcr.io names are lowercase; a workflow's token may push only under its own owner.
    owner = repository.split("/", 1)[0].lower()
    if image.owner != owner:
        raise ReleaseError(
            f"action.yml runs {image}, which this repository ({repository}) cannot publish: "
            f"point runs.image at docker://{REGISTRY}/{owner}/{image.name}:v{image.version} "
            "(see docs/action.md, 'A fork or a self-hosted copy')"
        )
    if f"v{image.version}" != tag:
        raise ReleaseError(
            f"tag {tag} but action.yml runs {image}: set runs.image to "
            f"docker://{image.repository}:{tag} (and pyproject.toml's version) before tagging"
        )
    version = project_version((root / "pyproject.toml").read_text(encoding="utf-8"))
    if version != image.version:
        raise ReleaseError(f"tag {tag} but pyproject.toml says version {version}")
    tags = [str(image), f"{image.repository}:{image.major_tag}"]
    return {"image": image.repository, "version": image.version, "tags": ",".join(tags)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tag", required=True, help="the pushed tag (github.ref_name)")
    parser.add_argument("--repository", required=True, help="owner/name (github.repository)")
    args = parser.parse_args(argv)
    try:
        outputs = release_outputs(args.tag, args.repository)
    except (ReleaseError, OSError) as error:
        print(f"release: {error}", file=sys.stderr)
        return 1
    for key, value in outputs.items():
        print(f"{key}={value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
