"""A small GitHub REST client on the standard library (no runtime dependency of its own).

It does what a CI step needs and no more: JSON requests with a timeout each; bounded retries
on 5xx, network errors, 429 and secondary rate limits, honouring ``Retry-After`` and
``x-ratelimit-reset`` but never waiting longer than a cap; ``Link: <...>; rel="next"``
pagination. One deadline bounds everything a client does (connecting, sending, every read,
retries and waits): a per-read timeout alone never fires on a server that drips one byte
every half second, so every socket operation is given only the time left. The token travels
only in the ``Authorization`` header, only to the API's own origin (redirects are not
followed, a ``next`` link elsewhere is not followed), and appears in no repr, log line or
exception.
"""

from __future__ import annotations

import email.utils
import functools
import http.client
import io
import json
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gate import __version__, limits
from gate.github.inputs import Secret

#: HTTP methods whose repetition does no harm; a POST is retried only when GitHub says it was
#: not processed (429, rate limits), since a 5xx or a timeout may hide a comment that was made.
IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "PATCH", "DELETE"})
RETRY_STATUSES = frozenset({500, 502, 503, 504})
_NEXT_LINK = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')


class ApiError(Exception):
    """A request that failed for good; the message names method, path, status and GitHub's words."""

    def __init__(self, method: str, path: str, status: int | None, message: str) -> None:
        self.method = method
        self.path = path
        self.status = status
        self.message = message
        where = f"{method} {path}"
        super().__init__(f"{where}: {status if status is not None else 'no response'}: {message}")

    @property
    def not_permitted(self) -> bool:
        """The token may not do this: read-only GITHUB_TOKEN (fork PRs) or missing permissions."""
        forbidden = self.status == 403 and not _is_rate_limit_message(self.message)
        # GitHub answers 404 rather than 403 to a write on a repository the token cannot see.
        return forbidden or (self.status == 404 and self.method != "GET")


@dataclass(frozen=True)
class Response:
    status: int
    headers: Mapping[str, str]
    data: Any

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        for key, value in self.headers.items():
            if key.lower() == lowered:
                return value
        return None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """urllib would resend the Authorization header to wherever a redirect points."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class _DeadlineSocket:
    """A connected socket whose every send and receive must end before the deadline."""

    def __init__(self, sock: socket.socket, remaining: Callable[[], float], timeout: Any) -> None:
        self._sock = sock
        self._remaining = remaining
        self._timeout = timeout if isinstance(timeout, int | float) else None
        # As socket.socket does: close() waits for the readers makefile() handed out.
        self._readers = 0
        self._closed = False

    def _arm(self) -> None:
        left = self._remaining()
        if left <= 0:
            raise TimeoutError("the deadline for GitHub API calls has passed")
        self._sock.settimeout(left if self._timeout is None else min(left, self._timeout))

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        self._arm()
        return self._sock.recv_into(buffer, nbytes, flags)

    def recv(self, size: int, flags: int = 0) -> bytes:
        self._arm()
        return self._sock.recv(size, flags)

    def sendall(self, data: Any, flags: int = 0) -> None:
        self._arm()
        self._sock.sendall(data, flags)

    def makefile(self, mode: str = "r", *args: Any, **kwargs: Any) -> io.BufferedReader:
        # http.client reads responses through makefile("rb"): a reader over this object, so
        # that each of its reads is armed too.
        self._readers += 1
        return io.BufferedReader(socket.SocketIO(self, "rb"))  # type: ignore[arg-type]

    def _decref_socketios(self) -> None:  # SocketIO.close calls it
        self._readers -= 1
        if self._closed and self._readers <= 0:
            self._sock.close()

    def close(self) -> None:
        self._closed = True
        if self._readers <= 0:
            self._sock.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class _DeadlineConnection(http.client.HTTPConnection):
    def __init__(self, *args: Any, remaining: Callable[[], float], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._remaining = remaining

    def connect(self) -> None:
        super().connect()
        self.sock = _DeadlineSocket(self.sock, self._remaining, self.timeout)


class _DeadlineHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, *args: Any, remaining: Callable[[], float], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._remaining = remaining

    def connect(self) -> None:
        super().connect()  # TCP, then TLS: the deadline wraps what http.client talks to
        self.sock = _DeadlineSocket(self.sock, self._remaining, self.timeout)


class _DeadlineHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, remaining: Callable[[], float]) -> None:
        super().__init__()
        self._remaining = remaining

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        connection = functools.partial(_DeadlineConnection, remaining=self._remaining)
        return self.do_open(connection, req)


class _DeadlineHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, remaining: Callable[[], float]) -> None:
        super().__init__()
        self._remaining = remaining

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        connection = functools.partial(_DeadlineHTTPSConnection, remaining=self._remaining)
        return self.do_open(connection, req)


def _is_rate_limit_message(message: str) -> bool:
    return "rate limit" in message.lower()


def _message_of(data: Any, fallback: str) -> str:
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        return str(data["message"])[:300]
    return fallback


class GitHubApi:
    """Requests to one GitHub API origin (``GITHUB_API_URL``) with one token."""

    def __init__(
        self,
        api_url: str,
        token: Secret,
        *,
        timeout: float = 20.0,
        max_attempts: int = 4,
        max_wait: float = 60.0,
        max_total_wait: float = 120.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        log: Callable[[str], None] | None = None,
        deadline: float | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """``deadline``: seconds all calls of this client may take together (retries and waits
        included), from now; default ``EVAL_GATE_API_DEADLINE_SECONDS`` (300)."""
        parsed = urllib.parse.urlsplit(api_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"GITHUB_API_URL {api_url!r} is not an http(s) URL")
        if any(ord(char) < 0x20 or ord(char) == 0x7F for char in token.reveal()):
            # http.client would quote the header, token included, in its error.
            raise ValueError("the token holds a line break or another control character")
        if not token.reveal().isascii():
            # GitHub's tokens are ASCII; a header is Latin-1 at most, and http.client would
            # raise on anything else as the first request is made.
            raise ValueError("the token holds a character that is not ASCII")
        self.api_url = api_url.rstrip("/")
        self._origin = (parsed.scheme, parsed.netloc)
        self._token = token
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.max_wait = max_wait
        self.max_total_wait = max_total_wait
        self._sleep = sleep
        self._clock = clock
        self._log = log or (lambda _line: None)
        self.deadline = deadline if deadline is not None else limits.API_DEADLINE_SECONDS.value()
        self._monotonic = monotonic
        self._ends = monotonic() + self.deadline
        self._opener = urllib.request.build_opener(
            _NoRedirect, _DeadlineHTTPHandler(self.remaining), _DeadlineHTTPSHandler(self.remaining)
        )

    def remaining(self) -> float:
        """Seconds left before the deadline."""
        return self._ends - self._monotonic()

    def _past_deadline(self, method: str, shown: str) -> ApiError:
        return ApiError(
            method,
            shown,
            None,
            f"gave up: the GitHub API calls of this step may take {self.deadline:.0f} s "
            "together (EVAL_GATE_API_DEADLINE_SECONDS)",
        )

    def __repr__(self) -> str:
        return f"GitHubApi({self.api_url!r})"

    # -- one request ------------------------------------------------------------------------

    def url_for(self, path: str, params: Mapping[str, str | int] | None = None) -> str:
        url = path if path.startswith(("http://", "https://")) else self.api_url + path
        if params:
            url += ("&" if "?" in url else "?") + urllib.parse.urlencode(params)
        return url

    def _same_origin(self, url: str) -> bool:
        parsed = urllib.parse.urlsplit(url)
        return (parsed.scheme, parsed.netloc) == self._origin

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Mapping[str, Any] | None = None,
        params: Mapping[str, str | int] | None = None,
    ) -> Response:
        """Send one request, retrying what may be retried; :class:`ApiError` when it fails."""
        url = self.url_for(path, params)
        shown = urllib.parse.urlsplit(url).path
        if not self._same_origin(url):
            raise ApiError(method, shown, None, "refusing to send the token to another origin")
        payload = None if body is None else json.dumps(body).encode("utf-8")
        waited = 0.0
        for attempt in range(1, self.max_attempts + 1):
            last = attempt == self.max_attempts
            if self.remaining() <= 0:
                raise self._past_deadline(method, shown)
            try:
                response = self._send(method, url, payload)
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as error:
                if self.remaining() <= 0:
                    raise self._past_deadline(method, shown) from None
                reason = getattr(error, "reason", error)
                backoff = self._backoff(attempt)
                if (
                    method not in IDEMPOTENT
                    or last
                    or waited + backoff > self.max_total_wait
                    or backoff >= self.remaining()
                ):
                    raise ApiError(method, shown, None, f"network error: {reason}") from None
                waited += self._wait(backoff, f"{method} {shown}: network error: {reason}")
                continue
            if 200 <= response.status < 300:
                return response
            message = _message_of(response.data, f"HTTP {response.status}")
            wait = self._retry_wait(method, response, attempt, message)
            if wait is None or last:
                raise ApiError(method, shown, response.status, message)
            too_long = wait > self.max_wait or waited + wait > self.max_total_wait
            if too_long or wait >= self.remaining():
                raise ApiError(
                    method,
                    shown,
                    response.status,
                    f"{message} (GitHub asks to wait {wait:.0f} s, more than this step waits)",
                )
            waited += self._wait(wait, f"{method} {shown}: {response.status} {message}")
        raise AssertionError("unreachable")  # pragma: no cover

    def _send(self, method: str, url: str, payload: bytes | None) -> Response:
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": f"eval-gate/{__version__}",
        }
        if self._token:
            headers["Authorization"] = f"Bearer {self._token.reveal()}"
        if payload is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=payload, method=method, headers=headers)
        timeout = max(0.001, min(self.timeout, self.remaining()))
        limit = limits.API_RESPONSE_BYTES.value()
        try:
            with self._opener.open(request, timeout=timeout) as raw:
                return Response(raw.status, dict(raw.headers.items()), _json(raw.read(limit + 1)))
        except urllib.error.HTTPError as error:
            with error:
                return Response(
                    error.code, dict(error.headers.items()), _json(error.read(limit + 1))
                )

    # -- retry policy -----------------------------------------------------------------------

    def _retry_wait(
        self, method: str, response: Response, attempt: int, message: str
    ) -> float | None:
        """Seconds to wait before trying again, or None when this failure is final."""
        retry_after = _retry_after_seconds(response.header("Retry-After"), self._clock())
        remaining = response.header("x-ratelimit-remaining")
        reset = response.header("x-ratelimit-reset")
        rate_limited = response.status == 429 or (
            response.status == 403
            and (retry_after is not None or remaining == "0" or _is_rate_limit_message(message))
        )
        if rate_limited:
            # Nothing was processed, so even a POST may be sent again.
            if retry_after is not None:
                return retry_after
            if remaining == "0" and reset and reset.isdigit():
                return max(1.0, int(reset) - self._clock() + 1)
            # A secondary rate limit without headers: GitHub says to wait at least a minute.
            return 60.0
        if response.status in RETRY_STATUSES and method in IDEMPOTENT:
            return retry_after if retry_after is not None else self._backoff(attempt)
        return None

    def _backoff(self, attempt: int) -> float:
        return min(self.max_wait, 2.0 ** (attempt - 1))

    def _wait(self, seconds: float, why: str) -> float:
        self._log(f"GitHub API: {why}; retrying in {seconds:.0f} s")
        self._sleep(seconds)
        return seconds

    # -- pagination -------------------------------------------------------------------------

    def paginate(
        self, path: str, params: Mapping[str, str | int] | None = None, max_pages: int = 100
    ) -> Iterator[Any]:
        """Every item of a list endpoint, following ``Link: <...>; rel="next"`` page by page.

        A list that cannot be read whole raises :class:`ApiError` after its last readable
        page: a sticky comment looked for in part of a conversation would be posted twice.
        """
        url: str | None = self.url_for(path, {"per_page": 100, **(params or {})})
        for _page in range(max_pages):
            if url is None:
                return
            response = self.request("GET", url)
            if not isinstance(response.data, list):
                raise ApiError(
                    "GET", path, response.status,
                    "expected a JSON list, " + limits.API_RESPONSE_BYTES.advice(),
                )  # fmt: skip
            yield from response.data
            url = next_link(response.header("Link"))
            if url is not None and not self._same_origin(url):
                raise ApiError(
                    "GET", path, response.status,
                    "the next page's link points to another origin (not followed): "
                    "the list cannot be read whole",
                )  # fmt: skip
        if url is not None:
            raise ApiError("GET", path, None, f"more than {max_pages} pages: not read whole")


def next_link(link_header: str | None) -> str | None:
    """The ``rel="next"`` URL of a ``Link`` header (RFC 8288), or None on the last page."""
    if not link_header:
        return None
    for part in link_header.split(","):
        match = _NEXT_LINK.search(part)
        if match:
            return match.group(1).strip()
    return None


def _retry_after_seconds(value: str | None, now: float) -> float | None:
    """``Retry-After`` as seconds: delta-seconds or an HTTP date (RFC 9110)."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)


def _json(raw: bytes) -> Any:
    if not raw or len(raw) > limits.API_RESPONSE_BYTES.value():  # empty, or cut off: no JSON
        return None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the stack goes
        return None
