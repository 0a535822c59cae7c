"""The options table of a language-model workload in the terminal (``llmsizer size``): its
configurations in the proposal's words (:class:`OptionNames`), its figures, and the columns a
narrow terminal drops."""

from __future__ import annotations

import re
import textwrap
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import NamedTuple

from rich import box
from rich.table import Table
from rich.text import Text

from ..model.catalog import Catalog
from ..model.names import short_name
from ..sizing.results import Option, RetrievalOption, WorkloadResult
from .proposal.format import NBSP, Formatter, precision_name
from .textwords import amount, cell_width, folded, headroom_text, latency

_VENDORS = ("NVIDIA ", "AMD ", "Intel ")


class OptionNames:
    """The GPUs and servers of one table's options as it names them: without vendor or
    bracketed detail ('H100 SXM 80GB', 'Dell PowerEdge XE8640'), the detail kept where two
    would read the same (the GH200s; the two generic 4-GPU PCIe servers of one GPU)."""

    def __init__(self, cat: Catalog, options: list[Option | RetrievalOption]) -> None:
        self.cat = cat

        def plain(name: str) -> str:
            for vendor in _VENDORS:
                name = name.removeprefix(vendor)
            return name

        short = {gid: plain(short_name(g.name)) for gid, g in cat.gpus.items()}
        count = Counter(short.values())
        self.gpus = {gid: name if count[name] == 1 else plain(cat.gpus[gid].name)
                     for gid, name in short.items()}
        servers: dict[tuple[str, str], set[str]] = {}
        for o in options:
            p = cat.platforms.get(o.platform)
            servers.setdefault((o.gpu, short_name(p.name) if p else o.platform),
                               set()).add(o.platform)
        self.full = {pid for ids in servers.values() if len(ids) > 1 for pid in ids}

    def server(self, pid: str) -> str:
        p = self.cat.platforms.get(pid)
        return pid if p is None else p.name if pid in self.full else short_name(p.name)

    def lines(self, o: Option | RetrievalOption) -> tuple[str, str]:
        """An option in the proposal's words, as two phrases: the GPUs of one model copy and
        their precisions ('2 × H100 SXM 80GB, FP8 weights, FP8 KV'; an embed or rerank
        option: its GPU), then how the model is spread and the server ('experts over 4 GPUs,
        Dell PowerEdge XE8640'). The option id never reaches the table."""
        gpu = self.gpus.get(o.gpu, o.gpu)
        if isinstance(o, RetrievalOption):
            return gpu, self.server(o.platform)
        return (f"{o.tp} × {gpu}, {precision_name(o.weight_precision)} weights, "
                f"{precision_name(o.kv_precision)} KV", ", ".join([*self.spread(o), self.server(o.platform)]))

    def spread(self, o: Option | RetrievalOption) -> list[str]:
        """How one model copy is spread over its GPUs, in words (experts, attention, a
        separate prefill); none for an embed or rerank option."""
        if isinstance(o, RetrievalOption):
            return []
        v = o.values

        def n(key: str, default: float) -> int:
            x = v.get(key, default)
            return int(x) if isinstance(x, float | int) else int(default)

        ep, adp, prefill = n("ep", 1), n("adp", 1), n("disagg_prefill_gpus", 0)
        spread = []
        if ep > 1:
            spread.append(f"experts over {ep} GPUs")
        if adp > 1:  # over every GPU of the copy, unless said otherwise
            spread.append("attention data-parallel" if adp == o.tp else
                          f"attention data-parallel over {adp}")
        if prefill > 0:
            spread.append(f"decode only, prefill on {prefill}-GPU replicas")
        return spread

    def fold_servers(self, options: Sequence[Option | RetrievalOption], shown: Sequence[Hashable],
               recommended: str | None = None) -> list[tuple[list[int], str, str]]:
        """The options that read the same but for the server (first phrase, spread and
        ``shown``: the figures and reason printed for each) as one row in the place of the
        first: each row's indices into ``options`` and its two phrases, every server named
        ('Dell PowerEdge XE9680 or NVIDIA DGX H200'), the ``recommended`` one's first, the
        others in alphabetical order. A table of 38 rows read as pairs that differed only by
        the server (review round 21)."""
        groups: dict[tuple[Hashable, ...], list[int]] = {}
        for i, (o, figures) in enumerate(zip(options, shown, strict=True)):
            first = self.lines(o)[0]
            groups.setdefault((first, tuple(self.spread(o)), figures, o.feasible), []).append(i)
        rows = []
        for members in sorted(groups.values()):
            lead = [i for i in members if options[i].id == recommended]
            servers = dict.fromkeys([*(self.server(options[i].platform) for i in lead),
                                     *sorted(self.server(options[i].platform) for i in members)])
            o = options[members[0]]
            rows.append((members, self.lines(o)[0], ", ".join([*self.spread(o), " or ".join(servers)])))
        return rows


def option_cost(o: Option, rented: bool) -> str:
    """An option's cost per year in the account's way: the cloud's when it rents."""
    if rented:
        v = o.values
        return (amount(float(v["annual_cost_cloud"])) if float(v["cloud_price_known"]) > 0
                else "no price")
    return amount(float(o.values["annual_cost_onprem"])) if o.priced else "no price"


def config_cells(options: list[tuple[str, str, bool]], room: int) -> list[str]:
    """(first phrase, second phrase, recommended) -> the configuration cells: one line where it
    fits in ``room`` columns, else the second phrase on a line of its own under the first, a
    phrase still longer than the room folded at spaces, indented under its start."""
    cells = []
    for a, b, star in options:
        mark = "★ " if star else "  "
        one = f"{mark}{a}, {b}"
        # a precision stays beside its word: "BF16" over "KV" read as two phrases (round 22)
        glued = _PRECISION.sub(lambda m: m[0].replace(" ", NBSP), a)
        cells.append(one if len(one) <= room else "\n".join(
            textwrap.wrap(glued, max(room, 12), initial_indent=mark, subsequent_indent="  ",
                          break_on_hyphens=False, break_long_words=False)
            + textwrap.wrap(b, max(room, 12), initial_indent="    ", subsequent_indent="    ",
                            break_on_hyphens=False, break_long_words=False)).replace(NBSP, " "))
    return cells


_PRECISION = re.compile(r"\S+ (?:weights|KV)\b")


# Below this width the reasons an option was ruled out leave the table and are listed under
# it, one per line: a "why not" column squeezed into what is left is unreadable.
WIDE = 150
CONFIG_ROOM = 42  # columns a configuration needs before figures are dropped for it
WHY = 30  # the least a wide table leaves its "why not" column before configurations fold
# Each header is whole words on one or two lines: a word split across lines ("rep-" over
# "licas") reads as two words in a terminal.
# the batch the load runs at, "at peak" as the web page heads it (decode.py batch_served)
_NUMBER_HEADS = ("batch\nat\npeak", "tok/s\n/user", "TTFT\nms", "replicas", "GPUs", "nodes",
                 "head-\nroom", "on-prem\n{cur}/yr")
# A rented account's figures as rented (calculations/rented.py): the replicas running, the
# GPUs and cloud instances rented (a spare instance on standby included), the headroom left;
# the same heads in place of the replicas, GPUs, nodes and headroom bought (session 23: "8
# GPUs, 2 nodes, 200 %" beside a plan renting 5 GPUs at 50 %)
_RENTED_HEADS = {3: "replicas\nrunning", 4: "GPUs\nrented", 5: "cloud\ninstances"}
# the figures of a row: bought, and as rented
_FIGURES = ("replicas", "gpus", "nodes", "headroom_achieved")
_RENTED_FIGURES = ("rented_replicas", "cloud_gpus_rented", "cloud_instances", "rented_headroom")
# under a rented account's table: what its figures are
RENTED_NOTE = ("Figures as rented in the cloud: replicas running, GPUs and cloud instances "
               "rented with their N+1 spare (an instance on standby where the cloud rents "
               "single GPUs; spare replicas running in fixed-size instances), headroom at peak "
               "with every instance up.")


# what the note under a narrow table calls a dropped column
_DROPPED_NAMES = {1: "batch at peak", 3: "TTFT", 7: "headroom"}  # in the order of the columns


# Columns (indices of option + _NUMBER_HEADS) a narrow terminal drops, in this order:
# headroom, TTFT, then the batch; ids, speed, replicas, GPUs, nodes and the cost stay.
_DROP_WHEN_NARROW = (7, 3, 1)


def workload_title(w: WorkloadResult) -> str:
    """A workload's table title: its name, model and mode ('Chat — Llama 3.1 8B (modelled)')."""
    return f"{w.name} — {w.model_name} ({w.mode})"


class OptionsTable(NamedTuple):
    table: Table
    dropped: list[str]  # the figures dropped to fit the width
    more: int  # rows meeting the targets left out by ``limit``


# Rows a table shows unless asked for every one (`llmsizer size --all`): the enterprise
# example printed 955 lines at 100 columns, 60 rows of one workload (review round 22).
TOP = 8


def workload_table(w: WorkloadResult, cur: str, width: int, names: OptionNames,
                   way: str = "on_prem", limit: int | None = None,
                   places: int | None = None) -> OptionsTable:
    """The options table, the names of the figures dropped to fit ``width`` and how many
    rows ``limit`` left out. ``way``: the account's way of running it
    (deployment.recommended); renting, the cost column is the cloud's. The rows are in the
    engine's order (search.py ``_rank``: by the cost of the way the plan was searched for),
    as the PDF and the web page list them. ``limit``: only options that meet the targets,
    the first ``limit`` rows and the recommended one (the ruled-out ones are listed under
    the table, :mod:`.textruledout`); None: every option, a wide table with its "why not".
    ``places``: the decimals of the result's every headroom (textwords.headroom_places)."""
    rented = way == "cloud"
    wide = width >= WIDE
    # narrow: one space between columns (the box's divider); from 90 columns two
    t = Table(title=Text(workload_title(w)), title_justify="left",
              box=box.SIMPLE_HEAD if not wide else box.HEAVY_HEAD, show_edge=wide,
              padding=(0, 1) if wide else (0, 0, 0, 1) if width >= 90 else 0)
    # narrow: ruled out listed under it
    shown = [o for o in w.options if o.feasible or (wide and limit is None)]
    rows: list[list[str]] = []
    reasons: list[str] = []
    for o in shown:
        v = o.values
        row = [""]
        if o.feasible:
            replicas, gpus, nodes, headroom = (float(v[k]) for k in (
                _RENTED_FIGURES if rented else _FIGURES))
            # counts grouped as the PDF writes them ("712,466,573", never "712466573")
            # the batch the load runs at (decode.py batch_served, the batch tok/s per user
            # is read at): 64 stated streams keep 9.71 a replica, not the 67 one could hold
            row += [Formatter.batch(float(v['batch_served'])),
                    f"{float(v['tokens_per_s_per_user']):,.1f}",
                    latency(float(v['ttft_ms'])), f"{replicas:,.0f}",
                    f"{gpus:,.0f}", f"{nodes:,.0f}", headroom_text(headroom, places),
                    option_cost(o, rented)]
        else:
            row += [""] * len(_NUMBER_HEADS)
        rows.append(row)
        reasons.append(o.reason if not o.feasible else "")
    # rows that differ only by the server are one row naming every server
    folds = names.fold_servers(shown, [(*r, why) for r, why in zip(rows, reasons, strict=True)],
                               w.recommended)
    more = 0
    if limit is not None and len(folds) > limit:
        kept = [f for k, f in enumerate(folds) if k < limit
                or any(shown[i].id == w.recommended for i in f[0])]
        more, folds = len(folds) - len(kept), kept
    rows = [rows[m[0]] for m, _, _ in folds]
    reasons = [reasons[m[0]] for m, _, _ in folds]
    # a wide table whose every row meets the targets has no "why not" column: it was empty
    why_not = wide and any(reasons)
    heads = ["configuration", *(_RENTED_HEADS.get(k, h).format(cur=cur) if rented else
                                h.format(cur=cur) for k, h in enumerate(_NUMBER_HEADS[:-1])),
             ("cloud\n{cur}/yr" if rented else _NUMBER_HEADS[-1]).format(cur=cur)]
    widths = [max([len(r[i]) for r in rows] + [len(part) for part in head.split("\n")])
              for i, head in enumerate(heads)]
    # wide tables pay a border and two spaces per column and keep room for "why not"; narrow
    # ones the divider, and from 90 columns a space
    per_column, rest = (3, 12 + WHY if why_not else 2) if wide else (2 if width >= 90 else 1, 2)
    # a figure no row has is no column (--all at a wide terminal, nothing meeting the
    # targets: eight empty columns beside "why not", review round 22)
    keep = [k for k in range(len(heads)) if k == 0 or any(r[k] for r in rows)]

    def room() -> int:
        return width - sum(widths[k] + per_column for k in keep[1:]) - per_column - rest

    # a narrow terminal drops the least needed figures rather than squeeze the configuration
    # or cut the cost column
    dropped = []
    for i in _DROP_WHEN_NARROW:
        if room() >= CONFIG_ROOM:
            break
        if i not in keep:
            continue
        keep.remove(i)
        dropped.append(_DROPPED_NAMES[i])
    cells = config_cells([(first, second, any(shown[i].id == w.recommended for i in members))
                          for members, first, second in folds], room())
    for row, cell in zip(rows, cells, strict=True):
        row[0] = cell
    widths[0] = min(room(), max([len(heads[0])] + [cell_width(c) for c in cells]))
    heads = [heads[k] for k in keep]
    rows = [[r[k] for k in keep] for r in rows]
    for i, head in enumerate(heads):
        # the configuration folds at its line break, and at a space where a phrase is still
        # longer than the room left; the figures never fold
        t.add_column(head, justify="left" if i == 0 else "right", no_wrap=i > 0,
                     min_width=widths[keep[i]], max_width=widths[0] if i == 0 else None)
    if why_not:
        # what the other columns leave of the width (each pays two spaces and a border, the
        # table one more border): a reason wider than that was cut at the terminal's edge,
        # words lost mid-line ("spread o" / "answer, adds", round 18), rich not shrinking the
        # configuration below its minimum
        why = width - sum(widths[k] + 3 for k in keep) - 1 - 3
        t.add_column("why not", overflow="fold", max_width=max(why, WHY))
    for row, reason in zip(rows, reasons, strict=True):
        t.add_row(*row, *([Text(reason)] if why_not else []))
    return OptionsTable(t, dropped, more)


def dropped_note(dropped: list[str], width: int) -> str:
    shown = ", ".join(sorted(dropped, key=list(_DROPPED_NAMES.values()).index))
    return folded(f"Not shown at {width} columns: {shown} (widen the terminal, or --json)",
                  width, "", "  ")
