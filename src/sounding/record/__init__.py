"""The run record (`sounding.run/1`) and the ways into it."""

from sounding.record._model import (
    SCHEMA,
    Approval,
    AuditEvent,
    HookDecision,
    Message,
    Passage,
    RunRecord,
    ToolCall,
    Usage,
)

__all__ = [
    "SCHEMA",
    "Approval",
    "AuditEvent",
    "HookDecision",
    "Message",
    "Passage",
    "RunRecord",
    "ToolCall",
    "Usage",
]
