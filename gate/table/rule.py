"""The pass rule: how a suite's settings decide each trial (docs/format.md, "Deciding a trial").

One implementation, over columns: :func:`decide` takes what the rule reads of many trials
(:class:`TrialFeatures`, one entry per trial) and returns each trial's outcome code, score
and category. The table calls it for every batch of trials it adds, whether the trials came
one by one (buffered) or as a chunk of records; :func:`resolve` decides one trial by calling
it on a batch of one.

A trial's **score** is, in order of preference: the weighted mean of its graders' scores,
its ``score``, its category's weight, or 1/0 from ``passed``. It **passes** when ``passed``
says so; otherwise, with a ``pass_threshold``, when its score reaches the threshold;
without one, when every grader passed, when a bare score is 1, or when its category has
the highest weight. Errored trials score 0 and fail; skipped ones are left out of n.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gate.errors import InputError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from gate.trials import GraderResult, SuiteSpec, Trial

#: Outcome codes, one byte per stored trial. ABSENT marks a trial index no trial has.
ABSENT, PASS, FAIL, ERROR, SKIPPED = 0, 1, 2, 3, 4
#: The status column of :class:`TrialFeatures`: OK, or the code the status forces.
OK = 0
STATUS_CODES = {"ok": OK, "error": ERROR, "skipped": SKIPPED}
#: ``TrialFeatures.passed`` of a trial that does not say.
UNKNOWN = -1
#: ``TrialFeatures.category``: no outcome given, or one the suite does not declare.
NO_CATEGORY, NOT_A_CATEGORY = -1, -2


def grader_aggregate(graders: Iterable[GraderResult], weights: Mapping[str, float]) -> float:
    """Weighted mean of grader scores (reference 001); equal weights where none is given.

    A grader without a score counts as 1.0 when it passed and 0.0 otherwise.

    >>> from gate.trials import GraderResult
    >>> g = [GraderResult("file-exists", 1.0), GraderResult("output-contains", 0.0)]
    >>> round(grader_aggregate(g, {"file-exists": 1.0, "output-contains": 0.5}), 2)
    0.67
    """
    total = weight_sum = 0.0
    for grader in graders:
        weight = weights.get(grader.name, 1.0)
        score = grader.score if grader.score is not None else float(bool(grader.passed))
        total += weight * score
        weight_sum += weight
    return total / weight_sum if weight_sum > 0 else 0.0


def graders_passed(graders: Iterable[GraderResult]) -> bool:
    """Whether every grader passed: its ``passed``, else a score of 1."""
    return all(g.passed if g.passed is not None else (g.score or 0.0) >= 1.0 for g in graders)


@dataclass(frozen=True)
class TrialFeatures:
    """What the pass rule reads of each trial, one entry per trial.

    ``status``: :data:`OK`, :data:`ERROR` or :data:`SKIPPED`. ``passed``: 1, 0 or
    :data:`UNKNOWN`. ``score``: the trial's own score, NaN when it has none. ``graded``: its
    graders' weighted mean (:func:`grader_aggregate`), NaN without graders, and
    ``graders_passed`` whether all of them passed. ``category``: the index of its outcome
    among the suite's categories, :data:`NO_CATEGORY` or :data:`NOT_A_CATEGORY`; ``weight``
    that category's weight. ``bar``: the suite's pass threshold (NaN: none); ``best``: the
    highest weight of the suite's categories.
    """

    status: npt.NDArray[np.uint8]
    passed: npt.NDArray[np.int8]
    score: npt.NDArray[np.float64]
    graded: npt.NDArray[np.float64]
    graders_passed: npt.NDArray[np.bool_]
    category: npt.NDArray[np.int16]
    weight: npt.NDArray[np.float64]
    bar: npt.NDArray[np.float64]
    best: npt.NDArray[np.float64]


@dataclass(frozen=True)
class Decision:
    """Each trial's outcome code (PASS, FAIL, ERROR, SKIPPED), score (errored and skipped
    trials score 0), category (its outcome's index; 1/0 for pass/fail without categories;
    0 when not ok) and whether the score came from graders, a score or a category rather
    than from pass/fail alone. ``undecided``: the first trial the rule cannot decide (no
    outcome at all, or an outcome that is not a category of its suite), else -1."""

    code: npt.NDArray[np.uint8]
    score: npt.NDArray[np.float64]
    category: npt.NDArray[np.int16]
    scored: npt.NDArray[np.bool_]
    undecided: int


def decide(f: TrialFeatures) -> Decision:
    """Apply the pass rule to every trial of ``f`` at once (the module docstring says how)."""
    import numpy as np

    ok = f.status == OK
    graded = ~np.isnan(f.graded)
    categorical = ~graded & (f.category >= 0)
    bare = ~graded & ~categorical & ~np.isnan(f.score)
    told = f.passed != UNKNOWN
    only_told = ~graded & ~categorical & ~bare & told
    value = np.where(
        graded,
        f.graded,
        np.where(categorical, f.weight, np.where(bare, f.score, (f.passed == 1).astype(float))),
    )
    with np.errstate(invalid="ignore"):  # NaN bars and bests are where the rule ignores them
        derived = np.where(
            only_told,
            f.passed == 1,
            np.where(
                ~np.isnan(f.bar),
                value >= f.bar,
                np.where(
                    graded, f.graders_passed, np.where(categorical, value >= f.best, value >= 1.0)
                ),
            ),
        )
    verdict = np.where(told, f.passed == 1, derived)
    undecidable = ok & (
        (~graded & (f.category == NOT_A_CATEGORY)) | ~(graded | categorical | bare | told)
    )
    code = np.where(ok, np.where(verdict, PASS, FAIL), f.status).astype(np.uint8)
    category = np.where(ok & categorical, f.category, np.where(ok, verdict, 0)).astype(np.int16)
    score = np.where(ok & ~undecidable, value, 0.0)
    first = np.flatnonzero(undecidable)
    return Decision(
        code=code,
        score=score,
        category=category,
        scored=ok & (graded | categorical | bare),
        undecided=int(first[0]) if first.size else -1,
    )


def undecided_error(trial: Trial, spec: SuiteSpec) -> InputError:
    """The error for a trial :func:`decide` could not decide."""
    if trial.status == "ok" and not trial.graders and trial.outcome is not None:
        names = spec.category_names
        return InputError(
            f"outcome {trial.outcome!r} is not a category of suite {spec.name!r}",
            trial.provenance,
            expected="one of " + (", ".join(map(repr, names)) or "(no categories declared)"),
        )
    return InputError(
        "trial has no outcome",
        trial.provenance,
        expected="one of passed, score, outcome or graders (or status error/skipped)",
    )


@dataclass(frozen=True, slots=True)
class Resolved:
    """A trial's verdict after the suite's rules are applied."""

    passed: bool
    score: float
    category: int  # index into the suite's categories; 1/0 for pass/fail without categories
    scored: bool  # the score came from graders, a score or a category, not from pass/fail alone


def features(trials: list[Trial], specs: list[SuiteSpec]) -> TrialFeatures:
    """The features of ``trials`` (each decided under the suite spec beside it)."""
    import numpy as np

    size = len(trials)
    nan = float("nan")
    status = np.array([STATUS_CODES[t.status] for t in trials], dtype=np.uint8)
    passed = np.array([UNKNOWN if t.passed is None else t.passed for t in trials], dtype=np.int8)
    score = np.array([nan if t.score is None else t.score for t in trials], dtype=np.float64)
    graded = np.full(size, nan)
    all_passed = np.zeros(size, dtype=bool)
    category = np.full(size, NO_CATEGORY, dtype=np.int16)
    weight = np.full(size, nan)
    for i, trial in enumerate(trials):
        if trial.graders:
            graded[i] = grader_aggregate(trial.graders, specs[i].grader_weights)
            all_passed[i] = graders_passed(trial.graders)
        if trial.outcome is not None:
            category[i], weight[i] = category_of(trial.outcome, specs[i])
    known: dict[int, tuple[float, float]] = {}
    settings = [known.get(id(spec)) or known.setdefault(id(spec), bars(spec)) for spec in specs]
    bar = np.array([b for b, _ in settings], dtype=np.float64).reshape(size)
    best = np.array([b for _, b in settings], dtype=np.float64).reshape(size)
    return TrialFeatures(status, passed, score, graded, all_passed, category, weight, bar, best)


def category_of(outcome: Any, spec: SuiteSpec) -> tuple[int, float]:
    """(index, weight) of a categorical outcome in its suite; NOT_A_CATEGORY when undeclared."""
    categories = spec.categories or {}
    if outcome not in categories:
        return NOT_A_CATEGORY, float("nan")
    return spec.category_names.index(outcome), float(categories[outcome])


def bars(spec: SuiteSpec) -> tuple[float, float]:
    """(pass threshold or NaN, highest category weight or NaN) of a suite."""
    bar = spec.pass_threshold if spec.pass_threshold is not None else float("nan")
    best = max(spec.categories.values()) if spec.categories else float("nan")
    return float(bar), float(best)


def resolve(trial: Trial, spec: SuiteSpec) -> Resolved:
    """Apply the suite's pass rule to one trial: :func:`decide` on a batch of one."""
    decision = decide(features([trial], [spec]))
    if decision.undecided >= 0:
        raise undecided_error(trial, spec)
    return Resolved(
        passed=bool(decision.code[0] == PASS),
        score=float(decision.score[0]),
        category=int(decision.category[0]),
        scored=bool(decision.scored[0]),
    )
