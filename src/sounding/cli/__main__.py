"""`python -m sounding.cli`: the `sounding` command."""

from sounding.cli import main

main()
