"""Where an output file may point: a named pipe, a descriptor (``/dev/stdout``, ``/dev/fd/N``),
a link. The report is written whole or not at all, and writing it never hangs or replaces a
link."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from gate.cli import main
from gate.errors import OutputError
from gate.fileio import atomic_write
from tests.conftest import EXAMPLES

RESULTS = str(EXAMPLES / "failing" / "results.jsonl")
CONFIG = str(EXAMPLES / "failing" / ".eval-gate.yml")


def _in_thread(target: object, *args: object) -> threading.Thread:
    """Run ``target`` where a hang fails the test instead of holding the suite."""
    thread = threading.Thread(target=target, args=args, daemon=True)  # type: ignore[arg-type]
    thread.start()
    thread.join(20)
    assert not thread.is_alive(), "the write hung"
    return thread


def test_a_named_pipe_no_process_reads_is_a_warning_not_a_hang(tmp_path: Path) -> None:
    """Opening a FIFO to write waits for a reader: `check --json fifo` hung until killed."""
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    results: list[object] = []

    def run() -> None:
        results.append(
            CliRunner().invoke(
                main, ["check", RESULTS, "--config", CONFIG, "--json", str(fifo), "-q"]
            )
        )

    _in_thread(run)
    (result,) = results
    assert result.exit_code == 1, result.output  # type: ignore[attr-defined]
    assert (
        f"the JSON report was not written: {fifo}: cannot write: a named pipe that no process "
        "reads" in result.stderr  # type: ignore[attr-defined]
    )
    assert fifo.is_fifo()


def test_a_named_pipe_with_a_reader_gets_the_whole_report(tmp_path: Path) -> None:
    """``--json >(jq .)`` is a pipe with a reader: written as a pipe is, not refused."""
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as pipe:
            received.append(pipe.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    text = json.dumps({"rows": ["x" * 1000] * 200})  # more than a pipe's 64 KiB buffer
    _in_thread(atomic_write, str(fifo), text)
    reader.join(20)
    assert received == [text.encode()]


def test_a_descriptor_is_written_in_place_and_appended_to(tmp_path: Path) -> None:
    """``--json /dev/stdout > file`` renamed a temporary file onto ``/dev/stdout``: as root that
    replaced the link with a file, and the shell's file stayed empty. ``/dev/fd/N`` is the
    same path through ``/proc``; what the file holds already (``>>``) is kept."""
    log = tmp_path / "log.txt"
    log.write_text("earlier line\n", encoding="utf-8")
    descriptor = os.open(log, os.O_WRONLY | os.O_APPEND)
    try:
        atomic_write(f"/dev/fd/{descriptor}", "the report\n")
    finally:
        os.close(descriptor)
    assert log.read_text(encoding="utf-8") == "earlier line\nthe report\n"
    assert os.path.islink("/dev/stdout")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.txt"]  # no temporary left


def test_a_link_stays_a_link_and_its_target_gets_the_report(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    target = tmp_path / "reports" / "latest.json"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o640)
    link = tmp_path / "report.json"
    link.symlink_to(Path("reports") / "latest.json")
    atomic_write(str(link), "new")
    assert link.is_symlink() and os.readlink(link) == os.path.join("reports", "latest.json")
    assert target.read_text(encoding="utf-8") == "new"
    assert target.stat().st_mode & 0o777 == 0o640  # the target's mode kept
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == ["latest.json"]


def test_a_loop_of_links_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    with pytest.raises(OutputError, match="a: cannot write: Too many levels of symbolic links"):
        atomic_write(str(tmp_path / "a"), "x")
    assert os.readlink(tmp_path / "a") == "b" and os.readlink(tmp_path / "b") == "a"


def test_a_proc_entry_other_than_a_descriptor_is_refused() -> None:
    """Appending in place is for this process's descriptors; a kernel setting under /proc
    (writable as root, as in the action's container) is no report file."""
    setting = Path("/proc/sys/vm/swappiness")
    before = setting.read_text(encoding="ascii")
    with pytest.raises(OutputError, match="a /proc entry other than a descriptor"):
        atomic_write("/proc/sys/vm/swappiness", "10\n")
    assert setting.read_text(encoding="ascii") == before
