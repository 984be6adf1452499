"""Cost, latency and tokens of a run: suite summaries, intervals, paired changes.

Pure statistics on per-trial arrays (issue 14). A trial that does not report a
value carries NaN (or ``None``) and is left out of that value's statistics, never
counted as zero: ``trials`` says how many trials report it, ``missing`` how many
do not.

Estimators (each named where it is returned):

- ``total``: the sum over the trials that report the value.
- ``mean_per_trial``: ``total / trials``, the trial-weighted mean (a ratio
  estimator: a stimulus run five times weighs five times as much as one run once).
- ``per_pass`` (cost only): the cost of the trials that report a cost, divided
  by how many of those trials passed; ``None`` when none passed.
- ``p50``/``p95`` (duration only): numpy's default ``"linear"`` quantile,
  Hyndman & Fan (1996) definition 7: ``h = (n-1)q``,
  ``x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h])`` on the sorted values.

Intervals resample *stimuli*, not trials (a cluster bootstrap: trials of one
stimulus share its difficulty, so they are not independent draws). The interval
of ``mean_per_trial`` is a studentized ("bootstrap-t") cluster bootstrap: cost
is skewed and bounded below, where the percentile and BCa bootstraps are too
narrow with few stimuli and a t interval is symmetric where the sampling
distribution is not. What it covers: the mean per trial over stimuli like these
(a new sample of stimuli from the same population, each run as often). For these
very stimuli re-run it is conservative (it also counts stimulus-to-stimulus
spread). Its seeded coverage on lognormal truths is in ``docs/metric-gates-draft.md``
and ``tests/metrics/test_usage.py``.

References: Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 12
(bootstrap-t) and §6.4 (ratio estimates); Davison & Hinkley (1997), *Bootstrap
Methods and their Application*, §3.8 (clustered data); Hyndman & Fan (1996),
"Sample quantiles in statistical packages", Am. Stat. 50(4).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from gate.metrics._validation import (
    check_choice,
    check_confidence,
    check_finite_total,
    check_flags,
    check_int,
    check_trial_codes,
    check_trial_keys,
    check_usage_values,
)

__all__ = [
    "USAGE_FIELDS",
    "CostSummary",
    "DurationSummary",
    "MissingUsageError",
    "TokensSummary",
    "TrialUsage",
    "UsageChange",
    "UsageComparison",
    "UsageInterval",
    "UsageSummary",
    "cost_summary",
    "duration_summary",
    "mean_per_trial_interval",
    "tokens_summary",
    "usage_change",
    "usage_summary",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
UsageField = Literal["cost_usd", "duration_s", "tokens"]
USAGE_FIELDS: tuple[UsageField, ...] = ("cost_usd", "duration_s", "tokens")

#: Default bootstrap resamples and seed: a fixed seed makes a run's report reproducible.
RESAMPLES = 2000
SEED = 0
#: Fewer stimuli than this give no interval of a mean (or of a change in mean):
#: 4 stimuli have 35 distinct resamples. Simulated coverage of the nominal 95%
#: interval at 5 stimuli: 89-93% for lognormal costs of log-sd up to 1.1,
#: 79-83% at log-sd 1.8 (bench/usage_coverage.py, docs/metric-gates-draft.md).
MIN_STIMULI = 5
#: The same for the change in p95 duration: a percentile bootstrap of a tail
#: quantile needs more stimuli: it covered 72-90% at 10 shared stimuli, 90-96% at 20.
MIN_STIMULI_P95 = 20
#: Cap on the temporary (resamples × stimuli or trials) matrices, in elements: 1M
#: elements is 8 MB a matrix, a few alive at once (2M put a comparison of a million trials
#: over the 300 MB goal; no slower, measured).
_CHUNK_ELEMENTS = 1 << 20

QUANTILE_METHOD = "linear (numpy default; Hyndman & Fan 1996 type 7)"
MEAN_METHOD = "studentized cluster bootstrap over stimuli"
P95_CHANGE_METHOD = "percentile cluster bootstrap over shared stimuli"


class MissingUsageError(ValueError):
    """No trial (or too few) reports the usage value a statistic needs."""


@dataclass(frozen=True)
class TrialUsage:
    """Per-trial usage of one run, checked once: build it with :meth:`from_trials`.

    ``stimulus[t]`` indexes ``stimuli`` (the distinct stimulus keys, first seen
    first); ``cost_usd``, ``duration_s``, ``tokens`` are NaN where a trial does
    not report the value; ``passed`` is each trial's verdict.
    """

    stimuli: tuple[Hashable, ...]
    stimulus: IntArray
    passed: BoolArray
    cost_usd: FloatArray
    duration_s: FloatArray
    tokens: FloatArray

    @classmethod
    def from_trials(
        cls,
        stimulus: Sequence[Hashable],
        passed: Sequence[bool] | npt.ArrayLike,
        *,
        cost_usd: Sequence[float | None] | npt.ArrayLike | None = None,
        duration_s: Sequence[float | None] | npt.ArrayLike | None = None,
        tokens: Sequence[float | None] | npt.ArrayLike | None = None,
    ) -> TrialUsage:
        """Check and store per-trial arrays of equal length (``None``/NaN: not reported).

        Values must be finite and ``>= 0``; an error names the field and the trial.

        >>> usage = TrialUsage.from_trials(["a", "a", "b"], [True, False, True],
        ...                                cost_usd=[0.01, None, 0.03])
        >>> usage.stimuli, usage.stimulus.tolist(), usage.cost_usd.tolist()
        (('a', 'b'), [0, 0, 1], [0.01, nan, 0.03])
        """
        keys, codes = check_trial_keys(stimulus)
        size = codes.size
        flags = check_flags(passed, size)
        return cls(
            stimuli=keys,
            stimulus=codes,
            passed=flags,
            cost_usd=check_usage_values(cost_usd, "cost_usd", size),
            duration_s=check_usage_values(duration_s, "duration_s", size),
            tokens=check_usage_values(tokens, "tokens", size),
        )

    @classmethod
    def from_codes(
        cls,
        stimuli: Sequence[Hashable],
        codes: npt.ArrayLike,
        passed: npt.ArrayLike,
        **values: npt.ArrayLike | None,
    ) -> TrialUsage:
        """As :meth:`from_trials`, with each trial's stimulus given as an index into the
        distinct keys ``stimuli`` (a table that already has them: no pass over a million
        keys in Python).

        >>> TrialUsage.from_codes(["a", "b"], [1, 1, 0], [1, 0, 1], tokens=[5, 6, 7]).stimuli
        ('a', 'b')
        """
        keys = tuple(stimuli)
        indices = check_trial_codes(codes, len(keys))
        for name in values:
            check_choice(name, "usage field", USAGE_FIELDS)
        size = indices.size
        return cls(
            stimuli=keys,
            stimulus=indices,
            passed=check_flags(passed, size),
            **{name: check_usage_values(values.get(name), name, size) for name in USAGE_FIELDS},
        )

    def reported(self, field: UsageField) -> int:
        """How many trials report ``field``.

        >>> TrialUsage.from_trials(["a", "b"], [1, 0], tokens=[10, None]).reported("tokens")
        1
        """
        return int(np.count_nonzero(~np.isnan(self.values(field))))

    def values(self, field: UsageField) -> FloatArray:
        """The per-trial array of ``field`` (NaN where not reported)."""
        result: FloatArray = getattr(self, check_choice(field, "usage field", USAGE_FIELDS))
        return result


class UsageInterval(NamedTuple):
    """A bootstrap interval: bounds, how it was made, and what it is an interval of."""

    lo: float
    hi: float
    method: str
    confidence: float
    estimand: str
    resamples: int
    seed: int


class CostSummary(NamedTuple):
    """``cost_usd`` block: total, mean per trial (with interval), cost per pass."""

    total: float
    mean_per_trial: float
    #: ``None`` with fewer than 5 stimuli reporting a cost.
    mean_per_trial_interval: UsageInterval | None
    #: ``None`` when no trial that reports a cost passed.
    per_pass: float | None
    trials: int
    missing: int
    passes: int


class DurationSummary(NamedTuple):
    """``duration_s`` block: mean and the p50/p95 quantiles of per-trial durations."""

    mean: float
    p50: float
    p95: float
    trials: int
    missing: int
    quantile_method: str


class TokensSummary(NamedTuple):
    """``tokens`` block: total and mean per trial."""

    total: float
    mean_per_trial: float
    trials: int
    missing: int


class UsageSummary(NamedTuple):
    """The suite's usage block; a field is ``None`` when no trial reports it."""

    cost_usd: CostSummary | None
    duration_s: DurationSummary | None
    tokens: TokensSummary | None


def _reported(usage: TrialUsage, field: UsageField) -> tuple[FloatArray, IntArray, BoolArray]:
    """The values of ``field`` that are reported, their stimuli and pass flags."""
    values = usage.values(field)
    keep = ~np.isnan(values)
    if not keep.any():
        raise MissingUsageError(f"no trial reports {field}")
    if keep.all():  # the arrays themselves, not copies (a million trials: 17 MB)
        return values, usage.stimulus, usage.passed
    return values[keep], usage.stimulus[keep], usage.passed[keep]


def _bootstrap_settings(confidence: float, resamples: int, seed: int) -> tuple[float, int, int]:
    """(level, resamples, seed) of a bootstrap interval, checked."""
    return (
        check_confidence(confidence),
        check_int(resamples, "resamples", minimum=100),
        check_int(seed, "seed", minimum=0),
    )


def _clusters(values: FloatArray, stimulus: IntArray) -> tuple[FloatArray, FloatArray]:
    """Per-stimulus sums and trial counts of the stimuli that report a value, in the order
    of their codes (``stimulus`` holds codes 0, 1, ...: counted directly, no sort)."""
    counts = np.bincount(stimulus)
    present = counts > 0
    sums = np.bincount(stimulus, weights=values, minlength=counts.size)[present]
    return sums.astype(np.float64), counts[present].astype(np.float64)


def _resample_weights(
    rng: np.random.Generator, rows: int, clusters: int
) -> npt.NDArray[np.float64]:
    """How often each of ``clusters`` stimuli is drawn, for ``rows`` resamples of size G."""
    draws = rng.integers(0, clusters, size=(rows, clusters), dtype=np.int32)
    if clusters < 4096:
        # Few stimuli: one histogram over all rows (row r's draws offset by r·G).
        offsets = clusters * np.arange(rows, dtype=np.int64)[:, None]
        counts = np.bincount((draws + offsets).ravel(), minlength=rows * clusters)
        return counts.reshape(rows, clusters).astype(np.float64)
    # Many: a histogram per row (cache-friendly, no offset array).
    weights = np.empty((rows, clusters))
    for row in range(rows):
        weights[row] = np.bincount(draws[row], minlength=clusters)
    return weights


def _chunks(rng: np.random.Generator, resamples: int, width: int, clusters: int) -> Any:
    """Resample weight matrices of at most ``_CHUNK_ELEMENTS`` (rows × width) entries."""
    step = max(1, _CHUNK_ELEMENTS // max(width, clusters))
    for start in range(0, resamples, step):
        yield _resample_weights(rng, min(step, resamples - start), clusters)


def _ratio_bootstrap_t(
    runs: Sequence[tuple[FloatArray, FloatArray]],
    signs: Sequence[float],
    confidence: float,
    resamples: int,
    seed: int,
    estimates: Sequence[float] | None = None,
) -> tuple[float, float, float]:
    """Studentized cluster bootstrap of ``Δ = Σ_r s_r R_r``, ``R_r = ΣS_ri / Σm_ri``.

    ``runs[r] = (S_r, m_r)``: per-stimulus sums and trial counts of run r over
    the same G stimuli (one run: a mean; two with signs +1, -1: a paired change).
    Linearisation: ``d_i = Σ_r s_r (S_ri - R_r m_ri) / Σ_j m_rj``,
    ``se² = G/(G-1) Σ d_i²``; each resample (G stimuli drawn with replacement,
    the same draw for every run) gives ``t* = (Δ* - Δ)/se*``, and the bounds
    are ``[Δ - t*_{1-a/2}·se, Δ - t*_{a/2}·se]``. Returns ``(Δ, lo, hi)``.
    ``estimates``: the R_r as the caller computed them (so an interval without
    spread is exactly the caller's point, not one rounded another way).

    With ``D_ri = S_ri - R_r m_ri`` (the sample's residuals), a resample with
    weights w has ``R*_r - R_r = w·D_r / w·m_r`` and residuals
    ``D_ri - (R*_r - R_r) m_ri``, so every resample is a quadratic form in the
    weighted moments ``w·x`` and ``w·x xᵀ`` of ``x_i = (D_ri, m_ri)_r``: one
    matrix product per chunk of resamples, no cancellation.
    """
    clusters = runs[0][0].size
    if estimates is None:
        estimates = [float(sums.sum() / counts.sum()) for sums, counts in runs]
    estimate = float(sum(sign * value for sign, value in zip(signs, estimates, strict=True)))
    basis = np.column_stack(
        [
            column
            for (sums, counts), value in zip(runs, estimates, strict=True)
            for column in (sums - value * counts, counts)
        ]
    )
    width = basis.shape[1]
    products = (basis[:, :, None] * basis[:, None, :]).reshape(clusters, -1)
    moments = np.hstack([basis, products])
    scale = clusters / (clusters - 1.0)

    def spread(first: FloatArray, second: FloatArray) -> tuple[FloatArray, FloatArray]:
        """(Δ* - Δ, se*) of resamples from their weighted moments."""
        shifts = first[:, 0::2] / first[:, 1::2]
        totals = first[:, 1::2]
        coefficients = np.empty_like(first)
        for r, sign in enumerate(signs):
            coefficients[:, 2 * r] = sign / totals[:, r]
            coefficients[:, 2 * r + 1] = -sign * shifts[:, r] / totals[:, r]
        second = second.reshape(-1, width, width)
        variance = np.einsum("bi,bij,bj->b", coefficients, second, coefficients)
        shift = shifts @ np.asarray(signs, dtype=np.float64)
        return shift, np.sqrt(scale * np.maximum(variance, 0.0))

    _, own_se = spread(moments[:, :width].sum(axis=0)[None, :], products.sum(axis=0)[None, :])
    se = float(own_se[0])
    if se == 0.0:
        return estimate, estimate, estimate
    rng = np.random.default_rng(seed)
    pivots = []
    for weights in _chunks(rng, resamples, moments.shape[1], clusters):
        weighted = weights @ moments
        shift, spread_star = spread(weighted[:, :width], weighted[:, width:])
        with np.errstate(divide="ignore", invalid="ignore"):
            pivots.append(shift / spread_star)
    # A resample of one stimulus repeated has no spread: t* = ±inf stays in the
    # count; 0/0 (no change and no spread) is 0.
    t = np.nan_to_num(np.concatenate(pivots), nan=0.0, posinf=np.inf, neginf=-np.inf)
    tail = 0.5 * (1.0 - confidence)
    upper_t, lower_t = np.quantile(t, [1.0 - tail, tail], method="inverted_cdf")
    return estimate, estimate - float(upper_t) * se, estimate - float(lower_t) * se


def mean_per_trial_interval(
    values: npt.ArrayLike,
    stimulus: npt.ArrayLike,
    confidence: float = 0.95,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    field: str = "cost_usd",
) -> UsageInterval | None:
    """Studentized cluster-bootstrap interval for the mean per trial ``R = ΣS_i / Σm_i``.

    S_i, m_i: the sum and number of reported values of stimulus i (G stimuli).
    Linearisation (delta method for a ratio): ``d_i = (S_i - R·m_i)/Σm``,
    ``se = sqrt(G/(G-1) · Σ d_i²)``. Each of ``resamples`` draws G stimuli with
    replacement (seeded), and ``t* = (R* - R)/se*``; the bounds are
    ``[R - t*_{1-a/2}·se, R - t*_{a/2}·se]``, the lower clipped at 0 (usage is
    never negative). ``None`` with fewer than 5 stimuli. Efron & Tibshirani
    (1993) ch. 12; Davison & Hinkley (1997) §3.8.

    >>> rng = np.random.default_rng(1)
    >>> cost = rng.lognormal(-3, 1, size=60)
    >>> iv = mean_per_trial_interval(cost, np.repeat(np.arange(20), 3))
    >>> round(float(cost.mean()), 4), round(iv.lo, 4), round(iv.hi, 4)
    (0.0682, 0.0504, 0.0973)
    >>> iv.method
    'studentized cluster bootstrap over stimuli (2000 resamples, seed 0)'
    """
    level, draws, seed_int = _bootstrap_settings(confidence, resamples, seed)
    _, codes = check_trial_keys(stimulus)
    numbers = check_usage_values(values, field, codes.size)
    keep = ~np.isnan(numbers)
    return _mean_interval(numbers[keep], codes[keep], level, draws, seed_int, field)


def _mean_interval(
    values: FloatArray, codes: IntArray, level: float, draws: int, seed_int: int, field: str
) -> UsageInterval | None:
    """:func:`mean_per_trial_interval` of checked, reported ``values`` whose stimuli are
    given as codes 0, 1, ... (a table's, read without a pass over a million keys)."""
    sums, counts = _clusters(values, codes)
    clusters = sums.size
    if clusters < MIN_STIMULI:
        return None
    mean = check_finite_total(values, field) / counts.sum()
    _, lo, hi = _ratio_bootstrap_t([(sums, counts)], [1.0], level, draws, seed_int, [mean])
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return None
    bounds = (lo, hi)
    return UsageInterval(
        lo=max(0.0, bounds[0]),
        hi=bounds[1],
        method=f"{MEAN_METHOD} ({draws} resamples, seed {seed_int})",
        confidence=level,
        estimand=(
            f"mean {field} per trial over stimuli like these (each run as often as here); "
            "conservative for these stimuli re-run"
        ),
        resamples=draws,
        seed=seed_int,
    )


def cost_summary(
    usage: TrialUsage,
    confidence: float = 0.95,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    interval: bool = True,
) -> CostSummary:
    """Total, mean per trial (with interval) and per-pass cost of the trials reporting a cost.

    ``total = Σ cost``, ``mean_per_trial = total / trials``,
    ``per_pass = total / passes`` (passes among the same trials; ``None`` if 0).
    ``interval=False`` skips the bootstrap (``mean_per_trial_interval`` is ``None``).
    Raises :class:`MissingUsageError` when no trial reports a cost.

    >>> usage = TrialUsage.from_trials(["a", "a", "b", "b"], [True, False, True, True],
    ...                                cost_usd=[0.02, 0.04, 0.01, None])
    >>> block = cost_summary(usage)
    >>> round(block.total, 6), round(block.mean_per_trial, 6), round(block.per_pass, 6)
    (0.07, 0.023333, 0.035)
    >>> block.trials, block.missing, block.passes, block.mean_per_trial_interval
    (3, 1, 2, None)
    """
    values, stimulus, passed = _reported(usage, "cost_usd")
    total = check_finite_total(values, "cost_usd")
    passes = int(np.count_nonzero(passed))
    return CostSummary(
        total=total,
        mean_per_trial=total / values.size,
        mean_per_trial_interval=(
            _mean_interval(
                values, stimulus, *_bootstrap_settings(confidence, resamples, seed), "cost_usd"
            )
            if interval
            else None
        ),
        per_pass=total / passes if passes else None,
        trials=int(values.size),
        missing=int(usage.stimulus.size - values.size),
        passes=passes,
    )


def duration_summary(usage: TrialUsage) -> DurationSummary:
    """Mean, p50 and p95 of the per-trial durations (numpy ``"linear"`` quantiles, type 7).

    >>> usage = TrialUsage.from_trials(list("abcde"), [1] * 5, duration_s=[1, 2, 3, 4, 100])
    >>> block = duration_summary(usage)
    >>> block.mean, block.p50, round(block.p95, 6)
    (22.0, 3.0, 80.8)
    """
    values, _, _ = _reported(usage, "duration_s")
    p50, p95 = np.quantile(values, [0.5, 0.95], method="linear")
    return DurationSummary(
        mean=check_finite_total(values, "duration_s") / values.size,
        p50=float(p50),
        p95=float(p95),
        trials=int(values.size),
        missing=int(usage.stimulus.size - values.size),
        quantile_method=QUANTILE_METHOD,
    )


def tokens_summary(usage: TrialUsage) -> TokensSummary:
    """Total and mean per trial of the tokens of the trials that report them.

    >>> usage = TrialUsage.from_trials(["a", "b", "c"], [1, 1, 0], tokens=[100, 300, None])
    >>> tokens_summary(usage)
    TokensSummary(total=400.0, mean_per_trial=200.0, trials=2, missing=1)
    """
    values, _, _ = _reported(usage, "tokens")
    total = check_finite_total(values, "tokens")
    return TokensSummary(
        total=total,
        mean_per_trial=total / values.size,
        trials=int(values.size),
        missing=int(usage.stimulus.size - values.size),
    )


def usage_summary(
    usage: TrialUsage,
    confidence: float = 0.95,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> UsageSummary:
    """The suite's usage block: each of cost, duration, tokens, or ``None`` if no trial has it.

    >>> usage = TrialUsage.from_trials(["a", "b"], [True, False], duration_s=[3.0, 5.0])
    >>> summary = usage_summary(usage)
    >>> summary.cost_usd is None, summary.duration_s.mean, summary.tokens is None
    (True, 4.0, True)
    """
    return UsageSummary(
        cost_usd=(
            cost_summary(usage, confidence, resamples=resamples, seed=seed)
            if usage.reported("cost_usd")
            else None
        ),
        duration_s=duration_summary(usage) if usage.reported("duration_s") else None,
        tokens=tokens_summary(usage) if usage.reported("tokens") else None,
    )


# --- paired change against a baseline ---------------------------------------------


class UsageChange(NamedTuple):
    """Paired change (current - baseline) over the stimuli both runs report, with interval.

    ``lo``/``hi`` are ``None`` with fewer than 5 shared stimuli (20 for p95 duration).
    """

    estimate: float
    current: float
    baseline: float
    lo: float | None
    hi: float | None
    method: str
    confidence: float
    estimand: str
    stimuli: int


class UsageComparison(NamedTuple):
    """Changes in mean cost per trial and in p95 duration; ``None`` where not computable."""

    cost_per_trial: UsageChange | None
    duration_p95: UsageChange | None


class _Paired(NamedTuple):
    """The reported trials of both runs on the G stimuli both report (codes 0..G-1)."""

    clusters: int
    now: tuple[FloatArray, IntArray]
    before: tuple[FloatArray, IntArray]


def _shared(current: TrialUsage, baseline: TrialUsage, field: UsageField) -> _Paired | None:
    """Both runs' reported values of ``field``, on the stimuli both report, coded alike."""
    now_values, before_values = current.values(field), baseline.values(field)
    now_keep, before_keep = ~np.isnan(now_values), ~np.isnan(before_values)
    now_has = np.zeros(len(current.stimuli), dtype=np.bool_)
    now_has[current.stimulus[now_keep]] = True
    before_has = np.zeros(len(baseline.stimuli), dtype=np.bool_)
    before_has[baseline.stimulus[before_keep]] = True
    before_code = {key: code for code, key in enumerate(baseline.stimuli) if before_has[code]}
    # Shared stimuli get codes 0..G-1 in the current run's order; others -1.
    now_map = np.full(len(current.stimuli), -1, dtype=np.int64)
    before_map = np.full(len(baseline.stimuli), -1, dtype=np.int64)
    shared = 0
    for code, key in enumerate(current.stimuli):
        other = before_code.get(key)
        if now_has[code] and other is not None:
            now_map[code] = before_map[other] = shared
            shared += 1
    if shared == 0:
        return None
    now_cluster = now_map[current.stimulus]
    before_cluster = before_map[baseline.stimulus]
    now_in = now_keep & (now_cluster >= 0)
    before_in = before_keep & (before_cluster >= 0)
    return _Paired(
        shared,
        (now_values[now_in], now_cluster[now_in]),
        (before_values[before_in], before_cluster[before_in]),
    )


class _SortedTrials(NamedTuple):
    """One run's reported trials sorted by value, with their stimuli, and two search aids.

    A *band* of sorted positions around the run's own ``q`` quantile, with the
    per-stimulus counts of trials below it (``below_band``): a resample's
    quantile almost always falls inside (its spread is estimated from the
    stimuli's shares of the tail, five standard errors each side). And *blocks*:
    ``before[g, j]`` counts stimulus g's trials among the first ``j·block``
    sorted trials, for the resamples whose quantile falls outside the band.
    """

    values: FloatArray
    cluster: IntArray
    per_cluster: FloatArray
    band: tuple[int, int]
    below_band: FloatArray
    before: FloatArray
    block: int

    @classmethod
    def of(cls, values: FloatArray, cluster: IntArray, clusters: int, q: float) -> _SortedTrials:
        total = values.size
        order = np.argsort(values, kind="stable")
        values, cluster = values[order], cluster[order]
        del order  # 8 bytes a trial, not kept while the counts below are made
        per_cluster = np.bincount(cluster, minlength=clusters).astype(np.float64)
        own = int(np.floor((total - 1) * q))
        share = np.bincount(cluster[: own + 1], minlength=clusters)
        fraction = (own + 1) / total
        spread = np.sqrt(np.sum((share - fraction * per_cluster) ** 2)) if clusters > 1 else 0.0
        half = 64 + int(np.ceil(5.0 * spread))
        band = (max(0, own - half), min(total, own + half + 2))
        # A lookup by blocks costs clusters × blocks (a product) plus one block's
        # scan of total/blocks trials: sqrt(total/clusters) blocks balance the two.
        blocks = max(1, min(total, _CHUNK_ELEMENTS // clusters, round((total / clusters) ** 0.5)))
        block = -(-total // blocks)
        blocks = -(-total // block)
        if band[1] - band[0] > block + clusters * blocks:
            band = (0, 0)  # few stimuli: resamples' quantiles spread too far for a band
        below_band = np.bincount(cluster[: band[0]], minlength=clusters).astype(np.float64)
        # Block by block: no index array as long as the trials (a million: 16 MB more).
        before = np.zeros((clusters, blocks + 1))
        for j in range(blocks):
            part = cluster[j * block : (j + 1) * block]
            before[:, j + 1] = before[:, j] + np.bincount(part, minlength=clusters)
        return cls(values, cluster, per_cluster, band, below_band, before, block)

    @property
    def scan_width(self) -> int:
        """Entries per resample of the band lookup (the block lookup bounds its own rows)."""
        return max(self.band[1] - self.band[0], int(self.before.shape[1]), self.per_cluster.size)


def _order_statistic(
    trials: _SortedTrials, weights: FloatArray, preceding: FloatArray, rank: FloatArray
) -> IntArray:
    """Sorted position of each resample's ``rank``-th (0-based) trial, by blocks."""
    # The last block boundary with at most ``rank`` trials before it opens the block.
    block = np.sum(preceding[:, 1:] <= rank[:, None], axis=1)
    start = block * trials.block
    offsets = start[:, None] + np.arange(trials.block)
    inside = offsets < trials.values.size
    positions = np.minimum(offsets, trials.values.size - 1)
    repeats = np.take_along_axis(weights, trials.cluster[positions], axis=1) * inside
    reach = preceding[np.arange(rank.size), block][:, None] + np.cumsum(repeats, axis=1)
    result: IntArray = start + np.sum(reach <= rank[:, None], axis=1)
    return result


def _resampled_quantile(trials: _SortedTrials, weights: FloatArray, q: float) -> FloatArray:
    """Type-7 ``q`` quantile of each resample (trial t repeated ``weights[r, stimulus(t)]`` times).

    ``h = (N*-1)q`` on the resample's N* trials interpolates the order statistics
    ``floor(h)`` and ``floor(h)+1``; each is looked up in the band, else by blocks.
    """
    size = weights @ trials.per_cluster
    h = (size - 1.0) * q
    low = np.floor(h)
    ranks = (low, np.minimum(low + 1.0, size - 1.0))
    picked = np.full((weights.shape[0], 2), -1, dtype=np.int64)
    start, stop = trials.band
    if stop > start:
        # Counts are exact in int32 (a resample has as many trials as the run), and
        # half the bytes of float64 in the widest arrays here.
        preceding = (weights @ trials.below_band).astype(np.int64)
        repeats = weights.astype(np.int32)[:, trials.cluster[start:stop]]
        reach = np.cumsum(repeats, axis=1, dtype=np.int32)
        for column, rank in enumerate(ranks):
            within = rank.astype(np.int64) - preceding
            hit = (within >= 0) & (reach[:, -1] > within)
            picked[hit, column] = start + np.sum(reach[hit] <= within[hit, None], axis=1)
    missed = np.flatnonzero((picked < 0).any(axis=1))
    step = max(1, _CHUNK_ELEMENTS // max(trials.block, trials.before.shape[1]))
    for first in range(0, missed.size, step):
        rest = missed[first : first + step]
        block_preceding = weights[rest] @ trials.before
        for column, rank in enumerate(ranks):
            picked[rest, column] = _order_statistic(
                trials, weights[rest], block_preceding, rank[rest]
            )
    below, above = trials.values[picked[:, 0]], trials.values[picked[:, 1]]
    result: FloatArray = below + (h - low) * (above - below)
    return result


def _p95_change(
    current_run: TrialUsage, baseline_run: TrialUsage, level: float, draws: int, seed: int
) -> UsageChange | None:
    paired = _shared(current_run, baseline_run, "duration_s")
    if paired is None:
        return None
    # Each run's paired trials are dropped once sorted (a million trials: 16 MB).
    clusters, now_trials, before_trials = paired
    del paired
    now = _SortedTrials.of(*now_trials, clusters, 0.95)
    del now_trials
    before = _SortedTrials.of(*before_trials, clusters, 0.95)
    del before_trials
    current = float(np.quantile(now.values, 0.95))
    baseline = float(np.quantile(before.values, 0.95))
    lo: float | None = None
    hi: float | None = None
    if clusters >= MIN_STIMULI_P95:
        rng = np.random.default_rng(seed)
        width = max(now.scan_width, before.scan_width)
        changes = [
            _resampled_quantile(now, weights, 0.95) - _resampled_quantile(before, weights, 0.95)
            for weights in _chunks(rng, draws, width, clusters)
        ]
        tail = 0.5 * (1.0 - level)
        lo_q, hi_q = np.quantile(np.concatenate(changes), [tail, 1.0 - tail])
        lo, hi = float(lo_q), float(hi_q)
    return UsageChange(
        estimate=current - baseline,
        current=current,
        baseline=baseline,
        lo=lo,
        hi=hi,
        method=f"{P95_CHANGE_METHOD} ({draws} resamples, seed {seed})",
        confidence=level,
        estimand=(
            "p95 of per-trial duration_s (type 7), current minus baseline, on the stimuli "
            "both runs report, for stimuli like these"
        ),
        stimuli=clusters,
    )


def _cost_change(paired: _Paired, level: float, draws: int, seed: int) -> UsageChange:
    clusters = paired.clusters
    runs = [
        (
            np.bincount(codes, weights=values, minlength=clusters).astype(np.float64),
            np.bincount(codes, minlength=clusters).astype(np.float64),
        )
        for values, codes in (paired.now, paired.before)
    ]
    current, baseline = (float(sums.sum() / counts.sum()) for sums, counts in runs)
    lo: float | None = None
    hi: float | None = None
    if clusters >= MIN_STIMULI:
        _, low, high = _ratio_bootstrap_t(runs, [1.0, -1.0], level, draws, seed)
        if np.isfinite(low) and np.isfinite(high):
            lo, hi = low, high
    return UsageChange(
        estimate=current - baseline,
        current=current,
        baseline=baseline,
        lo=lo,
        hi=hi,
        method=f"{MEAN_METHOD}, paired ({draws} resamples, seed {seed})",
        confidence=level,
        estimand=(
            "mean cost_usd per trial, current minus baseline, on the stimuli both runs "
            "report, for stimuli like these"
        ),
        stimuli=clusters,
    )


def usage_change(
    current: TrialUsage,
    baseline: TrialUsage,
    confidence: float = 0.95,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> UsageComparison:
    """Paired changes against a baseline, by stimulus: mean cost per trial and p95 duration.

    Only stimuli for which both runs report the value take part (paired by
    stimulus key). Each resample draws those stimuli with replacement, the
    *same* draw for both runs, so what the stimuli share cancels:

    - cost per trial: ``Δ = R_now - R_base`` (ratio means over the shared
      stimuli), studentized with the linearised ``d_i = d_i^now - d_i^base``
      (see :func:`mean_per_trial_interval`);
    - p95 duration: ``Δ = p95_now - p95_base`` (type-7 quantiles of the pooled
      trials), percentile bootstrap (a quantile has no smooth standard error to
      studentize with).

    Bounds are ``None`` with fewer than 5 shared stimuli (20 for the p95); a change is ``None``
    when no stimulus reports the value in both runs.

    >>> now = TrialUsage.from_trials(list("aabb"), [1, 1, 0, 1], cost_usd=[2, 2, 4, 4])
    >>> before = TrialUsage.from_trials(list("abc"), [1, 1, 1], cost_usd=[1, 3, 9])
    >>> change = usage_change(now, before).cost_per_trial
    >>> change.estimate, change.current, change.baseline, change.stimuli, change.lo
    (1.0, 3.0, 2.0, 2, None)
    """
    level, draws, seed_int = _bootstrap_settings(confidence, resamples, seed)
    cost = _shared(current, baseline, "cost_usd")
    return UsageComparison(
        cost_per_trial=None if cost is None else _cost_change(cost, level, draws, seed_int),
        duration_p95=_p95_change(current, baseline, level, draws, seed_int),
    )
