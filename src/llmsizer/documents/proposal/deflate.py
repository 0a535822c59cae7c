"""The PDF's streams deflated at zlib's default level 6 instead of pydyf's level 9.

pydyf 0.13 (WeasyPrint's PDF writer) compresses every page's content stream and font with
``zlib.compressobj(level=9)``. On the proposal, level 9 costs about a tenth of the PDF
writing time for a file 2 % smaller than level 6 (docs/benchmarks.md, "A leaner account,
fifth round"). :func:`install` gives pydyf a ``zlib`` whose ``compressobj`` uses level 6;
the output is still a plain Flate stream, read the same by every PDF reader. Installed only
on the pydyf version it was measured on: on another, pydyf's own level stays.
"""

from __future__ import annotations

import types
import zlib
from typing import Any

__all__ = ["install"]

_VERSION = "0.13.0"
LEVEL = 6


def _compressobj(*_args: Any, **_kwargs: Any) -> Any:
    return zlib.compressobj(level=LEVEL)


def install() -> bool:
    """Put the level-6 ``zlib`` in pydyf (once per process); return whether it is in."""
    import importlib

    pydyf = importlib.import_module("pydyf")  # untyped: no stubs
    if isinstance(pydyf.zlib, types.SimpleNamespace):
        return True
    if pydyf.__version__ != _VERSION or pydyf.zlib is not zlib:
        return False
    setattr(pydyf, "zlib", types.SimpleNamespace(compress=zlib.compress,  # noqa: B010
                                                 compressobj=_compressobj))
    return True
