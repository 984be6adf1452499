"""One redactor for every sink: no token leaves in any form it can be written in.

Every text that leaves the process (stdout, stderr, the job summary, step outputs, annotations,
the PR comment, report files) passes through :func:`redact` at the point where it is written:
``gate.cli`` echoes, :mod:`gate.github.runner` file commands, the comment body and
:func:`gate.fileio.atomic_write`. The secrets are the values of :data:`SECRET_VARIABLES`
(``INPUT_GITHUB_TOKEN``, ``GITHUB_TOKEN``, the runner's own tokens); each is matched raw,
line by line when it holds several lines, URL-encoded, JSON- and repr-escaped (how an error
message quotes a header value), escaped as Markdown and workflow commands escape it, and in
base64 both alone and as ``x-access-token:TOKEN`` (HTTP basic authentication, git's
credential form). Where a text shown was cut to fit (a name in a table cell or a chart
label), what is left of a token in it is masked too (:data:`PART_LENGTH`).

The redactor in force is the one of the environment the code runs for: the action's
entrypoint and ``eval-gate action`` install theirs with :func:`redacting`; elsewhere it is
built from ``os.environ``.
"""

from __future__ import annotations

import base64
import json
import os
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache

from gate.report.escape import md_text, workflow_property

#: environment variables whose values never leave the process.
SECRET_VARIABLES = (
    "INPUT_GITHUB_TOKEN",
    "GITHUB_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
)
#: shorter values are not secrets worth the damage of replacing them everywhere.
MIN_SECRET_LENGTH = 4
MASK = "***"


def _b64(text: str) -> list[str]:
    encoded = base64.b64encode(text.encode("utf-8", "surrogatepass")).decode("ascii")
    return [encoded, encoded.rstrip("=")]


def _values(secret: str) -> set[str]:
    """``secret`` as it is, stripped, and each of its lines stripped."""
    return {secret, secret.strip(), *(line.strip() for line in secret.splitlines())}


def _as_markdown(value: str) -> str:
    """``value`` as a Markdown sink writes it (``ghs\\_...``), uncut."""
    return md_text(value, len(value) * 8)


def _url_encoded(value: str) -> list[str]:
    """``value`` URL-encoded (``%20`` and ``+`` for spaces). A variable's bytes that are not
    UTF-8 reach Python as lone surrogates (U+DC80-U+DCFF), which only ``surrogateescape``
    turns back into those bytes; other lone surrogates only ``surrogatepass`` encodes."""
    encoded = []
    for errors in ("strict", "surrogateescape", "surrogatepass"):
        try:
            encoded += [urllib.parse.quote(value, safe="", errors=errors),
                        urllib.parse.quote_plus(value, errors=errors)]  # fmt: skip
        except UnicodeEncodeError:
            continue
        break
    return encoded


def forms(secret: str) -> set[str]:
    """Every way ``secret`` may be written out, each at least :data:`MIN_SECRET_LENGTH` long."""
    found: set[str] = set()
    for value in _values(secret):
        if len(value) < MIN_SECRET_LENGTH:
            continue
        found.update(
            {
                value,
                *_url_encoded(value),
                json.dumps(value)[1:-1],
                json.dumps(value, ensure_ascii=False)[1:-1],
                repr(value)[1:-1],
                repr(value.encode("utf-8", "surrogatepass"))[2:-1],
                value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"),
                *_b64(value),
                *_b64(f"x-access-token:{value}"),
                # As the sinks escape it: Markdown (ghs\_...), workflow command properties.
                _as_markdown(value),
                workflow_property(value),
            }
        )
    return {form for form in found if len(form) >= MIN_SECRET_LENGTH}


#: the fewest characters of a secret's beginning or end that are masked where a text holds
#: them without the rest (and, up to :data:`MIDDLE_SEARCHED_UP_TO`, any twice as many less
#: one from its middle): a cut name (``md_text``'s 200 characters, a chart label's 32)
#: keeps part of a token it held, which no whole form matches; what is shorter leaves a
#: 40-character token unguessable.
PART_LENGTH = 8
#: secrets up to this long are looked for in part from their middle too (a GitHub token is
#: 40 characters); longer ones (the runner's JWTs, 1,000 and more) only by their beginning
#: and end: each window is a search of the whole text
MIDDLE_SEARCHED_UP_TO = 64


class Redactor:
    """Replaces every form of the secrets it knows with ``***``, and what is left of one
    where a text was cut (:data:`PART_LENGTH`)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        secrets = list(secrets)
        every: set[str] = set()
        for secret in secrets:
            every |= forms(secret)
        # Longest first, so a form that contains another is replaced whole.
        self._forms = sorted(every, key=len, reverse=True)
        # A text is cut where it is shown (a name in a table, a chart label), raw or, in
        # Markdown, escaped: only those forms are looked for in part (each window of a form
        # is a search of the whole text, and a report may be 40 MB).
        shown = {form for secret in secrets for value in _values(secret)
                 for form in (value, _as_markdown(value))}  # fmt: skip
        windows: dict[str, tuple[str, int]] = {}
        for form in sorted(form for form in shown if len(form) > PART_LENGTH):
            last = len(form) - PART_LENGTH
            step = PART_LENGTH if len(form) <= MIDDLE_SEARCHED_UP_TO else len(form)
            for at in sorted({*range(0, last + 1, step), last}):
                windows.setdefault(form[at : at + PART_LENGTH], (form, at))
        self._windows = [(window, form, at) for window, (form, at) in windows.items()]

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Redactor:
        return cls(env[name] for name in SECRET_VARIABLES if env.get(name))

    def __bool__(self) -> bool:
        return bool(self._forms)

    def __call__(self, text: str) -> str:
        for form in self._forms:
            if form in text:
                text = text.replace(form, MASK)
        spans = [span for window in self._windows for span in _parts(text, *window)]
        if not spans:
            return text
        kept, end = [], 0
        for start, stop in sorted(spans):
            if start > end:
                kept += [text[end:start], MASK]
            elif not kept:
                kept.append(MASK)
            end = max(end, stop)
        return "".join(kept) + text[end:]


def _parts(text: str, window: str, form: str, at: int) -> Iterator[tuple[int, int]]:
    """Where ``text`` holds ``window``, the part of ``form`` at ``at``, each as far as it
    goes on either side as ``form`` (start, stop). The windows of a form (every
    :data:`PART_LENGTH` characters, and its last ones) find its beginning or end of that many
    characters, and any ``2 * PART_LENGTH - 1`` in a row."""
    found = text.find(window)
    while found != -1:
        start, left = found, at
        while start > 0 and left > 0 and text[start - 1] == form[left - 1]:
            start, left = start - 1, left - 1
        stop, right = found + PART_LENGTH, at + PART_LENGTH
        while stop < len(text) and right < len(form) and text[stop] == form[right]:
            stop, right = stop + 1, right + 1
        yield start, stop
        found = text.find(window, stop)


_ACTIVE: ContextVar[Redactor | None] = ContextVar("eval_gate_redactor", default=None)


@lru_cache(maxsize=4)
def _of(secrets: tuple[str, ...]) -> Redactor:
    return Redactor(secrets)


def current() -> Redactor:
    """The redactor in force: the one installed by :func:`redacting`, else ``os.environ``'s."""
    active = _ACTIVE.get()
    if active is not None:
        return active
    return _of(tuple(os.environ[name] for name in SECRET_VARIABLES if os.environ.get(name)))


def redact(text: str) -> str:
    """``text`` with every form of every secret replaced by ``***``."""
    return current()(text)


@contextmanager
def redacting(env: Mapping[str, str]) -> Iterator[Redactor]:
    """Inside this block every sink redacts the secrets of ``env``."""
    redactor = Redactor.from_env(env)
    token = _ACTIVE.set(redactor)
    try:
        yield redactor
    finally:
        _ACTIVE.reset(token)
