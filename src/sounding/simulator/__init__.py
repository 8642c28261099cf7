"""Simulated users: the `[simulator]` model plays a scenario's user after its fixed turns."""

from sounding.simulator._review import Flag, review
from sounding.simulator._user import (
    TURN_TOOL,
    SimulatedUser,
    SimulatorConfig,
    instructions,
    transcript,
)

__all__ = [
    "TURN_TOOL",
    "Flag",
    "SimulatedUser",
    "SimulatorConfig",
    "instructions",
    "review",
    "transcript",
]
