"""The run record (`sounding.run/1`) and the ways into it."""

from sounding.record._build import RecordError
from sounding.record._detect import (
    RECORD_FORMATS,
    detect_format,
    formats,
    load_record,
    parse_record,
)
from sounding.record._llm_calls import llm_usage, parse_llm_calls
from sounding.record._many import Found, read_records, record_label
from sounding.record._model import (
    SCHEMA,
    Approval,
    AuditEvent,
    HookDecision,
    Message,
    ModelUsage,
    Passage,
    RunRecord,
    ToolCall,
    Usage,
)
from sounding.record._otel import parse_otel
from sounding.record._prices import LIST_PRICES, LIST_PRICES_AS_OF, Price, priced, total
from sounding.record._trace import TRACE_ENV, Trace

__all__ = [
    "LIST_PRICES",
    "LIST_PRICES_AS_OF",
    "RECORD_FORMATS",
    "SCHEMA",
    "TRACE_ENV",
    "Approval",
    "AuditEvent",
    "Found",
    "HookDecision",
    "Message",
    "ModelUsage",
    "Passage",
    "Price",
    "RecordError",
    "RunRecord",
    "ToolCall",
    "Trace",
    "Usage",
    "detect_format",
    "formats",
    "llm_usage",
    "load_record",
    "parse_llm_calls",
    "parse_otel",
    "parse_record",
    "priced",
    "read_records",
    "record_label",
    "total",
]
