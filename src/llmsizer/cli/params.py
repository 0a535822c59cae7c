"""The command line's parameter types: their errors say what to type."""

from __future__ import annotations

import math
from typing import Any

import click


class _Choice(click.Choice):  # type: ignore[type-arg]
    """A choice whose error names the closest allowed value (``gpu`` -> ``gpus``)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as exc:
            from ..model.catalog import suggest

            hint = suggest(str(value), [str(c) for c in self.choices])
            if not hint:
                raise
            raise click.BadParameter(f"{exc.message}{hint}", ctx=ctx, param=param) from None


class _Whole(click.IntRange):
    """A whole-number range whose parse error says what to type (`500tok`, `1,000`)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from ..inputs.options import number_fix
        if isinstance(value, str) and (fix := number_fix(value, whole=True)):
            self.fail(fix, param, ctx)
        return super().convert(value, param, ctx)


class _FiniteRange(click.FloatRange):
    """A float range that refuses NaN: NaN compares false with both bounds, so click's own
    range check lets it through (issue 25, F17); a parse error says what to type (`80%`)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from ..inputs.options import number_fix
        if isinstance(value, str) and (fix := number_fix(value, whole=False)):  # nan parses
            self.fail(fix, param, ctx)
        x = super().convert(value, param, ctx)
        if not math.isfinite(x):
            self.fail(f"{value!r} is not a number; give a value in {self._describe_range()}",
                      param, ctx)
        return x


class _Path(click.Path):
    """A path that is not empty: ``Path("")`` is ``.``, so `--out ""` (an unset shell
    variable) would write into the current folder, and `report ""` would read it
    (issue 25, F9). ``.`` written out stays allowed."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("is empty (an unset variable?); name a folder or file, or write . for "
                      "the current folder", param, ctx)
        return super().convert(value, param, ctx)
