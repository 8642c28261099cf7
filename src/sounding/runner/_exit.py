"""The documented exit codes, apart so that a command can name them without the runner."""


class ExitCode:
    """Documented exit codes of `sounding run` and `sounding score`."""

    PASS = 0
    FAIL = 1  # a scenario failed or was flaky (the gate did not hold)
    USAGE = 2  # bad command line, suite or case file
    ERROR = 3  # a trial or check errored: no verdict could be given
    INTERRUPTED = 130  # Ctrl-C: finished trials are kept, `--resume` runs the rest
