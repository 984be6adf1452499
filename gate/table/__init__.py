"""The trial table (:mod:`gate.table.model`), its storage engine (:mod:`gate.table.store`)
and the pass rule (:mod:`gate.table.rule`)."""

from gate.table.model import (
    MESSAGES_KEPT,
    USAGE_FIELDS,
    PerTrialDataMissing,
    StimulusTrials,
    TableSummary,
    TrialTable,
)

__all__ = [
    "MESSAGES_KEPT",
    "USAGE_FIELDS",
    "PerTrialDataMissing",
    "StimulusTrials",
    "TableSummary",
    "TrialTable",
]
