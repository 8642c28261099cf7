"""Report renderers: one registry; each renderer is an option of `sounding report`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sounding.store import Results

Render = Callable[[Results], str]


@dataclass(frozen=True)
class Renderer:
    """A registered renderer: `--name FILE` writes `render(results)` there."""

    name: str  # the option (`--junit`) and the keyword of `report_command`
    title: str  # what `wrote ...` calls the file
    help: str  # the option's help
    render: Render


class Renderers:
    """The one place report renderers resolve, in the order they registered."""

    def __init__(self) -> None:
        self._renderers: dict[str, Renderer] = {}

    def renderer(self, name: str, *, title: str, help: str) -> Callable[[Render], Render]:
        """Register `render` as the renderer `name`; a second registration is refused."""

        def register(render: Render) -> Render:
            if name in self._renderers:
                raise ValueError(f"renderer '{name}' is registered twice")
            self._renderers[name] = Renderer(name, title, help, render)
            return render

        return register

    def __iter__(self) -> Iterator[Renderer]:
        return iter(self._renderers.values())

    def names(self) -> list[str]:
        return list(self._renderers)


renderers = Renderers()
"""The registry every renderer registers into; `sounding report` has an option for each."""
