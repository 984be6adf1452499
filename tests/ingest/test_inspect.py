"""Inspect AI logs: committed real logs (zstd .eval, deflate .eval, .json) and a fresh one.

The fixtures were written by inspect-ai 0.3.285 running tests/ingest/inspect_task.py
(mockllm, 5 samples x 4 epochs, scorers match/grade/confidence); see fixtures/README.md.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from gate import limits
from gate.errors import ConfigError, InputError, Provenance
from gate.ingest import archive as archive_reader
from gate.ingest import jsonstream
from tests.ingest.conftest import FIXTURES, load_one

INSPECT = FIXTURES / "inspect"
LOGS = ["mock_reliability.eval", "mock_reliability-deflate.eval", "mock_reliability.json"]
# Under the headline scorer 'match' (C/I): 'flaky' answers "almost no" on even epochs.
MATCH = {"easy": "PPPP", "hard": "FFFF", "flaky": "PFPF", "3": "PPPF", "boom": "PEPP"}


@pytest.mark.parametrize("name", LOGS)
def test_epochs_become_trials(name: str) -> None:
    loaded = load_one(INSPECT / name)
    assert [x.format for x in loaded.inputs] == ["inspect"]
    assert loaded.table.suite_names() == ["mock_reliability"]
    assert loaded.outcomes() == MATCH
    assert loaded.counts() == (20, 12, 1, 0)
    boom = loaded.table.stimuli[("mock_reliability", "boom")]
    assert boom.messages == ["RuntimeError('sandbox exploded on epoch 2')"]
    # The default scorer is named, and so are the ones left out.
    assert any("'match'" in w and "'grade'" in w and "--scorer" in w for w in loaded.warnings)


def test_provenance_points_into_the_archive() -> None:
    loaded = load_one(INSPECT / "mock_reliability.eval")
    where = loaded.table.stimuli[("mock_reliability", "easy")].where[0]
    assert where is not None and where.pointer is not None
    assert where.pointer.startswith("summaries.json#/")


def test_scorer_choice_and_letter_grades() -> None:
    graded = load_one(INSPECT / "mock_reliability.eval", scorer="grade")
    assert graded.warnings == []
    flaky = graded.table.stimuli[("mock_reliability", "flaky")]
    assert flaky.scores == [1.0, 0.5, 1.0, 0.5]  # P is half credit ...
    assert flaky.passed == [True, False, True, False]  # ... and not a pass by default
    lenient = load_one(INSPECT / "mock_reliability.eval", scorer="grade", pass_threshold=0.5)
    assert lenient.table.stimuli[("mock_reliability", "flaky")].passed == [True] * 4


def test_numeric_scorer_needs_a_threshold_to_pass() -> None:
    strict = load_one(INSPECT / "mock_reliability.json", scorer="confidence")
    assert strict.counts()[1] == 0  # 0.9 never reaches the default 1.0
    lenient = load_one(INSPECT / "mock_reliability.json", scorer="confidence", pass_threshold=0.8)
    assert lenient.outcomes() == MATCH


def test_unknown_scorer_lists_the_scorers() -> None:
    with pytest.raises(InputError, match=r"no scorer 'accuracy'.*'match', 'grade', 'confidence'"):
        load_one(INSPECT / "mock_reliability.eval", scorer="accuracy")


def test_zstd_without_the_zstandard_package_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if sys.version_info >= (3, 14):
        pytest.skip("Python 3.14 reads zstd zip members itself")
    # A None entry in sys.modules makes the import fail: hide every zstd decoder.
    for name in ("zstandard", "compression.zstd", "backports.zstd"):
        monkeypatch.setitem(sys.modules, name, None)
    if "backports" in sys.modules:
        monkeypatch.delattr(sys.modules["backports"], "zstd", raising=False)
    with pytest.raises(InputError, match=r"mock_reliability\.eval at .*pip install zstandard"):
        load_one(INSPECT / "mock_reliability.eval")
    # Deflate logs (older Inspect versions) need nothing extra.
    assert load_one(INSPECT / "mock_reliability-deflate.eval").counts()[0] == 20


def _rezip(source: Path, target: Path, replace: dict[str, bytes | None]) -> None:
    """Copy a deflate .eval, replacing (or, for None, dropping) some members."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            if info.filename in replace:
                data = replace[info.filename]
                if data is not None:
                    new.writestr(info.filename, data)
            else:
                new.writestr(info.filename, old.read(info))


def test_reductions_are_not_trials_and_old_logs_without_summaries_read_samples(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.eval"
    _rezip(
        INSPECT / "mock_reliability-deflate.eval",
        path,
        {"summaries.json": None, "_journal/summaries/1.json": None},
    )
    loaded = load_one(path)
    assert loaded.outcomes() == MATCH
    where = loaded.table.stimuli[("mock_reliability", "easy")].where[0]
    assert where is not None and where.pointer == "samples/easy_epoch_1.json"


def test_unfinished_run_is_read_from_the_journal_and_reported(tmp_path: Path) -> None:
    with zipfile.ZipFile(INSPECT / "mock_reliability-deflate.eval") as archive:
        summaries = json.loads(archive.read("summaries.json"))
    path = tmp_path / "running.eval"
    _rezip(
        INSPECT / "mock_reliability-deflate.eval",
        path,
        {
            "header.json": None,
            "summaries.json": None,
            "reductions.json": None,
            "_journal/summaries/1.json": json.dumps(summaries[:7]).encode(),
        },
    )
    loaded = load_one(path)
    assert loaded.counts()[0] == 7
    assert any("incomplete" in w and "7 of 20" in w for w in loaded.warnings)


def test_a_rerun_sample_supersedes_its_earlier_record(tmp_path: Path) -> None:
    document = json.loads((INSPECT / "mock_reliability.json").read_text())
    rerun = dict(next(s for s in document["samples"] if s["id"] == "boom" and s["epoch"] == 2))
    rerun["error"] = None
    rerun["scores"] = {"match": {"value": "C"}}
    document["samples"].append(rerun)
    path = tmp_path / "log.json"
    path.write_text(json.dumps(document))
    assert load_one(path).outcomes()["boom"] == "PPPP"


def test_list_values_are_refused_with_a_hint(tmp_path: Path) -> None:
    document = json.loads((INSPECT / "mock_reliability.json").read_text())
    document["samples"][0]["scores"]["match"]["value"] = {"a": 1, "b": 0}
    path = tmp_path / "log.json"
    path.write_text(json.dumps(document))
    with pytest.raises(InputError, match=r"log\.json at /samples/0: scorer 'match' gave a dict"):
        load_one(path, scorer="match")


def test_corrupt_member_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.eval"
    _rezip(INSPECT / "mock_reliability-deflate.eval", path, {"header.json": b'{"eval": '})
    with pytest.raises(InputError, match=r"bad\.eval at header\.json: not valid JSON"):
        load_one(path, format="inspect")
    garbage = tmp_path / "garbage.eval"
    garbage.write_bytes(b"PK\x03\x04" + bytes(64))
    with pytest.raises(InputError, match=r"garbage\.eval"):
        load_one(garbage, format="inspect")


def test_truncated_zstd_member_is_an_input_error(tmp_path: Path) -> None:
    data = bytearray((INSPECT / "mock_reliability.eval").read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        info = archive.getinfo("summaries.json")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start + 20 : start + 40] = bytes(20)  # scribble over the compressed bytes
    path = tmp_path / "scribbled.eval"
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"scribbled\.eval at summaries\.json: corrupt"):
        load_one(path)


# -- archives from anywhere: limits on what they unpack to ------------------------------------


def _declare_size(data: bytearray, name: str, size: int) -> None:
    """Make the archive declare ``size`` unpacked bytes for member ``name``, in its local
    header and in the central directory, leaving the compressed data as it is."""
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        info = archive.getinfo(name)
        offset = archive.start_dir
    struct.pack_into("<I", data, info.header_offset + 22, size)
    while data[offset : offset + 4] == b"PK\x01\x02":
        name_length, extra_length, comment_length = struct.unpack_from("<HHH", data, offset + 28)
        if data[offset + 46 : offset + 46 + name_length] == name.encode():
            struct.pack_into("<I", data, offset + 24, size)
        offset += 46 + name_length + extra_length + comment_length


LIMIT_VARIABLE = "EVAL_GATE_INSPECT_MAX_BYTES"


class _Unpacked(list[str]):
    """Records the members the archive reader unpacks."""

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        real = archive_reader._unpack

        def spy(method: int, raw: bytes, limit: int, where: Provenance) -> bytes:
            self.append(str(where.pointer))
            return real(method, raw, limit, where)

        monkeypatch.setattr(archive_reader, "_unpack", spy)


def test_the_default_limit_is_2_gib(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LIMIT_VARIABLE, raising=False)
    assert limits.INSPECT_UNPACKED_BYTES.variable == LIMIT_VARIABLE
    assert limits.INSPECT_UNPACKED_BYTES.value() == 2 * 1024**3
    monkeypatch.setenv(LIMIT_VARIABLE, "lots")
    with pytest.raises(ConfigError, match="EVAL_GATE_INSPECT_MAX_BYTES: expected a positive"):
        load_one(INSPECT / "mock_reliability.eval")


def test_a_zip_bomb_member_is_refused_by_its_declared_size_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bomb = tmp_path / "bomb.eval"
    size = 48 * 1024**2  # 48 MiB of spaces deflate to about 50 KB
    _rezip(INSPECT / "mock_reliability-deflate.eval", bomb, {"summaries.json": b" " * size})
    assert bomb.stat().st_size < 1024**2
    limit = 16 * 1024**2
    monkeypatch.setenv(LIMIT_VARIABLE, str(limit))
    opened = _Unpacked()
    opened.install(monkeypatch)
    with zipfile.ZipFile(bomb) as archive:
        header_size = archive.getinfo("header.json").file_size
    with pytest.raises(InputError) as raised:
        load_one(bomb, format="inspect")
    assert str(raised.value) == (
        f"{bomb} at summaries.json: zip member declares {size} bytes unpacked, more than the "
        f"{limit - header_size} bytes left of the {limit}-byte limit for one Inspect log; "
        "expected an Inspect log that unpacks to at most 16 MiB "
        "(set EVAL_GATE_INSPECT_MAX_BYTES to allow more)"
    )
    assert opened == ["header.json"]  # summaries.json was never decompressed
    assert raised.value.exit_code == 2


def test_the_limit_counts_every_member_of_the_archive(monkeypatch: pytest.MonkeyPatch) -> None:
    log = INSPECT / "mock_reliability.eval"
    with zipfile.ZipFile(log) as archive:
        header = archive.getinfo("header.json").file_size
        summaries = archive.getinfo("summaries.json").file_size
    # Each member alone fits; both together do not.
    monkeypatch.setenv(LIMIT_VARIABLE, str(header + summaries - 1))
    with pytest.raises(InputError, match=r"at summaries\.json: zip member declares"):
        load_one(log)
    monkeypatch.setenv(LIMIT_VARIABLE, str(header + summaries))
    assert load_one(log).counts()[0] == 20


@pytest.mark.parametrize("name", ["mock_reliability.eval", "mock_reliability-deflate.eval"])
def test_a_member_that_understates_its_size_is_stopped_at_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    data = bytearray((INSPECT / name).read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        header = archive.getinfo("header.json").file_size
    _declare_size(data, "summaries.json", 100)
    path = tmp_path / "liar.eval"
    path.write_bytes(bytes(data))
    limit = header + 3000  # the 11 KB summaries never fit in what is left
    monkeypatch.setenv(LIMIT_VARIABLE, str(limit))
    with pytest.raises(InputError) as raised:
        load_one(path, format="inspect")
    # Deflate and zstd alike: unpacking stops one byte past what is left, whatever was declared.
    assert str(raised.value).startswith(
        f"{path} at summaries.json: zip member unpacks to more (it declares 100 bytes), "
        f"more than the 3000 bytes left of the {limit}-byte limit for one Inspect log"
    )
    monkeypatch.delenv(LIMIT_VARIABLE)
    with pytest.raises(InputError, match=r"at summaries\.json: corrupt zip member"):
        load_one(path, format="inspect")


def test_zstd_decompression_stops_one_byte_past_the_limit() -> None:
    module = "backports.zstd" if sys.version_info < (3, 14) else "compression.zstd"
    zstd = pytest.importorskip(module)
    raw = zstd.compress(bytes(8 * 1024**2)) + zstd.compress(bytes(1024))  # two frames
    where = Provenance("x.eval", pointer="m")
    assert len(archive_reader.zstd_decompress(raw, where, 1000)) == 1001
    assert len(archive_reader.zstd_decompress(raw, where, 10 * 1024**2)) == 8 * 1024**2 + 1024


@pytest.mark.slow
def test_a_fresh_log_from_inspect_ai(tmp_path: Path) -> None:
    """Run the real tool offline (mockllm) and read what it wrote, zstd .eval and .json."""
    pytest.importorskip("inspect_ai")
    task = Path(__file__).resolve().parent / "inspect_task.py"
    for log_format in ("eval", "json"):
        done = subprocess.run(
            [sys.executable, str(task), str(tmp_path / log_format), log_format],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        (log,) = (tmp_path / log_format).glob(f"*.{log_format}")
        loaded = load_one(log)
        assert loaded.outcomes() == MATCH
        assert loaded.counts() == (20, 12, 1, 0)


# -- NaN: Inspect's mark for a score it could not give ---------------------------------------


def _unscore(samples: list[dict[str, Any]], scorer: str, cases: set[tuple[Any, int]]) -> None:
    """Give ``scorer`` the value NaN on the (id, epoch) ``cases``, as Score.unscored() does."""
    for sample in samples:
        if (sample["id"], sample["epoch"]) in cases:
            sample["scores"][scorer]["value"] = math.nan
            sample["scores"][scorer]["explanation"] = "Grade not found in model output"


UNSCORED = {("flaky", 2), ("flaky", 4)}  # grade gave these P (half credit): now NaN


def test_nan_scores_are_read_from_json_logs_and_skip_only_their_scorers_trials(
    tmp_path: Path,
) -> None:
    document = json.loads((INSPECT / "mock_reliability.json").read_text())
    _unscore(document["samples"], "grade", UNSCORED)
    document["results"]["scores"][1]["metrics"]["mean"]["value"] = math.nan
    document["results"]["scores"][2]["metrics"]["mean"]["value"] = math.inf
    path = tmp_path / "log.json"
    path.write_text(json.dumps(document, indent=2))  # json writes NaN/Infinity as Inspect does
    assert "NaN" in path.read_text() and "Infinity" in path.read_text()
    # The headline scorer 'match' has no NaN: its trials are as without them.
    by_match = load_one(path)
    assert by_match.outcomes() == MATCH
    assert not any("unscored" in w for w in by_match.warnings)
    # Decided by 'grade', the two NaN epochs of 'flaky' are skipped trials, not failures.
    by_grade = load_one(path, scorer="grade")
    assert by_grade.outcomes()["flaky"] == "PSPS"
    assert by_grade.counts() == (20, 12, 1, 2)
    flaky = by_grade.table.stimuli[("mock_reliability", "flaky")]
    assert flaky.messages == ["unscored by 'grade': Grade not found in model output"] * 2
    assert by_grade.warnings == [
        f"{path}: 2 trial(s) are unscored by 'grade' (its value is NaN, Inspect's mark for a "
        "score it could not give, left out of its metrics; some Inspect versions wrote it as "
        "null): counted as skipped"
    ]


def test_nan_scores_are_read_from_eval_archives(tmp_path: Path) -> None:
    source = INSPECT / "mock_reliability-deflate.eval"
    with zipfile.ZipFile(source) as archive:
        summaries = json.loads(archive.read("summaries.json"))
        header = json.loads(archive.read("header.json"))
    _unscore(summaries, "grade", UNSCORED)
    header["results"]["scores"][1]["metrics"]["mean"]["value"] = math.nan
    path = tmp_path / "nan.eval"
    _rezip(
        source,
        path,
        {"summaries.json": json.dumps(summaries).encode(), "header.json": json.dumps(header)},
    )
    assert load_one(path).outcomes() == MATCH
    by_grade = load_one(path, scorer="grade")
    assert by_grade.outcomes()["flaky"] == "PSPS"
    assert by_grade.counts() == (20, 12, 1, 2)
    # A skipped trial keeps its place in the archive (trial 1 is epoch 2).
    where = by_grade.table.stimuli[("mock_reliability", "flaky")].where[1]
    at = next(i for i, s in enumerate(summaries) if (s["id"], s["epoch"]) == ("flaky", 2))
    assert where is not None and where.pointer == f"summaries.json#/{at}"


def test_null_scores_written_for_nan_by_some_inspect_versions_are_unscored_too(
    tmp_path: Path,
) -> None:
    """pydantic wrote NaN as null in some Inspect versions (every score, September 2025; still
    inside dict- and list-valued scores): read as the NaN it stands for, in .json and .eval."""
    document = json.loads((INSPECT / "mock_reliability.json").read_text())
    _unscore(document["samples"], "grade", UNSCORED)
    text = json.dumps(document).replace("NaN", "null")
    assert text.count('"value": null') == 2
    path = tmp_path / "null.json"
    path.write_text(text)
    by_grade = load_one(path, scorer="grade")
    assert by_grade.outcomes()["flaky"] == "PSPS"
    assert by_grade.counts() == (20, 12, 1, 2)
    flaky = by_grade.table.stimuli[("mock_reliability", "flaky")]
    assert flaky.messages == ["unscored by 'grade': Grade not found in model output"] * 2
    assert any("2 trial(s) are unscored by 'grade'" in w for w in by_grade.warnings)
    # Under the chosen key of a dict-valued scorer, where Inspect's own type allows None.
    rubric = _rubric_log(tmp_path)
    rubric.write_text(rubric.read_text().replace("NaN", "null"))
    by_key = load_one(rubric, scorer="rubric.relevance")
    assert by_key.outcomes() == RELEVANCE
    assert by_key.counts() == (20, 9, 1, 1)
    # And in an .eval archive's summaries.
    source = INSPECT / "mock_reliability-deflate.eval"
    with zipfile.ZipFile(source) as archive:
        summaries = json.loads(archive.read("summaries.json"))
    _unscore(summaries, "grade", UNSCORED)
    archived = tmp_path / "null.eval"
    summaries_text = json.dumps(summaries).replace("NaN", "null").encode()
    _rezip(source, archived, {"summaries.json": summaries_text})
    assert load_one(archived, scorer="grade").outcomes()["flaky"] == "PSPS"
    # A null from a scorer that did not decide changes nothing.
    assert load_one(archived).outcomes() == MATCH


def test_pieces_with_nan_are_parsed_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every sample with a NaN: each piece goes to the decoder that reads NaN in one call, never
    element by element (which scans the buffer for each element's end: 2,000 samples took 8 s,
    50,000 over ten minutes)."""

    def element_by_element(*args: Any) -> Any:
        raise AssertionError("a piece with NaN was parsed element by element")

    monkeypatch.setattr(jsonstream.JsonStream, "_strict_elements", element_by_element)
    samples = [
        {"id": i, "epoch": 1, "scores": {"judge": {"value": math.nan}, "match": {"value": "C"}}}
        for i in range(3000)
    ]
    path = tmp_path / "log.json"
    path.write_text(json.dumps({"eval": {"task": "t"}, "samples": samples}, indent=2))
    assert load_one(path, scorer="judge", format="inspect").counts() == (3000, 0, 0, 3000)
    assert load_one(path, scorer="match", format="inspect").counts() == (3000, 3000, 0, 0)


def test_other_non_finite_values_are_read_but_do_not_decide(tmp_path: Path) -> None:
    document = json.loads((INSPECT / "mock_reliability.json").read_text())
    document["samples"][0]["scores"]["confidence"]["value"] = -math.inf
    path = tmp_path / "log.json"
    path.write_text(json.dumps(document))
    assert load_one(path).outcomes() == MATCH
    with pytest.raises(InputError) as raised:
        load_one(path, scorer="confidence")
    assert str(raised.value) == (
        f"{path} at /samples/0: scorer 'confidence' gave a non-finite value; found -inf"
    )


def test_nan_stays_refused_in_every_other_json_format(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text('{"evalId": "e", "results": {"results": [{"score": NaN}]}}')
    with pytest.raises(InputError, match=r"at /results/results/0/score: NaN is not valid JSON"):
        load_one(path)


# -- a folder written by inspect eval-set: manifests beside the logs --------------------------

#: as inspect-ai 0.3.285's eval_set() wrote it (write_eval_set_info).
EVAL_SET = {
    "eval_set_id": "FUZYMGmp4GPdCxTZGBETCq",
    "tasks": [
        {
            "name": "mock_reliability",
            "task_id": "UzKaPgZKqxHdRnu45jdVxW",
            "task_args": {},
            "model": "mockllm/model",
            "model_args": {"custom_outputs": None},
            "sequence": 0,
        }
    ],
}


def _eval_set_folder(folder: Path) -> str:
    """A log folder as ``inspect eval-set`` leaves it: one log and the three manifests."""
    folder.mkdir()
    name = "2026-11-23T15-22-12-00-00_mock-reliability_JNKbaq2Pz7gHdX498RHK3M.eval"
    shutil.copy(INSPECT / "mock_reliability.eval", folder / name)
    document = json.loads((INSPECT / "mock_reliability.json").read_text())
    header = {key: value for key, value in document.items() if key != "samples"}
    (folder / "eval-set.json").write_text(json.dumps(EVAL_SET, indent=2))
    # write_log_dir_manifest: each log's header, keyed by its name in the folder.
    (folder / "logs.json").write_text(json.dumps({name: header}, indent=2))
    # write_log_listing (newer Inspect): each log's overview, keyed the same way.
    overview = {
        "eval_id": "BfrEFrLFtNbRjJwjgMXVjM",
        "run_id": "jNrvq3YV3rswqYRMZJLuYx",
        "task": "mock_reliability",
        "task_id": "UzKaPgZKqxHdRnu45jdVxW",
        "task_version": 0,
        "version": 2,
        "status": "success",
        "model": "mockllm/model",
        "started_at": "2026-11-23T15:22:12+00:00",
        "completed_at": "2026-11-23T15:22:14+00:00",
    }
    (folder / "listing.json").write_text(json.dumps({name: overview}))
    return name


def test_a_folder_from_inspect_eval_set_reads_its_logs_and_leaves_the_manifests_out(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "logs"
    name = _eval_set_folder(folder)
    loaded = load_one(folder)
    assert [x.path for x in loaded.inputs] == [str(folder / name)]
    assert loaded.outcomes() == MATCH
    assert not any("manifest" in w or "eval-set" in w for w in loaded.warnings)
    # A glob too: the manifests are part of the folder, not results.
    assert [x.path for x in load_one(folder / "*").inputs] == [str(folder / name)]
    with pytest.raises(InputError, match=r"no trials found in .*\*\.json"):
        load_one(folder / "*.json")


@pytest.mark.parametrize(
    ("manifest", "what"),
    [
        ("eval-set.json", "the eval set's manifest"),
        ("logs.json", "the manifest of a log folder's headers"),
        ("listing.json", "the listing of a log folder"),
    ],
)
def test_a_manifest_named_alone_says_what_it_is(tmp_path: Path, manifest: str, what: str) -> None:
    _eval_set_folder(tmp_path / "logs")
    path = tmp_path / "logs" / manifest
    with pytest.raises(InputError) as raised:
        load_one(path)
    assert str(raised.value).startswith(f"{path}: {what} (")
    assert "a folder argument reads them and leaves this file out" in str(raised.value)
    assert raised.value.exit_code == 2


def test_a_results_file_named_like_a_manifest_is_still_read(tmp_path: Path) -> None:
    """Told by name AND content: another tool's results named logs.json are results."""
    folder = tmp_path / "results"
    folder.mkdir()
    native = {
        "schema_version": "1.0",
        "suite": "mine",
        "stimuli": [{"id": "a", "trials": [{"passed": True}, {"passed": False}]}],
    }
    (folder / "logs.json").write_text(json.dumps(native))
    (folder / "listing.json").write_text(
        json.dumps([{"task_id": 0, "reward": 1.0, "trial": 0}])  # tau-bench
    )
    (folder / "eval-set.json").write_text(json.dumps({"eval_set_id": "x"}))  # no tasks: not one
    with pytest.raises(InputError, match=r"eval-set\.json: cannot tell the format"):
        load_one(folder)
    (folder / "eval-set.json").unlink()
    loaded = load_one(folder, suite="tau")
    assert sorted((x.path, x.format) for x in loaded.inputs) == [
        (str(folder / "listing.json"), "tau-bench"),
        (str(folder / "logs.json"), "native"),
    ]
    assert loaded.outcomes() == {"a": "PF", "0": "P"}


# -- a dict-valued scorer: one score per key ----------------------------------------------------


def _rubric_log(tmp_path: Path, headline: dict[str, str] | None = None) -> Path:
    """The fixture with a first scorer 'rubric' whose value is a dict, written as Inspect writes
    one: the samples' scores keyed 'rubric', results.scores one entry per key ('accuracy',
    'relevance', each with scorer 'rubric'). accuracy is 1 where match gave C; relevance is 1
    on odd epochs, 0 on even ones, and NaN (that key unscored) for 'easy' epoch 1."""
    document = json.loads((INSPECT / "mock_reliability.json").read_text())
    for sample in document["samples"]:
        scores = sample.get("scores")
        if not scores:
            continue
        relevance = float(sample["epoch"] % 2)
        if (sample["id"], sample["epoch"]) == ("easy", 1):
            relevance = math.nan
        accuracy = 1.0 if scores["match"]["value"] == "C" else 0.0
        rubric = {"value": {"accuracy": accuracy, "relevance": relevance}, "explanation": "r"}
        sample["scores"] = {"rubric": rubric, **scores}
    document["eval"]["scorers"].insert(0, {"name": "rubric", "options": {}, "metrics": {}})
    per_key = [
        {"name": key, "scorer": "rubric", "params": {}, "metrics": {}}
        for key in ("accuracy", "relevance")
    ]
    document["results"]["scores"][:0] = per_key
    del document["results"]["headline"]
    if headline is not None:
        document["results"]["headline"] = headline
    path = tmp_path / "rubric.json"
    path.write_text(json.dumps(document))
    return path


RELEVANCE = {"easy": "SFPF", "hard": "PFPF", "flaky": "PFPF", "3": "PFPF", "boom": "PEPF"}


def test_a_dict_valued_scorer_decides_by_the_key_of_inspects_headline(tmp_path: Path) -> None:
    # Inspect's headline is then the first score of results.scores: rubric's 'accuracy'.
    path = _rubric_log(tmp_path)
    loaded = load_one(path)
    assert loaded.outcomes() == MATCH
    assert loaded.warnings == [
        f"{path}: the log has 5 scores (a dict-valued scorer gives one per key); trials are "
        "decided by 'rubric.accuracy' (Inspect's headline score), not 'rubric.relevance', "
        "'match', 'grade', 'confidence': choose with --scorer"
    ]
    easy = loaded.table.stimuli[("mock_reliability", "easy")]
    assert easy.scores == [1.0, 1.0, 1.0, 1.0]
    # A headline the task chose names the scorer and the key.
    chosen = _rubric_log(tmp_path, {"scorer": "rubric", "score": "relevance", "metric": "mean"})
    assert load_one(chosen).outcomes() == RELEVANCE


def test_scorer_dot_key_chooses_one_score_of_a_dict_valued_scorer(tmp_path: Path) -> None:
    path = _rubric_log(tmp_path)
    loaded = load_one(path, scorer="rubric.relevance")
    assert loaded.outcomes() == RELEVANCE
    assert loaded.counts() == (20, 9, 1, 1)  # a NaN key is that trial unscored: skipped
    assert loaded.table.stimuli[("mock_reliability", "easy")].messages[0] == (
        "unscored by 'rubric.relevance': r"
    )
    assert any("1 trial(s) are unscored by 'rubric.relevance'" in w for w in loaded.warnings)
    # The other scorers are chosen by name as before.
    assert load_one(path, scorer="match").outcomes() == MATCH


def test_a_dict_valued_scorer_named_alone_or_a_wrong_key_is_a_clear_error(
    tmp_path: Path,
) -> None:
    path = _rubric_log(tmp_path)
    with pytest.raises(InputError) as raised:
        load_one(path, scorer="rubric")
    assert str(raised.value) == (
        f"{path} at /samples/0: scorer 'rubric' gave a dict value; expected a single value: "
        "choose one of its scores with --scorer rubric.accuracy or --scorer rubric.relevance; "
        "found {'accuracy': 1.0, 'relevance': 1.0}"
    )
    assert raised.value.exit_code == 2
    with pytest.raises(InputError) as raised:
        load_one(path, scorer="rubric.accuracy_")
    assert str(raised.value) == (
        f"{path}: no scorer 'rubric.accuracy_' in this log; expected one of 'rubric.accuracy', "
        "'rubric.relevance', 'match', 'grade', 'confidence'"
    )
    # An empty dict is no dict of scores to choose from: refused as any value that is no grade
    # (here from the headline scorer, whose keys the default choice looks for).
    document = json.loads((INSPECT / "mock_reliability.json").read_text())
    document["samples"][0]["scores"]["match"]["value"] = {}
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps(document))
    with pytest.raises(InputError) as raised:
        load_one(empty)
    assert str(raised.value).startswith(
        f"{empty} at /samples/0: scorer 'match' gave a dict value; expected a single value "
    )
    # A sample whose dict lacks the chosen key names the keys it has.
    document = json.loads(path.read_text())
    del document["samples"][2]["scores"]["rubric"]["value"]["relevance"]
    path.write_text(json.dumps(document))
    with pytest.raises(InputError) as raised:
        load_one(path, scorer="rubric.relevance")
    assert str(raised.value) == (
        f"{path} at /samples/2: scorer 'rubric' gave no 'relevance' score; expected a dict "
        "with the key 'relevance'; found keys 'accuracy'"
    )


# -- samples invalidated after the run -------------------------------------------------------

#: as inspect_ai's invalidate_samples() records it (ProvenanceData).
INVALIDATION = {
    "timestamp": "2026-11-24T09:30:00+00:00",
    "author": "alice",
    "reason": "sandbox image was broken",
    "metadata": {},
}
VOIDED = {("hard", 1), ("boom", 2)}  # a failed trial and an errored one
WITHOUT_VOIDED = {**MATCH, "hard": "SFFF", "boom": "PSPP"}


def test_invalidated_samples_of_a_json_log_are_skipped_and_counted(tmp_path: Path) -> None:
    document = json.loads((INSPECT / "mock_reliability.json").read_text())
    document["invalidated"] = True
    for sample in document["samples"]:
        if (sample["id"], sample["epoch"]) in VOIDED:
            sample["invalidation"] = INVALIDATION
    path = tmp_path / "log.json"
    path.write_text(json.dumps(document))
    loaded = load_one(path)
    assert loaded.outcomes() == WITHOUT_VOIDED
    assert loaded.counts() == (20, 12, 0, 2)  # the errored epoch is void too: no error left
    hard = loaded.table.stimuli[("mock_reliability", "hard")]
    assert hard.messages[0] == "invalidated by alice on 2026-11-24: sandbox image was broken"
    assert (
        f"{path}: 2 trial(s) were invalidated after the run (inspect_ai invalidate_samples; "
        "Inspect runs them again in eval-set and eval-retry): counted as skipped"
    ) in loaded.warnings


def test_invalidated_samples_of_an_eval_archive_are_read_from_its_full_samples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Summaries lack the field: the full samples are read, only when the header says so."""
    source = INSPECT / "mock_reliability-deflate.eval"
    with zipfile.ZipFile(source) as archive:
        header = json.loads(archive.read("header.json"))
        voided = {}
        for sample_id, epoch in VOIDED:
            name = f"samples/{sample_id}_epoch_{epoch}.json"
            sample = json.loads(archive.read(name))
            sample["invalidation"] = INVALIDATION
            voided[name] = json.dumps(sample).encode()
    streamed: list[str] = []
    real_stream = archive_reader.Archive.stream

    def spy(self: archive_reader.Archive, name: str) -> archive_reader.Member:
        streamed.append(name)
        return real_stream(self, name)

    monkeypatch.setattr(archive_reader.Archive, "stream", spy)
    # The header does not say so (as before invalidate_samples): the samples are not read.
    unflagged = tmp_path / "unflagged.eval"
    _rezip(source, unflagged, dict(voided))
    assert load_one(unflagged).outcomes() == MATCH
    assert streamed == ["summaries.json"]
    streamed.clear()
    header["invalidated"] = True
    path = tmp_path / "invalidated.eval"
    _rezip(source, path, {**voided, "header.json": json.dumps(header).encode()})
    loaded = load_one(path)
    assert loaded.outcomes() == WITHOUT_VOIDED
    assert loaded.counts() == (20, 12, 0, 2)
    assert len(streamed) == 21 and streamed[0] == "summaries.json"  # and the 20 samples
    assert any("2 trial(s) were invalidated after the run" in w for w in loaded.warnings)


def test_samples_reach_the_table_as_columns_in_order_with_their_places() -> None:
    """The decided samples are handed on as blocks of columns, one per array they are
    elements of, and alone (as a Trial) where their place is no array element: expanded
    row by row, the same trials, places and usage in the same order as one Trial each."""
    from gate.ingest.blocks import BLOCK_TRIALS
    from gate.ingest.inspect import _Sample, _SampleRows
    from gate.trials import Trial, TrialColumns

    places = [Provenance("a.eval", pointer=f"/{i}") for i in range(BLOCK_TRIALS + 5)]
    places += [Provenance("a.eval", pointer="/x"), Provenance("a.eval", line=3)]
    places += [Provenance("b.json", pointer=f"/samples/{i}") for i in range(3)]
    places += [Provenance("a.eval", pointer=f"/{i}") for i in (7, 8)]
    rows = _SampleRows("suite")
    given: list[Trial] = []
    out: list[Any] = []
    for i, where in enumerate(places):
        # As _Samples.add_pieces gives it: an array element's place is its file and index.
        element = where.element()
        place = where if element is None else where.file
        sample = _Sample(f"s{i % 40}", i // 40 + 1, None, None, {"tokens": i}, place,
                         element=element)
        status = ("ok", "error", "skipped")[i % 3]
        passed, score = (i % 2 == 0, (i % 10) / 10) if status == "ok" else (None, None)
        message = None if passed else f"m{i}"
        metadata = {"tokens": i, "duration_s": i / 4 if i % 5 else None, "model": "m"}
        out.extend(rows.add(sample, status, passed, score, message, metadata))  # type: ignore[arg-type]
        given.append(
            Trial(stimulus=sample.stimulus, trial=sample.epoch - 1, suite="suite", status=status,  # type: ignore[arg-type]
                  passed=passed, score=score, message=message, provenance=where,
                  metadata={k: v for k, v in metadata.items() if k != "model" and v is not None})
        )  # fmt: skip
    out.extend(rows.flush())
    kinds = [type(item).__name__ for item in out]
    assert kinds == [
        "TrialColumns",
        "TrialColumns",
        "Trial",
        "Trial",
        "TrialColumns",
        "TrialColumns",
    ]
    assert [len(item) for item in out if isinstance(item, TrialColumns)] == [BLOCK_TRIALS, 5, 3, 2]
    expanded = [
        trial
        for item in out
        for trial in (
            [item.trial_at(i) for i in range(len(item))]
            if isinstance(item, TrialColumns)
            else [item]
        )
    ]

    def usage_only(trial: Trial) -> Trial:  # the table keeps no other metadata
        kept = {k: v for k, v in trial.metadata.items() if k in ("tokens", "duration_s")}
        return dataclasses.replace(trial, metadata=kept)

    assert [usage_only(t) for t in expanded] == [usage_only(t) for t in given]


def test_a_sample_without_its_score_is_an_error_after_the_samples_before_it(tmp_path: Path) -> None:
    """A sample lacking the chosen scorer's score is an exit-2 error naming it; the samples
    read before it reach the table first, so an earlier sample's own error (here 'easy',
    given as counts too) is the one raised, as when samples were added one at a time."""
    from gate.ingest import IngestOptions, load

    document = json.loads((INSPECT / "mock_reliability.json").read_text())
    last = document["samples"][-1]
    del last["scores"]["match"]
    log = tmp_path / "log.json"
    log.write_text(json.dumps(document))
    with pytest.warns(UserWarning), pytest.raises(InputError, match="has no score") as alone:
        load([str(log)], IngestOptions())
    assert f"sample {str(last['id'])!r} epoch {last['epoch']}" in str(alone.value)
    assert "has no score from 'match'" in str(alone.value) and "at /samples/19" in str(alone.value)
    counts = tmp_path / "counts.jsonl"
    counts.write_text(
        '{"type": "suite", "schema_version": "1.0", "suite": "mock_reliability"}\n'
        '{"suite": "mock_reliability", "stimulus": "easy", "n": 4, "c": 4}\n'
    )
    with pytest.warns(UserWarning), pytest.raises(InputError) as first:
        load([str(counts), str(log)], IngestOptions())
    assert "stimulus 'easy'" in str(first.value) and "at /samples/2" in str(first.value)
    assert "has no score" not in str(first.value)
