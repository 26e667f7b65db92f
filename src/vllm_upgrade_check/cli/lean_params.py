"""Parameter coercion without pydantic on the common path (start-up cost).

typer (>= 0.20) coerces every parameter's value through a pydantic ``TypeAdapter`` built
when the command line is parsed: importing pydantic's validation machinery and building 25
adapters for ``scan`` cost about as much as importing typer, rich and pydantic together.

:class:`LeanGroup` is the click group class of our typer applications. Before a command runs,
each of its parameters gets a :class:`LeanRuntimeParam`, which returns, without pydantic,
what typer's adapter returns for the values a command line usually holds — ``None``, a
``str`` for ``str``, a ``Path`` (with typer's own existence/kind checks) for ``Path``, an
enum member for an enum, an ``int`` (given as digits) within its bounds, lists of those. Any other
value, and any value the lean path refuses, goes to typer's own coercion, built on first
use, so that values and error messages stay exactly typer's.

It uses typer's internal coercion classes (``typer._coercion``, ``typer._param_types``,
typer 0.26 and later); :mod:`~vllm_upgrade_check.cli.apps` falls back to typer's own group
where they cannot be imported, and :func:`install` leaves alone a parameter without them.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import typer.core
from typer._coercion import RuntimeParam
from typer._param_types import coerce_cli_choice, coerce_cli_path, routes_to_path
from typer.core import TyperGroup, _TyperParameter

__all__ = ["LeanGroup", "LeanRuntimeParam", "install"]


class _Refused(Exception):
    """The lean path has no answer for this value: typer's coercion decides."""


def _lean_leaf(annotation: Any, info: Any) -> typing.Callable[[Any, Any, Any], Any] | None:
    """A pydantic-free coercer ``(value, param, ctx) -> value`` for one leaf annotation,
    or ``None`` where only typer's adapter knows the answer (parsers, numbers with bounds,
    dates, bools given as text...)."""
    if info.parser is not None:
        return None
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        choices = tuple(annotation)
        case_sensitive = info.case_sensitive

        def choice(value: Any, param: Any, ctx: Any) -> Any:
            if not isinstance(value, str):
                raise _Refused
            try:
                return coerce_cli_choice(value, choices=choices, case_sensitive=case_sensitive, ctx=ctx)
            except ValueError as exc:  # the message without pydantic's "Value error, " before it
                raise typer.BadParameter(str(exc), ctx=ctx, param=param) from None

        return choice
    if annotation is str:

        def text(value: Any, _param: Any, _ctx: Any) -> Any:
            if type(value) is not str:
                raise _Refused
            return value

        return text
    if annotation is int:
        low, high = info.min, info.max

        def whole(value: Any, _param: Any, _ctx: Any) -> Any:
            if type(value) is str and value.isascii() and value.isdigit():
                value = int(value)  # plain decimal digits: what pydantic reads them as
            if type(value) is not int or (low is not None and value < low) or (high is not None and value > high):
                raise _Refused  # other text, or out of bounds: typer's message (or clamp)
            return value

        return whole
    if annotation is Path and info.path_type is None and routes_to_path(annotation, info):

        def path(value: Any, param: Any, ctx: Any) -> Any:
            if type(value) is str:
                value = Path(value)
            elif not isinstance(value, Path):
                raise _Refused
            return coerce_cli_path(value, info, path_type=Path, param=param, ctx=ctx)

        return path
    return None


def _lean_coercer(annotation: Any, info: Any) -> typing.Callable[[Any, Any, Any], Any] | None:
    """:func:`_lean_leaf`, or for ``list[X]`` a coercer of each item (a single value becomes
    a one-item list, as typer's adapter does)."""
    if typing.get_origin(annotation) is list:
        args = typing.get_args(annotation)
        leaf = _lean_leaf(args[0], info) if len(args) == 1 else None
        if leaf is None:
            return None

        def items(value: Any, param: Any, ctx: Any) -> Any:
            values = value if isinstance(value, (list, tuple)) else [value]
            return [leaf(item, param, ctx) for item in values]

        return items
    return _lean_leaf(annotation, info)


@dataclass(frozen=True)
class LeanRuntimeParam(RuntimeParam):
    """typer's runtime coercion of one parameter, answered without pydantic where it can be.

    Attributes:
        lean: the pydantic-free coercer, or ``None`` (every value goes to typer's).
        typer_param: typer's own runtime parameter, built on first need.
    """

    lean: typing.Callable[[Any, Any, Any], Any] | None = None
    typer_param: list[RuntimeParam] = field(default_factory=list)

    def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
        if self.lean is not None:
            try:
                return self.lean(value, param, ctx)
            except _Refused:
                pass
        if not self.typer_param:
            # looked up on typer.core at call time: benchmarks/bench_scan.py times it there
            self.typer_param.append(typer.core.build_runtime_param(param.type_descriptor))
        return self.typer_param[0]._coerce_value(value, param=param, ctx=ctx)


def install(params: typing.Iterable[Any]) -> None:
    """Give each typer parameter of ``params`` that has no runtime coercion yet a
    :class:`LeanRuntimeParam` (file annotations keep typer's own: they open files)."""
    for param in params:
        if not isinstance(param, _TyperParameter) or getattr(param, "_runtime_param", False) is not None:
            continue  # not typer's, already coerced, or a typer that keeps no lazy slot
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or descriptor.file_annotation is not None:
            continue
        param._runtime_param = LeanRuntimeParam(
            parameter_info=descriptor.parameter_info,
            annotation=descriptor.annotation,
            lean=_lean_coercer(descriptor.annotation, descriptor.parameter_info),
        )


class LeanGroup(TyperGroup):
    """typer's group, whose commands coerce their parameters through :func:`install`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """typer's ``parse_args``, once the group's own options (``--help``, completion)
        have lean coercion."""
        install(self.get_params(ctx))
        return super().parse_args(ctx, args)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """typer's ``get_command``; the command found (its ``--help`` too) gets lean
        coercion first."""
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            install(command.get_params(ctx))
        return command
