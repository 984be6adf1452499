"""A local stand-in for the GitHub REST endpoints the action uses, on 127.0.0.1.

It answers as GitHub documents: status codes (201 on create, 204 on delete, 403 "Resource not
accessible by integration" for read-only tokens and for ``GET /user`` with an installation
token, 404 for unknown things), rate-limit headers on every answer, and ``Link`` pagination
with absolute ``/repositories/{id}/...`` URLs as GitHub sends them. Faults (5xx, 429, secondary
rate limits) can be queued per route. Every request is recorded: method, path, headers, body.

Used by the unit tests as a fixture and by ``tests/image/build_and_run.py`` as a process:
``python tests/github/fake_github.py --port-file F --state-file S --setup SETUP.json``.
Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

INTEGRATION_DENIED = "Resource not accessible by integration"
DOCS = "https://docs.github.com/rest"


@contextmanager
def dripping_api(every: float = 0.5, length: int = 100_000) -> Iterator[str]:
    """A server on loopback that answers every request with an endless-looking header, one
    byte every ``every`` seconds (``length`` bytes): each read gets a byte long before any
    per-read timeout, so only a deadline can stop a client."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    stop = threading.Event()

    def drip(connection: socket.socket) -> None:
        with connection:
            try:
                connection.recv(65536)
                for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * length:
                    if stop.wait(every):
                        return
                    connection.sendall(bytes([byte]))
            except OSError:
                return

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                continue
            threading.Thread(target=drip, args=(connection,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        listener.close()


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up mid-answer (one that stops reading at its size limit) is
    the client's business, not a traceback on stderr."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@dataclass
class Recorded:
    method: str
    path: str  # with the query string, as sent
    headers: dict[str, str]  # lower-cased names
    body: Any

    @property
    def route(self) -> str:
        return urlsplit(self.path).path

    @property
    def query(self) -> dict[str, str]:
        return {k: v[-1] for k, v in parse_qs(urlsplit(self.path).query).items()}

    def as_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "headers": self.headers,
            "body": self.body,
        }


@dataclass
class Fault:
    """An answer to give instead of the normal one, ``times`` times, to requests that match."""

    method: str
    route: str  # regular expression matched against the path without query
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    times: int = 1


@dataclass
class FakeGitHub:
    """State of the fake: one repository, its PRs and their comments."""

    repository: str = "octo-org/agent-evals"
    repository_id: int = 4242
    #: token → login for ``GET /user``; None = an installation token (403), absent = 401.
    users: dict[str, str | None] = field(default_factory=dict)
    #: installation token of a GitHub App → the ``<slug>[bot]`` login its comments carry
    #: (other installation tokens comment as ``github-actions[bot]``).
    app_bots: dict[str, str] = field(default_factory=dict)
    #: tokens that may read but not write (a fork PR's GITHUB_TOKEN).
    read_only: set[str] = field(default_factory=set)
    #: open and closed PRs as GitHub returns them from /pulls.
    pulls: list[dict[str, Any]] = field(default_factory=list)
    #: commit sha → numbers of the PRs that contain it.
    commit_pulls: dict[str, list[int]] = field(default_factory=dict)
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    state_file: str | None = None
    base_url: str = ""
    _next_id: int = 1000
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    # -- set-up helpers ---------------------------------------------------------------------

    def add_pull(
        self,
        number: int,
        *,
        head_sha: str,
        head_ref: str = "feature",
        head_repo: str | None = None,
        state: str = "open",
    ) -> dict[str, Any]:
        head_repo = head_repo or self.repository
        pull = {
            "number": number,
            "state": state,
            "html_url": f"{self.base_url}/{self.repository}/pull/{number}",
            "head": {
                "sha": head_sha,
                "ref": head_ref,
                "label": f"{head_repo.split('/')[0]}:{head_ref}",
                "repo": {"full_name": head_repo},
            },
            "base": {"ref": "main", "repo": {"full_name": self.repository}},
        }
        self.pulls.append(pull)
        self.commit_pulls.setdefault(head_sha, []).append(number)
        return pull

    def add_comment(self, number: int, body: str, login: str) -> dict[str, Any]:
        with self._lock:
            return self._new_comment(number, body, login)

    def clear(self) -> None:
        """Forget every user, pull request, comment, fault and request: a started fake that
        serves run after run (tests/hostile/mutate_publish.py) starts each from nothing."""
        with self._lock:
            self.users, self.app_bots, self.read_only = {}, {}, set()
            self.pulls, self.commit_pulls, self.comments = [], {}, {}
            self.faults, self.requests = [], []

    def fail(self, method: str, route: str, status: int, times: int = 1, **kw: Any) -> None:
        self.faults.append(Fault(method, route, status, times=times, **kw))

    def writes(self) -> list[Recorded]:
        return [r for r in self.requests if r.method in ("POST", "PATCH", "DELETE")]

    # -- server -----------------------------------------------------------------------------

    def start(self) -> FakeGitHub:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                recorded = Recorded(
                    self.command,
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                )
                status, headers, payload = fake.answer(recorded)
                if isinstance(payload, bytes):  # a fault's body that is not JSON
                    data = payload
                else:
                    data = b"" if payload is None else json.dumps(payload).encode("utf-8")
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                if data:
                    self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _handle

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        for pull in self.pulls:  # those added before start() got an empty host
            pull["html_url"] = f"{self.base_url}/{self.repository}/pull/{pull['number']}"
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        return self.base_url

    # -- GitHub's behaviour -----------------------------------------------------------------

    def answer(self, request: Recorded) -> tuple[int, dict[str, str], Any]:
        with self._lock:
            self.requests.append(request)
            result = self._answer(request)
            self._dump()
        status, headers, payload = result
        return status, {**self._rate_headers(), **headers}, payload

    def _rate_headers(self) -> dict[str, str]:
        return {
            "x-ratelimit-limit": "5000",
            "x-ratelimit-remaining": "4999",
            "x-ratelimit-reset": str(int(time.time()) + 3600),
            "x-ratelimit-used": "1",
            "x-ratelimit-resource": "core",
            "x-github-api-version-selected": "2022-11-28",
        }

    def _answer(self, request: Recorded) -> tuple[int, dict[str, str], Any]:
        route = request.route
        for fault in self.faults:
            matches = fault.method == request.method and re.fullmatch(fault.route, route)
            if fault.times > 0 and matches:
                fault.times -= 1
                return fault.status, dict(fault.headers), fault.body
        token = _bearer(request.headers.get("authorization", ""))
        if token is None or token not in self.users:
            return 401, {}, {"message": "Bad credentials", "documentation_url": DOCS}
        repo = re.escape(self.repository)
        issue_comments = re.fullmatch(
            rf"/(?:repos/{repo}|repositories/{self.repository_id})/issues/(\d+)/comments", route
        )
        one_comment = re.fullmatch(rf"/repos/{repo}/issues/comments/(\d+)", route)
        commit_pulls = re.fullmatch(rf"/repos/{repo}/commits/([0-9a-f]+)/pulls", route)
        if route == "/user" and request.method == "GET":
            login = self.users[token]
            if login is None:
                return 403, {}, {"message": INTEGRATION_DENIED, "documentation_url": DOCS}
            return 200, {}, {"login": login, "id": 1, "type": "User"}
        writes = request.method in ("POST", "PATCH", "DELETE", "PUT")
        if writes and token in self.read_only:
            return 403, {}, {"message": INTEGRATION_DENIED, "documentation_url": DOCS}
        if issue_comments:
            number = int(issue_comments.group(1))
            if request.method == "GET":
                return self._page(request, route, self.comments.get(number, []))
            if request.method == "POST":
                text = request.body.get("body") if isinstance(request.body, dict) else None
                if not isinstance(text, str):
                    return 422, {}, {"message": "Invalid request", "documentation_url": DOCS}
                if len(text) > 65536:
                    return 422, {}, {"message": "Body is too long (maximum is 65536 characters)"}
                comment = self._new_comment(number, text, self._login(token))
                return 201, {"Location": comment["url"]}, comment
        if one_comment:
            found = self._find(int(one_comment.group(1)))
            if found is None:
                return 404, {}, {"message": "Not Found", "documentation_url": DOCS}
            number, comment = found
            if request.method == "PATCH":
                if comment["user"]["login"] != self._login(token):
                    return 403, {}, {"message": "Must have admin rights to Repository."}
                comment["body"] = request.body["body"]
                comment["updated_at"] = _now()
                return 200, {}, comment
            if request.method == "DELETE":
                self.comments[number].remove(comment)
                return 204, {}, None
            if request.method == "GET":
                return 200, {}, comment
        if commit_pulls and request.method == "GET":
            numbers = self.commit_pulls.get(commit_pulls.group(1), [])
            return 200, {}, [p for p in self.pulls if p["number"] in numbers]
        if route == f"/repos/{self.repository}/pulls" and request.method == "GET":
            query = request.query
            pulls = [
                p
                for p in self.pulls
                if query.get("state", "open") in ("all", p["state"])
                and query.get("head", p["head"]["label"]) == p["head"]["label"]
            ]
            return self._page(request, route, pulls)
        return 404, {}, {"message": "Not Found", "documentation_url": DOCS}

    def _page(
        self, request: Recorded, route: str, items: list[dict[str, Any]]
    ) -> tuple[int, dict[str, str], Any]:
        query = request.query
        per_page = max(1, min(100, int(query.get("per_page", 30))))
        page = max(1, int(query.get("page", 1)))
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]
        # GitHub's Link URLs name the repository by id, not by owner/name.
        link_route = re.sub(
            rf"^/repos/{re.escape(self.repository)}", f"/repositories/{self.repository_id}", route
        )
        extra = "".join(f"&{k}={v}" for k, v in query.items() if k not in ("per_page", "page"))

        def link(n: int, rel: str) -> str:
            return f'<{self.base_url}{link_route}?per_page={per_page}&page={n}{extra}>; rel="{rel}"'

        links = []
        if page > 1:
            links += [link(page - 1, "prev"), link(1, "first")]
        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        return 200, ({"Link": ", ".join(links)} if links else {}), chunk

    def _login(self, token: str) -> str:
        return self.users.get(token) or self.app_bots.get(token) or "github-actions[bot]"

    def _new_comment(self, number: int, body: str, login: str) -> dict[str, Any]:
        self._next_id += 1
        cid = self._next_id
        comment = {
            "id": cid,
            "node_id": f"IC_{cid}",
            "url": f"{self.base_url}/repos/{self.repository}/issues/comments/{cid}",
            "html_url": f"{self.base_url}/{self.repository}/pull/{number}#issuecomment-{cid}",
            "issue_url": f"{self.base_url}/repos/{self.repository}/issues/{number}",
            "body": body,
            "user": {
                "login": login,
                "id": 41898282 if login.endswith("[bot]") else 1,
                "type": "Bot" if login.endswith("[bot]") else "User",
            },
            "created_at": _now(),
            "updated_at": _now(),
            "author_association": "NONE",
        }
        self.comments.setdefault(number, []).append(comment)
        return comment

    def _find(self, cid: int) -> tuple[int, dict[str, Any]] | None:
        for number, comments in self.comments.items():
            for comment in comments:
                if comment["id"] == cid:
                    return number, comment
        return None

    def _dump(self) -> None:
        if not self.state_file:
            return
        state = {
            "requests": [r.as_dict() for r in self.requests],
            "comments": {str(k): v for k, v in self.comments.items()},
        }
        with open(self.state_file + ".tmp", "w", encoding="utf-8") as handle:
            json.dump(state, handle)
        os.replace(self.state_file + ".tmp", self.state_file)


def _bearer(header: str) -> str | None:
    scheme, _, token = header.partition(" ")
    return token if scheme.lower() in ("bearer", "token") and token else None


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port-file", required=True, help="write the port here once listening")
    parser.add_argument("--state-file", required=True, help="requests and comments, as JSON")
    parser.add_argument(
        "--setup", help="JSON: users, app_bots, read_only, pulls [{number, head_sha}]"
    )
    parser.add_argument("--lifetime", type=float, default=600, help="stop after this many s")
    args = parser.parse_args(argv)
    fake = FakeGitHub(state_file=args.state_file)
    setup: dict[str, Any] = {}
    if args.setup:
        with open(args.setup, encoding="utf-8") as handle:
            setup = json.load(handle)
    fake.users.update(setup.get("users", {}))
    fake.app_bots.update(setup.get("app_bots", {}))
    fake.read_only.update(setup.get("read_only", []))
    fake.start()
    for pull in setup.get("pulls", []):
        fake.add_pull(**pull)
    fake._dump()
    with open(args.port_file + ".tmp", "w", encoding="utf-8") as handle:
        handle.write(fake.url.rsplit(":", 1)[1])
    os.replace(args.port_file + ".tmp", args.port_file)
    time.sleep(args.lifetime)  # bounded: the server stops by itself if nobody stops it
    fake.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
