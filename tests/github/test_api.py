"""The REST client against the fake API: headers, pagination, retries, limits, token hygiene."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from email.utils import formatdate

import pytest

from gate.github.api import ApiError, GitHubApi, next_link
from gate.github.inputs import Secret
from tests.github.conftest import AUTH, Sleeps, assert_requests
from tests.github.contract import REPOSITORY, TOKEN
from tests.github.fake_github import FakeGitHub, dripping_api

COMMENTS = f"/repos/{REPOSITORY}/issues/7/comments"


def test_requests_carry_the_documented_headers(api: GitHubApi, fake_github: FakeGitHub) -> None:
    api.request("POST", COMMENTS, body={"body": "hi"})
    sent = fake_github.requests[-1]
    assert sent.method == "POST" and sent.path == COMMENTS
    assert sent.headers["authorization"] == f"Bearer {TOKEN}"
    assert sent.headers["accept"] == "application/vnd.github+json"
    assert sent.headers["x-github-api-version"] == "2022-11-28"
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["user-agent"].startswith("eval-gate/")
    assert sent.body == {"body": "hi"}


def test_pagination_follows_link_next_to_the_last_page(
    api: GitHubApi, fake_github: FakeGitHub
) -> None:
    for i in range(250):
        fake_github.add_comment(7, f"comment {i}", "someone")
    bodies = [c["body"] for c in api.paginate(COMMENTS)]
    assert bodies == [f"comment {i}" for i in range(250)]
    # GitHub's next links name the repository by id; the client follows them as given.
    assert_requests(
        fake_github,
        [
            ("GET", f"{COMMENTS}?per_page=100", None, AUTH),
            ("GET", "/repositories/4242/issues/7/comments?per_page=100&page=2", None, AUTH),
            ("GET", "/repositories/4242/issues/7/comments?per_page=100&page=3", None, AUTH),
        ],
    )


def test_next_link_parsing() -> None:
    header = (
        '<https://api.github.com/repositories/1/issues/7/comments?page=1>; rel="prev", '
        '<https://api.github.com/repositories/1/issues/7/comments?page=3>; rel="next", '
        '<https://api.github.com/repositories/1/issues/7/comments?page=5>; rel="last"'
    )
    assert next_link(header) == "https://api.github.com/repositories/1/issues/7/comments?page=3"
    assert next_link('<https://x/a?page=1>; rel="first"') is None
    assert next_link(None) is None


def test_a_next_link_to_another_origin_is_not_followed(fake_github: FakeGitHub) -> None:
    client = GitHubApi(fake_github.url, Secret(TOKEN))
    fake_github.fail(
        "GET",
        COMMENTS,
        200,
        headers={"Link": '<https://evil.example/steal?page=2>; rel="next"'},
        body=[{"id": 1}],
    )
    pages = client.paginate(COMMENTS)
    assert next(pages) == {"id": 1}
    # The rest of the list is unknown: a caller looking for its sticky comment must not
    # take it as the whole list (and post a second one).
    with pytest.raises(ApiError, match=r"another origin .* cannot be read whole"):
        next(pages)
    assert len(fake_github.requests) == 1


def test_a_list_longer_than_the_page_limit_is_an_error(fake_github: FakeGitHub) -> None:
    client = GitHubApi(fake_github.url, Secret(TOKEN))
    for number in range(1, 4):
        fake_github.add_comment(7, f"comment {number}", "octocat")
    assert [c["body"] for c in client.paginate(COMMENTS, {"per_page": 1}, max_pages=3)] == [
        "comment 1", "comment 2", "comment 3"
    ]  # fmt: skip
    with pytest.raises(ApiError, match="more than 2 pages"):
        list(client.paginate(COMMENTS, {"per_page": 1}, max_pages=2))


def test_5xx_then_success_is_retried_with_backoff(
    api: GitHubApi, fake_github: FakeGitHub, sleeps: Sleeps
) -> None:
    fake_github.fail("GET", COMMENTS, 502, times=2, body={"message": "Server Error"})
    assert api.request("GET", COMMENTS).status == 200
    assert_requests(fake_github, [("GET", COMMENTS, None, AUTH)] * 3)
    assert sleeps == [1.0, 2.0]


def test_5xx_every_time_gives_up_after_the_bounded_attempts(
    api: GitHubApi, fake_github: FakeGitHub, sleeps: Sleeps
) -> None:
    fake_github.fail("GET", COMMENTS, 503, times=10, body={"message": "Unavailable"})
    with pytest.raises(ApiError) as raised:
        api.request("GET", COMMENTS)
    assert raised.value.status == 503
    assert len(fake_github.requests) == api.max_attempts == 4
    assert len(sleeps) == 3


def test_a_post_is_not_resent_after_a_5xx(
    api: GitHubApi, fake_github: FakeGitHub, sleeps: Sleeps
) -> None:
    # A 502 may hide a comment that was made; the sticky-comment layer looks before resending.
    fake_github.fail("POST", COMMENTS, 502)
    with pytest.raises(ApiError):
        api.request("POST", COMMENTS, body={"body": "x"})
    assert_requests(fake_github, [("POST", COMMENTS, {"body": "x"}, AUTH)])
    assert sleeps == []


def test_429_with_retry_after_waits_that_long_even_for_a_post(
    api: GitHubApi, fake_github: FakeGitHub, sleeps: Sleeps
) -> None:
    fake_github.fail(
        "POST", COMMENTS, 429, headers={"Retry-After": "7"}, body={"message": "Too Many Requests"}
    )
    assert api.request("POST", COMMENTS, body={"body": "x"}).status == 201
    assert sleeps == [7.0]
    assert_requests(fake_github, [("POST", COMMENTS, {"body": "x"}, AUTH)] * 2)


def test_retry_after_as_an_http_date(
    api: GitHubApi, fake_github: FakeGitHub, sleeps: Sleeps
) -> None:
    when = formatdate(time.time() + 30, usegmt=True)
    fake_github.fail("GET", COMMENTS, 429, headers={"Retry-After": when})
    api.request("GET", COMMENTS)
    assert len(sleeps) == 1 and 25 <= sleeps[0] <= 31


def test_secondary_rate_limit_403_is_retried(
    api: GitHubApi, fake_github: FakeGitHub, sleeps: Sleeps
) -> None:
    fake_github.fail(
        "POST",
        COMMENTS,
        403,
        headers={"Retry-After": "3"},
        body={"message": "You have exceeded a secondary rate limit. Please wait."},
    )
    api.request("POST", COMMENTS, body={"body": "x"})
    assert sleeps == [3.0]


def test_primary_rate_limit_waits_until_x_ratelimit_reset(fake_github: FakeGitHub) -> None:
    sleeps = Sleeps()
    now = 1_700_000_000.0
    client = GitHubApi(fake_github.url, Secret(TOKEN), sleep=sleeps, clock=lambda: now)
    fake_github.fail(
        "GET",
        COMMENTS,
        403,
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(now) + 20)},
        body={"message": "API rate limit exceeded for installation ID 1."},
    )
    client.request("GET", COMMENTS)
    assert sleeps == [21.0]


def test_a_wait_longer_than_the_cap_gives_up_at_once(
    api: GitHubApi, fake_github: FakeGitHub, sleeps: Sleeps
) -> None:
    fake_github.fail("GET", COMMENTS, 429, headers={"Retry-After": "3600"})
    with pytest.raises(ApiError, match="more than this step waits"):
        api.request("GET", COMMENTS)
    assert sleeps == [] and len(fake_github.requests) == 1


def test_other_4xx_fail_at_once_with_githubs_message(
    api: GitHubApi, fake_github: FakeGitHub, sleeps: Sleeps
) -> None:
    with pytest.raises(ApiError) as raised:
        api.request("GET", f"/repos/{REPOSITORY}/nothing-here")
    assert raised.value.status == 404 and raised.value.message == "Not Found"
    assert sleeps == []


def test_redirects_are_not_followed(api: GitHubApi, fake_github: FakeGitHub) -> None:
    # urllib would resend the Authorization header to the redirect's target.
    fake_github.fail("GET", COMMENTS, 302, headers={"Location": "https://evil.example/"})
    with pytest.raises(ApiError) as raised:
        api.request("GET", COMMENTS)
    assert raised.value.status == 302


def test_the_token_is_only_sent_to_the_api_origin(api: GitHubApi) -> None:
    with pytest.raises(ApiError, match="another origin"):
        api.request("GET", "https://evil.example/repos/x")


@pytest.fixture
def silent_server() -> Iterator[str]:
    """Accepts connections and never answers: every request must time out."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    listener.close()


def test_every_request_has_a_timeout(silent_server: str, sleeps: Sleeps) -> None:
    client = GitHubApi(silent_server, Secret(TOKEN), timeout=0.2, sleep=sleeps)
    started = time.monotonic()
    with pytest.raises(ApiError, match="network error"):
        client.request("GET", "/user")
    assert time.monotonic() - started < 3
    assert len(sleeps) == client.max_attempts - 1


def test_the_token_is_in_no_repr_or_error_message(fake_github: FakeGitHub) -> None:
    client = GitHubApi(fake_github.url, Secret(TOKEN))
    secret = Secret(TOKEN)
    with pytest.raises(ApiError) as raised:
        client.request("GET", f"/repos/{REPOSITORY}/missing")
    texts = [repr(client), repr(secret), str(secret), str(raised.value), repr(raised.value)]
    assert all(TOKEN not in text for text in texts)
    assert f"{secret!r}" == "Secret('***')"


def test_api_url_must_be_http() -> None:
    with pytest.raises(ValueError):
        GitHubApi("file:///etc/passwd", Secret(TOKEN))


@pytest.fixture
def dripping_server() -> Iterator[str]:
    """One byte every 0.2 s and without end (for the test's length): only a deadline stops
    the client."""
    with dripping_api(every=0.2, length=10_000) as url:
        yield url


def test_a_server_that_drips_bytes_is_given_up_at_the_deadline(
    dripping_server: str, sleeps: Sleeps
) -> None:
    client = GitHubApi(dripping_server, Secret(TOKEN), timeout=20, deadline=1.5, sleep=sleeps)
    started = time.monotonic()
    with pytest.raises(ApiError, match="gave up: the GitHub API calls of this step may take 2 s"):
        client.request("GET", "/user")
    assert 1.4 < time.monotonic() - started < 3.5
    # The deadline is the client's, for every later call too: no new attempt is made.
    with pytest.raises(ApiError, match="gave up"):
        client.request("GET", "/user")
    assert sleeps == []


def test_no_wait_is_begun_that_would_end_after_the_deadline(fake_github: FakeGitHub) -> None:
    fake_github.fail("GET", "/user", status=503, times=5, headers={"Retry-After": "30"})
    now = [0.0]
    waited: list[float] = []
    client = GitHubApi(
        fake_github.url, Secret(TOKEN), deadline=20, sleep=waited.append, monotonic=lambda: now[0]
    )
    with pytest.raises(ApiError, match="asks to wait 30 s"):
        client.request("GET", "/user")
    assert waited == []


def test_a_token_with_a_line_break_is_refused_without_being_quoted() -> None:
    with pytest.raises(ValueError) as raised:
        GitHubApi("https://api.github.com", Secret("ghs_abc0123456789\r\nInjected: yes"))
    assert "ghs_abc" not in str(raised.value) and "line break" in str(raised.value)


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000 + b"]" * 100_000,  # deeper than the stack: a RecursionError escaped
        b"[" + b" " * (16 * 1024 * 1024) + b"]",  # over the response limit
        b"<html>not JSON</html>",
    ],
    ids=["nested-100k-deep", "over-16-MiB", "html"],
)
def test_a_list_answer_that_is_no_json_list_is_an_api_error(
    fake_github: FakeGitHub, body: bytes
) -> None:
    """Found by tests/hostile/mutate.py --publish (a fault of 100,000 nested arrays): the
    RecursionError escaped the client, and the comment step logged it as a bug."""
    client = GitHubApi(fake_github.url, Secret(TOKEN))
    fake_github.fail("GET", COMMENTS, 200, body=body)
    with pytest.raises(ApiError, match="200: expected a JSON list, at most 16 MiB"):
        list(client.paginate(COMMENTS))
