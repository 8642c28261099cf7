"""The documented exit codes of every command, in one place."""

from enum import IntEnum


class ExitCode(IntEnum):
    """What a `sounding` command's exit status means (README, "Exit codes")."""

    PASS = 0  # every scenario passed (every trial, for `score`)
    FAIL = 1  # a scenario failed or was flaky (its gate did not hold)
    USAGE = 2  # bad command line, suite, case file, record or results folder
    ERROR = 3  # a trial or check errored: no verdict could be given
    INTERNAL = 4  # sounding could not do its own work: no space left, or a fault of its own
    INTERRUPTED = 130  # Ctrl-C: finished trials are kept, `--resume` runs the rest
