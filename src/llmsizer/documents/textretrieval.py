"""The options table of an embed or rerank workload in the terminal (``llmsizer size``), in
the language-model tables' style (:mod:`.textoptions`)."""

from __future__ import annotations

from rich import box
from rich.table import Table
from rich.text import Text

from ..sizing.results import RetrievalOption, RetrievalWorkloadResult
from .proposal.plan import retrieval_cost_words
from .textoptions import CONFIG_ROOM, WHY, WIDE, OptionNames, config_cells
from .textwords import amount, cell_width


def retrieval_cost(o: RetrievalOption, rented: bool) -> str:
    """A retrieval option's cost per year in the account's way (:func:`option_cost`'s rule)."""
    v = o.values
    if words := retrieval_cost_words(v, rented):
        return words  # on idle GPUs another group bought or rents: what the plan charges
    if rented:
        return (amount(float(v["annual_cost_cloud"]))
                if float(v["cloud_gpu_hour"]) > 0 or o.shares_with else "no price")
    return amount(float(v["annual_cost_onprem"])) if o.priced else "no price"


def best_retrieval(w: RetrievalWorkloadResult, rented: bool,
                   limit: int) -> list[RetrievalOption]:
    """The options a table shows unless asked for every one: the ``limit`` cheapest that
    meet the targets in the account's way (priced before "no price") and the recommended
    one, in the engine's order (one per candidate GPU: 24 rows of three lines at 100
    columns, review round 22)."""
    feasible = [o for o in w.options if o.feasible]
    if len(feasible) <= limit:
        return feasible

    def cost(o: RetrievalOption) -> tuple[int, float]:
        if retrieval_cost(o, rented) == "no price":
            return (1, 0.0)
        return (0, float(o.values["annual_cost_cloud" if rented else "annual_cost_onprem"]))

    keep = {o.id for o in sorted(feasible, key=cost)[:limit]} | {w.recommended}
    return [o for o in feasible if o.id in keep]


_RETRIEVAL_HEADS = ("batch\ntokens", "p95\nms", "tok/s\n/GPU", "replicas", "GPUs", "nodes",
                    "on-prem\n{cur}/yr", "limited\nby")


def retrieval_title(w: RetrievalWorkloadResult) -> str:
    """An embed or rerank table's title: 'Query embedding — BGE-M3 (embed)'."""
    return f"{w.name} — {w.model_name} ({w.kind})"


def retrieval_table(w: RetrievalWorkloadResult, cur: str, width: int, names: OptionNames,
                    rented: bool = False, every: bool = True, limit: int | None = None) -> Table:
    """An embed or rerank workload: one row per candidate GPU, in the LLM tables' style;
    ``rented``: the GPUs it rents and its rent, as the language-model table's (it read
    "on-prem" and "no price" beside the MI325X a rented account rents, round 19).
    ``every`` False: only the options that meet the targets (the others are listed under
    it); a wide table lists the others too, with a "why not" column where one has a reason
    (it was drawn empty on every row, review round 22). ``limit``: only
    :func:`best_retrieval`'s rows."""
    wide = width >= WIDE
    t = Table(title=Text(retrieval_title(w)), title_justify="left",
              box=box.SIMPLE_HEAD if not wide else box.HEAVY_HEAD, show_edge=wide,
              padding=(0, 1) if wide else (0, 0, 0, 1) if width >= 90 else 0)
    shown = ([o for o in w.options if o.feasible or (wide and every)] if limit is None
             else best_retrieval(w, rented, limit))
    why_not = wide and every and any(not o.feasible for o in shown)
    rows: list[list[str]] = []
    for o in shown:
        v = o.values
        if o.feasible:
            rows.append([f"{float(v['batch_tokens']):,.0f}",
                         f"{float(v['latency_p95_s']) * 1000:,.0f}",
                         f"{float(v['replica_tokens_per_s']):,.0f}",
                         f"{float(v['retrieval_replicas']):,.0f}",
                         *([_shared_gpus(o), "shared"]
                           if v.get("shares_llm_nodes") else
                           [f"{float(v['retrieval_cloud_gpus' if rented else 'retrieval_gpus']):,.0f}",
                            f"{float(v['retrieval_nodes']):,.0f}"]),
                         retrieval_cost(o, rented),
                         str(v["limited_by"])])
        else:
            rows.append([""] * len(_RETRIEVAL_HEADS))
    heads = [("cloud\n{cur}/yr" if rented and h.startswith("on-prem") else h).format(cur=cur)
             for h in _RETRIEVAL_HEADS]
    per_column, rest = (3, 12 + WHY if why_not else 2) if wide else (2 if width >= 90 else 1, 2)
    # "limited by" (words) folds at its spaces, so it claims only its longest word: at 80
    # columns its whole phrase left the servers folded mid-name ("Dell Pow" over "erEdge")
    widths = [max([len(r[i]) if i < len(heads) - 1 else
                   max(map(len, r[i].split()), default=0) for r in rows]
                  + [len(p) for p in h.split("\n")]) for i, h in enumerate(heads)]
    room = width - sum(widths) - per_column * (len(heads) + 1) - rest
    # its whole phrase where the configuration keeps its room: "latency (batch size)" was
    # folded over three lines at 180 columns beside a configuration 105 columns wide
    whole = max([len(r[-1]) for r in rows], default=0) - widths[-1]
    if whole > 0 and room - whole >= CONFIG_ROOM:
        widths[-1] += whole
        room -= whole
    cells = config_cells([(*names.lines(o), o.id == w.recommended)
                          for o in shown], room)
    config = max([13] + [cell_width(c) for c in cells])
    t.add_column("configuration", min_width=config, max_width=config)
    for head in heads:
        # the figures never fold; "limited by" (words) folds at a space, in what is left
        words = head == "limited\nby"
        t.add_column(head, justify="left" if words else "right", no_wrap=not words,
                     min_width=widths[-1] if words else None,
                     max_width=max(widths[-1], widths[-1] + room - config) if words else None)
    if why_not:
        t.add_column("why not", overflow="fold", ratio=1)
    for o, cell, row in zip(shown, cells, rows, strict=True):
        t.add_row(cell, *row, *([Text(o.reason)] if why_not else []))
    if any(o.feasible and o.values.get("shares_llm_nodes") for o in shown):
        # "0 GPUs, 0 nodes, cost 0" beside the star read as a bug: the PDF's words instead
        host = next((o.shares_with for o in shown if o.shares_with), "")  # round 21: whose
        owner = ("another embedding or reranking workload's" if host.startswith("retrieval-")
                 else "the language-model")
        new = any(o.feasible and o.values.get("shares_llm_nodes")
                  and float(o.values["retrieval_gpus"]) > 0 for o in shown)
        t.caption = Text(
            f"idle, shared: on GPUs {owner} servers bought and leave idle; no GPUs, servers "
            "or cost of its own" if not new else
            f"shared: on {owner} servers; idle: GPUs they bought and leave idle; new: GPUs "
            "bought for their empty slots; no servers of its own")
        t.caption_justify = "left"
    return t


def _shared_gpus(o: RetrievalOption) -> str:
    """The GPUs column of an option on another group's nodes: the idle GPUs it takes and the
    GPUs it buys for their empty slots ("1 new", "2 idle + 1 new")."""
    v = o.values
    idle, new = float(v["retrieval_gpus_on_llm_nodes"]), float(v["retrieval_slots_filled"])
    parts = [f"{idle:,.0f} idle" if idle else "", f"{new:,.0f} new" if new else ""]
    return " + ".join(p for p in parts if p)
