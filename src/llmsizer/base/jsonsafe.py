"""JSON from outside (benchmark results, config.json, a workbook's embedded data) decoded
without silently dropping a key given twice."""

from __future__ import annotations

from typing import Any

from .textsafe import printable

__all__ = ["DuplicateKeyError", "no_duplicates"]


class DuplicateKeyError(ValueError):
    """A JSON object gives one key twice; ``key`` is the key, shown escape-safe."""

    def __init__(self, key: str) -> None:
        self.key = printable(key)[:60]
        super().__init__(f"gives the key {self.key!r} twice")


def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` refusing a key given twice: ``json`` would silently keep the
    last value, so a second ``output_throughput`` or ``num_key_value_heads`` would decide
    the sizing unseen (issue 25, F15)."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise DuplicateKeyError(key)
        result[key] = value
    return result
