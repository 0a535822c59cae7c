"""The command line's values checked in the words the file's checks use: a number typed with
its unit, separators or a percent sign, and ``estimate``'s catalog ids and degree, every
problem at once (the counterpart of the loader's list; ``cli/`` only raises them)."""

from __future__ import annotations

import re

from ..model.catalog import close_matches, load_catalog
from .loader import id_guesses, named_as, spelled_as


def _plain(text: str) -> float | None:
    try:
        return float(re.sub(r"[,_ ]", "", text))
    except ValueError:
        return None


def number_fix(value: str, *, whole: bool) -> str | None:
    """Why ``value`` is no number and what to type instead (None: it is one), e.g.
    '500tok' -> 500, '1,000' -> 1000, '80%' -> 0.8 (a share), '2.5' where a whole number is
    needed. click's own words were "'500tok' is not a valid integer range"."""
    text = value.strip()
    try:
        int(text) if whole else float(text)
        return None
    except ValueError:
        pass
    what = "a whole number" if whole else "a number"
    if text.endswith("%") and (share := _plain(text[:-1])) is not None:
        return f"{value!r} is not {what}; a share, not a percentage: write {share / 100:g} for {text}"
    digits = re.match(r"[+-]?[\d,_ ]*\.?\d+", text)
    plain = _plain(digits.group()) if digits is not None else None
    if plain is None:
        return f"{value!r} is not {what}; write digits only, such as 2"
    if whole and plain != int(plain):
        return f"{value!r} is not a whole number; write one without a fraction, such as {int(plain)}"
    return (f"{value!r} is not {what}; write the number alone, without units or separators: "
            f"{plain:g}")


def estimate_problems(model_id: str, gpu: str, weights: str, kv: str,
                      concurrency: int | None, offline: bool) -> str:
    """Every problem of ``estimate``'s options that needs no sizing, each naming its option,
    as one message ("" when none): the catalog's lookups stopped at the first (a bad GPU hid
    a bad model)."""
    cat = load_catalog()
    found = []
    if (concurrency is None) == (not offline):
        found.append("give exactly one of --concurrency C or --offline (C users per replica, "
                     "or a batch as large as memory holds)")
    for option, value, table, kind, listing in (
            ("--model", model_id, cat.models, "model", "llmsizer catalog models"),
            ("--gpu", gpu, cat.gpus, "GPU", "llmsizer catalog gpus"),
            ("--weights", weights, cat.precisions, "precision", None),
            ("--kv", kv, cat.precisions, "precision", None)):
        if value in table or (option == "--model" and value in cat.embedders):
            continue  # an embedding model: estimate_refusal says where it is sized
        names = sorted(table)
        if (meant := spelled_as(value, names, kind)) is not None:
            found.append(f"{option}: {named_as(kind, value, meant)} {option} {meant}")
        else:
            where = (f"`{listing}` lists them all" if listing
                     else f"The catalog's {kind}s: {', '.join(names)}")
            found.append(f"{option}: unknown {kind} {value!r}"
                         f"{id_guesses(value, close_matches(value, names), table)} {where}")
    if len(found) < 2:
        return "".join(found)
    return f"{len(found)} problems:\n  " + "\n  ".join(found)


def tp_problem(gpu: str, tp: int) -> str | None:
    """The sizing search tries a degree only up to the GPU's fast-link group (max_tp) and its
    platforms' GPUs per node; ``estimate`` refuses what the search would never try."""
    cat = load_catalog()
    spec = cat.gpu(gpu)
    per_node = max((p.gpus_per_node for p in cat.platforms.values() if gpu in p.gpus),
                   default=spec.max_tp)
    limit = min(spec.max_tp, per_node)
    if tp <= limit:
        return None
    return (f"{tp} is more than {gpu} allows (tensor parallelism up to {limit} GPUs on its "
            f"fast link); use --tp {limit} or less")
