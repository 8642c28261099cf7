"""Scoring: the composite of one trial, verdicts over trials, comparisons of cells, and the
agreement of a judge with people."""

from sounding.scoring._agreement import (
    agreement_interval,
    average_ranks,
    cohen_kappa,
    mean_absolute_error,
    observed_agreement,
    spearman,
)
from sounding.scoring._gaps import compare, measure_gap, publishable
from sounding.scoring._measure import measure_trial, run_check
from sounding.scoring._scenario import (
    ScenarioResult,
    ScenarioVerdict,
    Tally,
    aggregate,
    pass_at_k,
    pass_hat_k,
)
from sounding.scoring._stats import (
    Comparison,
    Direction,
    GapState,
    Interval,
    Statistic,
    Summary,
    interval,
    summarize,
)
from sounding.scoring._trial import (
    UNVALIDATED,
    Kind,
    Measured,
    TrialScore,
    TrialVerdict,
    composite,
    score_trial,
)

__all__ = [
    "UNVALIDATED",
    "Comparison",
    "Direction",
    "GapState",
    "Interval",
    "Kind",
    "Measured",
    "ScenarioResult",
    "ScenarioVerdict",
    "Statistic",
    "Summary",
    "Tally",
    "TrialScore",
    "TrialVerdict",
    "aggregate",
    "agreement_interval",
    "average_ranks",
    "cohen_kappa",
    "compare",
    "composite",
    "interval",
    "mean_absolute_error",
    "measure_gap",
    "measure_trial",
    "observed_agreement",
    "pass_at_k",
    "pass_hat_k",
    "publishable",
    "run_check",
    "score_trial",
    "spearman",
    "summarize",
]
