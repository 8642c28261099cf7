"""The command line: parses, calls, prints. Exit codes are `sounding._exit.ExitCode`.

Each command imports what it uses when it runs: `sounding --help` loads click and the
package's core (the record formats `score --format` offers), no runner or renderer.
"""

from __future__ import annotations

import click

from sounding.cli._common import Commands
from sounding.cli._run import audit, run
from sounding.cli._score import score
from sounding.cli._stored import agreement, compare, form, init, report, review, validate, view

__all__ = ["main"]


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sounding")
def main() -> None:
    """sounding: does my agent work, reliably?

    \b
    Exit codes: 0 everything passed; 1 a scenario or trial failed (or was flaky),
    `compare` established a regression, or `audit` found a scenario not OK;
    2 usage error or a bad suite / case / record file; 3 an error prevented a
    verdict (or `compare` withheld it); 4 sounding could not do its own work (no
    space left on the device, or an internal error: please report it);
    130 interrupted (finish a run with `sounding run SUITE --resume RUN_ID`).
    """


for command in (validate, score, run, audit, init, report, compare, review, agreement, view, form):
    main.add_command(command)
