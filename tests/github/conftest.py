"""Fixtures: the fake GitHub API on a random loopback port, and a client whose sleeps are fake."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from gate.github.api import GitHubApi
from gate.github.inputs import Secret
from tests.github.contract import REPOSITORY, TOKEN
from tests.github.fake_github import FakeGitHub

USER_TOKEN = "ghp_personalAccessToken0123456789"
#: a GitHub App's installation token: ``GET /user`` → 403, comments as APP_BOT.
APP_TOKEN = "ghs_appInstallationToken9876543210fedcba"
APP_BOT = "eval-gate-app[bot]"
#: the Authorization header every request with TOKEN must carry.
AUTH = f"Bearer {TOKEN}"

#: one request as the fake received it: method, path with query, JSON body, Authorization.
Call = tuple[str, str, Any, "str | None"]


def assert_requests(fake: FakeGitHub, expected: Sequence[Call]) -> None:
    """The fake received exactly these requests, in this order: method, path (with its query
    string), JSON body (None when there was none) and Authorization header."""
    received = [(r.method, r.path, r.body, r.headers.get("authorization")) for r in fake.requests]
    assert received == list(expected)


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    """A started fake: TOKEN is an installation token (``GET /user`` → 403, comments as the
    Actions bot); USER_TOKEN belongs to the user ``octocat``; APP_TOKEN is a GitHub App's
    installation token (403 too, comments as APP_BOT)."""
    fake = FakeGitHub(
        repository=REPOSITORY,
        users={TOKEN: None, USER_TOKEN: "octocat", APP_TOKEN: None},
        app_bots={APP_TOKEN: APP_BOT},
    )
    fake.start()
    yield fake
    fake.stop()


class Sleeps(list[float]):
    """Records the waits a client asked for instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def api(fake_github: FakeGitHub, sleeps: Sleeps) -> GitHubApi:
    return GitHubApi(fake_github.url, Secret(TOKEN), timeout=5, sleep=sleeps)
