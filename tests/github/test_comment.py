"""The sticky comment against the fake API: the exact requests for each mode and each failure."""

from __future__ import annotations

import pytest

from gate.github.api import ApiError, GitHubApi
from gate.github.comment import (
    COMMENT_LIMIT,
    CommentBody,
    build_comment_body,
    failure_result,
    parse_marker,
    publish_comment,
)
from gate.github.event import PullRequest
from gate.github.inputs import CommentMode, Secret
from gate.github.trim import utf16_units
from tests.github.conftest import (
    APP_BOT,
    APP_TOKEN,
    AUTH,
    USER_TOKEN,
    Sleeps,
    assert_requests,
)
from tests.github.contract import REPOSITORY, TOKEN
from tests.github.fake_github import INTEGRATION_DENIED, FakeGitHub

PR = PullRequest(7)
COMMENTS = f"/repos/{REPOSITORY}/issues/7/comments"
LIST = f"{COMMENTS}?per_page=100"
BOT = "github-actions[bot]"


def one(comment_id: int) -> str:
    return f"/repos/{REPOSITORY}/issues/comments/{comment_id}"


RUN_URL = "https://github.com/octo-org/agent-evals/actions/runs/99"


def body(summary: str = "## ❌ eval-gate: FAIL\n", comment_id: str = "default") -> CommentBody:
    return build_comment_body(summary, comment_id, RUN_URL)


def publish(
    api: GitHubApi,
    text: CommentBody,
    mode: CommentMode = "always",
    *,
    failed: bool = True,
    comment_id: str = "default",
) -> str:
    result = publish_comment(
        api, REPOSITORY, PR, text, mode=mode, comment_id=comment_id, failed=failed
    )
    return result.action


def test_first_run_creates_the_comment(api: GitHubApi, fake_github: FakeGitHub) -> None:
    text = body()
    assert publish(api, text) == "created"
    assert_requests(
        fake_github,
        [
            # 403 for an installation token: any bot may be us (see the App token test)
            ("GET", "/user", None, AUTH),
            ("GET", LIST, None, AUTH),
            ("POST", COMMENTS, {"body": text.text}, AUTH),
        ],
    )
    assert fake_github.comments[7][0]["user"]["login"] == BOT
    assert fake_github.comments[7][0]["body"] == text.text


def test_next_run_updates_it_in_place(api: GitHubApi, fake_github: FakeGitHub) -> None:
    publish(api, body("## ❌ FAIL\n"))
    fake_github.requests.clear()
    newer = body("## ✅ PASS\n")
    assert publish(api, newer) == "updated"
    comment_id = fake_github.comments[7][0]["id"]
    assert_requests(
        fake_github,
        [
            ("GET", "/user", None, AUTH),
            ("GET", LIST, None, AUTH),
            ("PATCH", one(comment_id), {"body": newer.text}, AUTH),
        ],
    )
    assert [c["body"] for c in fake_github.comments[7]] == [newer.text]


def test_an_identical_body_is_not_written_again(api: GitHubApi, fake_github: FakeGitHub) -> None:
    publish(api, body())
    assert publish(api, body()) == "unchanged"
    assert [r.method for r in fake_github.writes()] == ["POST"]


def test_recreate_posts_anew_then_deletes_the_old(api: GitHubApi, fake_github: FakeGitHub) -> None:
    publish(api, body("one\n"))
    old_id = fake_github.comments[7][0]["id"]
    fake_github.requests.clear()
    newer = body("two\n")
    assert publish(api, newer, "recreate") == "recreated"
    assert_requests(
        fake_github,
        [
            ("GET", "/user", None, AUTH),
            ("GET", LIST, None, AUTH),
            ("POST", COMMENTS, {"body": newer.text}, AUTH),
            ("DELETE", one(old_id), None, AUTH),
        ],
    )
    assert [(c["id"] != old_id, c["body"]) for c in fake_github.comments[7]] == [(True, newer.text)]


def test_recreate_keeps_the_old_comment_when_the_post_fails(
    api: GitHubApi, fake_github: FakeGitHub
) -> None:
    old = body("one\n")
    publish(api, old)
    old_id = fake_github.comments[7][0]["id"]
    fake_github.requests.clear()
    fake_github.fail("POST", COMMENTS, 422, body={"message": "Validation Failed"})
    newer = body("two\n")
    with pytest.raises(ApiError) as raised:
        publish(api, newer, "recreate")
    assert raised.value.status == 422
    assert_requests(
        fake_github,
        [
            ("GET", "/user", None, AUTH),
            ("GET", LIST, None, AUTH),
            ("POST", COMMENTS, {"body": newer.text}, AUTH),
        ],
    )
    assert [(c["id"], c["body"]) for c in fake_github.comments[7]] == [(old_id, old.text)]


def test_recreate_after_a_lost_post_does_not_mistake_the_old_comment_for_the_new(
    api: GitHubApi, fake_github: FakeGitHub
) -> None:
    publish(api, body("one\n"))
    old_id = fake_github.comments[7][0]["id"]
    fake_github.requests.clear()
    fake_github.fail("POST", COMMENTS, 502, body={"message": "Server Error"})
    newer = body("two\n")
    assert publish(api, newer, "recreate") == "recreated"
    assert_requests(
        fake_github,
        [
            ("GET", "/user", None, AUTH),
            ("GET", LIST, None, AUTH),
            ("POST", COMMENTS, {"body": newer.text}, AUTH),  # 502: was it made?
            ("GET", LIST, None, AUTH),  # only the old one is there: post again
            ("POST", COMMENTS, {"body": newer.text}, AUTH),
            ("DELETE", one(old_id), None, AUTH),
        ],
    )
    assert [c["body"] for c in fake_github.comments[7]] == [newer.text]


def test_the_comment_is_found_on_a_later_page(api: GitHubApi, fake_github: FakeGitHub) -> None:
    for i in range(150):
        fake_github.add_comment(7, f"chatter {i}", "someone")
    publish(api, body("first\n"))
    for i in range(120):
        fake_github.add_comment(7, f"more chatter {i}", "someone")
    ours = fake_github.comments[7][150]
    assert ours["user"]["login"] == BOT
    fake_github.requests.clear()
    newer = body("second\n")
    assert publish(api, newer) == "updated"
    # GitHub's next links name the repository by its id; ours is on page 2 of 3.
    by_id = "/repositories/4242/issues/7/comments?per_page=100"
    assert_requests(
        fake_github,
        [
            ("GET", "/user", None, AUTH),
            ("GET", LIST, None, AUTH),
            ("GET", f"{by_id}&page=2", None, AUTH),
            ("GET", f"{by_id}&page=3", None, AUTH),
            ("PATCH", one(ours["id"]), {"body": newer.text}, AUTH),
        ],
    )
    assert ours["body"] == newer.text


def test_a_conversation_that_cannot_be_listed_whole_gets_no_second_comment(
    api: GitHubApi, fake_github: FakeGitHub
) -> None:
    # Found by tests/hostile/mutate.py --publish: page 1 (empty here) links its next page on
    # another origin, which is not followed; the sticky comment may be on it, so the action
    # must not take page 1 for the whole conversation and post a second one.
    fake_github.add_comment(7, body("earlier\n").text, BOT)
    fake_github.fail(
        "GET", COMMENTS, 200, headers={"Link": '<https://elsewhere.example/x?page=2>; rel="next"'},
        body=[],
    )  # fmt: skip
    with pytest.raises(ApiError, match="another origin"):
        publish(api, body("now\n"))
    assert [c["body"] for c in fake_github.comments[7]] == [body("earlier\n").text]
    assert [r.method for r in fake_github.writes()] == []


def test_someone_elses_comment_with_our_marker_is_never_taken_over(
    api: GitHubApi, fake_github: FakeGitHub
) -> None:
    forged = body("forged by a user\n")
    fake_github.add_comment(7, forged.text, "mallory")
    assert publish(api, body("real\n")) == "created"
    assert fake_github.comments[7][0]["body"] == forged.text


def test_a_user_token_is_matched_by_its_login(fake_github: FakeGitHub, sleeps: Sleeps) -> None:
    client = GitHubApi(fake_github.url, Secret(USER_TOKEN), sleep=sleeps)
    publish(client, body("one\n"))
    assert fake_github.comments[7][0]["user"]["login"] == "octocat"
    assert publish(client, body("two\n")) == "updated"


def test_a_github_app_token_finds_its_own_bot_comment(
    fake_github: FakeGitHub, sleeps: Sleeps
) -> None:
    # An App's installation token gets 403 from GET /user, like GITHUB_TOKEN, but comments
    # as "<slug>[bot]": its comment is found by the bot author type, never a person's.
    client = GitHubApi(fake_github.url, Secret(APP_TOKEN), sleep=sleeps)
    app_auth = f"Bearer {APP_TOKEN}"
    forged = body("forged by a user\n")
    fake_github.add_comment(7, forged.text, "mallory")
    first = body("one\n")
    assert publish(client, first) == "created"
    mine = fake_github.comments[7][1]
    assert (mine["user"]["login"], mine["user"]["type"]) == (APP_BOT, "Bot")
    fake_github.requests.clear()
    newer = body("two\n")
    assert publish(client, newer) == "updated"
    assert_requests(
        fake_github,
        [
            ("GET", "/user", None, app_auth),
            ("GET", LIST, None, app_auth),
            ("PATCH", one(mine["id"]), {"body": newer.text}, app_auth),
        ],
    )
    assert [c["body"] for c in fake_github.comments[7]] == [forged.text, newer.text]


def test_a_bot_comment_needs_our_marker_and_comment_id(
    fake_github: FakeGitHub, sleeps: Sleeps
) -> None:
    client = GitHubApi(fake_github.url, Secret(APP_TOKEN), sleep=sleeps)
    other_id = body("e2e\n", "e2e").text
    fake_github.add_comment(7, other_id, APP_BOT)
    fake_github.add_comment(7, "plain bot chatter", "dependabot[bot]")
    assert publish(client, body("unit\n")) == "created"
    assert [c["body"] for c in fake_github.comments[7]][:2] == [other_id, "plain bot chatter"]
    assert len(fake_github.comments[7]) == 3


def test_comment_ids_keep_several_gates_apart(api: GitHubApi, fake_github: FakeGitHub) -> None:
    publish(api, body("unit\n", "unit-evals"), comment_id="unit-evals")
    publish(api, body("e2e\n", "e2e"), comment_id="e2e")
    publish(api, body("unit again\n", "unit-evals"), comment_id="unit-evals")
    assert len(fake_github.comments[7]) == 2
    ids = [parse_marker(c["body"]) for c in fake_github.comments[7]]
    assert [i[0] for i in ids if i] == ["unit-evals", "e2e"]


def test_on_failure_creates_only_when_a_gate_fails(api: GitHubApi, fake_github: FakeGitHub) -> None:
    assert publish(api, body("pass\n"), "on-failure", failed=False) == "skipped"
    assert fake_github.writes() == []
    assert publish(api, body("fail\n"), "on-failure", failed=True) == "created"
    # Once there is a comment, a pass updates it: a fixed PR must not keep showing a failure.
    assert publish(api, body("pass\n"), "on-failure", failed=False) == "updated"


def test_on_change_leaves_unchanged_results_alone(fake_github: FakeGitHub, api: GitHubApi) -> None:
    publish(api, build_comment_body("same\n", "default", RUN_URL + "1"), "on-change")
    later_run = build_comment_body("same\n", "default", RUN_URL + "2")
    assert publish(api, later_run, "on-change") == "unchanged"
    assert publish(api, build_comment_body("new\n", "default", RUN_URL), "on-change") == "updated"
    assert [r.method for r in fake_github.writes()] == ["POST", "PATCH"]


def test_off_makes_no_request(api: GitHubApi, fake_github: FakeGitHub) -> None:
    assert publish(api, body(), "off") == "skipped"
    assert fake_github.requests == []


def test_a_read_only_token_gets_403_and_a_notice(fake_github: FakeGitHub, api: GitHubApi) -> None:
    fake_github.read_only.add(TOKEN)
    text = body()
    with pytest.raises(ApiError) as raised:
        publish(api, text)
    assert raised.value.status == 403 and raised.value.not_permitted
    # A fork PR's token may read: the comments are listed, the POST is refused, not retried.
    assert_requests(
        fake_github,
        [
            ("GET", "/user", None, AUTH),
            ("GET", LIST, None, AUTH),
            ("POST", COMMENTS, {"body": text.text}, AUTH),
        ],
    )
    result = failure_result(raised.value, PR)
    assert result.action == "failed" and result.notice is not None
    assert "pull-requests: write" in result.notice and "workflow_run" in result.notice
    assert INTEGRATION_DENIED.split()[0] in result.notice
    assert fake_github.comments.get(7, []) == []


def test_a_post_lost_in_a_5xx_is_looked_for_before_posting_again(
    api: GitHubApi, fake_github: FakeGitHub, sleeps: Sleeps
) -> None:
    fake_github.fail("POST", COMMENTS, 502, body={"message": "Server Error"})
    text = body()
    assert publish(api, text) == "created"
    assert_requests(
        fake_github,
        [
            ("GET", "/user", None, AUTH),
            ("GET", LIST, None, AUTH),
            ("POST", COMMENTS, {"body": text.text}, AUTH),  # 502
            ("GET", LIST, None, AUTH),  # not made after all
            ("POST", COMMENTS, {"body": text.text}, AUTH),
        ],
    )
    assert [c["body"] for c in fake_github.comments[7]] == [text.text]
    assert sleeps == []


def test_a_5xx_listing_comments_is_retried_then_the_comment_posted(
    api: GitHubApi, fake_github: FakeGitHub, sleeps: Sleeps
) -> None:
    fake_github.fail("GET", COMMENTS, 503, body={"message": "Service Unavailable"})
    text = body()
    assert publish(api, text) == "created"
    assert_requests(
        fake_github,
        [
            ("GET", "/user", None, AUTH),
            ("GET", LIST, None, AUTH),  # 503
            ("GET", LIST, None, AUTH),
            ("POST", COMMENTS, {"body": text.text}, AUTH),
        ],
    )
    assert sleeps == [1.0]


def test_429_with_retry_after_waits_then_posts_once(
    api: GitHubApi, fake_github: FakeGitHub, sleeps: Sleeps
) -> None:
    fake_github.fail(
        "POST",
        COMMENTS,
        429,
        headers={"Retry-After": "7"},
        body={"message": "Too Many Requests"},
    )
    text = body()
    assert publish(api, text) == "created"
    assert_requests(
        fake_github,
        [
            ("GET", "/user", None, AUTH),
            ("GET", LIST, None, AUTH),
            ("POST", COMMENTS, {"body": text.text}, AUTH),  # 429: nothing was processed
            ("POST", COMMENTS, {"body": text.text}, AUTH),
        ],
    )
    assert sleeps == [7.0]
    assert len(fake_github.comments[7]) == 1


def test_a_body_over_the_limit_is_trimmed_with_a_link_to_the_run() -> None:
    rows = "".join(f"| stimulus {i} | {'x' * 60} |\n" for i in range(3000))
    summary = "## ❌ eval-gate: FAIL\n\n| Stimulus | Note |\n| --- | --- |\n" + rows
    text = build_comment_body(summary, "default", RUN_URL).text
    assert utf16_units(text) <= COMMENT_LIMIT
    assert f"[full summary in the workflow run]({RUN_URL})" in text
    table_lines = [line for line in text.splitlines() if line.startswith("|")]
    assert all(line.endswith(" |") and line.count("|") == 3 for line in table_lines)
    assert text.startswith("<!-- eval-gate:sticky id=default digest=")
    assert text.rstrip().endswith("</sub>")
