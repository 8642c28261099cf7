"""Real services beside the agent, one set per trial: `sql`, `http_mock`, `process`.

    with start_services(case.services, trial_dir=..., suite_dir=..., settings=...) as services:
        run_agent(env=services.env)
        evidence = services.evidence()
        services.store(trial_dir)

See docs/services.md for how a case declares them.
"""

import typing as _typing

from sounding._lazy import lazy_names as _lazy_names

if _typing.TYPE_CHECKING:
    from sounding.services._base import ServiceError, ServiceSettings
    from sounding.services._set import ServiceSet, load_service_evidence, start_services
    from sounding.services._specs import validate_service_specs
    from sounding.services._sql_server import missing_driver

# each name, by the module that defines it: a run whose cases declare no service loads the
# settings alone, not the services' modules
_HOMES = {
    **dict.fromkeys(("ServiceError", "ServiceSettings"), "_base"),
    **dict.fromkeys(("ServiceSet", "load_service_evidence", "start_services"), "_set"),
    "validate_service_specs": "_specs",
    "missing_driver": "_sql_server",
}
__getattr__ = _lazy_names(__name__, _HOMES)

__all__ = [
    "ServiceError",
    "ServiceSet",
    "ServiceSettings",
    "load_service_evidence",
    "missing_driver",
    "start_services",
    "validate_service_specs",
]
