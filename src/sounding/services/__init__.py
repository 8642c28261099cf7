"""Real services beside the agent, one set per trial: `sql`, `http_mock`, `process`; and
what captures an agent from outside: the receiver of its OpenTelemetry spans
(`[capture] otlp`) and the proxy to its model API (`[capture] llm`).

    with start_services(case.services, trial_dir=..., suite_dir=..., settings=...) as services:
        run_agent(env=services.env)
        evidence = services.evidence()
        services.store(trial_dir)

See docs/services.md for how a case declares them.
"""

from sounding.services._base import ServiceError, ServiceEvidence, ServiceSettings
from sounding.services._llm_proxy import ANTHROPIC_UPSTREAM, OPENAI_UPSTREAM, LlmProxy
from sounding.services._otlp import OtlpReceiver
from sounding.services._set import ServiceSet, load_service_evidence, start_services
from sounding.services._specs import validate_service_specs
from sounding.services._sql_server import missing_driver

__all__ = [
    "ANTHROPIC_UPSTREAM",
    "OPENAI_UPSTREAM",
    "LlmProxy",
    "OtlpReceiver",
    "ServiceError",
    "ServiceEvidence",
    "ServiceSet",
    "ServiceSettings",
    "load_service_evidence",
    "missing_driver",
    "start_services",
    "validate_service_specs",
]
