"""Checks: one registry, one module per family. Importing this package registers them all."""

from sounding.checks._base import (
    CheckContext,
    CheckResult,
    Evidence,
    Judge,
    NoParams,
    Params,
    ServiceEvidence,
    Status,
)
from sounding.checks._registry import CheckType, Registry, Role, UnknownCheckError, registry

__all__ = [
    "CheckContext",
    "CheckResult",
    "CheckType",
    "Evidence",
    "Judge",
    "NoParams",
    "Params",
    "Registry",
    "Role",
    "ServiceEvidence",
    "Status",
    "UnknownCheckError",
    "registry",
]
