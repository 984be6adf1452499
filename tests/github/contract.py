"""What GitHub's runner gives a container action and how it reads what the action wrote.

Shared by the subprocess tests (tests/github/test_entrypoint.py) and the image test
(tests/image/build_and_run.py), so both run the action in the same environment.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTION_YML = ROOT / "action.yml"
REPOSITORY = "octo-org/agent-evals"
#: looks like an installation token; tests assert it never appears in any output.
TOKEN = "ghs_fakeInstallationToken0123456789abcdef"
HEAD_SHA = "8d3b1e2f9a7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e"
PUSH_SHA = "1f2e3d4c5b6a79880716253443526170a9b8c7d6"


def action_inputs() -> dict[str, dict[str, Any]]:
    data = yaml.safe_load(ACTION_YML.read_text(encoding="utf-8"))
    return dict(data["inputs"])


def input_env(given: dict[str, str], token: str = TOKEN) -> dict[str, str]:
    """``INPUT_*`` as the runner sets them: every declared input, given value or default, with
    the default's ``${{ github.token }}`` expression evaluated."""
    env = {}
    for name, spec in action_inputs().items():
        value = given.get(name, str(spec.get("default", "")))
        if value == "${{ github.token }}":
            value = token
        env["INPUT_" + name.replace(" ", "_").upper()] = value
    return env


def runner_env(
    *,
    workspace: str,
    file_commands: str,
    workflow: str,
    event_name: str,
    api_url: str,
    sha: str = HEAD_SHA,
    run_id: str = "4242",
) -> dict[str, str]:
    """The ``GITHUB_*`` and ``RUNNER_*`` variables of a container step (paths as the container
    sees them when the runner mounts workspace, file_commands and workflow folders)."""
    return {
        "CI": "true",
        "HOME": "/github/home",
        "GITHUB_ACTIONS": "true",
        "GITHUB_ACTION": "__org_eval-gate",
        "GITHUB_ACTION_REPOSITORY": "org/eval-gate",
        "GITHUB_ACTOR": "octocat",
        "GITHUB_API_URL": api_url,
        "GITHUB_GRAPHQL_URL": api_url + "/graphql",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_REPOSITORY_OWNER": REPOSITORY.split("/")[0],
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": f"{workflow}/event.json",
        "GITHUB_WORKSPACE": workspace,
        "GITHUB_SHA": sha,
        "GITHUB_REF": "refs/pull/7/merge" if event_name == "pull_request" else "refs/heads/main",
        "GITHUB_RUN_ID": run_id,
        "GITHUB_RUN_NUMBER": "17",
        "GITHUB_RUN_ATTEMPT": "1",
        "GITHUB_JOB": "gate",
        "GITHUB_WORKFLOW": "evals",
        "GITHUB_OUTPUT": f"{file_commands}/set_output",
        "GITHUB_STEP_SUMMARY": f"{file_commands}/step_summary",
        "GITHUB_ENV": f"{file_commands}/set_env",
        "GITHUB_PATH": f"{file_commands}/add_path",
        "GITHUB_STATE": f"{file_commands}/save_state",
        "RUNNER_OS": "Linux",
        "RUNNER_ARCH": "X64",
        "RUNNER_TEMP": "/home/runner/work/_temp",
    }


def file_command_names() -> list[str]:
    return ["set_output", "step_summary", "set_env", "add_path", "save_state"]


def pull_request_event(number: int = 7, *, fork: bool = False) -> dict[str, Any]:
    head_repo = "fork-owner/agent-evals" if fork else REPOSITORY
    return {
        "action": "synchronize",
        "number": number,
        "pull_request": {
            "number": number,
            "state": "open",
            "head": {"sha": HEAD_SHA, "ref": "feature", "repo": {"full_name": head_repo}},
            "base": {"sha": "0" * 40, "ref": "main", "repo": {"full_name": REPOSITORY}},
        },
        "repository": {"full_name": REPOSITORY},
    }


def push_event(sha: str = PUSH_SHA) -> dict[str, Any]:
    return {"ref": "refs/heads/feature", "after": sha, "repository": {"full_name": REPOSITORY}}


def workflow_run_event(
    *, pull_numbers: tuple[int, ...] = (), head_owner: str = "fork-owner"
) -> dict[str, Any]:
    return {
        "action": "completed",
        "workflow_run": {
            "event": "pull_request",
            "head_sha": HEAD_SHA,
            "head_branch": "feature",
            "head_repository": {
                "full_name": f"{head_owner}/agent-evals",
                "owner": {"login": head_owner},
            },
            "pull_requests": [
                {
                    "number": n,
                    "head": {"sha": HEAD_SHA, "ref": "feature"},
                    "base": {
                        "ref": "main",
                        "repo": {"url": f"https://api.github.com/repos/{REPOSITORY}"},
                    },
                }
                for n in pull_numbers
            ],
        },
        "repository": {"full_name": REPOSITORY},
    }


def write_event(folder: Path, event: dict[str, Any]) -> None:
    (folder / "event.json").write_text(json.dumps(event), encoding="utf-8")


def runner_folders(file_commands: Path, workflow: Path, event: dict[str, Any]) -> None:
    """What the runner mounts for a container step, made: the file commands folder with
    each command's file, empty, and the workflow folder with the event payload."""
    for folder in (file_commands, workflow):
        folder.mkdir(parents=True)
    for name in file_command_names():
        (file_commands / name).touch()
    write_event(workflow, event)


def parse_outputs(text: str) -> dict[str, str]:
    """Read a GITHUB_OUTPUT file as the runner does (``name=value`` and ``name<<DELIM``)."""
    outputs: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        heredoc = re.fullmatch(r"([^=<]+)<<(.+)", line)
        if heredoc:
            name, delimiter = heredoc.groups()
            value: list[str] = []
            while lines[i] != delimiter:
                value.append(lines[i])
                i += 1
            i += 1
            outputs[name] = "\n".join(value)
        else:
            name, _, value_text = line.partition("=")
            outputs[name] = value_text
    return outputs
