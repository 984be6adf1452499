"""Build the action's image with Podman and run it as GitHub's runner runs a container action.

Started by tests/image/run.sh (which installs the tools). Steps, each timed:
1. a Debian bookworm + python3 base made with debootstrap, cached as a tarball;
2. ``podman import`` of it, then ``podman build`` of ./Dockerfile (directly, not through
   action.yml, which names the published image) with ``--build-arg BASE=<that image>`` (pip
   installs the hash-pinned lock from PyPI), tagged also as the image action.yml runs, the
   name the release workflow pushes (docker/release_image.py reads it);
3. the image size against the 250 MB goal;
4. the container run with the runner's mounts and variables, against the fake GitHub API of
   tests/github/fake_github.py on 127.0.0.1, for several scenarios, each checked: exit code,
   job summary, outputs, annotations, JSON report, the API requests, no token in any output.

The container uses the host's network (``--network host``): the fake API listens on the host's
loopback only, which a container in its own network namespace cannot reach. On GitHub the
runner puts the container on the job's network and the API is the real one.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.github.contract import (  # noqa: E402
    HEAD_SHA,
    PUSH_SHA,
    REPOSITORY,
    TOKEN,
    input_env,
    parse_outputs,
    pull_request_event,
    push_event,
    runner_env,
    runner_folders,
)

BASE = "localhost/debian-python:bookworm"
IMAGE = "localhost/eval-gate:image-test"
SIZE_GOAL_MB = 250
#: about what python:3.12-slim-bookworm (the published base) takes unpacked; the local
#: Debian base is bigger (full python3.11 with pip), so the goal is checked on our layers.
PYTHON_SLIM_MB = 130
CACHE = Path(
    os.environ.get("EVAL_GATE_IMAGE_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "eval-gate/image-test"
)
TIMINGS: list[tuple[str, float]] = []


def released_image() -> str:
    """The image action.yml runs (``ghcr.io/org/eval-gate:vX.Y.Z``), as the release reads it."""
    spec = importlib.util.spec_from_file_location(
        "release_image", ROOT / "docker" / "release_image.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.image_reference((ROOT / "action.yml").read_text(encoding="utf-8")))


#: the built image is tagged with this name too, and the scenarios run it by this name.
ACTION_IMAGE = released_image()


@contextmanager
def step(name: str) -> Iterator[None]:
    print(f"== {name}", flush=True)
    start = time.monotonic()
    yield
    TIMINGS.append((name, time.monotonic() - start))
    print(f"   {TIMINGS[-1][1]:.1f} s", flush=True)


def run(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(args, text=True, capture_output=True, **kwargs)
    if result.returncode != 0:
        sys.stderr.write(result.stdout[-4000:] + result.stderr[-4000:])
        raise SystemExit(f"image-test: failed ({result.returncode}): {' '.join(args[:6])} ...")
    return result


def debian_mirror() -> str:
    sources = Path("/etc/apt/sources.list.d/debian.sources")
    if sources.exists():
        match = re.search(r"^URIs:\s*(\S+)", sources.read_text(), re.MULTILINE)
        if match:
            return match.group(1)
    return "http://deb.debian.org/debian"


def base_tarball(work: Path) -> Path:
    """Debian bookworm (python3 3.11, venv, pip) as a rootfs tarball, made once and cached."""
    tarball = CACHE / "debian-bookworm-python3.tar"
    if tarball.exists():
        print(f"   cached: {tarball}")
        return tarball
    CACHE.mkdir(parents=True, exist_ok=True)
    rootfs = work / "rootfs"
    run(
        [
            "debootstrap",
            "--variant=minbase",
            "--include=python3,python3-venv,python3-pip,ca-certificates",
            "bookworm",
            str(rootfs),
            debian_mirror(),
        ]
    )
    # This machine reaches PyPI through a proxy whose CA only the host's bundle has.
    shutil.copy("/etc/ssl/certs/ca-certificates.crt", rootfs / "etc/ssl/certs/ca-certificates.crt")
    for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for entry in (rootfs / cache).glob("*"):
            if entry.is_file():
                entry.unlink()
    partial = tarball.with_suffix(".partial")
    run(["tar", "-C", str(rootfs), "-cf", str(partial), "."])
    partial.replace(tarball)
    shutil.rmtree(rootfs)
    return tarball


@dataclass
class Podman:
    work: Path

    def __post_init__(self) -> None:
        hard = subprocess.run(
            ["bash", "-c", "ulimit -Hn"], capture_output=True, text=True, check=True
        ).stdout.strip()
        conf = self.work / "containers.conf"
        # runc: crun fails on this VM's hybrid cgroups; explicit ulimits; no systemd here.
        conf.write_text(
            "[containers]\n"
            f'default_ulimits = ["nofile={hard}:{hard}", "nproc=32768:32768"]\n'
            "[engine]\n"
            'runtime = "runc"\n'
            'cgroup_manager = "cgroupfs"\n'
            'events_logger = "file"\n'
        )
        os.environ["CONTAINERS_CONF"] = str(conf)

    def cmd(self, *args: str) -> list[str]:
        return [
            "podman",
            "--root",
            str(self.work / "storage"),
            "--runroot",
            str(self.work / "runroot"),
            *args,
        ]

    def __call__(self, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return run(self.cmd(*args), **kwargs)

    def reset(self) -> None:
        subprocess.run(self.cmd("system", "reset", "--force"), capture_output=True)


@dataclass
class ActionRun:
    name: str
    exit_code: int
    stdout: str
    stderr: str
    summary: str
    outputs: dict[str, str]
    workspace: Path


class Scenarios:
    """Runs of the container against one fake API; the API state carries over between runs."""

    def __init__(self, podman: Podman, work: Path) -> None:
        self.podman = podman
        self.work = work
        self.state_file = work / "api-state.json"
        setup = work / "api-setup.json"
        setup.write_text(
            json.dumps(
                {
                    "users": {TOKEN: None, "ghs_readOnlyForkToken": None},
                    "read_only": ["ghs_readOnlyForkToken"],
                    "pulls": [
                        {"number": 7, "head_sha": HEAD_SHA},
                        {"number": 8, "head_sha": PUSH_SHA, "head_ref": "other"},
                    ],
                }
            )
        )
        port_file = work / "api-port"
        self.server = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "tests/github/fake_github.py"),
                "--port-file",
                str(port_file),
                "--state-file",
                str(self.state_file),
                "--setup",
                str(setup),
                "--lifetime",
                "900",
            ]
        )
        for _ in range(100):
            if port_file.exists():
                break
            time.sleep(0.1)
        self.api_url = f"http://127.0.0.1:{port_file.read_text().strip()}"

    def close(self) -> None:
        self.server.terminate()
        self.server.wait(timeout=10)

    def api_state(self) -> dict[str, Any]:
        return dict(json.loads(self.state_file.read_text()))

    def run(
        self,
        name: str,
        *,
        example: str,
        results: str,
        event_name: str,
        event: dict[str, Any],
        token: str = TOKEN,
        run_id: str = "4242",
        sha: str = HEAD_SHA,
        inputs: dict[str, str] | None = None,
    ) -> ActionRun:
        folder = self.work / name
        workspace, file_commands, workflow, home = (
            folder / n for n in ("workspace", "file_commands", "workflow", "home")
        )
        home.mkdir(parents=True)
        runner_folders(file_commands, workflow, event)
        shutil.copytree(ROOT / "examples" / example, workspace)
        env = {
            **runner_env(
                workspace="/github/workspace",
                file_commands="/github/file_commands",
                workflow="/github/workflow",
                event_name=event_name,
                api_url=self.api_url,
                sha=sha,
                run_id=run_id,
            ),
            **input_env({"results": results, **(inputs or {})}, token=token),
        }
        args = ["run", "--rm", "--network", "host", "--workdir", "/github/workspace"]
        for host, inside in (
            (workspace, "/github/workspace"),
            (file_commands, "/github/file_commands"),
            (workflow, "/github/workflow"),
            (home, "/github/home"),
        ):
            args += ["-v", f"{host}:{inside}"]
        for key, value in env.items():
            args += ["-e", f"{key}={value}"]
        with step(f"run: {name}"):
            result = subprocess.run(
                self.podman.cmd(*args, ACTION_IMAGE),
                text=True,
                capture_output=True,
                timeout=300,
            )
        run_result = ActionRun(
            name,
            result.returncode,
            result.stdout,
            result.stderr,
            (file_commands / "step_summary").read_text(encoding="utf-8"),
            parse_outputs((file_commands / "set_output").read_text(encoding="utf-8")),
            workspace,
        )
        texts = (result.stdout, result.stderr, run_result.summary, str(run_result.outputs))
        check(all(token not in text for text in texts), "the token is in no log, summary, output")
        return run_result


FAILURES: list[str] = []


def check(condition: bool, message: str) -> None:
    print(f"   {'ok  ' if condition else 'FAIL'} {message}")
    if not condition:
        FAILURES.append(message)


def scenarios(s: Scenarios) -> None:
    comments_path = f"/repos/{REPOSITORY}/issues/7/comments"

    first = s.run(
        "pull-request-failing",
        example="failing",
        results="results.jsonl",
        event_name="pull_request",
        event=pull_request_event(7),
    )
    check(first.exit_code == 1, f"exit code 1 for failing gates (got {first.exit_code})")
    check(first.summary.startswith("## ❌ eval-gate: FAIL"), "job summary starts with the verdict")
    check(first.outputs.get("verdict") == "fail", "output verdict=fail")
    check(first.outputs.get("report") == "eval-gate-report.json", "output report names the file")
    report = json.loads((first.workspace / "eval-gate-report.json").read_text())
    check(report["verdict"] == "fail", "JSON report written in the workspace, verdict fail")
    check(first.outputs.get("pass_hat_k") == "0.4", "output pass_hat_k=0.4")
    check("::error title=eval-gate%3A gate failed" in first.stdout, "::error annotation printed")
    check(
        any(
            line.startswith("::warning ") and "title=eval-gate%3A flaky stimulus" in line
            for line in first.stdout.splitlines()
        ),
        "::warning for flaky",
    )
    state = s.api_state()
    posts = [r for r in state["requests"] if r["method"] == "POST"]
    check(
        len(posts) == 1 and posts[0]["path"] == comments_path,
        f"one POST {comments_path} (got {[p['path'] for p in posts]})",
    )
    check(
        all(r["headers"].get("authorization") == f"Bearer {TOKEN}" for r in state["requests"]),
        "every API request carries the token as a Bearer header",
    )
    body = posts[0]["body"]["body"] if posts else ""
    check(body.startswith("<!-- eval-gate:sticky id=default "), "comment starts with the marker")
    check(bool(first.outputs.get("comment_url")), "output comment_url set")

    second = s.run(
        "pull-request-again",
        example="failing",
        results="results.jsonl",
        event_name="pull_request",
        event=pull_request_event(7),
        run_id="4243",
    )
    state = s.api_state()
    patches = [r for r in state["requests"] if r["method"] == "PATCH"]
    check(second.exit_code == 1, "second run: exit code 1")
    check(len(patches) == 1, "second run updates the comment in place (one PATCH)")
    check(len(state["comments"].get("7", [])) == 1, "still exactly one comment on PR 7")

    push = s.run(
        "push-passing",
        example="passing",
        results="results.json",
        event_name="push",
        event=push_event(),
        sha=PUSH_SHA,
    )
    state = s.api_state()
    check(push.exit_code == 0, f"push with passing results: exit code 0 (got {push.exit_code})")
    check(push.outputs.get("verdict") == "pass", "output verdict=pass")
    check(
        any(
            r["path"].startswith(f"/repos/{REPOSITORY}/commits/{PUSH_SHA}/pulls")
            for r in state["requests"]
        ),
        "push: PR found with GET /repos/{o}/{r}/commits/{sha}/pulls",
    )
    check(len(state["comments"].get("8", [])) == 1, "push: comment created on PR 8")

    fork = s.run(
        "fork-read-only-token",
        example="failing",
        results="results.jsonl",
        event_name="pull_request",
        event=pull_request_event(9, fork=True),
        token="ghs_readOnlyForkToken",
    )
    check(
        fork.exit_code == 1, f"fork PR, read-only token: exit code still 1 (got {fork.exit_code})"
    )
    check("could not comment on pull request 9" in fork.summary, "fork: notice in the summary")
    check("workflow_run" in fork.summary, "fork: the notice says how to enable comments")

    bad = s.run(
        "bad-input",
        example="failing",
        results="no-such-dir/*.jsonl",
        event_name="pull_request",
        event=pull_request_event(7),
    )
    check(bad.exit_code == 2, f"no results file: exit code 2 (got {bad.exit_code})")
    check(bad.outputs.get("verdict") == "error", "output verdict=error")
    check("::error title=eval-gate%3A bad input" in bad.stdout, "::error annotation for bad input")


def main() -> int:
    if not shutil.which("podman"):
        print("image-test: podman is not installed (tests/image/run.sh installs it)")
        return 2
    total = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="eval-gate-image-"))
    podman = Podman(work)
    server: Scenarios | None = None
    try:
        with step("base: debootstrap bookworm + python3 (cached)"):
            tarball = base_tarball(work)
        with step("base: podman import"):
            podman("import", str(tarball), BASE)
        with step("build: podman build of ./Dockerfile"):
            podman(
                "build",
                "--pull=never",
                "--network=host",
                "--build-arg",
                f"BASE={BASE}",
                "--tag",
                IMAGE,
                "--file",
                str(ROOT / "Dockerfile"),
                str(ROOT),
                timeout=1200,
            )
            podman("tag", IMAGE, ACTION_IMAGE)
        print(f"   tagged {ACTION_IMAGE} (action.yml's runs.image) in the private store")
        size = int(podman("image", "inspect", "--format", "{{.Size}}", IMAGE).stdout.strip())
        base_size = int(podman("image", "inspect", "--format", "{{.Size}}", BASE).stdout.strip())
        ours = (size - base_size) / 1e6
        print(
            f"== image size: {size / 1e6:.0f} MB here (local base {base_size / 1e6:.0f} MB + "
            f"eval-gate {ours:.0f} MB); on python:3.12-slim about {PYTHON_SLIM_MB + ours:.0f} MB"
        )
        check(
            PYTHON_SLIM_MB + ours <= SIZE_GOAL_MB,
            f"image on the published base ≤ {SIZE_GOAL_MB} MB (about {PYTHON_SLIM_MB + ours:.0f})",
        )
        server = Scenarios(podman, work)
        scenarios(server)
    finally:
        if server is not None:
            server.close()
        with step("cleanup: podman system reset, temporary root removed"):
            podman.reset()
            shutil.rmtree(work, ignore_errors=True)
    print("\nimage-test timings:")
    for name, seconds in TIMINGS:
        print(f"  {seconds:7.1f} s  {name}")
    print(f"  {time.monotonic() - total:7.1f} s  total")
    if FAILURES:
        print(f"\nimage-test: {len(FAILURES)} check(s) failed:\n  " + "\n  ".join(FAILURES))
        return 1
    print("\nimage-test: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
