"""Report renderers: one registry per kind of result; each renderer is an option of the
command that shows that result (`sounding report`: a stored run; `sounding score
--records`: many records scored)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from sounding._files import write_text
from sounding.scoring import BulkScore
from sounding.store import Results, ResultsError

T = TypeVar("T")


@dataclass(frozen=True)
class Renderer(Generic[T]):
    """A registered renderer: `--name FILE` writes `render(result)` there."""

    name: str  # the option (`--junit`) and the keyword of `report_command`
    title: str  # what `wrote ...` calls the file
    help: str  # the option's help
    render: Callable[[T], str]

    def write(self, result: T, path: Path) -> None:
        """Write `render(result)` to `path`; a ResultsError saying why it cannot be written."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text(path, self.render(result))
        except OSError as exc:
            raise ResultsError(
                f"{path}: cannot write the report ({exc.strerror or exc}); "
                "choose a path in a folder you can write to"
            ) from exc


class Renderers(Generic[T]):
    """The one place the renderers of one kind of result resolve, in the order they
    registered."""

    def __init__(self) -> None:
        self._renderers: dict[str, Renderer[T]] = {}

    def renderer(
        self, name: str, *, title: str, help: str
    ) -> Callable[[Callable[[T], str]], Callable[[T], str]]:
        """Register `render` as the renderer `name`; a second registration is refused."""

        def register(render: Callable[[T], str]) -> Callable[[T], str]:
            if name in self._renderers:
                raise ValueError(f"renderer '{name}' is registered twice")
            self._renderers[name] = Renderer(name, title, help, render)
            return render

        return register

    def __iter__(self) -> Iterator[Renderer[T]]:
        return iter(self._renderers.values())

    def names(self) -> list[str]:
        return list(self._renderers)


renderers: Renderers[Results] = Renderers()
"""The registry every renderer of a stored run registers into; `sounding report` has an
option for each."""

bulk_renderers: Renderers[BulkScore] = Renderers()
"""The renderers of records scored in bulk; `sounding score CASE --records PATH` has an
option for each."""
