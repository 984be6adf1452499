"""JUnit XML from repeated test runs: every attempt of a test is a trial.

A stimulus is ``classname::name`` with the repeat suffix removed. Repeats are
recognised from how the usual plugins write them:

* pytest-repeat (``--count N``): ``test_x[2-3]``, parametrized ``test_p[a-2-3]``,
  1-based ``[i-N]`` last in the brackets; taken as repeats only when every index
  1..N of the test is present, so a parameter id that merely looks alike stays.
* pytest-flakefinder (``--flake-runs N``): ``test_x[0]``, parametrized
  ``test_p[0-a]``; a 0-based prefix looks exactly like an integer parameter, so
  it is read as a repeat only with ``junit_flakefinder`` (``--junit-flakefinder``).
* pytest-rerunfailures (``--reruns N``): every attempt is written as a copy of
  the testcase inside one ``<testsuite>``; earlier copies carry no result
  element and look passed, but a rerun only follows a failure, so they are
  failed attempts. gotestsum (``-count N``), promptfoo and others write
  independent repeats the same way, where a copy without a result is a pass.
  So copies are read as reruns only in a ``<testsuite>`` as pytest's junitxml
  writes it: with ``hostname`` and ``timestamp`` attributes (always written
  since pytest 5.1) and nothing pytest never writes there (another attribute,
  such as go-junit-report's ``id`` or promptfoo's ``package``; a
  ``<system-out>``/``<system-err>`` of the suite's own, as Gradle writes; a
  ``go.version`` property, as gotestsum writes); and only when no copy there
  that carries a result element is followed by another copy of its test
  (reruns stop at the last attempt, the only one that can carry a result),
  and the ``tests`` attribute does not count every copy (pytest counts no
  rerun; pytest-xdist's ``--dist each`` writes a counted copy per worker).
  Otherwise every copy is an independent trial, with a warning when the
  ``<testsuite>`` shows nothing of its writer (no hostname or timestamp,
  nothing foreign) or is pytest's but breaks that pattern. Reruns go on until
  a test passes: a warning names the re-run stimuli and says what their pass
  rate then measures. (The same test in two different ``<testsuite>``
  elements, as in a merged report, is read as separate attempts, each with its
  own result.)
* Gradle's test-retry plugin (``retry { maxRetries = N }``): with Gradle's default
  ``reports.junitXml.mergeReruns = false``, Gradle's JUnitXmlResultWriter writes every
  execution as its own ``<testcase>``, each with its own result, the retries after the
  failures they follow: already read right, one trial each. A warning says they are
  retries (retry until pass) when the ``<testsuite>`` is as Gradle writes it (pytest's
  attributes, ``errors="0"``, a ``<properties>`` child and a ``<system-out>`` and a
  ``<system-err>`` of its own) and its copies keep to how retries are written: every copy
  but the last of its test failed. With ``mergeReruns = true`` Gradle writes Surefire's
  children, below.
* Maven Surefire: ``<flakyFailure>``/``<flakyError>`` children are failed
  attempts before the final pass; ``<rerunFailure>``/``<rerunError>`` are
  failed reruns after the first failure. Reruns stop at the first pass: the same
  warning as for pytest-rerunfailures names the re-run stimuli.

``<error>`` is status error, ``<failure>`` a failed trial, ``<skipped>``
skipped, and so is a googletest testcase with ``status="notrun"`` (a disabled
test: ``result="suppressed"``) or ``result="skipped"`` and no result element;
any other testcase without a result element is a pass. Trials of a stimulus
are numbered by repeat index, then in the order attempts were written. A
failed, errored or skipped trial keeps its message (the ``message`` attribute,
else the first line of the element's text).

pytest writes a test that fails in its call and then errors in teardown as two
testcases of the same classname and name: the first with ``<failure>``, the
second with ``<error message="failed on teardown with ...">``. Such a second
testcase, following its test's failure in the same ``<testsuite>``, is folded
into that failed trial (its message appended, its time added). Other result
elements in one testcase (a setup and a teardown error, a skip and a teardown
error): a failure wins over an error, an error over a skip.

The report is read in one pass of expat, keeping a few numbers per testcase in
arrays (a million testcases take about 60 MB); the repeats and reruns are told
apart once every testcase is known.
"""

from __future__ import annotations

import math
import re
import xml.parsers.expat
from array import array
from collections.abc import Iterator
from datetime import datetime
from typing import Any, NamedTuple

from gate import limits
from gate.errors import InputError, Provenance
from gate.ingest import IngestOptions, Record
from gate.ingest.duplicates import parse_time
from gate.ingest.values import message_text, warn
from gate.reading import open_input, too_large
from gate.trials import DEFAULT_SUITE, Coded, Status, TrialColumns

_REPEAT = re.compile(r"^(?P<base>.+)\[(?:(?P<params>.*)-)?(?P<index>\d+)-(?P<count>\d+)\]$")
_FLAKEFINDER = re.compile(r"^(?P<base>.+)\[(?P<index>\d+)(?:-(?P<params>.*))?\]$")
_DIGIT_IN_BRACKETS = re.compile(r".\[\d")  # where _FLAKEFINDER's index may start
_BLOCK_BYTES = 8 * 1024 * 1024

# What an attempt's result element says.
PASSED, FAILURE, ERROR, SKIPPED, RERUN = 0, 1, 2, 3, 4
_RESULT_TAGS = {"failure": FAILURE, "error": ERROR, "skipped": SKIPPED}
_EXTRA_TAGS = ("flakyFailure", "flakyError", "rerunFailure", "rerunError")
#: the message of an earlier copy that pytest-rerunfailures ran again (written as passed).
RERUN_MESSAGE = "failed attempt before a rerun (pytest-rerunfailures)"
#: how pytest's junitxml starts the <error> message of a teardown that broke.
_TEARDOWN = 'failed on teardown with "'
#: the attributes pytest's junitxml writes on its <testsuite> (hostname and timestamp since 5.1).
_PYTEST_SUITE = frozenset(
    ("name", "errors", "failures", "skipped", "tests", "time", "timestamp", "hostname")
)
# What a <testsuite> shows of its writer, as bits: it has pytest's hostname and timestamp; it
# has what pytest never writes there (another attribute, a <system-out> or <system-err> of its
# own as Gradle writes, gotestsum's go.version property).
_HOST_AND_TIME, _NOT_PYTEST = 1, 2
# What Gradle's JUnitXmlResultWriter always writes on a <testsuite>, as more bits: errors="0"
# (it counts every failed test under failures), a <properties> child (empty or not), a
# <system-out> and a <system-err> of the suite's own (unless the build turned those logs off);
# and a bit for anything neither pytest nor Gradle writes there (another attribute, a
# go.version property).
_ERRORS_ZERO, _PROPERTIES, _SUITE_OUT, _SUITE_ERR, _FOREIGN = 4, 8, 16, 32, 64
_WRITER = _HOST_AND_TIME | _NOT_PYTEST  # the bits that tell pytest's suites
_GRADLE = _HOST_AND_TIME | _NOT_PYTEST | _ERRORS_ZERO | _PROPERTIES | _SUITE_OUT | _SUITE_ERR
#: the children of a <testsuite> (not of a testcase) that mark its writer
_SUITE_CHILD_MARKS = {
    "properties": _PROPERTIES,
    "system-out": _NOT_PYTEST | _SUITE_OUT,
    "system-err": _NOT_PYTEST | _SUITE_ERR,
}

#: trials made at a time from the sorted attempts.
_EMIT_BLOCK = 65536
#: each attempt kind's status and verdict (a rerun: a failed attempt)
_STATUS_OF_KIND: tuple[Status, ...] = ("ok", "ok", "error", "skipped", "ok")
_VERDICT_OF_KIND: tuple[bool | None, ...] = (True, False, None, None, False)
#: repeat counts and run numbers past this are parameters, not repeats (and never a bit mask).
_MAX_RUNS = 100_000

# How a testcase name was split.
_PLAIN, _REPEATED, _FLAKE = 0, 1, 2


class _Stem(NamedTuple):
    """A testcase name without its repeat suffix (the stimulus when the repeats are whole)."""

    classname: str
    base: str  # the name without the suffix, parameters kept: test_p[a]
    split: int  # _PLAIN, _REPEATED or _FLAKE
    params: str | None  # the parameters beside the repeat number, to write the name again
    repeats: int  # _REPEATED: N of [i-N]

    def stimulus(self) -> str:
        return f"{self.classname}::{self.base}" if self.classname else self.base

    def name(self, index: int) -> str:
        """The testcase name as written, from the (0-based) repeat index."""
        if self.split == _REPEATED:
            head = self.base.removesuffix(f"[{self.params}]") if self.params else self.base
            inner = f"{self.params}-" if self.params is not None else ""
            return f"{head}[{inner}{index + 1}-{self.repeats}]"
        if self.split == _FLAKE:
            if self.params:
                return f"{self.base.removesuffix(f'[{self.params}]')}[{index}-{self.params}]"
            return f"{self.base}[{index}]"
        return self.base


class _Cases:
    """Every testcase of a report, a few numbers each (columns of equal length)."""

    def __init__(self) -> None:
        self.stem = array("i")  # index into stems
        self.index = array("i")  # 0-based repeat index, -1 without one
        self.suite = array("i")  # which <testsuite> element holds the case
        self.line = array("q")
        self.time = array("d")  # seconds, nan when absent or not a number
        self.kind = array("b")  # the final attempt's kind (PASSED ... SKIPPED)
        self.message = array("i")  # index into messages, -1 for none
        self.results = array("b")  # 1 when the case has a result child (failure, flakyError, ...)
        self.stems: list[_Stem] = []
        self.stem_ids: dict[tuple[str, str, int, str | None, int], int] = {}
        self.messages: list[str] = []
        self.message_ids: dict[str, int] = {}
        #: case → Surefire attempts before (flaky*) and after (rerun*) the final one.
        self.extra: dict[int, tuple[list[tuple[int, int]], list[tuple[int, int]]]] = {}
        #: case → its name, where writing it again from stem and index would not give it.
        self.names: dict[int, str] = {}
        #: cases whose only result is pytest's <error message="failed on teardown with ...">.
        self.teardowns: list[int] = []

    def __len__(self) -> int:
        return len(self.kind)

    def message_id(self, text: str | None) -> int:
        if text is None:
            return -1
        known = self.message_ids.get(text)
        if known is None:
            known = self.message_ids[text] = len(self.messages)
            self.messages.append(text)
        return known

    def stem_id(self, classname: str, base: str, split: int, params: str | None, count: int) -> int:
        key = (classname, base, split, params, count)
        known = self.stem_ids.get(key)
        if known is None:
            known = self.stem_ids[key] = len(self.stems)
            self.stems.append(_Stem(*key))
        return known


class _Parser:
    """Read testcases with expat, streaming, into :class:`_Cases`."""

    def __init__(self, path: str, flakefinder: bool) -> None:
        self.path = path
        self.flakefinder = flakefinder
        self.cases = _Cases()
        self.root: str | None = None
        #: names like test_x[0] without --junit-flakefinder: the indices of each, as bits
        #: (-1 once an index is too large to be a run number).
        self.flake_names: dict[tuple[str, str], int] = {}
        #: (classname, a pytest-repeat name up to its index, its count) → its stem (None: the
        #: name is no repeat), worked out once per test, not once per run.
        self._repeat_stems: dict[tuple[str, str, str], int | None] = {}
        self._parser = xml.parsers.expat.ParserCreate()
        self._parser.StartElementHandler = self._start
        self._parser.EndElementHandler = self._end
        self._parser.CharacterDataHandler = self._text
        self._parser.buffer_text = True
        self._depth = 0
        self._max_depth = limits.XML_DEPTH.value()
        self._max_attribute = limits.XML_ATTRIBUTE_CHARS.value()
        self._max_text = limits.XML_TEXT_CHARS.value()
        # The open elements down to the testcase: their XPath steps and child counts.
        self._steps: list[str] = []
        self._children: list[dict[str, int]] = [{}]
        self._suites = 0
        self._suite_ids: list[int] = []
        #: per <testsuite> (by number, 0 for testcases outside any), what shows of its writer.
        self.suite_marks = bytearray(1)
        #: per <testsuite>, its ``tests`` attribute (-1 when absent or not a count).
        self.suite_tests = array("q", [-1])
        # The open testcase: its depth, attributes, line and suite, its result children so far.
        self._case_depth = -1
        self._case: tuple[dict[str, str], int, int] | None = None
        self._final: list[tuple[int, str | None]] = []  # (kind, message) of result children
        self._flaky: list[tuple[int, str | None]] = []
        self._reruns: list[tuple[int, str | None]] = []
        # The open result child whose text is kept (its first line is its message).
        self._child: tuple[str, dict[str, str]] | None = None
        self._text_parts: list[str] = []
        self._text_kept = 0

    def parse(self) -> None:
        # Big blocks: expat scans a token that spans several of them again from its start at
        # each one, so feeding a 50 MB attribute in 64 KiB reads takes minutes.
        try:
            with open_input(self.path) as handle:
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
        except (LookupError, ValueError) as error:
            if self.root is not None:  # raised past the declaration: not the encoding's
                raise
            # pyexpat looks up an encoding it does not know itself among Python's codecs:
            # an unknown name is a LookupError, a multi-byte or binary codec a ValueError.
            reason = str(error).split(";")[0]  # not Python's advice to use codecs.decode()
            raise InputError(
                f"the XML declaration names an encoding that cannot be read ({reason})",
                Provenance(self.path, 1),
                expected=_READABLE_ENCODINGS,
            ) from None

    def _here(self) -> Provenance:
        return Provenance(self.path, self._parser.CurrentLineNumber)

    def _refuse_attribute(self, tag: str, attributes: dict[str, str]) -> None:
        for name, value in attributes.items():
            if len(value) > self._max_attribute:
                raise too_large(
                    self._here(),
                    limits.XML_ATTRIBUTE_CHARS,
                    len(value),
                    f"attribute {name[:40]!r} of <{tag[:40]}>",
                )

    def _start(self, tag: str, attributes: dict[str, str]) -> None:
        depth = self._depth = self._depth + 1
        if depth > self._max_depth:
            raise too_large(self._here(), limits.XML_DEPTH, None, "the nesting of elements")
        if attributes and max(map(len, attributes.values())) > self._max_attribute:
            self._refuse_attribute(tag, attributes)
        if self._case_depth >= 0:  # inside a testcase
            if depth == self._case_depth + 1:
                self._result_child(tag, attributes)
            return
        if self.root is None:
            self.root = tag
            if tag not in ("testsuites", "testsuite"):
                raise InputError(
                    f"root element is <{tag}>",
                    self._here(),
                    expected="JUnit XML (root <testsuites> or <testsuite>)",
                )
        counts = self._children[-1]
        position = counts[tag] = counts.get(tag, 0) + 1
        if tag == "testcase":
            self._open_case(attributes, position)
            return
        if self._suite_ids:
            in_suite = self._steps[-1].startswith("testsuite[")
            if tag == "property" and attributes.get("name") == "go.version":
                self.suite_marks[self._suite_ids[-1]] |= _NOT_PYTEST | _FOREIGN
            elif in_suite and tag in _SUITE_CHILD_MARKS:
                self.suite_marks[self._suite_ids[-1]] |= _SUITE_CHILD_MARKS[tag]
        self._steps.append(f"{tag}[{position}]")
        self._children.append({})
        if tag == "testsuite":
            self._suites += 1
            self._suite_ids.append(self._suites)
            marks = _HOST_AND_TIME if "hostname" in attributes and "timestamp" in attributes else 0
            if not _PYTEST_SUITE.issuperset(attributes):
                marks |= _NOT_PYTEST | _FOREIGN
            if attributes.get("errors") == "0":
                marks |= _ERRORS_ZERO
            self.suite_marks.append(marks)
            tests = attributes.get("tests", "")
            self.suite_tests.append(int(tests) if tests.isdigit() and len(tests) < 19 else -1)

    def _open_case(self, attributes: dict[str, str], position: int) -> None:
        if "name" not in attributes:
            xpath = "/" + "/".join([*self._steps, f"testcase[{position}]"])
            raise InputError(
                "testcase has no name attribute",
                Provenance(self.path, self._parser.CurrentLineNumber, xpath),
            )
        self._case_depth = self._depth
        suite = self._suite_ids[-1] if self._suite_ids else 0
        self._case = (attributes, self._parser.CurrentLineNumber, suite)

    def _result_child(self, tag: str, attributes: dict[str, str]) -> None:
        if tag in _RESULT_TAGS or tag in _EXTRA_TAGS:
            message = attributes.get("message")
            self._child = (tag, attributes)
            if message:
                self._add_child(tag, message_text(message))
            else:
                self._text_parts, self._text_kept = [], 0

    def _add_child(self, tag: str, message: str | None) -> None:
        self._child = None
        kind = _RESULT_TAGS.get(tag)
        if kind is not None:
            self._final.append((kind, message))
            return
        kind = ERROR if tag.endswith("Error") else FAILURE
        (self._flaky if tag.startswith("flaky") else self._reruns).append((kind, message))

    def _end(self, tag: str) -> None:
        depth = self._depth
        self._depth = depth - 1
        if self._case_depth >= 0:
            if depth == self._case_depth:
                self._close_case()
            elif depth == self._case_depth + 1 and self._child is not None:
                # A result child without a message attribute: the first line of its text.
                child_tag, attributes = self._child
                lines = (line.strip() for line in "".join(self._text_parts).splitlines())
                first = next((line for line in lines if line), None)
                self._add_child(child_tag, message_text(first or attributes.get("type")))
            return
        self._steps.pop()
        self._children.pop()
        if tag == "testsuite" and self._suite_ids:
            self._suite_ids.pop()

    def _text(self, data: str) -> None:
        if self._child is not None and self._depth == self._case_depth + 1:
            # Only the first line is used; the rest of a long traceback is read and dropped.
            room = self._max_text - self._text_kept
            if room > 0:
                self._text_parts.append(data[:room])
                self._text_kept += min(room, len(data))

    def _close_case(self) -> None:
        assert self._case is not None
        attributes, line, suite = self._case
        cases = self.cases
        number = len(cases.kind)
        name = attributes["name"]
        stem, index, exact = self._split(attributes.get("classname", ""), name)
        if not exact:
            cases.names[number] = name
        cases.stem.append(stem)
        cases.index.append(index)
        cases.suite.append(suite)
        cases.line.append(line)
        cases.time.append(_seconds(attributes.get("time")))
        final = self._final
        if final:
            # Several result elements in one testcase (pytest: a setup error and a teardown
            # error, or a skip and a teardown error): a failure wins over an error, an error
            # over a skip, as the test reached its verdict before the rest broke.
            kind, message = min(final, key=lambda attempt: attempt[0])
            cases.kind.append(kind)
            cases.message.append(cases.message_id(message))
            cases.results.append(1)
            self._final = []
            if (
                len(final) == 1
                and kind == ERROR
                and message is not None
                and message.startswith(_TEARDOWN)
                and not (self._flaky or self._reruns)
            ):
                cases.teardowns.append(number)
        elif (
            ("status" in attributes or "result" in attributes)  # googletest's; no call for others
            and (skip := _not_run(attributes)) is not None
            and not (self._flaky or self._reruns)
        ):
            # googletest says on the testcase itself, with no child, that it did not run.
            cases.kind.append(SKIPPED)
            cases.message.append(cases.message_id(skip))
            cases.results.append(1)
        else:
            cases.kind.append(PASSED)
            cases.message.append(-1)
            # Surefire's flaky and rerun children are results too (pytest writes none).
            cases.results.append(1 if self._flaky or self._reruns else 0)
        if self._flaky or self._reruns:
            flaky = [(k, cases.message_id(m)) for k, m in self._flaky]
            reruns = [(k, cases.message_id(m)) for k, m in self._reruns]
            cases.extra[number] = (flaky, reruns)
            self._flaky, self._reruns = [], []
        self._case = None
        self._child = None
        self._case_depth = -1

    def _split(self, classname: str, name: str) -> tuple[int, int, bool]:
        """The stem (an index into the stems) of a testcase name, its 0-based repeat index
        (-1: none) and whether the stem writes the name again exactly."""
        cases = self.cases
        if name[-1:] != "]":
            return cases.stem_id(classname, name, _PLAIN, None, 0), -1, True
        if self.flakefinder:
            match = _FLAKEFINDER.match(name)
            if match:
                params, digits = match["params"], match["index"]
                base = f"{match['base']}[{params}]" if params else match["base"]
                index = int(digits) if len(digits) < 7 else _MAX_RUNS
                if index < _MAX_RUNS:
                    stem = cases.stem_id(classname, base, _FLAKE, params, 0)
                    exact = digits.isascii() and (digits == "0" or digits[0] != "0")
                    return stem, index, exact and params != ""
        elif _DIGIT_IN_BRACKETS.search(name):  # else _FLAKEFINDER cannot match: not tried
            match = _FLAKEFINDER.match(name)
            if match:
                key = (classname, f"{match['base']}[{match['params'] or ''}]")
                digits = match["index"]
                number = int(digits) if len(digits) < 7 else _MAX_RUNS
                known = self.flake_names.get(key, 0)
                bits = -1 if number >= _MAX_RUNS or known < 0 else known | 1 << number
                self.flake_names[key] = bits
        # pytest-repeat's [i-N] or [params-i-N] (as _REPEAT matches it, without the regex).
        dash = name.rfind("-")
        count_digits = name[dash + 1 : -1]
        cut = max(name.rfind("-", 0, dash), name.rfind("[", 0, dash))
        index_digits = name[cut + 1 : dash]
        if (
            dash > 0
            and cut > 0
            and "\n" not in name
            and count_digits.isdecimal()
            and index_digits.isdecimal()
            and len(count_digits) < 7
            and 1 <= int(index_digits) <= int(count_digits) < _MAX_RUNS
        ):
            test = (classname, name[: cut + 1], count_digits)
            repeats = self._repeat_stems
            if test not in repeats:
                repeats[test] = self._repeat_stem(test)
            repeated = repeats[test]
            if repeated is not None:
                # Written again from numbers, the digits come out the same unless they were
                # not ASCII or had leading zeros (both are at least 1 here).
                exact = (
                    index_digits[0] != "0"
                    and count_digits[0] != "0"
                    and index_digits.isascii()
                    and count_digits.isascii()
                )
                return repeated, int(index_digits) - 1, exact
        return cases.stem_id(classname, name, _PLAIN, None, 0), -1, True

    def _repeat_stem(self, test: tuple[str, str, str]) -> int | None:
        """The stem of a pytest-repeat name, given as (classname, the name up to its index,
        the count); None when what comes before the index is no test name."""
        classname, name, count_digits = test
        cut = len(name) - 1
        if name[cut] == "[":
            base, params = name[:cut], None
        else:
            bracket = name.rfind("[", 0, cut)
            if bracket < 1:
                return None
            params = name[bracket + 1 : cut]
            base = f"{name[:bracket]}[{params}]" if params else name[:bracket]
        return self.cases.stem_id(classname, base, _REPEATED, params, int(count_digits))


def _not_run(attributes: dict[str, str]) -> str | None:
    """The message of a testcase googletest did not run, from its attributes (None: it ran).

    googletest writes ``status="notrun" result="suppressed"`` for a disabled test and
    ``status="run" result="skipped"`` for a ``GTEST_SKIP()`` (older releases without a
    ``<skipped>`` child)."""
    status, result = attributes.get("status"), attributes.get("result")
    if status != "notrun" and result not in ("suppressed", "skipped"):
        return None
    return ", ".join(
        f'{name}="{value}"' for name, value in (("status", status), ("result", result)) if value
    )


#: what the XML declaration may name: expat's own encodings, and Python's one-byte ones
_READABLE_ENCODINGS = (
    "UTF-8 (what JUnit writers write), UTF-16, ISO-8859-1, US-ASCII or a single-byte "
    "encoding such as windows-1252"
)


class _Found(Exception):
    """Stops expat once the first testsuite is seen."""


def started(path: str) -> datetime | None:
    """When the tests ran: the first ``<testsuite>``'s ``timestamp`` (pytest and Surefire
    write one), read without going further."""
    found: list[str | None] = []
    parser = xml.parsers.expat.ParserCreate()

    def start(tag: str, attributes: dict[str, str]) -> None:
        if tag == "testsuite" or (tag == "testsuites" and "timestamp" in attributes):
            found.append(attributes.get("timestamp"))
            raise _Found

    parser.StartElementHandler = start
    try:
        with open_input(path) as handle:
            while block := handle.read(64 * 1024):
                parser.Parse(block, False)
    except (_Found, xml.parsers.expat.ExpatError, OSError, LookupError, ValueError):
        pass  # no start time; reading the file says what is wrong with it
    return parse_time(found[0]) if found else None


def read(path: str, options: IngestOptions) -> Iterator[Record | TrialColumns]:
    """Read a JUnit XML report; each attempt of each test is one trial."""
    import numpy as np

    parser = _Parser(path, options.junit_flakefinder)
    parser.parse()
    cases = parser.cases
    if not options.junit_flakefinder:
        _hint_flakefinder(path, parser.flake_names)
    stems = cases.stems
    size = len(cases)
    # pytest-repeat suffixes count only when a test has every index 1..N.
    seen: dict[int, int] = {}
    for stem_id, repeat in zip(cases.stem, cases.index, strict=True):
        if repeat >= 0 and stems[stem_id].split == _REPEATED:
            seen[stem_id] = seen.get(stem_id, 0) | 1 << repeat
    whole = {s for s, mask in seen.items() if mask == (1 << stems[s].repeats) - 1}
    # Each case's stimulus (an index into names) and repeat index.
    names: list[str] = []
    name_ids: dict[str, int] = {}

    def name_id(name: str) -> int:
        known = name_ids.get(name)
        if known is None:
            known = name_ids[name] = len(names)
            names.append(name)
        return known

    stem_names = [name_id(stem.stimulus()) for stem in stems]
    stimulus = np.array([stem_names[s] for s in cases.stem], dtype=np.int64)
    index = np.frombuffer(cases.index, dtype=np.int32).astype(np.int64)
    for number in range(size) if len(whole) < len(seen) else ():
        stem = stems[cases.stem[number]]
        if stem.split == _REPEATED and cases.stem[number] not in whole:
            written = cases.names.get(number) or stem.name(cases.index[number])
            plain = f"{stem.classname}::{written}" if stem.classname else written
            stimulus[number], index[number] = name_id(plain), -1
    # Copies of one test (same stimulus and repeat) inside one <testsuite>, in the order written.
    suite = np.frombuffer(cases.suite, dtype=np.int32)
    order = np.lexsort((np.arange(size), suite, index, stimulus))
    keep = np.ones(size, dtype=bool)
    if cases.teardowns:
        _merge_teardowns(cases, stimulus, index, suite, order, keep)
        order = order[keep[order]]
    # Copies of one test (same stimulus and repeat) inside one <testsuite>: reruns or repeats.
    same = np.zeros(len(order), dtype=bool)
    if len(order) > 1:
        same[:-1] = (
            (stimulus[order[1:]] == stimulus[order[:-1]])
            & (index[order[1:]] == index[order[:-1]])
            & (suite[order[1:]] == suite[order[:-1]])
        )
    rerun = _reruns(
        path, parser.suite_marks, parser.suite_tests, cases, names, stimulus, suite, order, same
    )
    _warn_gradle_retries(path, parser.suite_marks, cases, names, stimulus, suite, order, same)
    _warn_surefire_reruns(path, cases, names, stimulus)
    # The trials of a stimulus: by repeat index, then in the order written (Surefire's
    # flaky attempts before the final one, its reruns after).
    yield from _trials(path, options, cases, names, stimulus, index, rerun, keep)


def _merge_teardowns(
    cases: _Cases, stimulus: Any, index: Any, suite: Any, order: Any, keep: Any
) -> None:
    """Fold pytest's second testcase for a teardown that broke after the test failed into the
    failed attempt before it (``keep`` is cleared for the folded testcases).

    pytest's junitxml closes the failed call's <testcase> and opens another with the same
    classname and name for the teardown's <error message="failed on teardown with ...">: one
    run of the test, written twice. Setup errors and teardown errors after a pass or a skip
    stay inside the test's own <testcase>, so only one that follows a <failure> is folded.
    """
    import numpy as np

    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    for number in cases.teardowns:
        place = int(rank[number])
        if place == 0:
            continue
        before = int(order[place - 1])  # the nearest earlier copy of the test in its suite
        if (
            stimulus[before] != stimulus[number]
            or index[before] != index[number]
            or suite[before] != suite[number]
            or cases.kind[before] != FAILURE
        ):
            continue
        keep[number] = False
        failure, teardown = cases.message[before], cases.message[number]
        if failure < 0:
            cases.message[before] = teardown
        else:
            text = message_text(f"{cases.messages[failure]}; then {cases.messages[teardown]}")
            cases.message[before] = cases.message_id(text)
        # The test's time is its setup and call plus its teardown, written on the two halves.
        cases.time[before] += cases.time[number]


def _trials(
    path: str,
    options: IngestOptions,
    cases: _Cases,
    names: list[str],
    stimulus: Any,
    index: Any,
    rerun: Any,
    keep: Any,
) -> Iterator[TrialColumns]:
    import numpy as np

    size = len(cases)
    suite = options.suite or DEFAULT_SUITE
    # One attempt per case (but those folded into the one before), plus Surefire's extra
    # attempts: (case, sub) pairs.
    attempt_case = np.flatnonzero(keep).astype(np.int64)
    attempt_sub = np.zeros(len(attempt_case), dtype=np.int64)
    extras: dict[tuple[int, int], tuple[int, int]] = {}  # (case, sub) → (kind, message)
    if cases.extra:
        more_case, more_sub = [], []
        for number, (flaky, reruns) in cases.extra.items():
            if rerun[number]:
                continue
            for sub, attempt in enumerate(flaky):
                extras[(number, sub - len(flaky))] = attempt
            for sub, attempt in enumerate(reruns, 1):
                extras[(number, sub)] = attempt
        for number, sub in extras:
            more_case.append(number)
            more_sub.append(sub)
        attempt_case = np.concatenate([attempt_case, np.array(more_case, dtype=np.int64)])
        attempt_sub = np.concatenate([attempt_sub, np.array(more_sub, dtype=np.int64)])
    # Stimuli in the order of their first testcase, as the report lists them.
    first = np.full(len(names), size, dtype=np.int64)
    np.minimum.at(first, stimulus, np.arange(size, dtype=np.int64))
    attempt_stimulus = stimulus[attempt_case]
    attempt_index = index[attempt_case]
    order = np.lexsort((attempt_sub, attempt_case, attempt_index, first[attempt_stimulus]))
    alone = np.ones(size, dtype=bool)
    if extras:
        alone[[number for number, _ in extras]] = False
    kinds_of = np.frombuffer(cases.kind, dtype=np.int8)
    messages_of = np.frombuffer(cases.message, dtype=np.int32)
    seconds_of = np.frombuffer(cases.time, dtype=np.float64)
    lines_of = np.frombuffer(cases.line, dtype=np.int64)
    messages = [*cases.messages, RERUN_MESSAGE, None]  # index -1: None, no message
    statuses, verdicts = _STATUS_OF_KIND, _VERDICT_OF_KIND
    previous, last_trial = -1, -1  # the stimulus of the attempt before a block, its trial
    # A block of attempts at a time, as numpy columns made lists in C (whole columns of a
    # million attempts would hold 8 MB each while the table grows): each stimulus's trials
    # numbered from 0; the kind and message of its testcase, a rerun's or a Surefire
    # attempt's own. The table keeps no metadata but usage, so a trial is its stimulus,
    # index, status, verdict, message, duration and line.
    for start in range(0, len(order), _EMIT_BLOCK):
        at = order[start : start + _EMIT_BLOCK]
        case = attempt_case[at]
        current = attempt_stimulus[at]
        count = len(at)
        position = np.arange(count, dtype=np.int64)
        starts = np.empty(count, dtype=bool)
        starts[0] = current[0] != previous
        starts[1:] = current[1:] != current[:-1]
        run_start = np.maximum.accumulate(np.where(starts, position, -1))
        numbers = np.where(run_start >= 0, position - run_start, last_trial + 1 + position)
        previous, last_trial = int(current[-1]), int(numbers[-1])
        kind = kinds_of[case]
        message = messages_of[case].astype(np.int64)
        was_rerun = rerun[case]
        kind[was_rerun], message[was_rerun] = RERUN, len(cases.messages)
        subs = attempt_sub[at]
        for i in np.flatnonzero(subs).tolist():
            kind[i], message[i] = extras[(int(case[i]), int(subs[i]))]
        # A testcase's time covers all attempts it records; split it no further.
        duration = np.where(alone[case], seconds_of[case], np.nan)  # NaN: none
        distinct, codes = np.unique(current, return_inverse=True)
        block_names = list(map(names.__getitem__, distinct.tolist()))
        every = np.zeros(count, dtype=np.uint8)  # a column of one value
        yield TrialColumns(
            file=path,
            lines=lines_of[case].tolist(),
            stimulus=Coded(codes, block_names),
            suite=Coded(every, [suite]),
            trial=numbers.tolist(),
            status=Coded(kind, list(statuses)),
            passed=Coded(kind, list(verdicts)),
            score=Coded(every, [None]),
            message=Coded(message, messages),
            usage={"duration_s": duration},
        )


def _reruns(
    path: str,
    marks: bytearray,
    suite_tests: array[int],
    cases: _Cases,
    names: list[str],
    stimulus: Any,
    suite: Any,
    order: Any,
    same: Any,
) -> Any:
    """Which testcases are failed attempts that pytest-rerunfailures ran again (as a mask).

    pytest-rerunfailures writes each attempt before the last as a copy of the test without a
    result element, though it failed. gotestsum (``-count N``), promptfoo and others write
    independent repeats of a test the same way, where such a copy is a pass. The copies in a
    <testsuite> are read as reruns only when that <testsuite> is as pytest's junitxml writes it
    (hostname and timestamp, no attribute, own output or go.version property pytest never
    writes) and its copies keep to how reruns are written: the reruns stop at the last
    attempt, the only one that can carry a result, so no copy with a result element is ever
    followed by another copy of its test, and its ``tests="N"`` does not count them (pytest
    counts only attempts with an outcome, and a rerun's is "rerun"). pytest-xdist's
    ``--dist each`` writes a copy per worker, each counted: copies that ``tests`` counts
    are independent repeats. Every other copy is an independent trial.
    """
    import numpy as np

    results = np.frombuffer(cases.results, dtype=np.int8) != 0
    earlier_copy = np.zeros(len(results), dtype=bool)
    earlier_copy[order] = same  # a later copy of the same test follows in the same suite
    empty_before = earlier_copy & ~results
    if not empty_before.any():
        return empty_before
    mark = np.frombuffer(marks, dtype=np.uint8) & _WRITER
    broken = np.zeros(len(mark), dtype=bool)  # suites where a copy with a result has a successor
    broken[suite[earlier_copy & results]] = True
    pytest = mark == _HOST_AND_TIME
    # Every <testcase> written, a teardown error's own one too (pytest counts it).
    counted = np.frombuffer(suite_tests, dtype=np.int64) == np.bincount(
        suite, minlength=len(mark)
    )
    rerun = empty_before & (pytest & ~broken & ~counted)[suite]
    if rerun.any():
        _warn_reruns(path, names, stimulus, rerun, order, same)
    shown = _shown(names, stimulus, empty_before & (pytest & ~broken & counted)[suite])
    if shown:
        warn(
            path,
            "copies of one test in a <testsuite> shaped as pytest writes it are read as "
            "independent repeats (as pytest-xdist --dist each writes them), not "
            "pytest-rerunfailures reruns: the suite's tests attribute counts every copy, and "
            f"pytest does not count a rerun. A copy with no result element is then a pass "
            f"({shown})",
        )
    shown = _shown(names, stimulus, empty_before & ((mark == 0) & ~broken)[suite])
    if shown:
        # Nothing tells whose report this is: say which reading was taken, and the other.
        warn(
            path,
            "copies of one test in one <testsuite>, the earlier ones with no result element, "
            f"are read as independent repeats in which such a copy is a pass ({shown}). "
            "pytest-rerunfailures writes its failed attempts the same way, but they are read "
            "as reruns only in a <testsuite> with the hostname and timestamp attributes pytest "
            "always writes, which this one lacks; if these copies are reruns, every one but the "
            "last failed and these pass rates read high",
        )
    shown = _shown(names, stimulus, empty_before & (pytest & broken)[suite])
    if shown:
        # pytest's own report, yet not rerunfailures' pattern (pytest-xdist --dist each, a
        # merge of several runs into one suite): say why the copies are not reruns.
        breaking = _shown(names, stimulus, earlier_copy & results & pytest[suite])
        warn(
            path,
            "copies of one test in a <testsuite> shaped as pytest writes it are read as "
            "independent repeats, not pytest-rerunfailures reruns: a copy with a result element "
            f"is followed by another copy of its test ({breaking}), which reruns never write "
            "(they stop at the attempt that carries the result). A copy with no result element "
            f"is then a pass ({shown})",
        )
    return rerun


def _shown(names: list[str], stimulus: Any, which: Any) -> str:
    """The first few stimuli of the testcases in a mask, with their count ("" when none)."""
    count, listed = _listed(names, stimulus, which)
    if not count:
        return ""
    return f"{count} {'stimulus' if count == 1 else 'stimuli'}: {listed}"


def _listed(names: list[str], stimulus: Any, which: Any) -> tuple[int, str]:
    """How many stimuli the testcases in a mask belong to, and the first five of them."""
    found = list(dict.fromkeys(names[s] for s in stimulus[which].tolist()))
    return len(found), ", ".join(found[:5]) + (" …" if len(found) > 5 else "")


class _RetryTool(NamedTuple):
    """How to name a tool that runs a failed test again until it passes, in its warning."""

    did: str  # "pytest-rerunfailures re-ran"
    one: str  # "rerun"
    many: str  # "reruns"
    advice: str  # how to measure one attempt instead


_RERUNFAILURES = _RetryTool(
    "pytest-rerunfailures re-ran", "rerun", "reruns", "pytest-repeat --count N"
)
_SUREFIRE_RERUN = _RetryTool(
    "Maven Surefire's rerunFailingTestsCount (or Gradle's test-retry with mergeReruns) re-ran",
    "rerun",
    "reruns",
    "JUnit 5 @RepeatedTest, TestNG invocationCount",
)
_GRADLE_RETRY = _RetryTool(
    "Gradle's test-retry plugin retried",
    "retry",
    "retries",
    "JUnit 5 @RepeatedTest, TestNG invocationCount",
)


def _warn_reruns(
    path: str,
    names: list[str],
    stimulus: Any,
    rerun: Any,
    order: Any,
    same: Any,
    tool: _RetryTool = _RERUNFAILURES,
) -> None:
    """Say that ``tool`` ran failing tests again until they passed (``rerun``: the attempts
    that were run again), and what that means for their pass rates."""
    import numpy as np

    # The most copies of a re-run test, less one, is (at least) the number of reruns allowed.
    test = np.cumsum(np.concatenate(([True], ~same[:-1])))  # in sorted order, each copy's test
    copies = np.bincount(test)
    reruns = int(copies[test[rerun[order]]].max()) - 1
    _say_retried(path, tool, *_listed(names, stimulus, rerun), reruns)


def _warn_surefire_reruns(path: str, cases: _Cases, names: list[str], stimulus: Any) -> None:
    """Say that Surefire (or Gradle with ``mergeReruns``) re-ran failing tests until they
    passed: its ``<flakyFailure>``/``<rerunFailure>`` children are read as the attempts they
    are, but those attempts stop at the first pass like any retry."""
    import numpy as np

    if not cases.extra:
        return
    rerun = np.zeros(len(cases), dtype=bool)
    rerun[list(cases.extra)] = True
    reruns = max(max(len(flaky), len(again)) for flaky, again in cases.extra.values())
    _say_retried(path, _SUREFIRE_RERUN, *_listed(names, stimulus, rerun), reruns)


def _say_retried(path: str, tool: _RetryTool, count: int, shown: str, reruns: int) -> None:
    """The warning for ``count`` stimuli (the first ``shown``) that ``tool`` ran again, at
    most ``reruns`` times each, until they passed."""
    warn(
        path,
        f"{tool.did} {count} failing {'stimulus' if count == 1 else 'stimuli'} "
        f"(up to {reruns} {tool.one if reruns == 1 else tool.many}): {shown}. "
        f"{tool.many.capitalize()} stop at the first "
        "pass (retry until pass), so these attempts are no fixed number of independent trials: "
        "the pass rate of these stimuli leans high, and a run that passed in the end shows the "
        f"probability of passing within {reruns + 1} attempts, not in one. To measure one "
        f"attempt, repeat the tests a fixed number of times ({tool.advice})",
    )


def _warn_gradle_retries(
    path: str,
    marks: bytearray,
    cases: _Cases,
    names: list[str],
    stimulus: Any,
    suite: Any,
    order: Any,
    same: Any,
) -> None:
    """Say that Gradle's test-retry plugin retried failing tests until they passed.

    Gradle (``mergeReruns = false``, its default) writes each execution as a <testcase> with
    its own result, a retry after the failure it follows, and no mark of the plugin: the
    trials are read right as they are, but their pass rates lean high as with any retry until
    pass. The copies of a <testsuite> are taken for retries only when the <testsuite> is as
    Gradle writes it (:data:`_GRADLE`, nothing foreign) and every copy but the last of its
    test failed: a copy that passed or was skipped and is followed by another is no retry
    (the plugin retries failures only), as in repeats that pass more than once.
    """
    import numpy as np

    earlier_copy = np.zeros(len(cases), dtype=bool)
    earlier_copy[order] = same  # a later copy of the same test follows in the same suite
    if not earlier_copy.any():
        return
    mark = np.frombuffer(marks, dtype=np.uint8)
    gradle = (mark & (_GRADLE | _FOREIGN)) == _GRADLE
    kind = np.frombuffer(cases.kind, dtype=np.int8)
    broken = np.zeros(len(mark), dtype=bool)
    broken[suite[earlier_copy & (kind != FAILURE)]] = True
    retried = earlier_copy & (gradle & ~broken)[suite]
    if retried.any():
        _warn_reruns(path, names, stimulus, retried, order, same, _GRADLE_RETRY)


def _hint_flakefinder(path: str, runs: dict[tuple[str, str], int]) -> None:
    """Warn when every bracketed name forms complete 0..N-1 runs, as flakefinder writes them
    (``runs``: the indices of each name as bits)."""
    sizes = {mask.bit_count() for mask in runs.values() if mask >= 0}
    complete = all(mask >= 0 and mask == (1 << mask.bit_count()) - 1 for mask in runs.values())
    if runs and complete and len(sizes) == 1 and sizes.pop() > 1:
        warn(
            path,
            "test names like 'test_x[0]', 'test_x[1]' look like pytest-flakefinder runs but are "
            "read as parameters; pass --junit-flakefinder if they are repeats",
        )


def _seconds(value: str | None) -> float:
    """A testcase's time attribute in seconds; nan when absent or not a finite number."""
    if value is None:
        return math.nan
    try:
        seconds = float(value)
    except ValueError:
        return math.nan
    return seconds if math.isfinite(seconds) else math.nan
