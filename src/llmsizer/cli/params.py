"""The command line's parameter types: their errors say what to type."""

from __future__ import annotations

import math
import os
from typing import Any

import click


class _Choice(click.Choice):  # type: ignore[type-arg]
    """A choice whose error names the closest allowed value (``gpu`` -> ``gpus``)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as exc:
            from ..inputs.schema_messages import _nearest
            from ..model.catalog import suggest

            hint = suggest(str(value), [str(c) for c in self.choices])
            numbers = [int(c) for c in self.choices if str(c).isdigit()]
            try:
                # `--tp 3`: the degrees either side, as the file's `tensor_parallel: [3]` is
                # told (review round 24: it named none)
                near = _nearest(float(value), numbers) if numbers else ""
            except (TypeError, ValueError):
                near = ""
            hint = f" (did you mean {near.removeprefix('; did you mean ')[:-1]}?)" if near else hint
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
        if not self.dir_okay and isinstance(value, str | os.PathLike) and os.path.isdir(value):
            # it said "File 'inputs' is a directory."; the fix names a file, and where a
            # folder is taken (review round 24)
            also = ("; `llmsizer report FOLDER --out DIR` sizes every requirements file in "
                    "a folder" if param is not None and param.name == "file" else "")
            self.fail(f"{os.fspath(value)!r} is a folder, not a file: give the path of a file "
                      f"in it{also}", param, ctx)
        return super().convert(value, param, ctx)
