#!/usr/bin/env bash
# Regenerate the image's hash-pinned lock files:
#   requirements.lock        from pyproject.toml's [project] dependencies (the runtime);
#   build-requirements.lock  from build-requirements.in (the build backend, build stage only).
# One set of pins for Linux x86_64 that installs on Python 3.11 (Debian bookworm, image-test)
# and 3.12 (the published base image); every file's hash is kept, pip picks the wheel, so the
# same lock installs on linux/arm64 (the release builds both; resolved for x86_64, but no pin
# here depends on the platform).
# Needs uv (pip install uv).
set -euo pipefail
cd "$(dirname "$0")"
UV=${UV:-../.venv/bin/uv}
compile() {
  "$UV" pip compile --quiet --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
    --generate-hashes --custom-compile-command "docker/lock.sh" "$1" -o "$2"
}
compile ../pyproject.toml requirements.lock
compile build-requirements.in build-requirements.lock
