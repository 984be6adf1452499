"""tau-bench and tau2-bench results, where pass^k comes from.

* tau-bench writes a JSON array of ``{"task_id", "trial", "reward", "info", "traj"}``;
  a run that raised is stored with reward 0 and ``info.error``.
* tau2-bench writes ``{"info": {...}, "tasks": [...], "simulations": [...]}``
  with ``task_id``, ``trial``, ``reward_info.reward`` and ``termination_reason``
  per simulation; the directory format keeps the same facts in
  ``simulation_index`` and the simulations in files beside it. A simulation that
  ended with ``infrastructure_error`` is an errored trial (tau2 leaves it out of its
  metrics, as ``--errors exclude`` does); every other one is judged by its reward, as
  tau2 judges it (see :data:`TAU2_EXCLUDED_REASONS`).

Rewards must be JSON numbers and trial indices JSON integers (``"1.0"`` is
refused, not read as 1). Both count a trial as a success when
``|reward - 1| <= 1e-6``; with
``--pass-threshold`` a trial passes when its reward reaches the threshold
instead. The score is the reward clipped to [0, 1] (a reward outside [0, 1] is
reported: the report's score is the clipped one).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Generator, Iterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import orjson

from gate import limits
from gate.errors import InputError, Provenance
from gate.ingest import IngestOptions, Record
from gate.ingest._json import pointer
from gate.ingest.blocks import BLOCK_TRIALS, Rows, flushed_first
from gate.ingest.duplicates import parse_time
from gate.ingest.jsonstream import STREAMED, JsonStream
from gate.ingest.values import (
    Appearance,
    clip_unit,
    json_found,
    json_index,
    json_number,
    json_type,
    message_text,
    metadata_number,
    warn,
)
from gate.trials import DEFAULT_SUITE, Coded, TrialColumns

if TYPE_CHECKING:
    import numpy as np

#: tau-bench's own success tolerance (tau_bench/run.py; tau2's is_successful in
#: src/tau2/metrics/agent_metrics.py): reward within 1e-6 of 1.
SUCCESS_TOLERANCE = 1e-6

#: tau2 termination reasons whose simulations tau2 leaves out of its metrics. Only one:
#: ``get_metrics_df`` and ``compute_metrics`` (src/tau2/metrics/agent_metrics.py) drop
#: ``TerminationReason.INFRASTRUCTURE_ERROR``, the placeholder ``run_with_retry``
#: (src/tau2/runner/progress.py) writes, without a reward, when a simulation raised on every
#: retry; a resumed run runs it again (src/tau2/runner/checkpoint.py). Read as an errored
#: trial: the harness broke, as with every format's errors, so ``--errors`` decides how it
#: counts (``exclude`` counts it as tau2 does). Every other reason is judged by its reward,
#: as tau2 judges it: ``evaluate_simulation`` (src/tau2/evaluator/evaluator.py) gives reward
#: 0 to any reason but ``agent_stop`` and ``user_stop`` (max_steps, timeout, too_many_errors,
#: agent_error, user_error, context_window_exceeded, unexpected_error), and tau2 counts those
#: simulations as failures in pass^k.
TAU2_EXCLUDED_REASONS = frozenset({"infrastructure_error"})


def _passed(reward: Any, options: IngestOptions) -> Any:
    """Whether a reward (a float, or a numpy array of them) is a success, as tau-bench
    decides it, or past ``--pass-threshold``."""
    if options.pass_threshold is not None:
        return reward >= options.pass_threshold
    return abs(reward - 1.0) <= SUCCESS_TOLERANCE


def _task_id(value: Any, where: Provenance) -> str:
    if isinstance(value, bool) or not isinstance(value, int | str) or value == "":
        raise InputError(
            "task_id is missing or not an id",
            where,
            expected="an integer or a string",
            found=repr(value),
        )
    return str(value)


def _outside(path: str, count: int) -> None:
    if count:
        warn(
            path,
            f"{count} reward(s) outside [0, 1] were clipped to [0, 1] for the score "
            "(pass or fail is decided on the reward as given)",
        )


def _compact(value: Any) -> str:
    """``value`` as compact JSON (orjson's, ten times faster than json's)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except (orjson.JSONEncodeError, TypeError):  # a 100-digit integer, or deeper than 254
        return json.dumps(value, ensure_ascii=False, default=str)


def tau_info_message(reward: float, info: Any) -> str | None:
    """A short rendering of why a tau-bench trial did not succeed: the reward, then the
    reward's own details (``info.reward_info.info``, e.g. ``{"r_actions": false}``), else the
    info's small members (the task and trajectory are left out)."""
    text = f"reward {reward:g}"
    if isinstance(info, Mapping):
        reward_info = info.get("reward_info")
        detail = reward_info.get("info") if isinstance(reward_info, Mapping) else None
        if not detail:
            detail = {k: v for k, v in info.items() if k not in ("task", "traj", "reward_info")}
        if detail:
            text += ": " + _compact(detail)[: limits.TRIAL_MESSAGE_CHARS.value()]
    return message_text(text)


def _tau_root(path: str, stream: JsonStream) -> None:
    if not stream.streamed:
        raise InputError(
            "not a tau-bench results file",
            Provenance(path, pointer=""),
            expected="a JSON array of {task_id, trial, reward}",
            found=json_type(stream.document),
        )


def _tau_fields(
    run: Any, where: Provenance, order: Appearance, suite: str
) -> tuple[str, int, float]:
    """(stimulus, trial index, reward) of a tau-bench entry, or the error saying what is wrong."""
    if not isinstance(run, dict):
        raise InputError("entry is not an object", where, found=type(run).__name__)
    stimulus = _task_id(run.get("task_id"), where)
    trial = run.get("trial")
    index = order.next(suite, stimulus) if trial is None else json_index(trial, where)
    if "reward" not in run:
        raise InputError("entry has no reward", where, expected="a number")
    return stimulus, index, json_number(run["reward"], where, "reward")


def read_tau(path: str, options: IngestOptions) -> Iterator[Record | TrialColumns]:
    """Read a tau-bench results array (streamed: the file is never held whole), handing the
    trials to the table as blocks of columns."""
    rows = Rows(path, pointer="", render=tau_info_message)
    yield from flushed_first(rows, _tau_blocks(path, options, rows))


#: the most pieces of the array (:data:`~gate.ingest.jsonstream.PIECE_BYTES` each) and
#: entries read as one block: a block of 47-byte entries holds most of a suite's stimuli,
#: and one of large entries (a trajectory each) stays a few megabytes of text
_WAITING_PIECES, _WAITING_TRIALS = 64, 16 * BLOCK_TRIALS


def _tau_blocks(path: str, options: IngestOptions, rows: Rows) -> Iterator[TrialColumns]:
    stream = JsonStream(path, [()])
    suite = options.suite or DEFAULT_SUITE
    order = Appearance()
    outside = 0
    # The array's entries not yet read, from position `first`: up to _WAITING_PIECES pieces
    # (of 32 KB) at a time, so that a block of the usual entries is read a column at a time
    # and each of its stimuli looked up once.
    waiting: list[Any] = []
    first, pieces = 0, 0

    def read_waiting() -> Generator[TrialColumns, None, int]:
        return _tau_entries(waiting, first, path, options, suite, order, rows)

    pieces_read = stream.pieces()
    while True:
        try:
            piece = next(pieces_read)
        except StopIteration:
            break
        except InputError:
            # The entries before the bad place are read first (their own error wins), so
            # that errors come in the file's order whatever the size of the blocks.
            outside += yield from read_waiting()
            raise
        if waiting and piece.start != first + len(waiting):
            outside += yield from read_waiting()
            waiting = []
        if not waiting:
            first, pieces = piece.start, 0
        waiting += piece.values
        pieces += 1
        if pieces >= _WAITING_PIECES or len(waiting) >= _WAITING_TRIALS:
            outside += yield from read_waiting()
            waiting = []
    outside += yield from read_waiting()
    yield from rows.flush()
    _tau_root(path, stream)
    _outside(path, outside)


def _tau_entries(
    entries: list[Any],
    first: int,
    path: str,
    options: IngestOptions,
    suite: str,
    order: Appearance,
    rows: Rows,
) -> Generator[TrialColumns, None, int]:
    """The trials of the entries at positions ``first``, ``first + 1``, …: as one block of
    columns when every one is the usual entry (:func:`_usual_columns`), else entry by entry
    into ``rows``. Returns how many rewards were outside [0, 1]."""
    columns = _usual_columns(entries, first, path, suite, options)
    if columns is not None:
        yield from rows.flush()  # the rows before them first, in the file's order
        yield columns
        return 0
    bar = options.pass_threshold  # as _passed, inlined: a million calls
    outside = 0
    append = rows.rows.append
    for position, run in enumerate(entries, first):
        # The usual entry ({"task_id": 3, "reward": 1.0, ..., "trial": 0}) is taken as it
        # is; anything else goes through the checks that name what is wrong.
        task_id = run.get("task_id") if type(run) is dict else None
        index = run.get("trial") if task_id is not None else None
        reward = run.get("reward") if task_id is not None else None
        if type(task_id) is int and type(index) is int and index >= 0 and type(reward) is float:
            stimulus = str(task_id)
        else:
            where = Provenance(path, None, f"/{position}")
            stimulus, index, reward = _tau_fields(run, where, order, suite)
        info = run.get("info")
        error = info.get("error") if type(info) is dict else None
        if error:
            # tau-bench stores a run that raised as reward 0 with info.error: the
            # harness failed, the agent was not tested.
            outside += not 0.0 <= reward <= 1.0
            append((position, stimulus, suite, index, "error", None, None, message_text(error)))
        elif 0.0 <= reward <= 1.0:
            if bar is None:
                passed = -SUCCESS_TOLERANCE <= reward - 1.0 <= SUCCESS_TOLERANCE
            else:
                passed = reward >= bar
            message = None if passed else (reward, info)
            score = reward or 0.0  # as clip_unit: -0.0 scores 0.0
            append((position, stimulus, suite, index, "ok", passed, score, message))
        else:
            outside += 1
            passed = _passed(reward, options)
            message = None if passed else (reward, info)
            append((position, stimulus, suite, index, "ok", passed, clip_unit(reward), message))
        if len(rows) >= BLOCK_TRIALS:
            yield rows.columns()
    return outside


def _usual_columns(
    entries: list[Any], first: int, path: str, suite: str, options: IngestOptions
) -> TrialColumns | None:
    """The entries as one block of columns, read as the entry-by-entry loop of
    :func:`_tau_entries` reads them, when every one is the usual entry: an object with an
    integer ``task_id``, an integer ``trial`` from 0 to 2**63 - 1 and a float ``reward`` in
    [0, 1] (an ``info.error`` makes it an errored trial, as there); else None. Each check is
    one pass over a column (a type set, a numpy comparison), and each stimulus and trial
    index is looked at once."""
    import numpy as np

    if not entries or set(map(type, entries)) != {dict}:
        return None
    task_ids = [entry.get("task_id") for entry in entries]
    indices = [entry.get("trial") for entry in entries]
    rewards = [entry.get("reward") for entry in entries]
    if {*map(type, task_ids)} != {int} or {*map(type, indices)} != {int}:
        return None
    if {*map(type, rewards)} != {float}:
        return None
    try:
        trial = np.array(indices, dtype=np.int64)
        task = np.array(task_ids, dtype=np.int64)
    except OverflowError:  # past 64 bits: the loop reads them
        return None
    reward = np.array(rewards, dtype=np.float64)
    if trial.min() < 0 or not np.all((reward >= 0.0) & (reward <= 1.0)):
        return None
    passed = _passed(reward, options)
    # An entry of those three keys alone (tau-bench cut to them) has no info.
    infos = None if sum(map(len, entries)) == 3 * len(entries) else [e.get("info") for e in entries]
    messages: Sequence[Any]
    if infos is None or infos.count(None) == len(infos):
        errored = np.zeros(len(entries), dtype=bool)
        messages = _reward_messages(passed, reward)
    else:
        errors = [info.get("error") if type(info) is dict else None for info in infos]
        errored = np.array(list(map(bool, errors)), dtype=bool)
        messages = [
            None if ok else (value, info)
            for ok, value, info in zip(passed.tolist(), rewards, infos, strict=True)
        ]
        for at in np.flatnonzero(errored).tolist():
            messages[at] = message_text(errors[at])
    verdict = np.where(errored, 0, passed.astype(np.uint8) + 1)  # codes of None, False, True
    tasks = Coded.of_integers(task)
    every = np.zeros(len(entries), dtype=np.uint8)
    return TrialColumns(
        file=path,
        lines=range(first, first + len(entries)),
        stimulus=Coded(tasks.codes, [str(task_id) for task_id in tasks.values]),
        suite=Coded(every, [suite]),
        trial=Coded.of_integers(trial),
        status=Coded(errored.astype(np.uint8), ["ok", "error"]),
        passed=Coded(verdict, [None, False, True]),
        # -0.0 scores 0.0, as the loop's `reward or 0.0`; an errored trial has no score
        score=np.where(errored, np.nan, reward + 0.0),
        message=messages,
        pointer="",
        render=tau_info_message,
    )


def _reward_messages(passed: np.ndarray, reward: np.ndarray) -> Coded:
    """Each entry's message when no entry has an info: none where it passed, else the
    arguments of :func:`tau_info_message`, ``(reward, None)``, each distinct one made once.
    Rewards are told apart by their bits, so -0.0 stays -0.0 as the loop leaves it."""
    import numpy as np

    failed = ~passed
    bits, at = np.unique(reward[failed].view(np.int64), return_inverse=True)
    codes = np.zeros(reward.size, dtype=np.int64)
    codes[failed] = at.ravel() + 1
    return Coded(codes, [None, *((value, None) for value in bits.view(np.float64).tolist())])


def _tau2_suite(document: Any, options: IngestOptions) -> str | None:
    """The suite: ``--suite``, else the domain (None while the info is not read yet)."""
    if options.suite:
        return options.suite
    info = document.get("info") if isinstance(document, Mapping) else None
    environment = info.get("environment_info") if isinstance(info, Mapping) else None
    domain = environment.get("domain_name") if isinstance(environment, Mapping) else None
    return domain if isinstance(domain, str) and domain else None


def tau2_message(reason: str | None, reward: float, reward_info: Any) -> str | None:
    """A short rendering of why a tau2-bench simulation did not succeed: the reward with its
    breakdown by basis, the checks that failed, and an unusual termination reason."""
    text = f"reward {reward:g}"
    failed: list[str] = []
    if isinstance(reward_info, Mapping):
        breakdown = reward_info.get("reward_breakdown")
        if isinstance(breakdown, Mapping) and breakdown:
            text += " (" + ", ".join(f"{k} {_compact(v)}" for k, v in breakdown.items()) + ")"
        db_check = reward_info.get("db_check")
        if isinstance(db_check, Mapping) and db_check.get("db_match") is False:
            failed.append("database state differs")
        for key, flag, what in (
            ("action_checks", "action_match", "action"),
            ("env_assertions", "met", "environment assertion"),
            ("nl_assertions", "met", "assertion"),
            ("communicate_checks", "met", "information to communicate"),
        ):
            checks = reward_info.get(key)
            if isinstance(checks, list):
                missed = [c for c in checks if isinstance(c, Mapping) and c.get(flag) is False]
                if missed:
                    failed.append(f"{len(missed)} of {len(checks)} {what} check(s) failed")
    if failed:
        text += ": " + "; ".join(failed)
    if reason not in (None, "user_stop", "agent_stop"):
        text += f"; termination_reason {reason}"
    return message_text(text)


def _excluded_message(reason: str, info: Any) -> str | None:
    """Why a simulation tau2 leaves out of its metrics errored: its termination reason,
    then the exception tau2 kept in the simulation's ``info`` (``error_type``, ``error``)."""
    text = f"termination_reason {reason}"
    if isinstance(info, Mapping):
        error, kind = info.get("error"), info.get("error_type")
        if isinstance(error, str) and error.strip():
            text += ": " + (f"{kind}: " if isinstance(kind, str) and kind else "") + error
    return message_text(text)


def started_tau2(path: str) -> datetime | None:
    """When the tau2-bench run started (its ``timestamp``), read before the simulations."""
    stream = JsonStream(path, [("simulations",), ("simulation_index",)])
    for _ in stream.pieces():
        break
    document = stream.document
    return parse_time(document.get("timestamp")) if isinstance(document, Mapping) else None


def read_tau2(path: str, options: IngestOptions) -> Iterator[Record | TrialColumns]:
    """Read a tau2-bench results.json (monolithic, or the directory format's index), streaming
    its simulations, handing the trials to the table as blocks of columns."""
    rows = Rows(path, usage=_TAU2_USAGE, render=tau2_message)
    yield from flushed_first(rows, _tau2_blocks(path, options, rows))


#: usage values a simulation gives: (its key, the table's usage name).
_TAU2_SOURCES = (("duration", "duration_s"), ("agent_cost", "cost_usd"))
_TAU2_USAGE = tuple(target for _, target in _TAU2_SOURCES)


def _tau2_blocks(path: str, options: IngestOptions, rows: Rows) -> Iterator[TrialColumns]:
    stream = JsonStream(path, [("simulations",), ("simulation_index",)])
    order = Appearance()
    outside = 0
    excluded = 0
    per_task: Counter[str] = Counter()
    used: str | None = None
    # The suite is the domain, from "info", which tau2 writes before the simulations; trials
    # read before it (a file written otherwise) wait for it.
    waiting = Rows(path, usage=_TAU2_USAGE)
    for piece in stream.pieces():
        key = piece.pointer.rpartition("/")[2]
        if used is None:
            used = key
            rows.pointer = waiting.pointer = piece.pointer
        elif used != key:
            raise InputError(
                "both simulations and simulation_index list simulations",
                Provenance(path, pointer=piece.pointer),
                expected="one of them (simulations in a results file, simulation_index in "
                "the directory format's results.json)",
            )
        suite = _tau2_suite(stream.document, options)
        append = rows.rows.append
        for position, simulation in enumerate(piece.values, piece.start):
            row = _tau2_row(simulation, path, piece.pointer, position, key, suite, order, options)
            outside += row[-1]
            excluded += simulation.get("termination_reason") in TAU2_EXCLUDED_REASONS
            if suite is not None:
                append(row[:-1])
            else:  # its message made now: the simulation is not kept until the suite is known
                message = row[7]
                if type(message) is tuple:
                    message = tau2_message(*message)
                waiting.rows.append((*row[:7], message, *row[8:-1]))
        if len(rows) >= BLOCK_TRIALS:
            yield _counted(rows.columns(), per_task)
    if rows:
        yield _counted(rows.columns(), per_task)
    if not isinstance(stream.document, dict):
        raise InputError(
            "not a tau2-bench results file",
            Provenance(path, pointer=""),
            expected="an object with simulations",
            found=json_type(stream.document),
        )
    document = stream.document
    if used is None:
        simulations = document.get("simulations", document.get("simulation_index"))
        if simulations is not STREAMED:
            key = "simulations" if "simulations" in document else "simulation_index"
            raise InputError(
                "no simulations",
                Provenance(path, pointer=pointer(key)),
                expected="an array of simulations (or simulation_index)",
                found=json_type(simulations),
            )
    if waiting:
        suite = _tau2_suite(document, options) or DEFAULT_SUITE
        yield _counted(waiting.columns(suite), per_task)
    _outside(path, outside)
    if excluded:
        warn(
            path,
            f"{excluded} simulation(s) ended with termination_reason infrastructure_error "
            "(never evaluated: tau2 leaves them out of its metrics and runs them again when "
            "the run is resumed): read as errored trials, which --errors exclude leaves out "
            "as tau2 does",
        )
    info = document.get("info")
    planned = info.get("num_trials") if isinstance(info, Mapping) else None
    if isinstance(planned, int) and per_task:
        short = sorted(task for task, count in per_task.items() if count != planned)
        if short:
            warn(
                path,
                f"info.num_trials is {planned} but {len(short)} task(s) have another number "
                f"of simulations: {', '.join(short[:5])}{' …' if len(short) > 5 else ''}",
            )


def _counted(columns: TrialColumns, per_task: Counter[str]) -> TrialColumns:
    per_task.update(columns.stimulus)
    return columns


def _tau2_row(
    simulation: Any,
    path: str,
    array: str,
    position: int,
    key: str,
    suite: str | None,
    order: Appearance,
    options: IngestOptions,
) -> tuple[Any, ...]:
    """The row (gate.ingest.blocks) of one simulation, then whether its reward was clipped."""
    if type(simulation) is not dict:
        where = Provenance(path, pointer=f"{array}/{position}")
        raise InputError("simulation is not an object", where, found=type(simulation).__name__)
    task_id = simulation.get("task_id")
    trial = simulation.get("trial")
    reason = simulation.get("termination_reason")
    duration = simulation.get("duration")
    cost = simulation.get("agent_cost")
    # The usual simulation is taken as it is (floats that are finite: x - x is 0.0);
    # anything else goes through the checks that name what is wrong.
    if not (
        type(task_id) is str
        and task_id
        and type(trial) is int
        and trial >= 0
        and (reason is None or type(reason) is str)
        and (duration is None or (type(duration) is float and duration - duration == 0.0))
        and (cost is None or (type(cost) is float and cost - cost == 0.0))
    ):
        where = Provenance(path, pointer=f"{array}/{position}")
        task_id = _task_id(task_id, where)
        # Without a trial index, order of appearance counts per task (one suite per file).
        trial = order.next("", task_id) if trial is None else json_index(trial, where)
        if reason is not None and not isinstance(reason, str):
            raise InputError(
                "termination_reason is not a string",
                where,
                expected="a termination reason such as user_stop",
                found=json_found(reason),
            )
        duration = metadata_number(duration, where, "duration")
        cost = metadata_number(cost, where, "agent_cost")
    reward_info = None
    if key == "simulations":
        reward_info = simulation.get("reward_info")
        raw_reward = reward_info.get("reward") if isinstance(reward_info, Mapping) else None
    else:
        raw_reward = simulation.get("reward")
    if reason in TAU2_EXCLUDED_REASONS:
        text = _excluded_message(reason, simulation.get("info"))
        return (position, task_id, suite, trial, "error", None, None, text, duration, cost, 0)
    if raw_reward is None:
        # Nothing graded it: tau2 writes no reward only for its infrastructure-error
        # placeholders, so this is a harness fault, not a failure of the agent.
        text = message_text(
            "no reward" if reason is None else f"termination_reason {reason} (no reward)"
        )
        return (position, task_id, suite, trial, "error", None, None, text, duration, cost, 0)
    if type(raw_reward) is float and raw_reward - raw_reward == 0.0:
        reward = raw_reward
    else:
        reward = json_number(raw_reward, Provenance(path, pointer=f"{array}/{position}"), "reward")
    passed = _passed(reward, options)
    score = clip_unit(reward)
    message = None if passed else (reason, reward, reward_info)
    return (position, task_id, suite, trial, "ok", passed, score, message, duration, cost,
            score != reward)  # fmt: skip
