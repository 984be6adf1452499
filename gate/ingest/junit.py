"""JUnit XML from repeated test runs: every attempt of a test is a trial.

A stimulus is ``classname::name`` with the repeat suffix removed. Repeats are
recognised from how the usual plugins write them:

* pytest-repeat (``--count N``): ``test_x[2-3]``, parametrized ``test_p[a-2-3]``,
  1-based ``[i-N]`` last in the brackets; taken as repeats only when every index
  1..N of the test is present, so a parameter id that merely looks alike stays.
* pytest-flakefinder (``--flake-runs N``): ``test_x[0]``, parametrized
  ``test_p[0-a]``; a 0-based prefix looks exactly like an integer parameter, so
  it is read as a repeat only with ``junit_flakefinder`` (``--junit-flakefinder``).
* pytest-rerunfailures (``--reruns N``): the same testcase written again inside
  one ``<testsuite>``; earlier copies carry no result element and look passed,
  but a rerun only follows a failure, so every copy but the last is a failed
  attempt. (The same test in two different ``<testsuite>`` elements, as in a
  merged report, is read as separate attempts, each with its own result.)
* Maven Surefire: ``<flakyFailure>``/``<flakyError>`` children are failed
  attempts before the final pass; ``<rerunFailure>``/``<rerunError>`` are
  failed reruns after the first failure.

``<error>`` is status error, ``<failure>`` a failed trial, ``<skipped>``
skipped; no result element is a pass. Trials of a stimulus are numbered by
repeat index, then in the order attempts were written.
"""

from __future__ import annotations

import math
import re
import xml.parsers.expat
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from gate import limits
from gate.errors import InputError, Provenance
from gate.ingest import IngestOptions, Record
from gate.ingest.values import warn
from gate.reading import open_input, too_large
from gate.trials import DEFAULT_SUITE, Status, Trial

_REPEAT = re.compile(r"^(?P<base>.+)\[(?:(?P<params>.*)-)?(?P<index>\d+)-(?P<count>\d+)\]$")
_FLAKEFINDER = re.compile(r"^(?P<base>.+)\[(?P<index>\d+)(?:-(?P<params>.*))?\]$")
_RESULTS = ("error", "failure", "skipped")
_FLAKY = ("flakyFailure", "flakyError")
_RERUN = ("rerunFailure", "rerunError")
_BLOCK_BYTES = 8 * 1024 * 1024


@dataclass
class _Child:
    tag: str
    attributes: dict[str, str]
    text: list[str] = field(default_factory=list)
    kept: int = 0  # characters in text

    def message(self) -> str | None:
        if self.attributes.get("message"):
            return self.attributes["message"]
        # Without a message attribute the body is usually a traceback: its first line will do.
        lines = [line.strip() for line in "".join(self.text).splitlines() if line.strip()]
        return lines[0] if lines else self.attributes.get("type")


@dataclass
class _Case:
    classname: str
    name: str
    time: str | None
    line: int
    xpath: str
    suite_id: int  # which <testsuite> element holds the case
    order: int
    children: list[_Child] = field(default_factory=list)


@dataclass(frozen=True)
class _Attempt:
    status: Status
    passed: bool | None
    message: str | None
    kind: str  # how the attempt was written, kept as metadata


#: an earlier copy of a test that pytest-rerunfailures ran again (it was written as passed).
_RERUN_ATTEMPT = _Attempt(
    "ok", False, "failed attempt before a rerun (pytest-rerunfailures)", "rerun"
)


class _Parser:
    """Collect testcases with their line, XPath and direct children, streaming."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.cases: list[_Case] = []
        self.root: str | None = None
        self._parser = xml.parsers.expat.ParserCreate()
        self._parser.StartElementHandler = self._start
        self._parser.EndElementHandler = self._end
        self._parser.CharacterDataHandler = self._text
        self._parser.buffer_text = True
        self._stack: list[str] = []
        self._counts: list[dict[str, int]] = [{}]
        self._xpath: list[str] = []
        self._suites = 0
        self._suite_ids: list[int] = []
        self._case: _Case | None = None
        self._child: _Child | None = None
        self._open_cases = 0  # <testcase> elements open around the current one

    def parse(self) -> None:
        # Big blocks: expat scans a token that spans several of them again from its start at
        # each one, so feeding a 50 MB attribute in 64 KiB reads takes minutes.
        try:
            with open_input(self.path, limits.DOCUMENT_BYTES) as handle:
                while block := handle.read(_BLOCK_BYTES):
                    self._parser.Parse(block, False)
                self._parser.Parse(b"", True)
        except OSError as error:
            raise InputError(f"cannot read: {error.strerror}", Provenance(self.path)) from None
        except xml.parsers.expat.ExpatError as error:
            raise InputError(
                f"not well-formed XML: {xml.parsers.expat.ErrorString(error.code)} "
                f"(column {error.offset + 1})",
                Provenance(self.path, error.lineno),
            ) from None

    def _here(self) -> Provenance:
        return Provenance(self.path, self._parser.CurrentLineNumber)

    def _check(self, tag: str, attributes: dict[str, str]) -> None:
        if len(self._stack) >= limits.XML_DEPTH.value():
            raise too_large(self._here(), limits.XML_DEPTH, None, "the nesting of elements")
        maximum = limits.XML_ATTRIBUTE_CHARS.value()
        for name, value in attributes.items():
            if len(value) > maximum:
                raise too_large(
                    self._here(),
                    limits.XML_ATTRIBUTE_CHARS,
                    len(value),
                    f"attribute {name[:40]!r} of <{tag[:40]}>",
                )

    def _start(self, tag: str, attributes: dict[str, str]) -> None:
        self._check(tag, attributes)
        if self.root is None:
            self.root = tag
            if tag not in ("testsuites", "testsuite"):
                raise InputError(
                    f"root element is <{tag}>",
                    self._here(),
                    expected="JUnit XML (root <testsuites> or <testsuite>)",
                )
        counts = self._counts[-1]
        counts[tag] = counts.get(tag, 0) + 1
        self._xpath.append(f"{tag}[{counts[tag]}]")
        self._counts.append({})
        self._stack.append(tag)
        if tag == "testcase":
            self._open_cases += 1
        if tag == "testsuite":
            self._suites += 1
            self._suite_ids.append(self._suites)
        elif tag == "testcase" and self._case is None:
            if "name" not in attributes:
                raise InputError(
                    "testcase has no name attribute",
                    Provenance(
                        self.path, self._parser.CurrentLineNumber, "/" + "/".join(self._xpath)
                    ),
                )
            self._case = _Case(
                classname=attributes.get("classname", ""),
                name=attributes["name"],
                time=attributes.get("time"),
                line=self._parser.CurrentLineNumber,
                xpath="/" + "/".join(self._xpath),
                suite_id=self._suite_ids[-1] if self._suite_ids else 0,
                order=len(self.cases),
            )
        elif self._case is not None and self._stack[-2:-1] == ["testcase"]:
            self._child = _Child(tag, dict(attributes))
            self._case.children.append(self._child)

    def _end(self, tag: str) -> None:
        self._stack.pop()
        self._xpath.pop()
        self._counts.pop()
        if tag == "testcase":
            self._open_cases -= 1
        if tag == "testsuite" and self._suite_ids:
            self._suite_ids.pop()
        elif tag == "testcase" and self._case is not None and not self._open_cases:
            self.cases.append(self._case)
            self._case = None
        elif self._child is not None and self._stack[-1:] == ["testcase"]:
            self._child = None

    def _text(self, data: str) -> None:
        child = self._child
        if child is not None and self._stack[-1:] == [child.tag]:
            # Only the first line is used; the rest of a long traceback is read and dropped.
            room = limits.XML_TEXT_CHARS.value() - child.kept
            if room > 0:
                child.text.append(data[:room])
                child.kept += min(room, len(data))


def _final(case: _Case) -> _Attempt:
    """The outcome a testcase element states for its (last) attempt."""
    by_tag = {child.tag: child for child in reversed(case.children)}
    # A failure wins over an error: pytest adds <error> for a teardown that broke after
    # the test itself had already failed, and the verdict was reached.
    if "failure" in by_tag:
        return _Attempt("ok", False, by_tag["failure"].message(), "failure")
    if "error" in by_tag:
        return _Attempt("error", None, by_tag["error"].message(), "error")
    if "skipped" in by_tag:
        return _Attempt("skipped", None, by_tag["skipped"].message(), "skipped")
    return _Attempt("ok", True, None, "passed")


def _surefire(child: _Child) -> _Attempt:
    if child.tag.endswith("Error"):
        return _Attempt("error", None, child.message(), child.tag)
    return _Attempt("ok", False, child.message(), child.tag)


def _attempts(case: _Case) -> list[_Attempt]:
    final = _final(case)
    flaky = [_surefire(c) for c in case.children if c.tag in _FLAKY]
    reruns = [_surefire(c) for c in case.children if c.tag in _RERUN]
    # Surefire: flaky* failed before the final pass; rerun* failed after the first failure.
    return [*flaky, final, *reruns]


def _split(case: _Case, options: IngestOptions) -> tuple[str, int | None, int | None]:
    """(name without repeat suffix, repeat index, repeat count) of a testcase name."""
    if options.junit_flakefinder:
        match = _FLAKEFINDER.match(case.name)
        if match:
            params = match["params"]
            base = f"{match['base']}[{params}]" if params else match["base"]
            return base, int(match["index"]), None
    match = _REPEAT.match(case.name)
    if match and 1 <= int(match["index"]) <= int(match["count"]):
        params = match["params"]
        base = f"{match['base']}[{params}]" if params else match["base"]
        return base, int(match["index"]) - 1, int(match["count"])
    return case.name, None, None


def _stimulus(case: _Case, name: str) -> str:
    return f"{case.classname}::{name}" if case.classname else name


def read(path: str, options: IngestOptions) -> Iterator[Record]:
    """Read a JUnit XML report; each attempt of each test is one trial."""
    parser = _Parser(path)
    parser.parse()
    suite = options.suite or DEFAULT_SUITE
    split = {case.order: _split(case, options) for case in parser.cases}
    # pytest-repeat suffixes count only when a test has every index 1..N.
    seen: dict[tuple[str, str, int], set[int]] = defaultdict(set)
    for case in parser.cases:
        base, index, count = split[case.order]
        if count is not None and index is not None:
            seen[(case.classname, base, count)].add(index)
    for case in parser.cases:
        base, index, count = split[case.order]
        if count is not None and seen[(case.classname, base, count)] != set(range(count)):
            split[case.order] = (case.name, None, None)
    if not options.junit_flakefinder:
        _hint_flakefinder(path, parser.cases)
    # Copies of one test (same name and repeat) inside one <testsuite> are reruns.
    copies: dict[tuple[str, int | None, int], list[_Case]] = defaultdict(list)
    for case in parser.cases:
        base, index, _ = split[case.order]
        copies[(_stimulus(case, base), index, case.suite_id)].append(case)
    attempts: dict[str, list[tuple[tuple[int, int, int], _Case, _Attempt, bool]]] = defaultdict(
        list
    )
    for (stimulus, index, _), cases in copies.items():
        for position, case in enumerate(cases):
            if position < len(cases) - 1 and not any(c.tag in _RESULTS for c in case.children):
                found = [_RERUN_ATTEMPT]
            else:
                found = _attempts(case)
            for sub, attempt in enumerate(found):
                key = (index if index is not None else -1, case.order, sub)
                attempts[stimulus].append((key, case, attempt, len(found) == 1))
    for stimulus, found_attempts in attempts.items():
        found_attempts.sort(key=lambda item: item[0])
        for trial, (key, case, attempt, alone) in enumerate(found_attempts):
            metadata: dict[str, Any] = {"junit_name": case.name, "attempt": attempt.kind}
            if key[0] >= 0:
                metadata["repeat"] = key[0]
            duration = _seconds(case.time)
            # A testcase's time covers all attempts it records; split it no further.
            if duration is not None and alone:
                metadata["duration_s"] = duration
            yield Trial(
                stimulus=stimulus,
                trial=trial,
                suite=suite,
                status=attempt.status,
                passed=attempt.passed,
                message=attempt.message,
                metadata=metadata,
                provenance=Provenance(path, case.line, case.xpath),
            )


def _hint_flakefinder(path: str, cases: list[_Case]) -> None:
    """Warn when every bracketed name forms complete 0..N-1 runs, as flakefinder writes them."""
    runs: dict[tuple[str, str], set[int]] = defaultdict(set)
    for case in cases:
        match = _FLAKEFINDER.match(case.name)
        if match:
            params = match["params"] or ""
            runs[(case.classname, f"{match['base']}[{params}]")].add(int(match["index"]))
    sizes = {len(indices) for indices in runs.values()}
    complete = all(indices == set(range(len(indices))) for indices in runs.values())
    if runs and complete and len(sizes) == 1 and sizes.pop() > 1:
        warn(
            path,
            "test names like 'test_x[0]', 'test_x[1]' look like pytest-flakefinder runs but are "
            "read as parameters; pass --junit-flakefinder if they are repeats",
        )


def _seconds(value: str | None) -> float | None:
    """A testcase's time attribute in seconds; None when absent or not a finite number."""
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and math.isfinite(seconds) else None
