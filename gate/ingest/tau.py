"""tau-bench and tau2-bench results, where pass^k comes from.

* tau-bench writes a JSON array of ``{"task_id", "trial", "reward", "info", "traj"}``;
  a run that raised is stored with reward 0 and ``info.error``.
* tau2-bench writes ``{"info": {...}, "tasks": [...], "simulations": [...]}``
  with ``task_id``, ``trial``, ``reward_info.reward`` and ``termination_reason``
  per simulation; the directory format keeps the same facts in
  ``simulation_index`` and the simulations in files beside it.

Rewards must be JSON numbers and trial indices JSON integers (``"1.0"`` is
refused, not read as 1). Both count a trial as a success when
``|reward - 1| <= 1e-6``; with
``--pass-threshold`` a trial passes when its reward reaches the threshold
instead. The score is the reward clipped to [0, 1] (the raw reward stays in
the metadata, and a reward outside [0, 1] is reported).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from gate.errors import InputError, Provenance
from gate.ingest import IngestOptions, Record
from gate.ingest._json import load_file, pointer
from gate.ingest.values import (
    Appearance,
    clip_unit,
    json_found,
    json_index,
    json_number,
    metadata_number,
    warn,
)
from gate.trials import DEFAULT_SUITE, Trial

#: tau-bench's own success tolerance (tau_bench/run.py, tau2 metrics): reward within 1e-6 of 1.
SUCCESS_TOLERANCE = 1e-6

#: tau2 termination reasons that are the harness's fault, not the agent's. tau2 itself
#: leaves infrastructure errors and context-window overflows out of its metrics
#: (NON_EVALUABLE_TERMINATION_REASONS); a user-simulator error or an unexpected
#: exception did not test the agent either.
TAU2_ERROR_REASONS = frozenset(
    {"infrastructure_error", "context_window_exceeded", "user_error", "unexpected_error"}
)


def _passed(reward: float, options: IngestOptions) -> bool:
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
            "(the raw reward is kept as metadata 'reward')",
        )


def read_tau(path: str, options: IngestOptions) -> Iterator[Record]:
    """Read a tau-bench results array."""
    document = load_file(path)
    if not isinstance(document, list):
        raise InputError(
            "not a tau-bench results file",
            Provenance(path, pointer=""),
            expected="a JSON array of {task_id, trial, reward}",
            found=type(document).__name__,
        )
    suite = options.suite or DEFAULT_SUITE
    order = Appearance()
    outside = 0
    for position, run in enumerate(document):
        where = Provenance(path, pointer=pointer(position))
        if not isinstance(run, dict):
            raise InputError("entry is not an object", where, found=type(run).__name__)
        stimulus = _task_id(run.get("task_id"), where)
        if run.get("trial") is None:
            index = order.next(suite, stimulus)
        else:
            index = json_index(run["trial"], where)
        if "reward" not in run:
            raise InputError("entry has no reward", where, expected="a number")
        reward = json_number(run["reward"], where, "reward")
        outside += not 0.0 <= reward <= 1.0
        info = run.get("info")
        error = info.get("error") if isinstance(info, Mapping) else None
        metadata: dict[str, Any] = {"reward": reward}
        if error:
            # tau-bench stores a run that raised as reward 0 with info.error: the
            # harness failed, the agent was not tested.
            yield Trial(
                stimulus=stimulus,
                trial=index,
                suite=suite,
                status="error",
                message=str(error),
                metadata=metadata,
                provenance=where,
            )
            continue
        yield Trial(
            stimulus=stimulus,
            trial=index,
            suite=suite,
            passed=_passed(reward, options),
            score=clip_unit(reward),
            metadata=metadata,
            provenance=where,
        )
    _outside(path, outside)


def _tau2_suite(document: Mapping[str, Any], options: IngestOptions) -> str:
    if options.suite:
        return options.suite
    info = document.get("info")
    environment = info.get("environment_info") if isinstance(info, Mapping) else None
    domain = environment.get("domain_name") if isinstance(environment, Mapping) else None
    return domain if isinstance(domain, str) and domain else DEFAULT_SUITE


def read_tau2(path: str, options: IngestOptions) -> Iterator[Record]:
    """Read a tau2-bench results.json (monolithic, or the directory format's index)."""
    document = load_file(path)
    if not isinstance(document, dict):
        raise InputError(
            "not a tau2-bench results file",
            Provenance(path, pointer=""),
            expected="an object with simulations",
            found=type(document).__name__,
        )
    simulations = document.get("simulations")
    key = "simulations"
    if not simulations and isinstance(document.get("simulation_index"), list):
        # Directory format: results.json indexes simulations stored beside it.
        simulations, key = document["simulation_index"], "simulation_index"
    if not isinstance(simulations, list):
        raise InputError(
            "no simulations",
            Provenance(path, pointer=pointer("simulations")),
            expected="an array of simulations (or simulation_index)",
            found=type(simulations).__name__,
        )
    suite = _tau2_suite(document, options)
    order = Appearance()
    outside = 0
    per_task: Counter[str] = Counter()
    for position, simulation in enumerate(simulations):
        where = Provenance(path, pointer=pointer(key, position))
        if not isinstance(simulation, dict):
            raise InputError("simulation is not an object", where, found=type(simulation).__name__)
        stimulus = _task_id(simulation.get("task_id"), where)
        per_task[stimulus] += 1
        if simulation.get("trial") is None:
            index = order.next(suite, stimulus)
        else:
            index = json_index(simulation["trial"], where)
        reason = simulation.get("termination_reason")
        if reason is not None and not isinstance(reason, str):
            raise InputError(
                "termination_reason is not a string",
                where,
                expected="a termination reason such as user_stop",
                found=json_found(reason),
            )
        if key == "simulations":
            reward_info = simulation.get("reward_info")
            raw_reward = reward_info.get("reward") if isinstance(reward_info, Mapping) else None
        else:
            raw_reward = simulation.get("reward")
        metadata: dict[str, Any] = {"termination_reason": reason}
        for source, target in (("duration", "duration_s"), ("agent_cost", "cost_usd")):
            value = metadata_number(simulation.get(source), where, source)
            if value is not None:
                metadata[target] = value
        if reason in TAU2_ERROR_REASONS or raw_reward is None:
            yield Trial(
                stimulus=stimulus,
                trial=index,
                suite=suite,
                status="error",
                message=f"termination_reason {reason}"
                + ("" if raw_reward is not None else " (no reward)"),
                metadata=metadata,
                provenance=where,
            )
            continue
        reward = json_number(raw_reward, where, "reward")
        outside += not 0.0 <= reward <= 1.0
        metadata["reward"] = reward
        yield Trial(
            stimulus=stimulus,
            trial=index,
            suite=suite,
            passed=_passed(reward, options),
            score=clip_unit(reward),
            metadata=metadata,
            provenance=where,
        )
    _outside(path, outside)
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
