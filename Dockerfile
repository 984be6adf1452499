# syntax=docker/dockerfile:1
# The eval-gate GitHub Action's image. On a release tag, .github/workflows/release.yml builds
# it for linux/amd64 and linux/arm64 and pushes it as the image action.yml runs (ghcr.io), so
# workflow runs pull it instead of building it. Locally: `docker build -t eval-gate .` and
# `make image-test` (Podman). Wheels only, so the arm64 build under QEMU compiles nothing.
#
# BASE is python:3.12.7-slim-bookworm pinned by its published multi-arch digest: bump tag and
# digest together (e.g. `docker buildx imagetools inspect python:3.12-slim-bookworm`), then run
# `make image-test`. tests/image/run.sh builds with --build-arg BASE=<a local Debian bookworm
# base>, so the package and its lock must work on Python 3.11 and 3.12.
ARG BASE=python:3.12.7-slim-bookworm@sha256:032c52613401895aa3d418a4c563d2d05f993bc3ecc065c8f4e2280978acd249

FROM ${BASE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore
WORKDIR /src
# Dependencies first (their own layer, rebuilt only when the lock changes): wheels only, every
# file checked against the hashes in the lock.
COPY docker/requirements.lock docker/build-requirements.lock docker/
RUN python3 -m venv /opt/eval-gate \
 && /opt/eval-gate/bin/pip install --no-deps --require-hashes --only-binary=:all: \
        -r docker/requirements.lock \
 && python3 -m venv /opt/build-tools \
 && /opt/build-tools/bin/pip install --no-deps --require-hashes --only-binary=:all: \
        -r docker/build-requirements.lock
COPY pyproject.toml README.md ./
COPY schemas/ schemas/
COPY gate/ gate/
COPY docker/slim_venv.py docker/
# The wheel is built with the hash-pinned setuptools (no build isolation: nothing unpinned is
# downloaded) and installed without dependencies (all came from the lock). Then the venv is
# slimmed: no pip or setuptools at run time, and docker/slim_venv.py drops what importing
# eval-gate never loads (most of SciPy, test suites, unused bytecode).
RUN /opt/build-tools/bin/pip wheel --no-deps --no-build-isolation --wheel-dir /tmp/wheels . \
 && /opt/eval-gate/bin/pip install --no-deps --no-index /tmp/wheels/eval_gate-*.whl \
 && /opt/eval-gate/bin/python -m pip uninstall --yes pip setuptools \
 && /opt/eval-gate/bin/python -I docker/slim_venv.py

FROM ${BASE}
COPY --from=build /opt/eval-gate /opt/eval-gate
# No WORKDIR and no USER: the runner sets the workdir to /github/workspace and runs container
# actions as root (the workspace and file-command files belong to the runner's user).
# -I: the workspace is the working directory and must not shadow the package (a repository
# with its own gate/ folder); -u: log lines interleave with annotations in order.
ENTRYPOINT ["/opt/eval-gate/bin/python", "-I", "-u", "-m", "gate.github"]
