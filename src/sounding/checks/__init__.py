"""Checks: one registry, one module per family. Importing this package registers them all."""

# Families register their check types on import (docs/checks.md lists them all).
from sounding.checks import _command as _command
from sounding.checks import _custom as _custom
from sounding.checks import _files as _files
from sounding.checks import _forbidden as _forbidden
from sounding.checks import _grader as _grader
from sounding.checks import _http as _http
from sounding.checks import _judge as _judge
from sounding.checks import _metric as _metric
from sounding.checks import _service_rules as _service_rules
from sounding.checks import _sql as _sql
from sounding.checks import _support as _support
from sounding.checks import _trace as _trace
from sounding.checks._base import (
    CheckContext,
    CheckResult,
    Evidence,
    Judge,
    NoParams,
    Params,
    Status,
)
from sounding.checks._fields import (
    JudgeModel,
    MetricName,
    Ref,
    Reference,
    ServiceName,
    WorkspacePath,
    references,
)
from sounding.checks._registry import (
    CheckType,
    Reads,
    Refused,
    Registry,
    Role,
    UnknownCheckError,
    registry,
)

__all__ = [
    "CheckContext",
    "CheckResult",
    "CheckType",
    "Evidence",
    "Judge",
    "JudgeModel",
    "MetricName",
    "NoParams",
    "Params",
    "Reads",
    "Ref",
    "Reference",
    "Refused",
    "Registry",
    "Role",
    "ServiceName",
    "Status",
    "UnknownCheckError",
    "WorkspacePath",
    "references",
    "registry",
]
