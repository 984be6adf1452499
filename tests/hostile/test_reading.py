"""gate.reading and gate.limits, piece by piece: what is opened, walked, measured and refused."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest

from gate.errors import ConfigError, InputError
from gate.ingest import look_alike_names
from gate.reading import (
    confined_to,
    count_byte,
    json_depth_exceeds,
    json_values_exceed,
    line_blocks,
    match_glob,
    open_input,
    read_whole,
    split_lines,
    text_blocks,
    walk_folder,
)


def test_only_regular_files_are_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=r"pipe: a named pipe \(FIFO\): only regular files"):
        open_input(str(fifo))  # returns at once: opened without blocking, then refused
    with pytest.raises(InputError, match="a directory"):
        open_input(str(tmp_path))
    with pytest.raises(InputError, match="a character device"):
        open_input("/dev/zero")
    with pytest.raises(InputError, match=r"/proc or /sys"):
        open_input("/proc/self/environ")  # S_ISREG, size 0: refused by where it lives
    link = tmp_path / "status.jsonl"
    link.symlink_to("/proc/self/status")
    with pytest.raises(InputError, match=r"status\.jsonl: a file of the kernel's /proc"):
        open_input(str(link))
    with pytest.raises(InputError, match="No such file"):
        open_input(str(tmp_path / "missing"))


def test_in_the_action_only_files_inside_the_workspace_are_read(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    inside = workspace / "r.jsonl"
    inside.write_text("{}\n")
    outside = tmp_path / "secret.txt"
    outside.write_text("x")
    (workspace / "escape.jsonl").symlink_to(outside)
    (workspace / "alias.jsonl").symlink_to(inside)
    with confined_to(str(workspace)):
        assert read_whole(str(inside)) == b"{}\n"
        assert read_whole(str(workspace / "alias.jsonl")) == b"{}\n"  # a link that stays in
        with pytest.raises(InputError, match=r"outside the workspace: it resolves to .*secret"):
            read_whole(str(workspace / "escape.jsonl"))
        assert read_whole(str(outside), confine=False) == b"x"  # the runner's own files
    assert read_whole(str(workspace / "escape.jsonl")) == b"x"  # the CLI reads what it is given


def test_size_limits_name_the_file_the_limit_and_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b" " * 2048)
    monkeypatch.setenv("EVAL_GATE_MAX_DOCUMENT_BYTES", "1024")
    with pytest.raises(InputError) as raised:
        read_whole(str(path))
    assert str(raised.value) == (
        f"{path}: the file is over the document size limit (2 KiB); expected at most 1 KiB "
        "(set EVAL_GATE_MAX_DOCUMENT_BYTES to allow more)"
    )
    monkeypatch.setenv("EVAL_GATE_MAX_DOCUMENT_BYTES", "lots")
    with pytest.raises(ConfigError, match="EVAL_GATE_MAX_DOCUMENT_BYTES: expected a positive"):
        read_whole(str(path))


def test_lines_are_cut_in_blocks_and_a_long_line_is_refused_before_it_is_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"a\nbb\n\nccc")
    with open_input(str(path)) as handle:
        blocks = list(line_blocks(handle, str(path), 3))
    assert blocks == [(1, 0, [b"a\n"]), (2, 2, [b"bb\n", b"\n"]), (4, 6, [b"ccc"])]
    monkeypatch.setenv("EVAL_GATE_MAX_LINE_BYTES", "4")
    path.write_bytes(b"ok\n" + b"x" * 100 + b"\n")
    with open_input(str(path)) as handle, pytest.raises(InputError, match=r"r\.jsonl:2: the line"):
        list(line_blocks(handle, str(path), 3))
    # A limit below the block size: a line inside one block (line 3), or one a block
    # completes (line 2, 5 bytes begun in the block before), is refused too.
    path.write_bytes(b"ok\nfine\nxxxxx\n")
    with open_input(str(path)) as handle, pytest.raises(InputError, match=r"r\.jsonl:3: the line"):
        list(line_blocks(handle, str(path), 1024))
    path.write_bytes(b"ok\nxxxxx\n")
    with open_input(str(path)) as handle, pytest.raises(InputError, match=r"r\.jsonl:2: the line"):
        list(line_blocks(handle, str(path), 4))
    path.write_bytes(b"ok\nxxxx\nyy")  # at the limit: read
    with open_input(str(path)) as handle:
        assert [line for _, _, lines in line_blocks(handle, str(path), 1024) for line in lines] == [
            b"ok\n", b"xxxx\n", b"yy"
        ]


def test_text_blocks_are_line_blocks_uncut_and_number_lines_alike(tmp_path: Path) -> None:
    """A bare CR ends no line in either (the JSONL readers hand such a block on); numbering
    counts line ends the same way in blocks too big for ``bytes.count``."""
    path = tmp_path / "r.jsonl"
    body = b"a\r\nb\rc\n" + b"x,y\n" * 3000 + b"\n\r\n" + b"z" * 5000 + b"\nlast\r"
    path.write_bytes(body)
    for size in (3, 64, 10_000, 1 << 20):
        with open_input(str(path)) as handle:
            cut = list(line_blocks(handle, str(path), size))
        with open_input(str(path)) as handle:
            whole = list(text_blocks(handle, str(path), size))
        assert [(n, at, split_lines(text)) for n, at, text in whole] == cut
        assert b"".join(text for _, _, text in whole) == body
        lines = [line for _, _, block in cut for line in block]
        assert lines[:3] == [b"a\r\n", b"b\rc\n", b"x,y\n"] and lines[-1] == b"last\r"
        assert len(lines) == 2 + 3000 + 2 + 2 and cut[-1][0] + len(cut[-1][2]) - 1 == len(lines)
    assert split_lines(b"") == [] and split_lines(b"\r") == [b"\r"]
    for data in (b"", b"::", body, body * 7):
        assert count_byte(data, b"\n") == data.count(b"\n")
        assert count_byte(data, b":") == data.count(b":")


def _tree(root: Path) -> None:
    (root / "a" / "b").mkdir(parents=True)
    for name in ("a/one.jsonl", "a/b/two.json", "a/b/notes.txt", "a/.hidden.json"):
        (root / name).write_text("{}")
    (root / "a" / "loop").symlink_to(root / "a")
    (root / "a" / "b" / "up").symlink_to(root)
    (root / "a" / "usr").symlink_to("/usr")
    (root / "outside.json").write_text("{}")
    (root / "a" / "out.json").symlink_to(root / "outside.json")
    (root / "a" / "in.json").symlink_to(root / "a" / "one.jsonl")


def test_a_folder_walk_follows_no_link_to_a_folder_and_none_out_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = walk_folder("a", (".json", ".jsonl"))
    assert found == ["a/b/two.json", "a/in.json", "a/one.jsonl"]
    assert [str(w.message) for w in caught] == [
        f"a/out.json: skipped: a symbolic link to {tmp_path}/outside.json, outside the folder a"
    ]


def test_globs_do_not_descend_into_links_and_stay_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert match_glob("a/**/*.json") == ["a/b/two.json", "a/in.json", "a/out.json"]
    assert match_glob("a/**") == [
        "a/b/notes.txt",
        "a/b/two.json",
        "a/in.json",
        "a/one.jsonl",
        "a/out.json",
    ]
    assert match_glob("a/*/two.json") == ["a/b/two.json"]
    assert match_glob("a/.h*") == ["a/.hidden.json"]
    assert match_glob(str(tmp_path / "a" / "b" / "*.json")) == [str(tmp_path / "a/b/two.json")]


def test_json_nesting_is_measured_outside_strings_in_linear_time() -> None:
    assert not json_depth_exceeds("[" * 254 + "]" * 254, 254)
    assert json_depth_exceeds("[" * 255 + "]" * 255, 254)
    assert json_depth_exceeds(b"{" + b'"a":[' * 300 + b"]" * 300 + b"}", 254)
    assert not json_depth_exceeds('["' + "[" * 1000 + '"]', 254)  # brackets in a string
    assert not json_depth_exceeds('["\\"' + "{" * 1000 + '"]', 254)  # after an escaped quote
    assert json_depth_exceeds("[" * 2_000_000, 254)


def test_json_values_are_counted_before_parsing() -> None:
    assert not json_values_exceed("[1,2,3]", 4)
    assert json_values_exceed("[1,2,3,4,5]", 4)
    assert not json_values_exceed('["a,b,c,d,e,f"]', 4)  # commas in a string
    zeros = b"[" + b"0," * 1000 + b"0]"
    assert json_values_exceed(zeros, 1000) and not json_values_exceed(zeros, 1002)
    assert len(json.loads(zeros)) == 1001


def test_names_that_look_the_same_in_the_report_are_noted() -> None:
    long = "x" * 250
    notes = look_alike_names(
        [
            ("s", "caf\u00e9"),
            ("s", "cafe\u0301"),  # NFD: the same word
            ("s", long + "A"),
            ("s", long + "B"),  # differ after character 199: the report cuts there
            ("s", "a\nb"),
            ("s", "a b"),  # the report shows a newline as a space
            ("t", "caf\u00e9"),  # another suite: no clash
            ("s", "plain"),
        ]
    )
    assert notes == [
        "stimuli 'caf\\xe9' and 'cafe\\u0301' of suite 's' look the same in the report: they "
        "differ only in Unicode normalisation (NFC/NFD)",
        "stimuli …'xxxxxxxxxxxxxxxxxxxxA' and …'xxxxxxxxxxxxxxxxxxxxB' of suite 's' look the same "
        "in the report: they differ only after character 199, where the report cuts names",
        "stimuli 'a b' and 'a\\nb' of suite 's' look the same in the report: they differ only "
        "in control or bidirectional characters",
    ]


@pytest.mark.parametrize("name", ["a\x00b", "\ud800.jsonl"])
def test_a_name_no_file_can_have_is_an_error_everywhere_not_a_crash(
    tmp_path: Path, name: str
) -> None:
    """argv and the environment cannot hold a NUL or a lone surrogate; a library caller (or
    CliRunner) can, and os.* raise ValueError for them where they raise OSError otherwise."""
    from click.testing import CliRunner

    from gate.cli import main
    from gate.errors import OutputError
    from gate.fileio import atomic_write, refuse_overwriting
    from gate.github.cli import action_command
    from gate.reading import open_input

    with pytest.raises(InputError, match="not a file name"):
        open_input(name)
    with pytest.raises(OutputError, match="cannot write: not a file name"):
        atomic_write(name, "x")
    refuse_overwriting({"--json": name}, [name, str(tmp_path)])  # no clash, no crash
    results = str(Path(__file__).parents[2] / "examples" / "failing" / "results.jsonl")
    for option in ("--config", "--json", "--summary"):
        result = CliRunner().invoke(main, ["check", results, option, name])
        assert result.exit_code == 2, result.output
        assert f"Invalid value for '{option}'" in result.output
        assert "not a file name" in result.output and "internal error" not in result.output
    result = CliRunner().invoke(
        action_command,
        ["--dry-run", "-i", f"results={results}", "-i", f"config={name}"],
        env={"GITHUB_STEP_SUMMARY": None, "GITHUB_OUTPUT": None},
    )
    assert result.exit_code == 2
    assert "cannot read the configuration" in result.stdout
    assert "not a file name" in result.stdout and "internal error" not in result.stdout
