"""Tell a results file's format from its content (the file name only breaks ties).

Only the first 64 KiB are read: JSON documents are recognised from the keys
near their top (a tiny scanner that tolerates the cut-off), JSONL from its
first records, XML from its root element, zip archives from their member
names, and CSV from a header line.
"""

from __future__ import annotations

import csv
import json
import os
import re
import zipfile
from collections.abc import Iterator

from gate.errors import InputError, Provenance
from gate.reading import open_input, read_head

SNIFF_BYTES = 64 * 1024
#: how far a JSONL file whose first line is a suite declaration longer than the sniff (a
#: suite of thousands of categories) is read to see the record after it
_LONG_SUITE_LINE_BYTES = 4 * 1024 * 1024
_SUITE_DECLARATION = re.compile(r'"type"\s*:\s*"suite"')
#: json_keys records no key deeper than this: 64 KiB of "[" must not build paths of 64K.
_MAX_PATH = 8
_DEEP: tuple[str, ...] = ("…",)
_JSONL_LINES = 50

#: what ``detect`` can name, for the error when nothing fits.
_KNOWN = (
    "native eval-gate JSON/JSONL, Inspect AI .eval/.json log, promptfoo results.json/.jsonl, "
    "JUnit XML, tau-bench/tau2-bench results, Vally results.jsonl, an eval-gate counts file, "
    "or a CSV with a header"
)


def _first_json_line(head: str) -> dict[str, object] | None:
    for line in head.splitlines():
        if line.strip():
            try:
                value = json.loads(line)
            except (ValueError, RecursionError):  # a head of 60,000 "[" is no record
                return None
            return value if isinstance(value, dict) else None
    return None


def _json_lines(head: str) -> Iterator[dict[str, object]]:
    """Complete JSON objects among the head's first lines (a cut-off last line is skipped)."""
    for count, line in enumerate(head.splitlines()):
        if count >= _JSONL_LINES:
            return
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            yield value


def json_keys(text: str, max_depth: int = 2) -> set[tuple[str, ...]]:
    """Key paths of a (possibly truncated) JSON text, down to ``max_depth`` objects deep.

    Arrays are transparent and written as ``[]``: ``[{"task_id": 0}]`` gives
    ``("[]", "task_id")``. Scanning stops quietly where the text is cut off.

    >>> sorted(json_keys('{"a": {"b": [1, {"c": 2}]}, "d": "x'))
    [('a',), ('a', 'b'), ('d',)]
    """
    keys: set[tuple[str, ...]] = set()
    stack: list[tuple[str, tuple[str, ...]]] = []  # (kind "{" or "[", path of the container)
    key: str | None = None  # the current object's last key
    expecting_key = False
    index, size = 0, len(text)
    while index < size:
        char = text[index]
        if char == '"':
            end = index + 1
            while end < size and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            if end >= size:
                break
            if stack and stack[-1][0] == "{" and expecting_key:
                try:
                    key = json.loads(text[index : end + 1])
                except ValueError:
                    key = None
                path = stack[-1][1]
                deep = path is _DEEP
                if key is not None and not deep and sum(p != "[]" for p in path) < max_depth:
                    keys.add((*path, key))
                expecting_key = False
            index = end + 1
            continue
        if char in "{[":
            if not stack:
                path = ()
            elif stack[-1][1] is _DEEP or len(stack[-1][1]) >= _MAX_PATH:
                path = _DEEP  # no key that deep is looked for: stop growing paths
            elif stack[-1][0] == "{":
                path = (*stack[-1][1], key or "")
            else:
                path = (*stack[-1][1], "[]")
            stack.append((char, path))
            expecting_key = char == "{"
        elif char in "}]":
            if stack:
                stack.pop()
            expecting_key = False
        elif char == ",":
            expecting_key = bool(stack) and stack[-1][0] == "{"
        index += 1
    return keys


def _json_document_format(keys: set[tuple[str, ...]]) -> str | None:
    top = {key[0] for key in keys if len(key) == 1}
    if "schema_version" in top and "stimuli" in top:
        return "native"
    if "eval" in top and top & {"samples", "results", "status", "version"}:
        return "inspect"
    if ("results", "results") in keys or ("evalId" in top and "results" in top):
        return "promptfoo"
    if top & {"simulations", "simulation_index"} or (
        "info" in top and ("info", "num_trials") in keys and "tasks" in top
    ):
        return "tau2-bench"
    if {("[]", "task_id"), ("[]", "reward")} <= keys:
        return "tau-bench"
    if {("[]", "stimulus"), ("[]", "n"), ("[]", "c")} <= keys and ("[]", "trial") not in keys:
        return "counts"
    return None


#: what Inspect AI writes beside the logs of a log folder, by file name: ``inspect eval-set``'s
#: ``eval-set.json`` (write_eval_set_info: the set's id and tasks), ``logs.json``
#: (write_log_dir_manifest: each log's header, keyed by the log's file name) and
#: ``listing.json`` (write_log_listing: each log's overview, keyed the same way).
INSPECT_MANIFESTS = {
    "eval-set.json": "the eval set's manifest (inspect eval-set)",
    "logs.json": "the manifest of a log folder's headers (inspect eval-set)",
    "listing.json": "the listing of a log folder (inspect eval-set, inspect view bundle)",
}


def _names_logs(keys: set[tuple[str, ...]], fields: set[str]) -> bool:
    """Whether a JSON object maps Inspect log file names to objects with ``fields``: an empty
    object is the manifest of an empty folder."""
    logs = {key[0] for key in keys if len(key) == 1}
    if not all(name.endswith((".eval", ".json")) for name in logs):
        return False
    return all({(name, field) for field in fields} <= keys for name in sorted(logs)[:1])


def inspect_manifest(path: str) -> str | None:
    """What Inspect manifest ``path`` is (told by its name AND its content), or None.

    A folder of Inspect logs holds these beside the logs; they are no results. The content is
    checked too, so that a results file of another tool that happens to be named
    ``logs.json`` is still read. A file that cannot be read is no manifest here: reading it
    says what is wrong.
    """
    name = os.path.basename(path)
    what = INSPECT_MANIFESTS.get(name)
    if what is None:
        return None
    try:
        head = read_head(path, SNIFF_BYTES).decode("utf-8", errors="replace")
    except InputError:
        return None
    head = head.lstrip("\ufeff \t\r\n")
    if not head.startswith("{"):
        return None
    keys = json_keys(head)
    top = {key[0] for key in keys if len(key) == 1}
    if name == "eval-set.json":
        manifest = {"eval_set_id", "tasks"} <= top and "eval" not in top
    elif name == "logs.json":
        manifest = _names_logs(keys, {"eval"})
    else:
        manifest = _names_logs(keys, {"eval_id", "task"})
    return what if manifest else None


def first_line(head: str) -> str:
    """The first line of ``head`` (a file's sniffed start) that is not blank, without a
    leading byte order mark."""
    return next((line for line in head.lstrip("\ufeff").splitlines() if line.strip()), "")


def promptfoo_result_line(line: str) -> bool:
    """Whether a JSONL line (perhaps cut off by the sniff) is one promptfoo result, as
    ``promptfoo eval -o results.jsonl`` writes one per line: an ``EvaluateResult`` (src/types),
    with ``testIdx`` and ``testCase`` (a result whose transcript fills the sniff before them
    still shows ``prompt.raw``, written near its start). A document's first line is not one: a
    pretty-printed results.json starts with a lone ``{``, a minified one has ``evalId`` and
    ``results`` at its top."""
    if not line.lstrip().startswith("{"):
        return False
    keys = json_keys(line)
    top = {key[0] for key in keys if len(key) == 1}
    if top & {"evalId", "results"}:
        return False
    return {"testIdx", "testCase"} <= top or ("prompt", "raw") in keys


def _is_counts_row(record: dict[str, object]) -> bool:
    return {"stimulus", "n", "c"} <= record.keys() and "trial" not in record


def _jsonl_format(records: list[dict[str, object]], head: str, name: str) -> str | None:
    if any(record.get("type") == "trial-result" for record in records):
        return "vally"
    rows = [record for record in records if record.get("type") != "suite"]
    if rows and _is_counts_row(rows[0]):
        return "counts"
    first = records[0] if records else None
    if first is not None and ("stimulus" in first or first.get("type") == "suite"):
        return "native"
    if '"schema_version"' in head[:4096] and '"stimuli"' in head:
        return "native"
    if records and (name.endswith(".jsonl") or len(records) > 1):
        return "jsonl"
    return None


def _detect_zip(path: str) -> str:
    try:
        with open_input(path) as handle, zipfile.ZipFile(handle) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError) as error:
        raise InputError(f"not a readable zip archive ({error})", Provenance(path)) from None
    if "header.json" in names or "_journal/start.json" in names:
        return "inspect"
    raise InputError(
        "a zip archive that is not an Inspect AI log",
        Provenance(path),
        expected="an Inspect .eval log (with header.json or _journal/start.json)",
        found="members " + ", ".join(sorted(names)[:5]),
    )


def _xml_root(head: str) -> str | None:
    index = 0
    while True:
        index = head.find("<", index)
        if index < 0 or index + 1 >= len(head):
            return None
        following = head[index + 1]
        if following in "?!":
            # Skip the declaration, comments and a doctype.
            close = head.find("-->", index) + 3 if head.startswith("<!--", index) else 0
            index = close if close > 2 else head.find(">", index) + 1
            if index <= 0:
                return None
            continue
        end = index + 1
        while end < len(head) and head[end] not in " \t\r\n/>":
            end += 1
        return head[index + 1 : end].rpartition(":")[2]


def _looks_like_csv(head: str, path: str) -> bool:
    lines = [line for line in head.splitlines() if line.strip()]
    if not lines:
        return False
    by_name = path.lower().endswith((".csv", ".tsv"))
    try:
        dialect = csv.Sniffer().sniff(lines[0], delimiters=",;\t|")
    except csv.Error:
        return by_name
    header = next(csv.reader([lines[0]], dialect))
    if len(header) < 2:
        return by_name
    # Without the name, only a header that names a trial-table column will do.
    return by_name or any(cell.strip().lower() in ("stimulus", "stimulus_id") for cell in header)


def detect(path: str) -> str:
    """Return the format name of ``path``; raise :class:`InputError` when nothing fits."""
    raw = read_head(path, SNIFF_BYTES)
    if raw.startswith(b"PK\x03\x04") or raw.startswith(b"PK\x05\x06"):
        return _detect_zip(path)
    manifest = inspect_manifest(path)
    if manifest is not None:
        # Named on its own (a folder or glob leaves it out): say what it is.
        raise InputError(
            f"{manifest}, not a results file",
            Provenance(path),
            expected="the Inspect logs beside it (.eval or .json); a folder argument reads "
            "them and leaves this file out",
        )
    head = raw.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if len(raw) == SNIFF_BYTES and "\n" not in head and _SUITE_DECLARATION.search(head):
        # Native and counts files both start so; the record after it tells them apart.
        raw = read_head(path, _LONG_SUITE_LINE_BYTES)
        head = raw.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    name = os.path.basename(path).lower()
    if head.startswith("{"):
        records = list(_json_lines(head)) if _first_json_line(head) is not None else []
        one_per_line = len(records) > 1 or (records and name.endswith(".jsonl"))
        if not one_per_line:
            # A pretty or minified JSON document is told by its keys.
            document = _json_document_format(json_keys(head))
            if document is not None:
                return document
        first = first_line(head)
        # Before the generic JSONL rules: a promptfoo result line has neither a stimulus nor a
        # type, and its first line may be longer than the sniff.
        if promptfoo_result_line(first):
            return "promptfoo"
        jsonl = _jsonl_format(records, head, name)
        if jsonl is not None:
            return jsonl
        # A first record that is not valid JSON: pick the reader by what the line holds,
        # so that it reports the parse error with its line and column.
        if '"trial-result"' in first:
            return "vally"
        if '"stimulus"' in first:
            return "native"
        if name.endswith(".jsonl"):
            return "jsonl"
    elif head.startswith("["):
        document = _json_document_format(json_keys(head))
        if document is not None:
            return document
    elif head.startswith("<"):
        root = _xml_root(head)
        if root in ("testsuites", "testsuite"):
            return "junit"
        raise InputError(
            f"an XML file whose root element is <{root}>",
            Provenance(path),
            expected="JUnit XML (root <testsuites> or <testsuite>)",
        )
    elif _looks_like_csv(head, name):
        return "csv"
    raise InputError(
        "cannot tell the format of this file",
        Provenance(path),
        expected=f"one of: {_KNOWN}; or pass --format explicitly",
    )
