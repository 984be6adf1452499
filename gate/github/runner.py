"""The runner's file commands and workflow commands (actions/toolkit rules).

- Step outputs go to the file named by ``GITHUB_OUTPUT`` as ``name<<DELIMITER`` blocks with a
  random delimiter, so a value can hold newlines and cannot end its own block.
- The job summary goes to ``GITHUB_STEP_SUMMARY``; over 1 MiB the runner drops it, so it is
  trimmed below that with a visible notice.
- Annotations are ``::error title=...::message`` lines on stdout; the UI shows about ten of each
  level per step, so the most important ones are printed and the rest counted in one line.
"""

from __future__ import annotations

import errno
import os
import stat
import uuid
from collections.abc import Callable, Mapping, Sequence

from gate.fileio import open_to_append
from gate.github.trim import trim_markdown, utf8_bytes
from gate.redact import redact
from gate.report.annotations import Annotation
from gate.report.escape import log_text, workflow_data, workflow_property
from gate.report.markdown import fold_order

#: the runner refuses a step summary larger than this (actions/runner, 1 MiB).
SUMMARY_LIMIT_BYTES = 1024 * 1024
#: the UI shows about this many annotations of each level per step.
ANNOTATIONS_PER_LEVEL = 10


def output_block(name: str, value: str, make_delimiter: Callable[[], str] | None = None) -> str:
    """One ``name<<DELIMITER`` block; the delimiter is random and occurs in neither part."""
    make = make_delimiter or (lambda: f"ghadelimiter_{uuid.uuid4()}")
    delimiter = make()
    while delimiter in name or delimiter in value:
        delimiter = make()
    if not name or "\n" in name or "\r" in name:
        raise ValueError(f"bad output name {name!r}")
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def _append(path: str, text: str) -> None:
    """Append to a file command's file; raises OSError (a folder, no permission, not a
    regular file: opening a FIFO to write waits for a reader, which would hold the step
    until the job's timeout; a device takes anything and shows nothing)."""
    try:
        descriptor = open_to_append(path, create=True)  # a FIFO with no reader: ENXIO
    except OSError as error:
        if error.errno == errno.ENXIO:
            raise OSError(errno.ENXIO, _NOT_REGULAR) from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise OSError(errno.EINVAL, _NOT_REGULAR)
    except BaseException:
        os.close(descriptor)
        raise
    with open(descriptor, "a", encoding="utf-8", errors="backslashreplace", newline="\n") as handle:
        handle.write(text)


_NOT_REGULAR = "not a regular file"


def write_outputs(path: str, outputs: Mapping[str, str]) -> None:
    """Append outputs to the ``GITHUB_OUTPUT`` file (other steps' commands may share it)."""
    _append(path, "".join(output_block(name, redact(value)) for name, value in outputs.items()))


def fit_summary(markdown: str, budget: int, where_the_rest_is: str) -> str:
    """``markdown`` trimmed to ``budget`` bytes, ending with a notice when something was cut."""

    def notice(lines_left_out: int) -> str:
        return (
            f"> [!WARNING]\n> This summary was trimmed to fit GitHub's 1 MiB limit: "
            f"{lines_left_out:,} more {'line is' if lines_left_out == 1 else 'lines are'}"
            f" not shown. {where_the_rest_is}"
        )

    left_out = f"_Left out of this summary for GitHub's 1 MiB limit. {where_the_rest_is}".strip()
    left_out += "_"
    return trim_markdown(markdown, budget, notice, utf8_bytes, left_out, fold_order)


def append_summary(path: str, markdown: str, where_the_rest_is: str) -> None:
    """Append to the step summary file, trimmed to what is left of the 1 MiB limit."""
    try:
        used = os.path.getsize(path)
    except OSError:
        used = 0
    # Leave a little room: other tools in the same step may append a line after us.
    budget = max(0, SUMMARY_LIMIT_BYTES - used - 1024)
    text = fit_summary(redact(markdown), budget, where_the_rest_is)
    _append(path, text if text.endswith("\n") else text + "\n")


def annotation_path(file: str, workspace: str | None = None) -> str | None:
    """A result file as an annotation's ``file=``: relative to the workspace (the current
    folder by default), as GitHub matches it against the repository; None outside it."""
    base = os.path.realpath(workspace or os.getcwd())
    path = os.path.realpath(file) if os.path.isabs(file) else os.path.join(base, file)
    relative = os.path.relpath(os.path.normpath(path), base)
    if relative == os.curdir or relative.split(os.sep)[0] == os.pardir:
        return None
    return relative.replace(os.sep, "/")


def annotation_command(annotation: Annotation, workspace: str | None = None) -> str:
    """``::level file=...,line=...,title=...::message``, redacted, then escaped per the
    toolkit's rules; ``file`` and ``line`` when the annotation names a result file."""
    properties = []
    path = annotation_path(annotation.file, workspace) if annotation.file else None
    if path is not None:
        properties.append(f"file={workflow_property(redact(path))}")
        if annotation.line is not None:
            properties.append(f"line={annotation.line}")
    properties.append(f"title={workflow_property(redact(annotation.title))}")
    return (
        f"::{annotation.level} {','.join(properties)}::{workflow_data(redact(annotation.message))}"
    )


def ranked_with(annotations: Sequence[Annotation], extra: Annotation) -> list[Annotation]:
    """``annotations`` (most important first) with ``extra`` first among those of its level:
    an action-level warning outranks each flaky stimulus, but not a failed gate's error."""
    rank = {"error": 0, "warning": 1, "notice": 2}
    position = next(
        (i for i, a in enumerate(annotations) if rank[a.level] >= rank[extra.level]),
        len(annotations),
    )
    return [*annotations[:position], extra, *annotations[position:]]


def annotation_commands(
    annotations: Sequence[Annotation], per_level: int = ANNOTATIONS_PER_LEVEL
) -> list[str]:
    """The first ``per_level`` annotations of each level (input is most important first), then
    one notice counting what was left out, so nothing is silently lost."""
    shown: list[str] = []
    counts: dict[str, int] = {}
    left_out: dict[str, int] = {}
    for annotation in annotations:
        counts[annotation.level] = counts.get(annotation.level, 0) + 1
        if counts[annotation.level] <= per_level:
            shown.append(annotation_command(annotation))
        else:
            left_out[annotation.level] = left_out.get(annotation.level, 0) + 1
    if left_out:
        what = ", ".join(f"{n:,} more {level}(s)" for level, n in left_out.items())
        shown.append(
            annotation_command(
                Annotation(
                    "notice",
                    "eval-gate: more annotations",
                    f"{what} not shown as annotations: see the job summary and the JSON report.",
                )
            )
        )
    return shown


def log_line(text: str) -> str:
    """A log line that cannot start a workflow command: redacted, no newline or control
    character survives in it (each is shown as its escape)."""
    return log_text(redact(text))
