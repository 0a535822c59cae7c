"""Terminal tables for ``llmsizer size`` and ``llmsizer catalog`` (rich)."""

from __future__ import annotations

import os
import re
import sys
import textwrap
from collections import Counter
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..model.catalog import Catalog, load_catalog
from ..model.names import short_name
from ..sizing.results import (
    ModelAlternatives,
    Option,
    Result,
    RetrievalOption,
    RetrievalWorkloadResult,
    WorkloadResult,
)
from .fasttable import print_table
from .proposal.deployment import deployment_context
from .proposal.format import (
    NBSP,
    Formatter,
    cloud_unpriced_words,
    gpu_list,
    gpu_split,
    group_split,
    option_words,
    precision_name,
    retrieval_split,
)
from .proposal.models import QUALITY
from .textcatalog import catalog_table, params_text


def _console() -> Console:
    # A terminal, or a COLUMNS the user set, decides the width; other pipes and files get a
    # wide table so ids stay greppable on one line.
    columns = os.environ.get("COLUMNS", "")
    if sys.stdout.isatty() or columns.isdigit():
        return Console()
    return Console(width=180)


def _money(x: float, cur: str) -> str:
    """Money as the PDF and the web page show it (Formatter.money: rounded to what the
    inputs support, "USD 288 k"), with plain spaces; the sentences that carry it fold
    around it (``_folded``)."""
    return Formatter(cur).money(x).replace(NBSP, " ")


def _headroom(x: float) -> str:
    """A headroom to the PDF's and the web page's precision (Formatter.headroom: "38.8%",
    whole percents from 100 %, ">1,000%" above it), without the PDF's thin spaces: the
    terminal printed "39%" where the proposal says "38.8 %" (review round 20)."""
    return Formatter("").headroom(x).replace(NBSP, "")


def _amount(x: float) -> str:
    """A money cell under a header that names the currency once: "288 k", "1.19 M"."""
    return _money(x, "").strip()


_VENDORS = ("NVIDIA ", "AMD ", "Intel ")


class _Names:
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
        return (f"{o.tp} × {gpu}, {precision_name(o.weight_precision)} weights, "
                f"{precision_name(o.kv_precision)} KV", ", ".join([*spread, self.server(o.platform)]))


def _cost(o: Option, rented: bool) -> str:
    """An option's cost per year in the account's way: the cloud's when it rents."""
    if rented:
        v = o.values
        return (_amount(float(v["annual_cost_cloud"])) if float(v["cloud_gpu_hour"]) > 0
                else "no price")
    return _amount(float(o.values["annual_cost_onprem"])) if o.priced else "no price"


def _config_cells(options: list[tuple[str, str, bool]], room: int) -> list[str]:
    """(first phrase, second phrase, recommended) -> the configuration cells: one line where it
    fits in ``room`` columns, else the second phrase on a line of its own under the first, a
    phrase still longer than the room folded at spaces, indented under its start."""
    cells = []
    for a, b, star in options:
        mark = "★ " if star else "  "
        one = f"{mark}{a}, {b}"
        cells.append(one if len(one) <= room else "\n".join(
            textwrap.wrap(a, max(room, 12), initial_indent=mark, subsequent_indent="  ",
                          break_on_hyphens=False, break_long_words=False)
            + textwrap.wrap(b, max(room, 12), initial_indent="    ", subsequent_indent="    ",
                            break_on_hyphens=False, break_long_words=False)))
    return cells


def _width(cell: str) -> int:
    return max(len(line) for line in cell.split("\n"))


# Below this width the reasons an option was ruled out leave the table and are listed under
# it, one per line: a "why not" column squeezed into what is left is unreadable.
_WIDE = 150
_CONFIG_ROOM = 42  # columns a configuration needs before figures are dropped for it
_WHY = 30  # the least a wide table leaves its "why not" column before configurations fold
# Each header is whole words on one or two lines: a word split across lines ("rep-" over
# "licas") reads as two words in a terminal.
_NUMBER_HEADS = ("batch", "tok/s\n/user", "TTFT\nms", "replicas", "GPUs", "nodes",
                 "head-\nroom", "on-prem\n{cur}/yr")


def _retrieval_cost(o: RetrievalOption, rented: bool) -> str:
    """A retrieval option's cost per year in the account's way (:func:`_cost`'s rule)."""
    v = o.values
    if rented:
        return (_amount(float(v["annual_cost_cloud"]))
                if float(v["cloud_gpu_hour"]) > 0 or o.shares_with else "no price")
    return _amount(float(v["annual_cost_onprem"])) if o.priced else "no price"


def _latency(ms: float) -> str:
    """A first-token time in the "TTFT ms" column to three figures, as the PDF rounds it
    (the model's first-token error is about +/-25 %): "16,100", never "16,131"."""
    return Formatter.figures(ms)


# what the note under a narrow table calls a dropped column
_DROPPED_NAMES = {1: "batch", 3: "TTFT", 7: "headroom"}  # in the order of the columns


# Columns (indices of option + _NUMBER_HEADS) a narrow terminal drops, in this order:
# headroom, TTFT, then the batch; ids, speed, replicas, GPUs, nodes and the cost stay.
_DROP_WHEN_NARROW = (7, 3, 1)


def _workload_table(w: WorkloadResult, cur: str, width: int, names: _Names,
                    way: str = "on_prem") -> tuple[Table, list[str]]:
    """The options table, and the names of the figures dropped to fit ``width``. ``way``:
    the account's way of running it (deployment.recommended); renting, the cost column is
    the cloud's. The rows are in the engine's order (search.py ``_rank``: by the cost of the
    way the plan was searched for), as the PDF and the web page list them."""
    rented = way == "cloud"
    wide = width >= _WIDE
    # narrow: one space between columns (the box's divider); from 90 columns two
    t = Table(title=Text(f"{w.name} — {w.model_name} ({w.mode})"), title_justify="left",
              box=box.SIMPLE_HEAD if not wide else box.HEAVY_HEAD, show_edge=wide,
              padding=(0, 1) if wide else (0, 0, 0, 1) if width >= 90 else 0)
    # narrow: ruled out listed under it
    shown = [o for o in w.options if o.feasible or wide]
    rows: list[list[str]] = []
    reasons: list[str] = []
    for o in shown:
        v = o.values
        row = [""]
        if o.feasible:
            # counts grouped as the PDF writes them ("712,466,573", never "712466573")
            row += [f"{float(v['batch_per_replica']):,.0f}",
                    f"{float(v['tokens_per_s_per_user']):,.1f}",
                    _latency(float(v['ttft_ms'])), f"{float(v['replicas']):,.0f}",
                    f"{float(v['gpus']):,.0f}", f"{float(v['nodes']):,.0f}",
                    _headroom(float(v['headroom_achieved'])),
                    _cost(o, rented)]
        else:
            row += [""] * len(_NUMBER_HEADS)
        rows.append(row)
        reasons.append(o.reason if not o.feasible else "")
    heads = ["configuration", *(h.format(cur=cur) for h in _NUMBER_HEADS[:-1]),
             ("cloud\n{cur}/yr" if rented else _NUMBER_HEADS[-1]).format(cur=cur)]
    widths = [max([len(r[i]) for r in rows] + [len(part) for part in head.split("\n")])
              for i, head in enumerate(heads)]
    # wide tables pay a border and two spaces per column and keep room for "why not"; narrow
    # ones the divider, and from 90 columns a space
    per_column, rest = (3, 12 + _WHY) if wide else (2 if width >= 90 else 1, 2)
    keep = list(range(len(heads)))

    def room() -> int:
        return width - sum(widths[k] + per_column for k in keep[1:]) - per_column - rest

    # a narrow terminal drops the least needed figures rather than squeeze the configuration
    # or cut the cost column
    dropped = []
    for i in _DROP_WHEN_NARROW:
        if room() >= _CONFIG_ROOM:
            break
        keep.remove(i)
        dropped.append(_DROPPED_NAMES[i])
    cells = _config_cells([(*names.lines(o), o.id == w.recommended)
                           for o in shown], room())
    for row, cell in zip(rows, cells, strict=True):
        row[0] = cell
    widths[0] = min(room(), max([len(heads[0])] + [_width(c) for c in cells]))
    heads = [heads[k] for k in keep]
    rows = [[r[k] for k in keep] for r in rows]
    for i, head in enumerate(heads):
        # the configuration folds at its line break, and at a space where a phrase is still
        # longer than the room left; the figures never fold
        t.add_column(head, justify="left" if i == 0 else "right", no_wrap=i > 0,
                     min_width=widths[keep[i]], max_width=widths[0] if i == 0 else None)
    if wide:
        # what the other columns leave of the width (each pays two spaces and a border, the
        # table one more border): a reason wider than that was cut at the terminal's edge,
        # words lost mid-line ("spread o" / "answer, adds", round 18), rich not shrinking the
        # configuration below its minimum
        why = width - sum(widths[k] + 3 for k in keep) - 1 - 3
        t.add_column("why not", overflow="fold", max_width=max(why, _WHY))
    for row, reason in zip(rows, reasons, strict=True):
        t.add_row(*row, *([Text(reason)] if wide else []))
    return t, dropped


_RETRIEVAL_HEADS = ("batch\ntokens", "p95\nms", "tok/s\n/GPU", "replicas", "GPUs", "nodes",
                    "on-prem\n{cur}/yr", "limited\nby")


def _retrieval_table(w: RetrievalWorkloadResult, cur: str, width: int, names: _Names,
                     rented: bool = False) -> Table:
    """An embed or rerank workload: one row per candidate GPU, in the LLM tables' style;
    ``rented``: the GPUs it rents and its rent, as the language-model table's (it read
    "on-prem" and "no price" beside the MI325X a rented account rents, round 19)."""
    wide = width >= _WIDE
    t = Table(title=Text(f"{w.name} — {w.model_name} ({w.kind})"), title_justify="left",
              box=box.SIMPLE_HEAD if not wide else box.HEAVY_HEAD, show_edge=wide,
              padding=(0, 1) if wide else (0, 0, 0, 1) if width >= 90 else 0)
    shown = [o for o in w.options if o.feasible or wide]
    rows: list[list[str]] = []
    for o in shown:
        v = o.values
        if o.feasible:
            rows.append([f"{float(v['batch_tokens']):,.0f}",
                         f"{float(v['latency_p95_s']) * 1000:,.0f}",
                         f"{float(v['replica_tokens_per_s']):,.0f}",
                         f"{float(v['retrieval_replicas']):,.0f}",
                         *([f"{float(v['retrieval_gpus_used']):,.0f} idle", "shared"]
                           if v.get("shares_llm_nodes") else
                           [f"{float(v['retrieval_cloud_gpus' if rented else 'retrieval_gpus']):,.0f}",
                            f"{float(v['retrieval_nodes']):,.0f}"]),
                         _retrieval_cost(o, rented),
                         str(v["limited_by"])])
        else:
            rows.append([""] * len(_RETRIEVAL_HEADS))
    heads = [("cloud\n{cur}/yr" if rented and h.startswith("on-prem") else h).format(cur=cur)
             for h in _RETRIEVAL_HEADS]
    per_column, rest = (3, 12 + _WHY) if wide else (2 if width >= 90 else 1, 2)
    # "limited by" (words) folds at its spaces, so it claims only its longest word: at 80
    # columns its whole phrase left the servers folded mid-name ("Dell Pow" over "erEdge")
    widths = [max([len(r[i]) if i < len(heads) - 1 else
                   max(map(len, r[i].split()), default=0) for r in rows]
                  + [len(p) for p in h.split("\n")]) for i, h in enumerate(heads)]
    room = width - sum(widths) - per_column * (len(heads) + 1) - rest
    cells = _config_cells([(*names.lines(o), o.id == w.recommended)
                           for o in shown], room)
    config = max([13] + [_width(c) for c in cells])
    t.add_column("configuration", min_width=config, max_width=config)
    for head in heads:
        # the figures never fold; "limited by" (words) folds at a space, in what is left
        words = head == "limited\nby"
        t.add_column(head, justify="left" if words else "right", no_wrap=not words,
                     max_width=max(widths[-1], widths[-1] + room - config) if words else None)
    if wide:
        t.add_column("why not", overflow="fold", ratio=1)
    for o, cell, row in zip(shown, cells, rows, strict=True):
        t.add_row(cell, *row, *([Text(o.reason)] if wide else []))
    if any(o.feasible and o.values.get("shares_llm_nodes") for o in shown):
        # "0 GPUs, 0 nodes, cost 0" beside the star read as a bug: the PDF's words instead
        host = next((o.shares_with for o in shown if o.shares_with), "")  # round 21: whose
        owner = ("another embedding or reranking workload's" if host.startswith("retrieval-")
                 else "the language-model")
        t.caption = Text(f"idle, shared: on GPUs {owner} servers bought and leave "
                         "idle; no GPUs, servers or cost of its own")
        t.caption_justify = "left"
    return t


def _dropped_note(dropped: list[str], width: int) -> str:
    shown = ", ".join(sorted(dropped, key=list(_DROPPED_NAMES.values()).index))
    return _folded(f"Not shown at {width} columns: {shown} (widen the terminal, or --json)",
                   width, "", "  ")


def _folded(text: str, width: int, first: str, rest: str) -> str:
    """``text`` folded at spaces to ``width`` columns, later lines indented by ``rest``; a
    figure stays beside its unit and money stays whole ("USD 599 k/yr", "125.9 GB"), which
    rich's own folding would split."""
    glued = _GLUE.sub(lambda m: m.group(0).replace(" ", NBSP), text)
    lines = textwrap.wrap(glued, max(width - 1, 20), initial_indent=first,
                          subsequent_indent=rest, break_on_hyphens=False)
    return "\n".join(lines).replace(NBSP, " ")


# a figure and the unit after it, and "4 × " before a GPU name; NBSP is not a space to
# textwrap, so these never fold apart
_GLUE = re.compile(r"\d[\d,.]* (?:GB|tok/s|ms|s|k|M|bn|GPUs?|nodes?|replicas?|×)(?![\w])"
                   r"|\b[A-Z]{3} \d")


def _ruled_out(options: list[Option] | list[RetrievalOption], names: _Names,
               con: Console) -> None:
    """Each ruled-out configuration in words and why, folded under itself at the width."""
    lines: list[str] = []
    for o in options:
        first, second = names.lines(o)
        lines.append(_folded(f"{first}, {second}: {o.reason}", con.width, "  ", "      "))
    con.print(Text("Ruled out:", style="bold"), highlight=False)
    con.print(Text("\n".join(lines)), highlight=False, no_wrap=True, crop=False)


def print_result(result: Result, console: Console | None = None) -> None:
    con = console or _console()
    cur = result.account.currency
    wide = con.width >= _WIDE
    cat = load_catalog()
    con.print(Text.assemble((result.account.name, "bold"),
                            f"  (llmsizer {result.llmsizer_version})"), highlight=False)
    told = False
    for w in result.workloads:
        # a server's detail is kept where two of this table's options would read the same
        names = _Names(cat, list(w.options))
        table, dropped = _workload_table(w, cur, con.width, names,
                                         result.deployment.recommended)
        print_table(table, con)
        if dropped and not told:
            # say once what a narrow table leaves out, or a reader takes it for not computed
            con.print(Text(_dropped_note(dropped, con.width)), highlight=False)
            told = True
        ruled_out = [o for o in w.options if not o.feasible]
        if ruled_out and not wide:
            _ruled_out(ruled_out, names, con)
        if w.measured_note:
            con.print(Text(w.measured_note), highlight=False)
        for warning in w.measured_warnings:
            con.print(Text(warning, style="yellow"), highlight=False)
        if w.advice:
            con.print(Text(w.advice, style="red"), highlight=False)
    for rw in result.retrieval:
        names = _Names(cat, list(rw.options))
        print_table(_retrieval_table(rw, cur, con.width, names,
                                     result.deployment.recommended == "cloud"), con)
        r_out = [o for o in rw.options if not o.feasible]
        if r_out and not wide:
            _ruled_out(r_out, names, con)
        if rw.advice:
            con.print(Text(rw.advice, style="red"), highlight=False)
    for t in result.model_alternatives:
        con.print(_models_table(t, cur, con.width))
        con.print(Text(QUALITY), highlight=False)
    _print_plan(result, con)
    _print_total(result, con)


def _print_total(result: Result, con: Console) -> None:
    """The account's total in the cover's words: none where nothing meets the targets (a
    "Total: 0 GPUs ... USD 0" read as a free plan), the workloads it leaves out named, and the
    GPUs without a purchase price that the capital and on-premises figures leave out."""
    cat, cur, tot = load_catalog(), result.account.currency, result.totals
    every: list[WorkloadResult | RetrievalWorkloadResult] = [*result.workloads, *result.retrieval]
    unmet = [w.name for w in every if w.recommended is None]
    if not result.plan.node_groups and not result.plan.retrieval_groups:
        _say(con, "No configuration meets the stated targets: nothing to buy, so no total.",
             style="bold")
        return
    chosen = [o for w in every for o in w.options if o.id == w.recommended]
    no_price = list(dict.fromkeys(o.gpu for o in chosen if not o.priced))
    # GPUs bought, as the plan lines and the PDF count them ("72 GPUs bought, 1 used" on a
    # rack read beside "Total: 1 GPU" as if the rack were one GPU): serving, standby, idle
    split = gpu_split(tot.gpus_serving, tot.gpus_standby, tot.gpus_idle)
    gpus = f"{_n(tot.gpus_purchased, 'GPU')} bought" + (f" ({split})" if split else "")
    cloud = (f"cloud {_money(tot.annual_cost_cloud, cur)}/yr" if tot.annual_cost_cloud is not None
             else cloud_unpriced_words(tot.cloud_unpriced, cat.gpus))
    buy = f"{gpus} in {_n(tot.nodes, 'node')}; capex {_money(tot.capex, cur)}; " \
          f"on-prem {_money(tot.annual_cost_onprem, cur)}/yr"
    way = deployment_context(result, Formatter(cur))["deployment"]
    # the way recommended leads, as on the PDF's cover: renting or an API first, buying after
    if way is not None and way["recommended"] == "cloud":
        _say(con, f"Total: {_n(tot.cloud_gpus_rented, 'GPU')} rented in the cloud; {cloud}. "
                  f"The alternative, buying: {buy}")
    elif way is not None and way["recommended"] == "api" and tot.annual_cost_api is not None:
        _say(con, f"Total: a hosted API, {_money(tot.annual_cost_api, cur)}/yr. The "
                  f"alternative, buying, sized for comparison: {buy}; {cloud}")
    else:
        _say(con, f"Total: {buy}; {cloud}")
    if way is not None and way["recommended"] != "on_prem":  # the PDF's sentence: renting or
        # an API recommended read as servers to buy from the plan and capex lines alone
        # the PDF's sections are the proposal's: the terminal names it ("(section 6, prices
        # used)" read as a part of this output, review round 19)
        words = f"{way['lead']} {way['cheaper']}".replace("(section ", "(the PDF proposal's section ")
        _say(con, " ".join(words.replace(NBSP, " ").split()), style="bold")
    if unmet:  # the PDF summary's words
        done = len(every) - len(unmet)
        _say(con, f"Totals cover the {_n(done, 'workload')} with a recommendation; "
                  f"{_n(len(unmet), 'workload')} ({', '.join(unmet)}) "
                  f"{'needs' if len(unmet) == 1 else 'need'} a change of target, model or "
                  "hardware first.", style="yellow")
    if no_price:
        _say(con, "The capital and on-premises figures leave out the GPUs: "
                  f"{gpu_list(no_price, cat.gpus)} {'has' if len(no_price) == 1 else 'have'} "
                  "no purchase price.", style="yellow")


def _say(con: Console, text: str, first: str = "", rest: str = "  ", style: str = "") -> None:
    """A sentence of the plan or the totals, folded under itself (``_folded``)."""
    con.print(Text(_folded(text, con.width, first, rest), style=style), highlight=False,
              no_wrap=True, crop=False)


def _models_table(t: ModelAlternatives, cur: str, width: int) -> Table:
    """A workload's alternative models side by side (the PDF's summary table, same figures):
    each model's name over its configuration in the first column, folded to what the figures
    leave (at 80 columns a column per phrase was cut to "confi…" and "Qwen2.…")."""
    tab = Table(title=Text(f"{t.workload} — models compared; recommended: {t.rule}"),
                title_justify="left", box=box.SIMPLE_HEAD, show_edge=False,
                padding=(0, 0, 0, 1) if width >= 90 else 0)
    heads = ["params", "weights\nGB", "tok/s\n/user", "TTFT\nms", "GPUs\nbought",
             f"capex\n{cur}", f"per year\n{cur}"]
    rows: list[tuple[str, str, list[str]]] = []
    for r in t.alternatives:
        if r.meets_targets and r.gpu_name and r.tp and r.weight_precision and r.kv_precision:
            config = option_words(r.gpu_name, r.tp, r.weight_precision, r.kv_precision)
            figures = [f"{r.weights_gb or 0:,.1f}", f"{r.tokens_per_s_per_user or 0:.1f}",
                       _latency(r.ttft_ms or 0), f"{r.gpus_purchased}", _amount(r.capex),
                       _amount(r.annual_cost)]
        else:
            config, figures = "none meets the targets", ["—"] * 6
        rows.append((("★ " if r.chosen and r.meets_targets else "  ") + r.model_name, config,
                     [params_text(r.params_total), *figures]))
    widths = [max([len(row[2][i]) for row in rows] + [len(p) for p in h.split("\n")])
              for i, h in enumerate(heads)]
    per_column = 2 if width >= 90 else 1
    room = max(width - sum(w + per_column for w in widths) - per_column - 2, 24)
    cells = ["\n".join(textwrap.wrap(name, room, subsequent_indent="  ")
                       + textwrap.wrap(config, room, initial_indent="    ",
                                       subsequent_indent="    "))
             for name, config, _ in rows]
    first = max([len("model and configuration")] + [_width(c) for c in cells])
    tab.add_column("model and\nconfiguration" if first < 23 else "model and configuration",
                   min_width=min(first, room), max_width=room)
    for head in heads:
        tab.add_column(head, justify="right", no_wrap=True)
    for cell, (_, _, figures) in zip(cells, rows, strict=True):
        tab.add_row(cell, *figures)
    return tab


def _print_plan(result: Result, con: Console) -> None:
    """The account plan: what is bought, which workloads share what, and the saving, in the
    words of the proposal (platform and GPU names, precisions), not option ids."""
    cat = load_catalog()
    cur = result.account.currency
    pools = {p.id: p for p in result.plan.pools}

    def platform(pid: str) -> str:
        return short_name(cat.platforms[pid].name) if pid in cat.platforms else pid

    def gpu(gid: str) -> str:
        return cat.gpus[gid].name if gid in cat.gpus else gid

    rented = result.deployment.recommended == "cloud"
    for g in result.plan.node_groups:
        added = int(g.values.get("group_spare_nodes_added", 0.0))
        # the GPUs bought in the proposal's words: serving, on standby (the N+1 spares that
        # run no replica: a failed node's replicas restart on them), idle
        split = group_split(g, result.plan.retrieval_groups)
        notes = [f": {split}" if split else "",
                 f"; {added} spare node{'' if added == 1 else 's'} added for N+1" if added else ""]
        if rented:  # the PDF cover's terms, from the group's rows (GPUs rented, instances)
            n_rented = int(g.values["cloud_gpus_rented"])
            _say(con, f"Plan, rented in the cloud: {n_rented:,} × {gpu(g.gpu)} in "
                      f"{_n(int(g.values['cloud_instances']), 'cloud instance')}"
                      + (f" ({split})" if split and n_rented == g.gpus_purchased else ""),
                 style="bold")
        else:
            _say(con, f"Plan: {g.nodes:,} × {platform(g.platform)} "
                      f"({_n(g.gpus_purchased, 'GPU')} bought{''.join(notes)})", style="bold")
        for pid in g.pools:
            p = pools[pid]
            words = option_words(gpu(p.gpu), p.tp, p.weight_precision, p.kv_precision)
            _say(con, f"Pool {pid.removeprefix('pool-')}: {', '.join(p.workloads)} — "
                           f"{words}; {p.replicas:,} "
                           + ("decode " if p.prefill_replicas else "")
                           + f"replica{'' if p.replicas == 1 else 's'} "
                           + (f"fed by {p.prefill_replicas:,} prefill replicas of "
                              f"{p.prefill_gpus_per_replica} GPUs " if p.prefill_replicas else "")
                           + f"({p.spare_replicas:,} spare), batch "
                           f"{p.batch_per_replica:,}; headroom {_headroom(p.headroom_achieved)}, "
                           + _node_down(p.headroom_after_node_loss,
                                        p.values.get("pool_replicas_after_node_loss"), g.nodes),
                 first="  ", rest="    ")
    for rg in result.plan.retrieval_groups:
        engine = next((w.engine for w in result.retrieval if w.name == rg.workload), "")
        served = cat.encoder_engines[engine].name if engine in cat.encoder_engines else engine
        what = (f"{rg.workload} ({'embedding' if rg.kind == 'embed' else 'reranking'}), "
                f"{_n(rg.replicas, 'replica')} on {gpu(rg.gpu)} served by {served}, limited by "
                f"{rg.limited_by}")
        rhost = next((g for g in result.plan.retrieval_groups if g.id == rg.shares_with), None)
        if rg.shares_with:  # the PDF's words: it buys nothing ("0 × Dell PowerEdge XE9680"
            # read as a bug); on a language-model group's or (review round 21) an earlier
            # retrieval group's idle GPUs
            idle = "1 idle GPU" if rg.gpus_used == 1 else f"{rg.gpus_used:,} idle GPUs"
            _say(con, f"Retrieval serving: use {idle} of the "
                      f"{rhost.workload if rhost else 'language-model'} servers "
                      f"({platform(rg.platform)}) for {what}; no GPUs or servers bought for it",
                 style="bold")
        elif result.deployment.recommended == "cloud":  # the PDF's: the GPUs it rents
            _say(con, f"Plan, rented in the cloud: {rg.cloud_gpus:,} × {gpu(rg.gpu)} for {what}; "
                      "on instances of its own, not shared with the language models",
                 style="bold")
        else:
            split = retrieval_split(rg, result.plan.retrieval_groups)
            _say(con, f"Plan: {rg.nodes:,} × {platform(rg.platform)} "
                      f"({_n(rg.gpus_purchased, 'GPU')} bought{': ' + split if split else ''}) for "
                      f"{what}; on its own servers, not shared with the language models",
                 style="bold")
    ded, tot = result.totals_dedicated, result.totals
    if result.deployment.recommended == "cloud":  # a rented account's terms, as the PDF's
        if ded.annual_cost_cloud is not None and ded.annual_cost_cloud != tot.annual_cost_cloud:
            _say(con, f"Sized alone the workloads would rent {_n(ded.cloud_gpus_rented, 'GPU')}, "
                      f"cloud {_money(ded.annual_cost_cloud, cur)}/yr.")
    elif ded.annual_cost_onprem != tot.annual_cost_onprem or ded.nodes != tot.nodes:
        _say(con, f"Sized alone the workloads would need {_n(ded.gpus_purchased, 'GPU')} in "
                  f"{_n(ded.nodes, 'node')}, on-prem {_money(ded.annual_cost_onprem, cur)}/yr.")


def _node_down(headroom: float, left: float | None, nodes: int) -> str:
    """The headroom with a node down in the PDF's words: where no replica is left the service
    stops (a "-100%" headroom read as a figure, not as an outage)."""
    if nodes == 1:
        return "the service stops while its one node is down"
    if (left is not None and left <= 0) or headroom <= -1:
        return "the service stops while a node is down"
    # below zero the PDF says what it means: "peak demand is not met while a node is down"
    return f"{_headroom(headroom)} with a node down" + (" (peak demand not met)" if headroom < 0 else "")


def _n(count: int, noun: str) -> str:
    """'1 GPU', '3 GPUs': the CLI's counts in words (no '1 GPUs')."""
    return f"{count:,} {noun if count == 1 else noun + 's'}"


def print_catalog(kind: str, table: dict[str, Any], console: Console | None = None) -> None:
    """The catalog command's table (:func:`.textcatalog.catalog_table`)."""
    catalog_table(kind, table, console or _console())
