"""Every bound on reading input, in one table: name, default, and the variable that changes it.

Inputs come from places nobody reviewed (a fork's artifact, a generated report), and a few
kilobytes can claim or unpack to gigabytes, nest a hundred thousand levels deep or never end.
Each reader asks this table how far it may go; exceeding a limit is a clear input error (exit
code 2) that names the file, the limit and, where one exists, the variable that raises it.
docs/limits.md lists the same table (a test keeps the two equal).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from gate.errors import QUOTED_CHARS, ConfigError

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB


@dataclass(frozen=True)
class Limit:
    """One bound. ``variable`` is None for bounds that no legitimate input comes near."""

    name: str
    default: int
    unit: str  # "bytes", "levels", "columns", "seconds", ...
    what: str
    variable: str | None = None

    def value(self) -> int:
        """The default, or the positive whole number the environment variable gives."""
        if self.variable is None:
            return self.default
        text = os.environ.get(self.variable, "").strip()
        if not text:
            return self.default
        if not text.isdigit() or int(text) < 1:
            raise ConfigError(
                f"environment variable {self.variable}: expected a positive number of "
                f"{self.unit}, found {text[:40]!r}"
            )
        return int(text)

    def advice(self) -> str:
        """The clause of an error message that says how to allow more."""
        if self.variable is None:
            return f"at most {self.describe(self.value())}"
        return f"at most {self.describe(self.value())} (set {self.variable} to allow more)"

    def describe(self, amount: int) -> str:
        if self.unit != "bytes":
            return f"{amount:,} {self.unit}"
        for size, suffix in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
            if amount >= size and amount % size == 0:
                return f"{amount // size} {suffix}"
        return f"{amount:,} bytes"


INPUT_BYTES = Limit(
    "input file size",
    4 * GIB,
    "bytes",
    "one results, baseline or counts file as stored",
    "EVAL_GATE_MAX_INPUT_BYTES",
)
DOCUMENT_BYTES = Limit(
    "document size",
    512 * MIB,
    "bytes",
    "one JSON value parsed whole: a .json results file read whole, one element or member of a "
    "document read piece by piece (promptfoo, Inspect, tau-bench, tau2-bench), an Inspect "
    ".eval header; memory grows with it",
    "EVAL_GATE_MAX_DOCUMENT_BYTES",
)
INSPECT_UNPACKED_BYTES = Limit(
    "Inspect archive unpacked size",
    2 * GIB,
    "bytes",
    "all members read from one Inspect .eval archive together, after unpacking (deflate, "
    "bzip2, zstd), whatever sizes the archive declares",
    "EVAL_GATE_INSPECT_MAX_BYTES",
)
LINE_BYTES = Limit(
    "line length",
    64 * MIB,
    "bytes",
    "one line of a JSONL or CSV file",
    "EVAL_GATE_MAX_LINE_BYTES",
)
CSV_COLUMNS = Limit("CSV columns", 10_000, "columns", "columns in a CSV header", None)
CSV_FIELD_CHARS = Limit(
    "CSV field", 128 * KIB, "characters", "one CSV cell (Python's csv default)", None
)
JSON_DEPTH = Limit(
    "JSON nesting",
    254,
    "levels",
    "arrays and objects inside each other in a JSON value (orjson's own limit for writing "
    "JSON back, which the duplicate-key check does); checked before parsing, in linear time",
    None,
)
JSON_VALUES = Limit(
    "JSON values",
    25_000_000,
    "values",
    "numbers, strings, arrays and objects in one JSON document or line, counted before it is "
    "parsed: each costs 30-100 bytes of memory once parsed (a 100 MiB array of zeros is 52 "
    "million of them)",
    "EVAL_GATE_MAX_JSON_VALUES",
)
INTEGER_DIGITS = Limit(
    "integer digits",
    4300,
    "digits",
    "digits of one integer in JSON or YAML (Python's int() limit)",
    None,
)
XML_DEPTH = Limit("XML nesting", 256, "levels", "elements inside each other in JUnit XML", None)
XML_ATTRIBUTE_CHARS = Limit(
    "XML attribute",
    1 * MIB,
    "characters",
    "one attribute value in JUnit XML (a test name, a failure message)",
    "EVAL_GATE_MAX_XML_ATTRIBUTE_CHARS",
)
XML_TEXT_CHARS = Limit(
    "XML text kept",
    64 * KIB,
    "characters",
    "text kept from one result element in JUnit XML (its first line is the message; the rest "
    "is read and dropped)",
    None,
)
TRIAL_MESSAGE_CHARS = Limit(
    "trial message",
    1000,
    "characters",
    "why one trial failed or errored, as kept from any format (a failure message, a grader's "
    "reason, an error); longer text is cut, marked with an ellipsis",
    None,
)
CONFIG_BYTES = Limit("configuration size", 1 * MIB, "bytes", "the YAML configuration file", None)
CONFIG_DEPTH = Limit(
    "configuration nesting", 32, "levels", "mappings and lists inside each other in YAML", None
)
CONFIG_NODES = Limit(
    "configuration nodes",
    10_000,
    "nodes",
    "values in the YAML configuration once aliases are expanded (a 'billion laughs' "
    "document of nested anchors is refused before it is built)",
    None,
)
EVENT_BYTES = Limit(
    "event payload size",
    64 * MIB,
    "bytes",
    "the runner's event payload (GITHUB_EVENT_PATH; GitHub caps payloads at 25 MB)",
    None,
)
FOLDER_ENTRIES = Limit(
    "folder entries",
    1_000_000,
    "entries",
    "files and folders one results folder or glob may visit",
    None,
)
SUITES = Limit(
    "suites",
    1_000,
    "suites",
    "suites in the results of one run, declared or named by a record: each is scored, "
    "given its own intervals and Bayes@N and reported on its own (a file that gives every "
    "stimulus its own suite usually maps a per-stimulus column to the suite)",
    "EVAL_GATE_MAX_SUITES",
)
TRIALS = Limit(
    "trials",
    20_000_000,
    "trials",
    "trials of one run given one by one (a counts file's totals do not count): each is kept "
    "for the per-trial statistics, 60-100 bytes of memory (20 million are about 2 GB); "
    "past it, give each stimulus's totals as a counts file (docs/scale.md)",
    "EVAL_GATE_MAX_TRIALS",
)
API_DEADLINE_SECONDS = Limit(
    "GitHub API deadline",
    300,
    "seconds",
    "all GitHub API calls of one action run together, retries and waits included; a "
    "server that answers too slowly is given up on and the comment is skipped with a notice",
    "EVAL_GATE_API_DEADLINE_SECONDS",
)
API_RESPONSE_BYTES = Limit(
    "GitHub API response", 16 * MIB, "bytes", "one response body from the GitHub API", None
)
MESSAGE_CHARS = Limit(
    "quoted text in errors",
    QUOTED_CHARS,
    "characters",
    "each part of an error message that quotes an input (a value, the columns found)",
    None,
)
KEPT_MESSAGE_CHARS = Limit(
    "message kept",
    500,
    "characters",
    "the text kept of each of the first 3 messages of a stimulus (why a trial failed, errored "
    "or was skipped; and of its first error's), for the report; the rest of a longer message "
    "is cut",
    None,
)

STIMULUS_COUNTED_TRIALS = Limit(
    "trials of one stimulus as totals",
    2**31,
    "trials",
    "`n` + `skipped` of one counts row: its exact tests sum logs of factorials, whose "
    "rounding grows with the trials (a p-value of 0.5 read 0.49 at 10^12 trials a side); at "
    "2^31 they are within 10^-5",
)
RUN_COUNTED_TRIALS = Limit(
    "trials of one run as totals",
    2**53,
    "trials",
    "`n` + `skipped` over every counts row of one run: the totals are kept in 64-bit "
    "integers and read as floats, exact up to 2^53 (two rows of 2^62 wrapped to a negative "
    "total and a wrong verdict)",
)
ALL: tuple[Limit, ...] = (
    INPUT_BYTES,
    DOCUMENT_BYTES,
    INSPECT_UNPACKED_BYTES,
    LINE_BYTES,
    CSV_COLUMNS,
    CSV_FIELD_CHARS,
    JSON_DEPTH,
    JSON_VALUES,
    INTEGER_DIGITS,
    XML_DEPTH,
    XML_ATTRIBUTE_CHARS,
    XML_TEXT_CHARS,
    TRIAL_MESSAGE_CHARS,
    CONFIG_BYTES,
    CONFIG_DEPTH,
    CONFIG_NODES,
    EVENT_BYTES,
    FOLDER_ENTRIES,
    SUITES,
    TRIALS,
    STIMULUS_COUNTED_TRIALS,
    RUN_COUNTED_TRIALS,
    API_DEADLINE_SECONDS,
    API_RESPONSE_BYTES,
    MESSAGE_CHARS,
    KEPT_MESSAGE_CHARS,
)
