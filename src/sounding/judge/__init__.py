"""The LLM judge: configuration, the forced verdict tool, the client, and graders."""

from sounding.judge._client import (
    CACHE_SCHEMA,
    JudgeClient,
    Provenance,
    Verdict,
    digest,
    judged_by,
)
from sounding.judge._config import ENV_BASE_URL, ENV_MODEL, KEY_ENV, JudgeConfig, preflight
from sounding.judge._errors import GraderError, JudgeError
from sounding.judge._graders import (
    DEFAULT_GRADER_TIMEOUT,
    GraderAnswer,
    find_graders,
    grader_name,
    run_grader,
)
from sounding.judge._prompt import Rubric, VerdictRequest, judge_request
from sounding.judge._tool import TOOL_NAME, MetricType, VerdictTool, verdict_tool

__all__ = [
    "CACHE_SCHEMA",
    "DEFAULT_GRADER_TIMEOUT",
    "ENV_BASE_URL",
    "ENV_MODEL",
    "KEY_ENV",
    "TOOL_NAME",
    "GraderAnswer",
    "GraderError",
    "JudgeClient",
    "JudgeConfig",
    "JudgeError",
    "MetricType",
    "Provenance",
    "Rubric",
    "Verdict",
    "VerdictRequest",
    "VerdictTool",
    "digest",
    "find_graders",
    "grader_name",
    "judge_request",
    "judged_by",
    "preflight",
    "run_grader",
    "verdict_tool",
]
