"""JUnit XML: repeats, flakefinder runs, reruns and Surefire retries become trials.

fixtures/junit/pytest-*.xml are real outputs of pytest 9 with pytest-repeat 0.9.4
(--count 3), pytest-flakefinder 1.1.0 (--flake-runs 3) and pytest-rerunfailures 16.7
(--reruns 2) on FIXTURE_SOURCE below; surefire-rerun.xml follows Maven Surefire's
rerun report (flakyFailure/flakyError, rerunFailure). The slow tests make fresh
reports with the plugins installed here.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from gate.errors import InputError, Provenance
from tests.ingest.conftest import FIXTURES, load_one

JUNIT = FIXTURES / "junit"

#: pytest's <testsuite> as its junitxml writes it (hostname and timestamp always, since 5.1).
PYTEST_SUITE = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite '
    'name="pytest" errors="1" failures="1" skipped="0" tests="3" time="0.050" '
    'timestamp="2025-05-01T10:00:00.000000+00:00" hostname="ci">{}</testsuite></testsuites>'
)
TEARDOWN_ERROR = (
    '<error message="failed on teardown with &quot;Exception: Teardown Exception&quot;">'
    "teardown traceback</error>"
)

FIXTURE_SOURCE = """
import pytest
COUNT = {}
def bump(key):
    COUNT[key] = COUNT.get(key, 0) + 1
    return COUNT[key]
def test_ok():
    pass
def test_flaky():
    assert bump("flaky") % 2 == 1
@pytest.mark.parametrize("p", ["a", "b"])
def test_param(p):
    assert p == "a"
def test_err(request):
    raise RuntimeError("harness down")
@pytest.fixture
def broken():
    raise OSError("no fixture")
def test_fixture_error(broken):
    pass
def test_skip():
    pytest.skip("not today")
"""


def _names(outcomes: dict[str, str]) -> dict[str, str]:
    return {name.removeprefix("test_sample::"): text for name, text in outcomes.items()}


def test_pytest_repeat_suffixes_are_trials() -> None:
    loaded = load_one(JUNIT / "pytest-repeat.xml")
    assert [x.format for x in loaded.inputs] == ["junit"]
    assert _names(loaded.outcomes()) == {
        "test_ok": "PPP",
        "test_flaky": "PFP",
        "test_param[a]": "PPP",
        "test_param[b]": "FFF",
        "test_err": "FFF",  # an exception in the test body is a failure ...
        "test_fixture_error": "EEE",  # ... one in a fixture is pytest's <error>
        "test_skip": "SSS",
    }
    assert loaded.counts() == (21, 8, 3, 3)
    where = loaded.table.stimuli[("default", "test_sample::test_flaky")].where[1]
    # A trial's place is its testcase's line (pytest writes the whole report on one line).
    assert where == Provenance(str(JUNIT / "pytest-repeat.xml"), 1)


def test_flakefinder_names_need_the_option() -> None:
    literal = load_one(JUNIT / "pytest-flake.xml")
    assert "test_ok[0]" in _names(literal.outcomes())
    assert any("--junit-flakefinder" in w for w in literal.warnings)
    runs = load_one(JUNIT / "pytest-flake.xml", junit_flakefinder=True)
    assert _names(runs.outcomes()) == {
        "test_ok": "PPP",
        "test_flaky": "PFP",
        "test_param[a]": "PPP",
        "test_param[b]": "FFF",
        "test_err": "FFF",
        "test_fixture_error": "EEE",
        "test_skip": "SSS",
    }
    assert runs.warnings == []


def test_rerunfailures_copies_are_failed_attempts() -> None:
    loaded = load_one(JUNIT / "pytest-rerun.xml")
    assert _names(loaded.outcomes()) == {
        "test_ok": "P",
        "test_flaky": "P",
        "test_param[a]": "P",
        "test_param[b]": "FFF",
        "test_err": "FFF",
        "test_fixture_error": "FFE",
        "test_skip": "S",
    }


def test_surefire_flaky_and_rerun_children() -> None:
    loaded = load_one(JUNIT / "surefire-rerun.xml")
    outcomes = {k.rpartition("::")[2]: v for k, v in loaded.outcomes().items()}
    assert outcomes == {
        "appliesDiscount": "P",
        "refundsOrder": "FEP",
        "cancelsOrder": "FFF",
        "exportsInvoice": "S",
    }
    record = loaded.table.stimuli[("default", "com.example.agent.CheckoutAgentTest::refundsOrder")]
    # Why each trial did not pass, in reading order, with its outcome, index and place.
    assert record.messages == ["expected: <REFUNDED> but was: <PENDING>", "Connection reset"]
    assert [(m.outcome, m.trial, m.where.line if m.where else None)
            for m in record.trial_messages] == [("failed", 0, 8), ("errored", 1, 8)]  # fmt: skip
    where = record.where[0]
    assert where is not None and where.line == 8
    # Reruns stop at the first pass: said, with the most reruns of a test (the property's 2).
    assert loaded.warnings == [
        f"{JUNIT / 'surefire-rerun.xml'}: Maven Surefire's rerunFailingTestsCount (or Gradle's "
        "test-retry with mergeReruns) re-ran 2 failing stimuli (up to 2 reruns): "
        "com.example.agent.CheckoutAgentTest::refundsOrder, "
        "com.example.agent.CheckoutAgentTest::cancelsOrder. Reruns stop at the first pass "
        "(retry until pass), so these attempts are no fixed number of independent trials: the "
        "pass rate of these stimuli leans high, and a run that passed in the end shows the "
        "probability of passing within 3 attempts, not in one. To measure one attempt, repeat "
        "the tests a fixed number of times (JUnit 5 @RepeatedTest, TestNG invocationCount)"
    ]


def test_repeat_lookalike_parameters_stay_parameters(tmp_path: Path) -> None:
    path = tmp_path / "report.xml"
    path.write_text(
        '<?xml version="1.0"?>\n<testsuite name="pytest">\n'
        '  <testcase classname="t" name="test_dates[2024-1-3]"/>\n'
        '  <testcase classname="t" name="test_dates[2024-2-3]"/>\n'
        "</testsuite>\n"
    )
    loaded = load_one(path)
    assert set(loaded.outcomes()) == {"t::test_dates[2024-1-3]", "t::test_dates[2024-2-3]"}


def test_same_test_in_two_suites_is_two_attempts_with_their_own_results(tmp_path: Path) -> None:
    path = tmp_path / "merged.xml"
    path.write_text(
        "<testsuites>\n"
        '  <testsuite name="job-1"><testcase classname="t" name="test_a"/></testsuite>\n'
        '  <testsuite name="job-2"><testcase classname="t" name="test_a">'
        '<failure message="boom"/></testcase></testsuite>\n'
        "</testsuites>\n"
    )
    loaded = load_one(path)
    assert loaded.outcomes() == {"t::test_a": "PF"}
    record = loaded.table.stimuli[("default", "t::test_a")]
    assert [record.where[i].line for i in (0, 1)] == [2, 3]  # type: ignore[union-attr]


def test_malformed_xml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.xml"
    path.write_text('<testsuite name="x">\n  <testcase name="a">\n</testsuite>\n')
    with pytest.raises(InputError, match=r"broken\.xml:3: not well-formed XML"):
        load_one(path)
    other = tmp_path / "other.xml"
    other.write_text("<coverage/>\n")
    with pytest.raises(InputError, match=r"other\.xml.*<coverage>"):
        load_one(other, format="junit")


def _run_pytest(tmp_path: Path, *args: str) -> Path:
    """Run the real pytest + plugin on FIXTURE_SOURCE in a subprocess; return its JUnit XML."""
    source = tmp_path / "test_sample.py"
    source.write_text(FIXTURE_SOURCE)
    report = tmp_path / f"report{len(list(tmp_path.glob('report*.xml')))}.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    subprocess.run(
        [
            sys.executable,
            *("-m", "pytest", "-p", "no:cacheprovider", "-q"),
            *args,
            f"--junitxml={report}",
            str(source),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=120,
        check=False,  # the sample fails on purpose
    )
    assert report.exists()
    return report


@pytest.mark.slow
def test_fresh_reports_from_the_real_plugins(tmp_path: Path) -> None:
    pytest.importorskip("pytest_repeat")
    pytest.importorskip("pytest_rerunfailures")
    pytest.importorskip("pytest_flakefinder")
    repeat = load_one(_run_pytest(tmp_path, "--count", "3"))
    assert repeat.counts() == (21, 8, 3, 3)
    assert _names(repeat.outcomes())["test_flaky"] == "PFP"
    flake = load_one(
        _run_pytest(tmp_path, "--flake-finder", "--flake-runs", "3"), junit_flakefinder=True
    )
    assert flake.outcomes() == repeat.outcomes()
    rerun = load_one(_run_pytest(tmp_path, "--reruns", "2"))
    assert _names(rerun.outcomes())["test_param[b]"] == "FFF"
    assert rerun.counts() == (13, 3, 1, 1)
    both = load_one(_run_pytest(tmp_path, "--count", "2", "--reruns", "1"))
    assert _names(both.outcomes())["test_err"] == "FFFF"  # 2 repeats x (attempt + rerun)
    assert _names(both.outcomes())["test_flaky"] == "PFP"  # repeat 2 failed, then its rerun passed


@pytest.mark.slow
def test_fresh_xdist_dist_each_copies_are_repeats_not_reruns(tmp_path: Path) -> None:
    """pytest-xdist --dist each runs every test on every worker and writes each run as a copy
    with no result element when it passed, as pytest-rerunfailures writes a failed attempt.
    The suite's tests="N" counts the copies (pytest counts no rerun): a suite of all-passing
    copies was read as reruns, a passing test as failing twice."""
    pytest.importorskip("xdist")
    each = load_one(_run_pytest(tmp_path, "-n", "2", "--dist", "each"))
    outcomes = _names(each.outcomes())
    assert outcomes["test_ok"] == "PP" and outcomes["test_param[a]"] == "PP"
    assert outcomes["test_err"] == "FF" and outcomes["test_skip"] == "SS"
    # Only passing copies: nothing but the count tells them from reruns.
    passing = load_one(_run_pytest(tmp_path, "-n", "2", "--dist", "each", "-k", "test_ok"))
    assert _names(passing.outcomes()) == {"test_ok": "PP"}
    assert not any("re-ran" in w for w in each.warnings + passing.warnings)


def test_copies_that_tests_counts_are_repeats_as_xdist_writes_them() -> None:
    """A real pytest-xdist 3.8 --dist each report (3 workers, pytest 9.2) of a passing test."""
    loaded = load_one(JUNIT / "pytest-xdist-each.xml")
    assert loaded.outcomes() == {"test_s::test_ok": "PPP"}
    assert loaded.warnings == [
        f"{JUNIT / 'pytest-xdist-each.xml'}: copies of one test in a <testsuite> shaped as "
        "pytest writes it are read as independent repeats (as pytest-xdist --dist each writes "
        "them), not pytest-rerunfailures reruns: the suite's tests attribute counts every "
        "copy, and pytest does not count a rerun. A copy with no result element is then a "
        "pass (1 stimulus: test_s::test_ok)"
    ]


@pytest.mark.parametrize(("tests", "read"), [("3", "PPF"), ("1", "FFF")])
def test_the_tests_attribute_tells_repeats_from_reruns(
    tmp_path: Path, tests: str, read: str
) -> None:
    """Two passing copies, then a failing last one: repeats when tests="3" counts them all
    (xdist --dist each), reruns that ran out when it counts one (rerunfailures)."""
    copy = '<testcase classname="t" name="test_x" time="0.1"/>'
    failed = '<testcase classname="t" name="test_x"><failure message="no"/></testcase>'
    path = tmp_path / "copies.xml"
    path.write_text(PYTEST_SUITE.format(copy * 2 + failed).replace('tests="3"', f'tests="{tests}"'))
    assert load_one(path).outcomes() == {"t::test_x": read}


def test_a_time_that_is_not_a_finite_number_is_no_duration(tmp_path: Path) -> None:
    from gate.ingest import IngestOptions
    from gate.ingest.junit import read

    path = tmp_path / "times.xml"
    path.write_text(
        '<testsuite name="s"><testcase classname="c" name="a" time="1e400"/>'
        '<testcase classname="c" name="b" time="nan"/>'
        '<testcase classname="c" name="c" time="0.25"/></testsuite>'
    )
    durations = [
        block.trial_at(i).metadata.get("duration_s")
        for block in read(str(path), IngestOptions())
        for i in range(len(block))
    ]
    assert durations == [None, None, 0.25]


def test_a_test_whose_every_attempt_was_skipped_is_listed_with_its_skips() -> None:
    from gate.config import GateConfig
    from gate.pipeline import CheckRequest, run_check
    from gate.report.json_report import build_report
    from gate.report.markdown import render_summary
    from gate.scoring import NotScored

    path = JUNIT / "pytest-repeat.xml"
    outcome = run_check(CheckRequest(results=(str(path),), config=GateConfig()))
    suite = outcome.suite
    # test_skip's three repeats were skipped: not scored, but not gone either.
    assert suite.not_scored == ("test_sample::test_skip",)
    assert suite.left_out == (NotScored("default", "test_sample::test_skip", 3, 0),)
    assert (suite.skipped, suite.errors, suite.trials) == (3, 3, 18)
    assert "test\\_sample\\:\\:test\\_skip (3 skipped)" in render_summary(outcome)
    report = build_report(outcome)
    assert report["suite"]["skipped"] == 3
    assert report["not_scored"] == [
        {"suite": "default", "name": "test_sample::test_skip", "skipped": 3, "errors": 0}
    ]


def test_rerunfailures_is_named_as_retry_until_pass() -> None:
    loaded = load_one(JUNIT / "pytest-rerun.xml")
    (warning,) = [w for w in loaded.warnings if "pytest-rerunfailures" in w]
    assert (
        "re-ran 3 failing stimuli (up to 2 reruns): test_sample::test_param[b], "
        "test_sample::test_err, test_sample::test_fixture_error" in warning
    )
    assert "the probability of passing within 3 attempts, not in one" in warning
    assert not any("rerunfailures" in w for w in load_one(JUNIT / "pytest-repeat.xml").warnings)


def test_what_a_rerun_pass_rate_estimates(tmp_path: Path) -> None:
    """docs/formats.md: a test passing half its attempts, run once with --reruns 2, shows a
    pass rate of 2/3 on average, and passes in the end with probability 1 - (1/2)^3 = 7/8.
    Worked through the reader on every way the run can go, as pytest-rerunfailures writes it
    (earlier attempts are copies without a result element)."""
    from fractions import Fraction

    copy = '<testcase classname="t" name="test_x" time="0.1"/>'
    failed = '<testcase classname="t" name="test_x"><failure message="no"/></testcase>'
    runs = {  # attempts as written → probability when each attempt passes with p = 1/2
        (copy,): Fraction(1, 2),  # P
        (copy, copy): Fraction(1, 4),  # F then P
        (copy, copy, copy): Fraction(1, 8),  # F F P
        (copy, copy, failed): Fraction(1, 8),  # F F F: the reruns ran out
    }
    mean_rate = Fraction(0)
    passed_in_the_end = Fraction(0)
    for number, (attempts, probability) in enumerate(runs.items()):
        path = tmp_path / f"run{number}.xml"
        # pytest's tests="N" counts the final attempt only: a rerun's outcome is "rerun".
        path.write_text(PYTEST_SUITE.format("".join(attempts)).replace('tests="3"', 'tests="1"'))
        record = load_one(path).table.stimuli[("default", "t::test_x")]
        mean_rate += probability * Fraction(record.c(), record.n())
        passed_in_the_end += probability * record.passed[-1]
    assert mean_rate == Fraction(2, 3)
    assert passed_in_the_end == 1 - Fraction(1, 2) ** 3


def test_a_teardown_error_after_a_failed_call_is_part_of_that_trial(tmp_path: Path) -> None:
    """pytest writes a test that fails in its call and then errors in teardown as two
    testcases of one name (the second with "failed on teardown with"): one run, one trial."""
    path = tmp_path / "teardown.xml"
    path.write_text(
        PYTEST_SUITE.format(
            '<testcase classname="t" name="test_refund[1-2]" time="0.010">'
            '<failure message="Exception: Call Exception">call traceback</failure></testcase>'
            '\n<testcase classname="t" name="test_refund[1-2]" time="0.005">'
            f"{TEARDOWN_ERROR}</testcase>"
            '\n<testcase classname="t" name="test_refund[2-2]" time="0.010"/>'
        )
    )
    loaded = load_one(path)
    assert loaded.outcomes() == {"t::test_refund": "FP"}
    assert loaded.counts() == (2, 1, 0, 0)
    record = loaded.table.stimuli[("default", "t::test_refund")]
    assert record.messages == [
        'Exception: Call Exception; then failed on teardown with "Exception: Teardown Exception"'
    ]
    assert [record.where[i].line for i in (0, 1)] == [1, 3]  # type: ignore[union-attr]
    # The run's time is written on its two halves: 0.010 + 0.005.
    from gate.ingest import IngestOptions
    from gate.ingest.junit import read

    durations = [d for block in read(str(path), IngestOptions()) for d in block.usage["duration_s"]]
    assert durations == [0.015, 0.010]


def test_only_a_teardown_error_after_a_failure_is_folded(tmp_path: Path) -> None:
    path = tmp_path / "separate.xml"
    path.write_text(
        PYTEST_SUITE.format(
            # A skip, then a teardown error: pytest writes a skipped test's teardown error in
            # the skipped test's own testcase, so a second copy is another run.
            '<testcase classname="t" name="test_a"><skipped message="not today"/></testcase>'
            f'<testcase classname="t" name="test_a">{TEARDOWN_ERROR}</testcase>'
            # A setup error never follows its own run's failure: another run.
            '<testcase classname="t" name="test_b"><failure message="no"/></testcase>'
            '<testcase classname="t" name="test_b"><error message="failed on setup with '
            '&quot;OSError: no fixture&quot;"/></testcase>'
            # A teardown error that broke after a pass stays in the test's own testcase.
            f'<testcase classname="t" name="test_c">{TEARDOWN_ERROR}</testcase>'
        )
    )
    assert load_one(path).outcomes() == {"t::test_a": "SE", "t::test_b": "FE", "t::test_c": "E"}


def test_a_teardown_error_on_the_last_rerun_is_part_of_it(tmp_path: Path) -> None:
    """pytest-rerunfailures 16.7, --reruns 2, a test failing in call and teardown every time:
    two empty copies, then the final failure and its teardown error (as pytest 9.2 wrote it)."""
    path = tmp_path / "rerun.xml"
    copy = '<testcase classname="t" name="test_x" time="0.001" />'
    path.write_text(
        PYTEST_SUITE.format(
            copy * 2 + '<testcase classname="t" name="test_x" time="0.001">'
            '<failure message="Exception: Call Exception">call traceback</failure></testcase>'
            f'<testcase classname="t" name="test_x" time="0.000">{TEARDOWN_ERROR}</testcase>'
        ).replace('tests="3"', 'tests="2"')  # the final failure and its teardown error
    )
    loaded = load_one(path)
    assert loaded.outcomes() == {"t::test_x": "FFF"}
    (warning,) = loaded.warnings
    assert "re-ran 1 failing stimulus (up to 2 reruns): t::test_x" in warning


GOTESTSUM = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="6" failures="1" errors="0" time="0.312000">
\t<testsuite tests="6" failures="1" skipped="0" time="0.210000" name="example.com/agent" \
timestamp="2025-05-01T10:00:00Z">
\t\t<properties>
\t\t\t<property name="go.version" value="go1.22.3 linux/amd64"></property>
\t\t</properties>
\t\t<testcase classname="example.com/agent" name="TestRefund" time="0.010000">
\t\t\t<failure message="Failed" type="">=== RUN   TestRefund&#xA;    wrong refund</failure>
\t\t</testcase>
\t\t<testcase classname="example.com/agent" name="TestRefund" time="0.010000"></testcase>
\t\t<testcase classname="example.com/agent" name="TestRefund" time="0.010000"></testcase>
\t\t<testcase classname="example.com/agent" name="TestLookup" time="0.010000"></testcase>
\t\t<testcase classname="example.com/agent" name="TestLookup" time="0.010000"></testcase>
\t\t<testcase classname="example.com/agent" name="TestLookup" time="0.010000"></testcase>
\t</testsuite>
</testsuites>
"""


def test_gotestsum_count_runs_are_independent_trials(tmp_path: Path) -> None:
    """``gotestsum --junitfile x.xml -- -count=3`` writes one testcase per run (failed runs
    first, then passed ones), an empty testcase being a pass: TestRefund failed 1 run of 3."""
    path = tmp_path / "go.xml"
    path.write_text(GOTESTSUM)
    loaded = load_one(path)
    assert loaded.outcomes() == {
        "example.com/agent::TestRefund": "FPP",
        "example.com/agent::TestLookup": "PPP",
    }
    assert loaded.counts() == (6, 5, 0, 0)
    assert loaded.warnings == []


def _suite(attributes: str, cases: str, inside: str = "") -> str:
    return f"<testsuites><testsuite {attributes}>{inside}{cases}</testsuite></testsuites>"


EMPTY = '<testcase classname="c" name="t" time="1.0"/>'
FAILED = '<testcase classname="c" name="t" time="1.0"><failure message="no"/></testcase>'
HOST_TIME = 'hostname="ci" timestamp="2025-05-01T10:00:00"'


GO_VERSION = '<properties><property name="go.version" value="go1.22.3"/></properties>'
GO_SUITE = 'name="example.com/agent" tests="3"'


@pytest.mark.parametrize(
    ("xml", "outcome", "warned"),
    [
        # pytest's own <testsuite>: earlier empty copies were failed attempts.
        pytest.param(
            _suite(f'name="pytest" {HOST_TIME}', EMPTY * 2 + FAILED), "FFF", "re-ran", id="pytest"
        ),
        pytest.param(
            _suite(f'name="pytest" {HOST_TIME}', EMPTY * 3), "FFP", "re-ran", id="pytest-passed"
        ),
        # junit_suite_name may rename pytest's suite: the name is no evidence either way.
        pytest.param(
            _suite(f'name="agent" {HOST_TIME}', EMPTY * 2), "FP", "re-ran", id="pytest-renamed"
        ),
        # promptfoo: repeats of a prompt and provider, package="promptfoo", no hostname.
        pytest.param(
            _suite('name="refund bot" package="promptfoo"', EMPTY * 2 + FAILED),
            "PPF",
            None,
            id="promptfoo",
        ),
        # go-junit-report writes hostname and timestamp, but also an id pytest never writes.
        pytest.param(
            _suite(f'{GO_SUITE} id="0" {HOST_TIME}', EMPTY * 3), "PPP", None, id="go-junit-report"
        ),
        # Gradle writes pytest's attributes, but its own <system-out> too.
        pytest.param(
            _suite(f'name="AgentTest" {HOST_TIME}', EMPTY * 3 + "<system-out/>"),
            "PPP",
            None,
            id="gradle",
        ),
        # gotestsum with every run passed: its go.version property.
        pytest.param(
            _suite(f'{GO_SUITE} timestamp="2025-05-01T10:00:00Z"', EMPTY * 3, GO_VERSION),
            "PPP",
            None,
            id="gotestsum",
        ),
        # Nothing says who wrote it: independent repeats, and a warning names the other reading.
        pytest.param(_suite(GO_SUITE, EMPTY * 3), "PPP", "lacks", id="unknown"),
        # pytest's suite, but a copy with a result is followed by another: no rerun writes that.
        pytest.param(
            _suite(f'name="pytest" {HOST_TIME}', FAILED + EMPTY * 2), "FPP", "never", id="not-rerun"
        ),
    ],
)
def test_copies_are_reruns_only_in_a_pytest_suite_written_as_reruns(
    tmp_path: Path, xml: str, outcome: str, warned: str | None
) -> None:
    path = tmp_path / "copies.xml"
    path.write_text(xml)
    loaded = load_one(path)
    assert loaded.outcomes() == {"c::t": outcome}
    if warned is None:
        assert loaded.warnings == []
    else:
        (warning,) = loaded.warnings
        assert warned in warning and "c::t" in warning


def test_copies_in_another_suite_keep_their_own_reading(tmp_path: Path) -> None:
    """A merged report: one pytest run with reruns, one gotestsum-like run of the same name."""
    path = tmp_path / "merged.xml"
    path.write_text(
        "<testsuites>"
        f'<testsuite name="pytest" {HOST_TIME}>{EMPTY * 2}</testsuite>'
        f'<testsuite name="go" package="x">{EMPTY * 3}</testsuite>'
        "</testsuites>"
    )
    loaded = load_one(path)
    assert loaded.outcomes() == {"c::t": "FPPPP"}
    (warning,) = loaded.warnings
    assert "re-ran 1 failing stimulus (up to 1 rerun): c::t" in warning


def test_googletest_disabled_and_skipped_tests_are_skipped_trials(tmp_path: Path) -> None:
    """googletest marks a test it did not run on the testcase itself, with no child element:
    ``status="notrun" result="suppressed"`` (DISABLED_), ``result="skipped"`` (GTEST_SKIP)."""
    from gate.ingest import IngestOptions
    from gate.ingest.junit import read

    path = tmp_path / "gtest.xml"
    stamp = 'timestamp="2025-05-01T10:00:00"'
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<testsuites tests="4" failures="1" disabled="1" errors="0" time="0.008" {stamp} '
        'name="AllTests">\n'
        f'  <testsuite name="AgentTest" tests="4" failures="1" disabled="1" errors="0" '
        f'time="0.008" {stamp}>\n'
        '    <testcase name="Refunds" status="run" result="completed" time="0.004" '
        f'{stamp} classname="AgentTest" />\n'
        '    <testcase name="Cancels" status="run" result="completed" time="0.004" '
        f'{stamp} classname="AgentTest">\n'
        '      <failure message="agent_test.cc:12&#x0A;Expected equality" type="">'
        "<![CDATA[agent_test.cc:12\nExpected equality of these values]]></failure>\n"
        "    </testcase>\n"
        '    <testcase name="DISABLED_Exports" status="notrun" result="suppressed" time="0" '
        f'{stamp} classname="AgentTest" />\n'
        '    <testcase name="Looks" status="run" result="skipped" time="0" '
        f'{stamp} classname="AgentTest" />\n'
        "  </testsuite>\n</testsuites>\n"
    )
    loaded = load_one(path)
    assert loaded.outcomes() == {
        "AgentTest::Refunds": "P",
        "AgentTest::Cancels": "F",
        "AgentTest::DISABLED_Exports": "S",
        "AgentTest::Looks": "S",
    }
    assert loaded.counts() == (4, 1, 0, 2)
    (block,) = read(str(path), IngestOptions())
    assert list(block.message) == [
        None,
        "agent_test.cc:12\nExpected equality",
        'status="notrun", result="suppressed"',
        'status="run", result="skipped"',
    ]
    assert block.lines == [4, 5, 9, 10]


# -- Gradle's test-retry plugin -----------------------------------------------------------------

GRADLE_RETRY = JUNIT / "gradle-retry.xml"
GRADLE_CLASS = "com.example.agent.CheckoutAgentTest"
#: gradle-retry.xml's tests: each execution is a trial with the result Gradle wrote for it.
GRADLE_OUTCOMES = {"refundsOrder()": "FFP", "greetsCustomer()": "P", "cancelsSubscription()": "FP"}


def _by_method(outcomes: dict[str, str]) -> dict[str, str]:
    return {stimulus.rpartition("::")[2]: letters for stimulus, letters in outcomes.items()}


def test_gradle_retries_are_read_as_written_and_named_as_retry_until_pass() -> None:
    """gradle-retry.xml: as Gradle's JUnitXmlResultWriter writes retries with mergeReruns off
    (each execution its own testcase, each with its result, retries after the failures)."""
    loaded = load_one(GRADLE_RETRY)
    assert _by_method(loaded.outcomes()) == GRADLE_OUTCOMES
    assert loaded.counts() == (6, 3, 0, 0)
    (warning,) = loaded.warnings
    assert (
        f"Gradle's test-retry plugin retried 2 failing stimuli (up to 2 retries): "
        f"{GRADLE_CLASS}::refundsOrder(), {GRADLE_CLASS}::cancelsSubscription(). Retries stop "
        "at the first pass (retry until pass)" in warning
    )
    assert "passing within 3 attempts, not in one" in warning
    assert "(JUnit 5 @RepeatedTest, TestNG invocationCount)" in warning


def _gradle_variant(tmp_path: Path, old: str, new: str) -> Path:
    path = tmp_path / "TEST-com.example.agent.CheckoutAgentTest.xml"
    text = GRADLE_RETRY.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return path


def test_gradle_copies_after_a_pass_are_repeats_not_retries(tmp_path: Path) -> None:
    """The plugin retries failures only: a copy that passed and is followed by another (a
    test repeated under one name, as TestNG invocationCount writes it) is no retry."""
    passed_first = (
        '<testcase name="greetsCustomer()" classname="com.example.agent.CheckoutAgentTest" '
        'time="0.311"/>'
    )
    path = _gradle_variant(tmp_path, passed_first, passed_first * 2)
    loaded = load_one(path)
    assert _by_method(loaded.outcomes()) == {**GRADLE_OUTCOMES, "greetsCustomer()": "PP"}
    assert loaded.warnings == []


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # the build turned the output logs off: nothing left tells Gradle's report
        ("  <system-out><![CDATA[]]></system-out>\n  <system-err><![CDATA[]]></system-err>\n", ""),
        ('errors="0"', 'errors="1"'),  # Gradle writes errors="0" whatever happened
        ('hostname="ci-runner-7"', 'hostname="ci-runner-7" package="com.example"'),  # Ant's
    ],
)
def test_only_a_suite_as_gradle_writes_it_is_read_for_retries(
    tmp_path: Path, old: str, new: str
) -> None:
    loaded = load_one(_gradle_variant(tmp_path, old, new))
    assert _by_method(loaded.outcomes()) == GRADLE_OUTCOMES
    assert not any("test-retry" in w for w in loaded.warnings)


def test_gradle_merged_reruns_read_as_surefire_children(tmp_path: Path) -> None:
    """With reports.junitXml.mergeReruns = true Gradle writes Surefire's children: a flaky
    test's failures as <flakyFailure> (with a <stackTrace> child) in its passing testcase."""
    path = tmp_path / "TEST-merged.xml"
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<testsuite name="com.example.AgentTest" tests="1" skipped="0" failures="0" errors="0" '
        'timestamp="2026-11-20T09:14:02.118Z" hostname="ci" time="2.1">\n'
        "  <properties/>\n"
        '  <testcase name="refundsOrder()" classname="com.example.AgentTest" time="1.0">\n'
        '    <flakyFailure message="expected: &lt;REFUNDED&gt; but was: &lt;PENDING&gt;" '
        'type="org.opentest4j.AssertionFailedError">\n'
        "      <stackTrace>org.opentest4j.AssertionFailedError: expected ...</stackTrace>\n"
        "    </flakyFailure>\n"
        "  </testcase>\n"
        "  <system-out><![CDATA[]]></system-out>\n"
        "  <system-err><![CDATA[]]></system-err>\n"
        "</testsuite>\n"
    )
    loaded = load_one(path)
    assert loaded.outcomes() == {"com.example.AgentTest::refundsOrder()": "FP"}
    record = loaded.table.stimuli[("default", "com.example.AgentTest::refundsOrder()")]
    assert record.messages == ["expected: <REFUNDED> but was: <PENDING>"]
    assert [w.partition(": ")[2][:74] for w in loaded.warnings] == [
        "Maven Surefire's rerunFailingTestsCount (or Gradle's test-retry with merge"
    ]
    assert "re-ran 1 failing stimulus (up to 1 rerun): " in loaded.warnings[0]


@pytest.mark.parametrize(
    "name", ["pytest-repeat.xml", "surefire-rerun.xml", "pytest-rerun.xml", "gradle-retry.xml"]
)
def test_attempts_in_small_blocks_are_the_same_trials(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The attempts are handed on a block at a time, each stimulus's trials numbered on from
    # the block before: blocks of one and two attempts give the trials one block gives.
    from gate.ingest import IngestOptions, junit

    def trials() -> list[Any]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            blocks = list(junit.read(str(FIXTURES / "junit" / name), IngestOptions()))
        return [block.trial_at(i) for block in blocks for i in range(len(block))]

    whole = trials()
    assert len({(t.stimulus, t.trial) for t in whole}) == len(whole) > 3
    for size in (1, 2):
        monkeypatch.setattr(junit, "_EMIT_BLOCK", size)
        assert trials() == whole


def test_a_single_byte_encoding_is_read_and_another_is_a_located_error(tmp_path: Path) -> None:
    # pyexpat reads a one-byte encoding it does not know itself through Python's codecs;
    # a name no codec has, or a multi-byte one, is the declaration's error (exit 2), never a
    # LookupError or ValueError escaping as an internal error.
    body = '<testsuite name="s"><testcase classname="c" name="café"/></testsuite>\n'
    latin = tmp_path / "cp1252.xml"
    latin.write_bytes(b'<?xml version="1.0" encoding="windows-1252"?>\n' + body.encode("cp1252"))
    table = load_one(latin).table
    assert list(table.stimuli) == [("default", "c::café")]
    for name, reason in (("utf-9", "unknown encoding: utf-9"), ("big5", "multi-byte")):
        path = tmp_path / f"{name}.xml"
        path.write_bytes(f'<?xml version="1.0" encoding="{name}"?>\n{body}'.encode())
        with pytest.raises(InputError) as caught:
            load_one(path)
        assert caught.value.where == Provenance(str(path), 1)
        assert f"names an encoding that cannot be read ({reason}" in str(caught.value)
