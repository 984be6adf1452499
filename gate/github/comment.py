"""The sticky pull request comment: one per (PR, comment id), created once, then kept current.

The comment is found again by a hidden marker on its first line *and* by its author being
the token's own identity, so nobody else's comment (a copied marker) is ever taken over. The
marker carries a digest of the results, so ``on-change`` can leave an unchanged comment alone.

The identity is ``GET /user``'s login for a user token. An installation token (the workflow's
``GITHUB_TOKEN``, or a GitHub App's) gets 403 there, and comments as ``github-actions[bot]``
or as ``<app-slug>[bot]``, which the token cannot learn: for it, a comment is ours when its
author is a bot (``user.type == "Bot"``), still only with our marker and comment id. People
cannot be bots, so no person's comment with a copied marker is ever taken over.

Modes: ``off``; ``always`` (create, then update in place); ``on-failure`` (create only when a
gate fails, but keep an existing comment current, so a fixed PR does not keep showing a
failure); ``on-change`` (create, then update only when the results changed); ``recreate``
(post a new comment at the bottom of the conversation, then delete the old one, so a post
that fails leaves the old comment in place).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from gate.github.api import ApiError, GitHubApi
from gate.github.event import PullRequest
from gate.github.inputs import CommentMode
from gate.github.trim import trim_markdown, utf16_units
from gate.redact import redact
from gate.report.escape import html_comment_text, md_text
from gate.report.markdown import fold_order

#: GitHub refuses a comment body longer than this.
COMMENT_LIMIT = 65_536
#: ``user.type`` of a comment written with an installation token (Actions or a GitHub App).
BOT_TYPE = "Bot"
_MARKER = re.compile(r"\A<!-- eval-gate:sticky id=([A-Za-z0-9._-]+) digest=([0-9a-f]{16}) -->")

Action = Literal["created", "updated", "recreated", "unchanged", "skipped", "failed"]


@dataclass(frozen=True)
class CommentBody:
    text: str
    digest: str


@dataclass(frozen=True)
class CommentResult:
    action: Action
    url: str | None = None
    #: one plain line for the log.
    detail: str = ""
    #: Markdown for the job summary when a person should act (already safe to render).
    notice: str | None = None


def results_digest(summary_markdown: str) -> str:
    return hashlib.sha256(summary_markdown.encode("utf-8")).hexdigest()[:16]


def marker(comment_id: str, digest: str) -> str:
    return f"<!-- eval-gate:sticky id={html_comment_text(comment_id)} digest={digest} -->"


def parse_marker(body: str) -> tuple[str, str] | None:
    """(comment id, digest) when ``body`` starts with our marker."""
    match = _MARKER.match(body)
    return (match.group(1), match.group(2)) if match else None


def build_comment_body(summary_markdown: str, comment_id: str, run_url: str | None) -> CommentBody:
    """Marker, the job summary (redacted, trimmed to fit 65,536 characters) and a footer
    linking the run."""
    summary_markdown = redact(summary_markdown)
    digest = results_digest(summary_markdown)
    head = marker(comment_id, digest) + "\n"
    links = [f"[workflow run]({run_url})"] if run_url else []
    if comment_id != "default":
        links.append(f"comment id `{comment_id}`")
    footer = "\n<sub>" + " · ".join(["eval-gate", *links]) + "</sub>\n"
    full_summary = f"[full summary in the workflow run]({run_url})" if run_url else "job summary"

    def notice(lines_left_out: int) -> str:
        return (
            f"> [!NOTE]\n> This comment was trimmed to GitHub's 65,536-character limit: "
            f"{lines_left_out:,} more {'line is' if lines_left_out == 1 else 'lines are'}"
            f" in the {full_summary}."
        )

    left_out = (
        f"_Left out of this comment for GitHub's 65,536-character limit: see the {full_summary}._"
    )
    budget = COMMENT_LIMIT - utf16_units(head) - utf16_units(footer) - 1
    content = trim_markdown(
        summary_markdown.rstrip("\n") + "\n", budget, notice, utf16_units, left_out, fold_order
    )
    return CommentBody(head + content + footer, digest)


# -- publishing -------------------------------------------------------------------------------


def token_login(api: GitHubApi) -> str | None:
    """Whom the token comments as: ``GET /user``'s login, or None for an installation token.

    ``GET /user`` answers 403 to every installation token: the workflow's ``GITHUB_TOKEN``
    (comments as ``github-actions[bot]``) and a GitHub App's (comments as ``<slug>[bot]``).
    None then means "a bot": see :func:`is_ours`.
    """
    try:
        data = api.request("GET", "/user").data
    except ApiError as error:
        if error.status == 403:
            return None
        raise
    login = data.get("login") if isinstance(data, dict) else None
    return login if isinstance(login, str) and login else None


def is_ours(comment: Any, login: str | None, comment_id: str) -> bool:
    """Our marker with this comment id, written by ``login`` (by a bot when login is None)."""
    if not isinstance(comment, dict):
        return False
    user = comment.get("user")
    if not isinstance(user, dict):
        return False
    # An installation token cannot learn its bot's login: any bot, never a person.
    authored = user.get("type") == BOT_TYPE if login is None else user.get("login") == login
    found = parse_marker(str(comment.get("body") or ""))
    return authored and found is not None and found[0] == html_comment_text(comment_id)


def find_comments(
    api: GitHubApi, repository: str, number: int, login: str | None, comment_id: str
) -> list[dict[str, Any]]:
    """Our comments with this id on the PR, oldest first (every page of a long conversation)."""
    comments = api.paginate(f"/repos/{repository}/issues/{number}/comments")
    return [c for c in comments if is_ours(c, login, comment_id)]


def publish_comment(
    api: GitHubApi,
    repository: str,
    pull: PullRequest,
    body: CommentBody,
    *,
    mode: CommentMode,
    comment_id: str,
    failed: bool,
) -> CommentResult:
    """Create, update, recreate or leave the sticky comment as ``mode`` says.

    Raises :class:`ApiError`; the caller turns it into a notice (see :func:`failure_result`).
    """
    if mode == "off":
        return CommentResult("skipped", detail="comment: off")
    login = token_login(api)
    comments_path = f"/repos/{repository}/issues/{pull.number}/comments"

    def find() -> list[dict[str, Any]]:
        return find_comments(api, repository, pull.number, login, comment_id)

    existing = find()
    if mode == "recreate":
        return _recreate(api, repository, comments_path, body.text, existing, find)
    if not existing:
        if mode == "on-failure" and not failed:
            return CommentResult(
                "skipped", detail="comment: on-failure, every gate passed, no comment to update"
            )
        created = _create(api, comments_path, body.text, find)
        return CommentResult("created", _url(created))
    current = existing[0]
    previous = parse_marker(str(current.get("body") or ""))
    unchanged_results = previous is not None and previous[1] == body.digest
    if current.get("body") == body.text or (mode == "on-change" and unchanged_results):
        return CommentResult("unchanged", _url(current), detail="comment: results unchanged")
    updated = _update(api, repository, current, body.text)
    return CommentResult("updated", _url(updated))


def _url(comment: Any) -> str | None:
    url = comment.get("html_url") if isinstance(comment, dict) else None
    return url if isinstance(url, str) else None


def _create(
    api: GitHubApi, path: str, text: str, find: Callable[[], list[dict[str, Any]]]
) -> dict[str, Any]:
    """POST the comment. A 5xx or a timeout may hide a comment that was made: look before
    posting again, so a retry never leaves two."""
    for attempt in (1, 2, 3):
        try:
            data = api.request("POST", path, body={"body": text}).data
            return data if isinstance(data, dict) else {}
        except ApiError as error:
            ambiguous = error.status is None or error.status >= 500
            if not ambiguous or attempt == 3:
                raise
        made = find()
        if made:
            return made[0]
    raise AssertionError("unreachable")  # pragma: no cover


def _recreate(
    api: GitHubApi,
    repository: str,
    comments_path: str,
    text: str,
    existing: list[dict[str, Any]],
    find: Callable[[], list[dict[str, Any]]],
) -> CommentResult:
    """Post the new comment first, then delete the old ones: a POST that fails (and raises)
    leaves the old comment where it was, so the PR never ends up with none."""
    old_ids = {c.get("id") for c in existing}

    def find_new() -> list[dict[str, Any]]:
        # After an ambiguous failure, only a comment that was not there before is the new one.
        return [c for c in find() if c.get("id") not in old_ids]

    created = _create(api, comments_path, text, find_new)
    if not existing:
        return CommentResult("created", _url(created))
    left: list[str] = []
    for old in existing:
        try:
            _delete(api, repository, old)
        except ApiError as error:
            left.append(f"{old.get('id')} ({error})")
    detail = f"comment: posted anew, but could not delete {', '.join(left)}" if left else ""
    return CommentResult("recreated", _url(created), detail=detail)


def _update(api: GitHubApi, repository: str, comment: dict[str, Any], text: str) -> dict[str, Any]:
    data = api.request(
        "PATCH", f"/repos/{repository}/issues/comments/{int(comment['id'])}", body={"body": text}
    ).data
    return data if isinstance(data, dict) else comment


def _delete(api: GitHubApi, repository: str, comment: dict[str, Any]) -> None:
    try:
        api.request("DELETE", f"/repos/{repository}/issues/comments/{int(comment['id'])}")
    except ApiError as error:
        if error.status != 404:  # already gone (a retry after a lost answer)
            raise


def failure_result(error: ApiError, pull: PullRequest) -> CommentResult:
    """A comment that cannot be posted becomes a notice in the summary, never a failed step."""
    said = md_text(error.message, 200)
    if error.not_permitted:
        notice = (
            "> [!NOTE]\n"
            f"> eval-gate could not comment on pull request {pull.number}: the token may not "
            f"write to it (GitHub said: {said}). The verdict above is not affected.\n>\n"
            "> To get the comment, give the job `permissions: pull-requests: write`. "
            "A pull request from a fork always gets a read-only `GITHUB_TOKEN`: gate it in a "
            "second workflow triggered by `workflow_run`, which may comment "
            "(see *Pull requests from forks* in the eval-gate action docs)."
        )
        return CommentResult("failed", detail=f"comment not permitted: {error}", notice=notice)
    notice = (
        "> [!WARNING]\n"
        f"> eval-gate could not post its pull request comment ({md_text(str(error), 300)}). "
        "The verdict above is not affected."
    )
    return CommentResult("failed", detail=f"comment failed: {error}", notice=notice)
