"""What every command shares: the console, usage errors (exit 2), file options, and the
group that turns what no command handled into a documented exit code."""

from __future__ import annotations

import errno
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from sounding._exit import ExitCode

if TYPE_CHECKING:
    from rich.console import Console


def console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def escaped(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def usage_error(message: str) -> NoReturn:
    console(stderr=True).print(f"[red]error:[/] {escaped(message)}")
    raise SystemExit(ExitCode.USAGE)


class FilePath(click.Path):
    """A path given to an option; a value that starts with `--` is the next option, taken
    as the path because the path was left out (`report RUN --markdown --json`)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.startswith("--") and param is not None:
            option = param.opts[0]
            raise click.UsageError(
                f"{option} takes a file name, not the option '{value}'; write {option} FILE "
                "(a file whose name starts with -- is written ./--name)",
                ctx,
            )
        return super().convert(value, param, ctx)


class Commands(click.Group):
    """The command group: what no command handled still ends with a documented code. A
    Ctrl-C anywhere exits 130; a full device, or a fault of sounding itself, exits 4 (never
    1, which says a scenario failed), a fault with its traceback, to report."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            console(stderr=True).print("[yellow]interrupted[/]")
            raise SystemExit(ExitCode.INTERRUPTED) from None
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                internal_error()
            console(stderr=True).print(
                f"[red]error:[/] no space left on the device writing {escaped(str(exc.filename))}"
                ": free some space and run the command again"
            )
            raise SystemExit(ExitCode.INTERNAL) from None
        except Exception:
            internal_error()


def internal_error() -> NoReturn:
    """A fault of sounding itself: its traceback on stderr, to report, and exit 4."""
    import traceback

    traceback.print_exc()
    console(stderr=True).print(
        "[red]internal error of sounding[/] (the traceback above says where): please report "
        "it with the command you ran; what a run finished before it is kept"
    )
    raise SystemExit(ExitCode.INTERNAL)


def warn(note: str) -> None:
    """A note on stderr: something the user should know that stops nothing."""
    console(stderr=True).print(f"[yellow]![/] {escaped(note)}")


OUT = FilePath(dir_okay=False, path_type=Path)


class RendererOptions(click.Command):
    """A command with a `--name FILE` option per renderer of `renderers()`, added when it is
    first parsed or shown, so that no other command loads the renderers. `prefix` starts
    each option's help."""

    prefix = ""

    def renderers(self) -> Iterable[Any]:
        raise NotImplementedError

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        given = {param.name for param in self.params}
        for renderer in self.renderers():
            if renderer.name not in given:
                help = renderer.help
                if self.prefix:
                    help = f"{self.prefix}{help[0].lower()}{help[1:]}"
                option = click.Option([f"--{renderer.name}"], type=OUT, help=help)
                self.params.append(option)
        return super().get_params(ctx)
