"""The configurations ``llmsizer size`` lists under a table as ruled out: condensed, one line
per reason naming its configurations (:func:`condensed`), or with ``--all`` each
configuration with its own reason (:func:`ruled_out`; a wide ``--all`` table shows them in
its "why not" column)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from ..sizing.results import Option, RetrievalOption
from .proposal.format import NBSP, precision_name
from .textoptions import OptionNames
from .textwords import folded

# a figure in a reason ("37.7", "8,000"), not a digit of a word ("TP1", "H100")
_FIGURE = re.compile(r"(?<![\w.,])\d+(?:,\d{3})*(?:\.\d+)?(?![\w])")


def ruled_out(options: list[Option] | list[RetrievalOption], names: OptionNames,
              con: Console) -> None:
    """Each ruled-out configuration in words and why, folded under itself at the width; those
    ruled out for the same reason on several servers in one line naming them all."""
    lines = [folded(f"{first}, {second}: {options[members[0]].reason}", con.width, "  ", "      ")
             for members, first, second in names.fold_servers(options, [o.reason for o in options])]
    con.print(Text("Ruled out:", style="bold"), highlight=False)
    con.print(Text("\n".join(lines)), highlight=False, no_wrap=True, crop=False)


def merged_reason(reasons: Sequence[str]) -> str:
    """Reasons that read the same but for their figures as one, each figure that differs as
    its range: "adds 37.7 ms ... gets 17.1 tok/s" and "adds 73.2 ms ... gets 9.3 tok/s" ->
    "adds 37.7–73.2 ms ... gets 9.3–17.1 tok/s"."""
    words = _FIGURE.split(reasons[0])
    slots = [_FIGURE.findall(r) for r in reasons]
    said = []
    for k, word in enumerate(words):
        said.append(word)
        if k < len(words) - 1:
            seen = list(dict.fromkeys(s[k] for s in slots))
            if len(seen) == 1:
                said.append(seen[0])
            else:
                ordered = sorted(seen, key=lambda x: float(x.replace(",", "")))
                said.append(f"{ordered[0]}–{ordered[-1]}")
    return "".join(said)


def _shape(reason: str) -> tuple[str, ...]:
    return tuple(_FIGURE.split(reason))


def _config(o: Option | RetrievalOption, names: OptionNames) -> tuple[str, ...]:
    """An option's configuration but for its GPU count and server: GPU, precisions, spread."""
    if isinstance(o, RetrievalOption):
        return (names.gpus.get(o.gpu, o.gpu),)
    return (f"{names.gpus.get(o.gpu, o.gpu)}, {precision_name(o.weight_precision)} weights, "
            f"{precision_name(o.kv_precision)} KV", *names.spread(o))


def _key(o: Option | RetrievalOption, names: OptionNames) -> tuple[int, tuple[str, ...]]:
    """An option's configuration with its GPU count (0: an embed or rerank option's)."""
    return (o.tp if isinstance(o, Option) else 0, _config(o, names))


def _too_big(out: Sequence[Option | RetrievalOption]) -> list[Option]:
    """The options whose weights do not fit their GPUs, where they are of several GPUs: one
    line for them all (a catalog-wide account listed 22 such lines, one per GPU)."""
    big = [o for o in out if isinstance(o, Option) and o.reason_code == "weights"
           and _WEIGHTS.match(o.reason)]
    return big if len({o.gpu for o in big}) > 1 else []


_WEIGHTS = re.compile(r"weights (\d+(?:,\d{3})*(?:\.\d+)?) GB do not fit")


def _too_big_line(big: list[Option], names: OptionNames) -> str:
    """'Weights larger than the GPUs' memory (FP8 70.6 GB, BF16 141.2 GB): 1 × A10, L4 or
    L40S in FP8 or BF16; 1 × H100 SXM 80GB in BF16; 2 × A10 in FP8 or BF16'."""
    sizes: dict[str, list[str]] = {}
    by_tp: dict[int, dict[str, list[str]]] = {}
    for o in big:
        precision = precision_name(o.weight_precision)
        found = _WEIGHTS.match(o.reason)
        assert found is not None  # _too_big
        sizes.setdefault(precision, []).append(found[1])
        # a GPU's name is never folded ("H100" over "SXM 80GB")
        gpu = names.gpus.get(o.gpu, o.gpu).replace(" ", NBSP)
        held = by_tp.setdefault(o.tp, {}).setdefault(gpu, [])
        if precision not in held:
            held.append(precision)
    parts = []
    for tp in sorted(by_tp):
        gpus: dict[tuple[str, ...], list[str]] = {}
        for gpu, precisions in by_tp[tp].items():
            gpus.setdefault(tuple(precisions), []).append(gpu)
        parts += [f"{tp}{NBSP}×{NBSP}{_either(names_)} in {_either(list(precisions))}"
                  for precisions, names_ in gpus.items()]
    # the smaller weights first: "FP8 70.6 GB, BF16 141.2 GB"
    ordered = sorted(sizes.items(), key=lambda kv: min(float(x.replace(",", "")) for x in kv[1]))
    weights = ", ".join(f"{p} {merged_reason(said)} GB" for p, said in ordered)
    return f"Weights larger than the GPUs' memory ({weights}): {'; '.join(parts)}"


def _either(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def condensed(options: Sequence[Option] | Sequence[RetrievalOption], names: OptionNames,
              con: Console) -> None:
    """The ruled-out options of one table (``options``: all of them, those meeting the
    targets too), one line per reason: the configurations it rules out ("1, 2, 4 or 8 ×
    L40S, FP8 weights, FP8 KV"), then the reason, a figure that differs between them as its
    range (one line per GPU and reason). A configuration also met, or ruled out for another
    reason, on another server names its servers. The insurer's eight L40S rows repeated a
    7-line reason each (review round 22); `--all` lists each one with its own figures."""
    out = [o for o in options if not o.feasible]
    if not out:
        return
    too_big = _too_big(out)
    told = {id(o) for o in too_big}
    out = [o for o in out if id(o) not in told]
    # one line per GPU and reason: a figure's range then spans one GPU's options (its
    # precisions, its GPU counts), never two GPUs' memories
    groups: dict[tuple[str, ...], list[Option | RetrievalOption]] = {}
    for o in out:
        groups.setdefault((o.gpu, *_shape(o.reason)), []).append(o)
    # where a configuration (with its GPU count) turns up: a reason's group, or the table
    where: dict[tuple[int, tuple[str, ...]], set[tuple[str, ...]]] = {}
    for o in options:
        where.setdefault(_key(o, names), set()).add(
            (o.gpu, *_shape(o.reason)) if not o.feasible else ())
    lines = []
    for members in groups.values():
        # the servers of a configuration named where it turns up elsewhere too
        servers: dict[tuple[int, tuple[str, ...]], list[str]] = {}
        for o in members:
            key = _key(o, names)
            servers.setdefault(key, [])
            if len(where[key]) > 1:
                servers[key].append(names.server(o.platform))
        phrases: dict[tuple[tuple[str, ...], tuple[str, ...]], list[int]] = {}
        for (tp, config), named in servers.items():
            phrases.setdefault((config, tuple(sorted(set(named)))), []).append(tp)
        said = []
        for (config, on), tps in phrases.items():
            counts = f"{_either([str(tp) for tp in sorted(tps)])} × " if 0 not in tps else ""
            said.append(", ".join([f"{counts}{config[0]}", *config[1:]])
                        + (f" on {_either(on)}" if on else ""))
        reason = merged_reason([o.reason for o in members])
        lines.append(folded(f"{'; '.join(said)}: {reason}", con.width, "  ", "      "))
    if too_big:
        lines.append(folded(_too_big_line(too_big, names), con.width, "  ", "      "))
    con.print(Text("Ruled out:", style="bold"), highlight=False)
    con.print(Text("\n".join(lines)), highlight=False, no_wrap=True, crop=False)
