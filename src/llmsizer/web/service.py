"""Sizing for the web app: requirements text → the same loader and engine as the CLI →
what the pages show. A bounded in-memory cache (keyed by the requirements text's digest,
so only someone who sends the same text gets the same result) is all that is kept
between requests.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from ..base.errors import InputError, LlmsizerError
from ..documents.proposal.alternatives import memory_svg
from ..documents.proposal.debugger import DebugTable, debugger_tables
from ..documents.proposal.format import Formatter
from ..documents.proposal.views import WorkloadView
from ..documents.proposal.walkthrough import workload_view
from ..inputs.loader import load_from_text
from ..model.catalog import Catalog, load_catalog
from ..sizing.engine import size
from ..sizing.results import Result

FORM_SOURCE = "requirements"  # how messages name the form's requirements
CACHE_ENTRIES = 32


@dataclass
class Sized:
    """One sizing as the pages show it, or the error that stopped it."""

    yaml_text: str
    result: Result | None = None
    error: str | None = None  # the CLI's line
    error_field: str | None = None  # the form field it belongs to
    error_message: str | None = None  # the words beside the field
    views: list[WorkloadView] = field(default_factory=list)
    memory_chart: Any = None
    debugger: list[DebugTable] = field(default_factory=list)
    fmt: Formatter | None = None


class _Cache:
    """A small LRU of results by text digest; thread-safe (uvicorn runs sync routes on a
    thread pool)."""

    def __init__(self, entries: int) -> None:
        self._entries = entries
        self._data: OrderedDict[str, Sized] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Sized | None:
        with self._lock:
            hit = self._data.get(key)
            if hit is not None:
                self._data.move_to_end(key)
            return hit

    def put(self, key: str, value: Sized) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self._entries:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


CACHE = _Cache(CACHE_ENTRIES)
CHARTS = threading.Lock()


def catalog() -> Catalog:
    return load_catalog()


def size_text(yaml_text: str, source: str = FORM_SOURCE) -> Sized:
    """Load and size requirements text; errors become the CLI's line and its field."""
    key = hashlib.sha256(f"{source}\0{yaml_text}".encode()).hexdigest()
    hit = CACHE.get(key)
    if hit is not None:
        return hit
    out = Sized(yaml_text=yaml_text)
    cat = catalog()
    try:
        result = size(load_from_text(yaml_text, source, cat), cat)
    except InputError as exc:
        # the form has no lines: the CLI's words without the position in generated YAML
        out.error = f"{exc.field}: {exc.message}" if exc.field else exc.message
        out.error_field, out.error_message = exc.field, exc.message
    except LlmsizerError as exc:
        out.error = out.error_message = str(exc)
    else:
        fmt = Formatter(result.account.currency)
        out.result, out.fmt = result, fmt
        # the charts reuse one matplotlib figure per kind and process (documents/charts.py):
        # the server's request threads draw one at a time
        with CHARTS:
            out.views = [workload_view(result, i, cat, fmt) for i in range(len(result.workloads))]
            out.memory_chart = memory_svg(out.views, fmt)
        out.debugger = debugger_tables(result, fmt)
    CACHE.put(key, out)
    return out
