"""Where the action runs: the runner's ``GITHUB_*`` variables, the event payload and its PR."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gate import limits
from gate.errors import EvalGateError, InputError, Provenance, shorten
from gate.github.api import GitHubApi
from gate.reading import json_depth_exceeds, json_values_exceed, read_whole

_SAFE_URL = re.compile(r"https?://[^\s()<>\[\]\"'`]+")
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class RunContext:
    """The parts of the runner's environment the action uses (all optional outside a runner)."""

    event_name: str = ""
    event: Mapping[str, Any] = field(default_factory=dict)
    repository: str = ""
    sha: str = ""
    api_url: str = "https://api.github.com"
    server_url: str = "https://github.com"
    run_id: str = ""
    step_summary: str | None = None
    output: str | None = None
    #: why the event payload could not be read (the run goes on without it), or None.
    event_problem: str | None = None

    @property
    def run_url(self) -> str | None:
        """Link to this run's page (where the full job summary is), when it is a plain URL."""
        if not (self.repository and self.run_id.isdigit()):
            return None
        url = f"{self.server_url.rstrip('/')}/{self.repository}/actions/runs/{self.run_id}"
        return url if _SAFE_URL.fullmatch(url) else None


def context_from_env(env: Mapping[str, str]) -> RunContext:
    """Read the runner's variables; the event payload from ``GITHUB_EVENT_PATH`` if readable."""
    event: Mapping[str, Any] = {}
    problem = None
    event_path = env.get("GITHUB_EVENT_PATH")
    if event_path:
        try:
            event = read_event(event_path)
        except EvalGateError as error:
            problem = f"the event payload is ignored: {error}"
    repository = env.get("GITHUB_REPOSITORY", "")
    return RunContext(
        event_name=env.get("GITHUB_EVENT_NAME", ""),
        event=event,
        repository=repository if _REPOSITORY.fullmatch(repository) else "",
        sha=env.get("GITHUB_SHA", ""),
        api_url=env.get("GITHUB_API_URL") or "https://api.github.com",
        server_url=env.get("GITHUB_SERVER_URL") or "https://github.com",
        run_id=env.get("GITHUB_RUN_ID", ""),
        step_summary=env.get("GITHUB_STEP_SUMMARY") or None,
        output=env.get("GITHUB_OUTPUT") or None,
        event_problem=problem,
    )


def read_event(path: str) -> Mapping[str, Any]:
    """The event payload at ``path`` (the runner's file, outside the workspace): a regular file
    of at most 64 MiB, nested no deeper than any JSON input, as an object ({} otherwise)."""
    data = read_whole(path, limits.EVENT_BYTES, confine=False)
    where = Provenance(path)
    if json_depth_exceeds(data, limits.JSON_DEPTH.value()):
        raise InputError("the event payload is nested too deep", where)
    if json_values_exceed(data, limits.JSON_VALUES.value()):
        raise InputError("the event payload holds too many values", where)
    try:
        loaded = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise InputError(
            f"the event payload is not JSON ({shorten(str(error), 80)})", where
        ) from None
    return loaded if isinstance(loaded, dict) else {}


@dataclass(frozen=True)
class PullRequest:
    number: int
    #: the head lives in another repository: GITHUB_TOKEN is read-only on pull_request events.
    from_fork: bool = False


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _name(value: Any) -> str | None:
    """A login or branch name from the payload: text that can go into a URL, else None (a
    lone surrogate, which JSON can spell, cannot be encoded)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return value


def _pull_request_of(payload: Any) -> PullRequest | None:
    number = _number(_get(payload, "number"))
    if number is None:
        return None
    head = _get(payload, "head", "repo", "full_name")
    base = _get(payload, "base", "repo", "full_name")
    return PullRequest(number, from_fork=bool(head and base and head != base))


def pull_request_from_event(context: RunContext) -> PullRequest | None:
    """The PR named by the payload itself (no API call), for the events that carry one."""
    if context.event_name in ("pull_request", "pull_request_target"):
        return _pull_request_of(_get(context.event, "pull_request"))
    if context.event_name == "workflow_run":
        # These entries may also name PRs of other repositories with the same head commit:
        # keep the one whose base is this repository.
        candidates = _get(context.event, "workflow_run", "pull_requests")
        for candidate in candidates if isinstance(candidates, list) else []:
            number = _number(_get(candidate, "number"))
            base_url = str(_get(candidate, "base", "repo", "url") or "")
            if number and base_url.endswith("/repos/" + context.repository):
                return PullRequest(number)
    return None


def find_pull_request(context: RunContext, api: GitHubApi) -> PullRequest | None:
    """The PR this run is about, or None (a push with no open PR, a schedule, a dispatch).

    - ``pull_request``/``pull_request_target``: from the payload.
    - ``workflow_run``: its ``pull_requests``; GitHub leaves that empty for a fork's PR, so
      then the open PRs whose head is the run's head repository and branch.
    - ``push`` (and a workflow_run of a push): the open PRs that contain the pushed commit
      (``GET /repos/{owner}/{repo}/commits/{sha}/pulls``).
    """
    found = pull_request_from_event(context)
    if found or not context.repository:
        return found
    if context.event_name == "workflow_run":
        run = _get(context.event, "workflow_run") or {}
        head_sha = str(_get(run, "head_sha") or "")
        if _get(run, "event") in ("pull_request", "pull_request_target"):
            owner = _name(_get(run, "head_repository", "owner", "login"))
            branch = _name(_get(run, "head_branch"))
            if owner is None or branch is None:
                return None
            pulls = api.paginate(
                f"/repos/{context.repository}/pulls", {"state": "open", "head": f"{owner}:{branch}"}
            )
            return _choose(list(pulls), head_sha)
        return _pulls_with_commit(context, api, head_sha)
    if context.event_name == "push":
        return _pulls_with_commit(context, api, context.sha or str(_get(context.event, "after")))
    return None


def _pulls_with_commit(context: RunContext, api: GitHubApi, sha: str) -> PullRequest | None:
    if not re.fullmatch(r"[0-9a-f]{7,64}", sha):
        return None
    pulls = api.paginate(f"/repos/{context.repository}/commits/{sha}/pulls")
    return _choose([p for p in pulls if _get(p, "state") == "open"], sha)


def _choose(pulls: list[Any], head_sha: str) -> PullRequest | None:
    """Prefer the PR whose head is exactly this commit; else the first one GitHub lists."""
    exact = [p for p in pulls if _get(p, "head", "sha") == head_sha]
    for payload in exact or pulls:
        found = _pull_request_of(payload)
        if found:
            return found
    return None
