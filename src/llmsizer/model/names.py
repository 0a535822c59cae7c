"""Catalog names in the words an option's line uses (a platform's short name, or the full one
where two platforms share it): the search's rejection reasons and the documents both name
platforms this way, so the words live below both."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["platform_words", "short_name"]


def short_name(name: str) -> str:
    return name.split(" (", 1)[0]


def platform_words(platforms: Mapping[str, Any], platform_id: str) -> str:
    """A platform as an option's line names it: its short name ('Dell PowerEdge XE7745'), or
    the full one where another catalog platform shares the short name (one chassis in two
    power builds), so two options never read alike."""
    p = platforms.get(platform_id)
    if p is None:
        return platform_id
    short = short_name(p.name)
    shared = sum(short_name(q.name) == short for q in platforms.values()) > 1
    return str(p.name) if shared else short
