"""Summary sheet: per workload the recommendation in words and numbers, totals, headroom,
cost per million tokens, and a native chart per workload. Every number is a formula over the
other sheets (``=KV!D12``, ``=in_w1_users``), cached with the engine's value.
"""

from __future__ import annotations

from typing import Any

from ...model.calculations import CALCULATIONS, INPUTS
from ...sizing.results import NodeGroup
from ..proposal.format import LAYOUT_WORDS, gpu_list, precision_name, shared_gpus_words
from ..proposal.sensitivity import cloud_total_words
from ..proposal.summary import purchase_unpriced, unsized_retrieval
from .book import Book
from .calc_sheets import RISK_FLAGS
from .formats import clean_text, formula_text, number_format, unit_text, unpriced_text, wrapped_height
from .layout import SCOPE, Column, cached, flag_expr, letter
from .options_sheet import LIVE_COL
from .plan_sheet import PlanLayout, share_cell, total_cell
from .rerun_check import write_checks
from .retrieval_sheet import retrieval_cell, zero_text
from .summary_charts import chart_sections, charts, summary_scale

__all__ = ["write"]


def _words(book: Book, c: Column) -> tuple[str, str] | None:
    """The recommendation in one sentence: a formula joining cells with ``&``. A workload
    in the plan is described by its pool and node group (the Plan sheet), not sized alone."""
    planned = _plan_words(book, c)
    if planned is not None:
        return planned
    parts: list[tuple[str, str | None]] = [
        ("", "nodes"), (" × ", "platform"), (" nodes: ", "gpus"), (" × ", "gpu"),
        (" GPUs as ", "replicas"), (" replicas of TP", "tp"), (" (", "weight_precision"),
        (" weights, ", "kv_precision"), (" KV cache)", None)]
    formula: list[str] = []
    text: list[str] = []
    for lead, name in parts:
        if lead:
            formula.append(formula_text(lead))
            text.append(lead)
        if name is None:
            continue
        named = book.named_cell(name, c)
        if named is not None:  # catalog names, not ids
            formula.append(named[0])
            text.append(named[1])
            continue
        ref = book.lay.cell(name, c)
        if ref is None:
            return None
        value = c.option.values[name]
        if isinstance(value, float):
            if not value.is_integer():
                return None
            value = str(int(value))
        formula.append(ref)
        text.append(str(value))
    return "=" + "&".join(formula), "".join(text)


def _plan_cell(col: str, rows: dict[str, int], key: str) -> str:
    """The Plan sheet's cell of row ``key`` in column ``col`` (rows are 0-based)."""
    return f"Plan!{col}{rows[key] + 1}"


_Part = tuple[str, tuple[str, str] | None]  # words, then a (formula, cached text) cell or None


def _bought_words(group: NodeGroup, g_col: str, pl: PlanLayout, lead: str,
                  platform: tuple[str, str], gpu: tuple[str, str]) -> list[_Part]:
    """'5 × HGX nodes (40 × H100 GPUs)': the servers a purchase buys. The units follow the
    live counts: one node reads "1 × … node (4 × … GPUs)"."""
    nodes = _plan_cell(g_col, pl.group_rows, "group_nodes")
    gpus = _plan_cell(g_col, pl.group_rows, "group_gpus_purchased")
    return [
        (lead, (nodes, str(group.nodes))), (" × ", platform),
        ("", (f'IF({nodes}=1," node ("," nodes (")',
              " node (" if group.nodes == 1 else " nodes (")),
        ("", (gpus, str(group.gpus_purchased))), (" × ", gpu),
        ("", (f'IF({gpus}=1," GPU)"," GPUs)")', " GPU)" if group.gpus_purchased == 1 else " GPUs)"))]


def _rented_words(group: NodeGroup, g_col: str, pl: PlanLayout, lead: str,
                  gpu: tuple[str, str]) -> list[_Part]:
    """'16 × H100 rented in 2 cloud instances': what the cloud rents, in the PDF cover's terms,
    from the node group's cloud_gpus_rented and cloud_instances rows (never a recount)."""
    rented = _plan_cell(g_col, pl.group_rows, "cloud_gpus_rented")
    instances = _plan_cell(g_col, pl.group_rows, "cloud_instances")
    n_rented = int(float(group.values["cloud_gpus_rented"]))
    n_instances = int(float(group.values["cloud_instances"]))
    return [
        (lead, (rented, str(n_rented))), (" × ", gpu), (" rented in ", (instances, str(n_instances))),
        ("", (f'IF({instances}=1," cloud instance"," cloud instances")',
              " cloud instance" if n_instances == 1 else " cloud instances"))]


def _plan_words(book: Book, c: Column) -> tuple[str, str] | None:
    """'Shares 5 × HGX nodes (40 × H100 GPUs) with 2 other workloads: 7 replicas of TP4 (FP8
    weights, FP8 KV cache) serve its pool.' Formula over the Plan sheet and the option; a
    rented plan: 'Shares 16 × H100 rented in 2 cloud instances with ...'."""
    r = book.r
    pool = next((p for p in r.plan.pools if c.k - 1 in p.workload_indices), None)
    if pool is None:
        return None
    group = next(g for g in r.plan.node_groups if pool.id in g.pools)
    pl = PlanLayout.of(r)
    groups = r.plan.node_groups
    p_col = letter(3 + r.plan.pools.index(pool))
    g_col = letter(3 + groups.index(group))  # the Plan sheet's columns start at C
    others = sum(len(p.workloads) for p in r.plan.pools if p.id in group.pools)
    others -= 1  # the workload itself
    # as run: a plan rented by the GPU runs its replicas for the load (pool.replicas)
    replicas = _plan_cell(p_col, pl.pool_rows, "pool_replicas_as_run")
    platform, gpu = book.named_cell("platform", c), book.named_cell("gpu", c)
    tp_ref = book.lay.cell("tp", c)
    if platform is None or gpu is None or tp_ref is None:
        return None
    lead = "Shares " if others else ""
    with_others = (f" with {others} other workload{'s' if others > 1 else ''}" if others
                   else "")
    parts = (_rented_words(group, g_col, pl, lead, gpu) if r.deployment.recommended == "cloud"
             else _bought_words(group, g_col, pl, lead, platform, gpu))
    parts += [
        (f"{with_others}: ", (replicas, str(pool.replicas))),
        ("", (f'IF({replicas}=1," replica"," replicas")',
              " replica" if pool.replicas == 1 else " replicas")),
        (" of TP", (tp_ref, str(pool.tp))),
    ]
    layout: list[tuple[str, tuple[str, str] | None]] = []
    for key in ("ep", "adp"):  # the layout beyond TP, as the PDF's option words give it
        # (review round 21: Rheinwerk's summary read "30 replicas of TP4 (FP4 weights, FP8 KV
        # cache)" of replicas whose experts spread over 4 GPUs, attention data-parallel)
        ref, x = book.lay.cell(key, c), float(c.option.values.get(key, 1) or 1)
        if ref is not None and x > 1 and x.is_integer():
            words, unit = LAYOUT_WORDS[key]
            layout += [(f"{', ' if layout else '; '}{words} ", (ref, str(int(x)))),
                       (f" {unit}", None)]
    parts.append((f" ({precision_name(pool.weight_precision)} weights, "
                  f"{precision_name(pool.kv_precision)} KV cache{'' if layout else ')'}", None))
    parts += [*layout, (")", None)] if layout else []
    prefill_gpus = book.lay.cell("disagg_prefill_gpus", c)
    if pool.prefill_replicas and prefill_gpus is not None:
        # disaggregated: the replicas above decode; the prefill replicas are GPUs of the plan
        # too (the sentence read "15 replicas of TP4" beside 128 GPUs: 60 + 34 x 2 prefill,
        # review round 20), as the PDF's "34 prefill replicas of 2 GPUs"
        prefill = _plan_cell(p_col, pl.pool_rows, "pool_prefill_replicas")
        parts += [
            (" decoding, fed by ", (prefill, str(pool.prefill_replicas))),
            (" prefill replicas of ", (prefill_gpus, str(pool.prefill_gpus_per_replica))),
            ("", (f'IF({prefill_gpus}=1," GPU"," GPUs")',
                  " GPU" if pool.prefill_gpus_per_replica == 1 else " GPUs"))]
    if len(r.plan.pools) > 1 or len(pool.workloads) > 1:
        parts.append((" in its pool", None))
    parts.append((".", None))
    formula: list[str] = []
    text: list[str] = []
    for words, cell in parts:
        if words:
            formula.append(formula_text(words))
            text.append(words)
        if cell is not None:
            formula.append(cell[0])
            text.append(cell[1])
    return "=" + "&".join(formula), "".join(text)


_SUMMARY_ROWS: tuple[tuple[str, str], ...] = (
    ("gpu", "GPU"), ("platform", "Platform"), ("weight_precision", "Weight precision"),
    ("kv_precision", "KV-cache precision"), ("tp", "Tensor parallel (GPUs per replica)"),
    ("nodes", "Nodes (its share of the plan)"), ("gpus_purchased", "GPUs bought (its share)"),
    ("gpus", "GPUs serving or on standby (its share)"), ("replicas", "Replicas (its share of its pool)"),
    ("concurrent_users", "Concurrent users at peak"), ("users_per_replica", "Users per replica"),
    ("required_tokens_per_s_per_user", "Required tokens/s per user"),
    ("tokens_per_s_per_user", "Tokens/s per user at peak"),
    ("ttft_ms", "Time to first token at peak"), ("slo_met", "Meets latency targets"),
    ("headroom", "Headroom policy"),
    ("headroom_achieved", "Headroom achieved at peak (its pool's)"),
    ("headroom_after_node_loss", "Headroom with one node down (its pool's)"),
    ("capex", "Capital cost (its share)"),
    ("annual_cost_onprem", "On-prem cost per year (its share)"),
    ("annual_cost_cloud", "Cloud cost per year (its share, rented at the cloud tier)"),
    ("cost_per_million_tokens_onprem", "On-prem cost per million output tokens"),
    ("cost_per_million_tokens_cloud", "Cloud cost per million output tokens"),
    ("breakeven_months", "Buy-vs-rent break-even"),
    ("breakeven_in_writeoff", "Buying pays back within the amortisation period"),
)
_TOTALS = ("gpus_purchased", "gpus", "nodes", "capex", "annual_cost_onprem", "annual_cost_cloud")
# Rows that show a workload's share of the plan (Plan sheet), not the option sized alone:
# they sum to the total column.
_SHARE_OF = {"nodes": "plan_nodes", "gpus_purchased": "plan_gpus_purchased",
             "gpus": "plan_gpus_used", "replicas": "plan_replicas", "capex": "plan_capex",
             "annual_cost_onprem": "plan_annual_cost_onprem",
             "annual_cost_cloud": "plan_annual_cost_cloud",
             "cost_per_million_tokens_onprem": "plan_cost_per_million_tokens_onprem",
             "cost_per_million_tokens_cloud": "plan_cost_per_million_tokens_cloud",
             "breakeven_months": "plan_breakeven_months",
             "breakeven_in_writeoff": "plan_breakeven_in_writeoff",
             "headroom_achieved": "plan_headroom_achieved",
             "headroom_after_node_loss": "plan_headroom_after_node_loss"}
# The total column's figure of a row: the Plan sheet's account total (GPUs in use are the
# plan's gpus_used; GPUs bought may be more where a baseboard comes full).
_TOTAL_OF = {"gpus": "gpus_used"}
# An embed or rerank workload's column: the Retrieval sheet's row of its group's figure
# (its own servers, or what it adds on a language-model node group's idle GPUs), and the
# RetrievalGroup field the engine gave it. These rows add up to the total column with the
# workloads' shares.
_RETRIEVAL_OF = {"nodes": ("retrieval_nodes", "nodes"),
                 "gpus_purchased": ("retrieval_gpus", "gpus_purchased"),
                 "gpus": ("retrieval_gpus_used", "gpus_used"),
                 "replicas": ("retrieval_replicas", "replicas"),
                 "capex": ("capex", "capex"),
                 "annual_cost_onprem": ("annual_cost_onprem", "annual_cost_onprem"),
                 # as rented (session 25): a guest's cheapest option alone where that is less
                 "annual_cost_cloud": ("retrieval_cloud_cost", "annual_cost_cloud")}


def write(book: Book) -> None:
    """Write the Summary sheet: the recommendation per workload, totals and charts."""
    ws = book.ws["Summary"]
    f = book.f
    r = book.r
    acct = r.account
    who = ", ".join(x for x in (
        f"account id {acct.id}" if acct.id else "",
        f"prepared by {acct.prepared_by}" if acct.prepared_by else "",
        f"currency {acct.currency}") if x)
    book.title(ws, f"LLM serving sizing: {acct.name}",
               f"{who}. Every number below is a formula over the other sheets: change the "
               "yellow cells on Inputs (or the engine's choices on KV) and it follows.",
               span=(2 + book.n_wl, 44 + 12 + 30 * book.n_wl + 22))
    ws.write_string(2, 0, clean_text(f"llmsizer {r.llmsizer_version}, catalog {r.catalog_digest}. "
                                     "Units: GB = 1e9 bytes; money in the account currency."),
                    f("note"))
    rec: dict[int, Column] = {c.k: c for c in book.lay.columns if c.recommended}
    # the embed and rerank workloads' columns follow the language-model workloads'
    groups = r.plan.retrieval_groups
    total_col = 2 + book.n_wl + len(groups)
    ws.set_column(0, 0, 44)
    ws.set_column(1, 1, 12)
    ws.set_column(2, total_col - 1, 30)
    ws.set_column(total_col, total_col, 22)
    widths = [44.0, 12.0, *[30.0] * (total_col - 2), 22.0]
    ws.repeat_columns(0, 1)
    _note_above_table(book, ws, total_col, sum(widths))
    row = 4
    ws.write_string(row, 0, "Per workload", f("header"))
    ws.write_string(row, 1, "Unit", f("header"))
    for k, w in enumerate(r.workloads, start=1):
        ws.write_string(row, 1 + k, clean_text(w.name), f("header"))
    for j, g in enumerate(groups):
        ws.write_string(row, 2 + book.n_wl + j, clean_text(g.workload), f("header"))
    ws.write_string(row, total_col, "Total (account plan)", f("header"))
    # a long workload name wraps in its bold header: without the height its further lines
    # printed white over the Model row (a 60+ character name, x-docs review)
    names = [w.name for w in r.workloads] + [g.workload for g in groups]
    ws.set_row(row, max(wrapped_height(clean_text(n), 30 * 0.85, 11) for n in names))
    ws.freeze_panes(row + 1, 2)
    row += 1
    ws.write_string(row, 0, "Model", f("label"))
    for k, w in enumerate(r.workloads, start=1):
        ws.write_string(row, 1 + k, clean_text(w.model_name), f("wrap"))
    models = {rw.name: rw.model_name for rw in r.retrieval}
    for j, g in enumerate(groups):
        ws.write_string(row, 2 + book.n_wl + j, clean_text(models[g.workload]), f("wrap"))
    row += 1
    ws.write_string(row, 0, "Recommendation", f("header_top"))
    height = 15.0
    for k, w in enumerate(r.workloads, start=1):
        c = rec.get(k)
        words = _words(book, c) if c else None
        if c is None:
            advice = w.advice or ""
            text = clean_text(f"No feasible option. {advice}")
            ws.write_string(row, 1 + k, text, f("wrap"))
        elif words is None:
            text = c.option.id
            ws.write_string(row, 1 + k, text, f("wrap"))
        else:
            text = words[1]
            ws.write_formula(row, 1 + k, words[0], f("wrap"), text)
        height = max(height, wrapped_height(text, 30, 11))
    for j, g in enumerate(groups):
        formula, text = _retrieval_words(book, j, g)
        ws.write_formula(row, 2 + book.n_wl + j, formula, f("wrap"), text)
        height = max(height, wrapped_height(text, 30, 11))
    ws.set_row(row, min(height, 400))
    row += 1
    measured = any(w.mode == "measured" for w in r.workloads)
    if measured:
        row = _basis_row(book, ws, row)
    units = {i.name: i.unit for i in INPUTS} | {c.name: c.unit for c in CALCULATIONS}
    flags = {c.name for c in CALCULATIONS if flag_expr(c.expr)}
    for name, label in _summary_rows(measured, r.deployment.recommended == "cloud"):
        unit = units.get(name)
        if unit is None:
            continue
        cells: list[tuple[int, str, float | str]] = []
        value: float | str
        for k, w in enumerate(r.workloads, start=1):
            c = rec.get(k)
            if c is None:
                continue
            scope = SCOPE.get(name)
            share = _share(book, k, name)
            if share is not None:
                ref, value = share
            elif scope == "account":
                ref, value = f"in_{name}", r.account_inputs[name]
            elif scope == "workload":
                ref, value = f"in_w{k}_{name}", w.inputs[name]
            else:
                named = book.named_cell(name, c)
                maybe = book.lay.cell(name, c)
                if named is not None:
                    ref, value = named
                elif maybe is not None:
                    ref, value = maybe, c.option.values[name]
                else:
                    continue
            cells.append((k, ref, cached(value, name in flags)))
        nums = [float(v) for _, _, v in cells if not isinstance(v, str | bool)]
        fmt = number_format("flag" if name in flags else unit, nums, book.cur,
                            zero_text=unpriced_text(name), name=name)
        ws.write_string(row, 0, label, f("label"))
        ws.write_string(row, 1, "" if unit == "id" else unit_text(unit, book.cur), f("unit"))
        for k, ref, value in cells:
            if isinstance(value, str):  # names: wrapped in the 30-character column
                ws.write_formula(row, 1 + k, f"={ref}", f("wrap"), value)
            else:
                ws.write_formula(row, 1 + k, f"={ref}", f("calc", fmt), value)
        texts = [v for _, _, v in cells if isinstance(v, str)]
        if texts:
            ws.set_row(row, max(wrapped_height(v, 30, 11) for v in texts))
        for k in range(1, len(r.workloads) + 1):
            if k not in rec:
                ws.write_string(row, 1 + k, "—", f("unit"))
        if name in _RETRIEVAL_OF and cells:
            sheet_row, field = _RETRIEVAL_OF[name]
            best = [rw.best for rw in r.retrieval if rw.best is not None]
            for j, (g, o) in enumerate(zip(groups, best, strict=True)):
                # a shared server's priced cloud 0 is a real 0 (retrieval_sheet.zero_text)
                own = number_format(unit, nums, book.cur, zero_text=zero_text(name, o.values))
                ws.write_formula(row, 2 + book.n_wl + j, f"={retrieval_cell(j, sheet_row)}",
                                 f("calc", own), float(getattr(g, field)))
        if name in _TOTALS and cells:
            # the account plan's totals (Plan sheet): shared pools and nodes, not the sum
            key = _TOTAL_OF.get(name, name)
            total = float(getattr(r.totals, key) or 0.0)  # None: no cloud price
            # its own decimals: whole nodes and GPUs printed "7.00 nodes" in the format of
            # the workloads' fractional shares beside it
            zero = unpriced_text(key, total=cloud_total_words(r))
            ws.write_formula(row, total_col, f"={total_cell(r, key)}",
                             f("total", number_format(unit, [total], book.cur, zero_text=zero)),
                             total)
        if name in flags:
            book.pass_fail(ws, row, 2, row, 1 + book.n_wl)
        if name.startswith("headroom_"):
            ws.conditional_format(row, 2, row, 1 + book.n_wl, {
                "type": "cell", "criteria": "<", "value": 0, "format": f("bad")})
        if name in RISK_FLAGS:
            book.risk(ws, row, 2, row, 1 + book.n_wl)
        row += 1
    row = write_checks(book, ws, row, "header_top", LIVE_COL, 30)
    # one print scale for the table and the charts below it (summary_scale)
    sections = chart_sections(book)
    scale = summary_scale(sections, ws, row, widths, 56)
    ws.set_print_scale(scale)
    charts(book, ws, row + 1, sections, widths, scale)



def _note_above_table(book: Book, ws: Any, last_col: int, width: float) -> None:
    """Above the table, in the proposal's words (x-docs review): the embed and rerank
    workloads no GPU serves (no node group, so no column: the sheet never named them), and
    the plan's GPUs without a purchase price (its capital and on-premises figures leave them
    out)."""
    unsized = [unsized_retrieval(w, book.catalog) for w in book.r.retrieval if w.best is None]
    unpriced = purchase_unpriced(book.r)
    if not unsized and not unpriced:
        return
    said = [f"Not in the plan or the totals: {u.name} ({u.model_name}, {u.kind_text}). {u.advice}"
            + (f" {u.closest}" if u.closest else "") for u in unsized]
    if unpriced:  # as the proposal's cover says it
        said.append("The capital and on-premises figures leave out the GPUs: "
                    f"{gpu_list(unpriced, book.catalog.gpus)} "
                    f"{'has' if len(unpriced) == 1 else 'have'} no purchase price.")
    text = clean_text(" ".join(said))
    ws.merge_range(3, 0, 3, last_col, text, book.f("bad_wrap"))
    ws.set_row(3, wrapped_height(text, width, 11))


def _retrieval_words(book: Book, j: int, g: Any) -> tuple[str, str]:
    """'2 × Generic 2U 4-GPU PCIe Gen4 server nodes (8 × NVIDIA L4 GPUs): 8 replicas, for
    embedding' (or, on a language-model node group's idle GPUs, that), as a formula over
    the Retrieval sheet's counts."""
    cat = book.catalog
    gpu = cat.gpus[g.gpu].name if g.gpu in cat.gpus else g.gpu
    platform = (cat.platforms[g.platform].name.split(" (", 1)[0] if g.platform in cat.platforms
                else g.platform)
    kind = "embedding" if g.kind == "embed" else "reranking"
    if g.shares_with:  # a language-model group's or an earlier retrieval group's (round 21)
        host = next((h.workload for h in book.r.plan.retrieval_groups if h.id == g.shares_with),
                    "language-model")
        # session 22: GPUs it buys for their empty slots are said so (not "idle GPUs")
        words = clean_text(
            f" × {gpu} replicas for {kind}, on idle GPUs of the {host} nodes"
            if not g.gpus_purchased else f" × {gpu} replicas for {kind}, on the {host} nodes "
            f"({shared_gpus_words(g)})")
        return (f'={retrieval_cell(j, "retrieval_replicas")}&{formula_text(words)}',
                f"{g.replicas}{words}")
    # (cell, its value, the words before the unit, the unit: singular and plural, after)
    if book.r.deployment.recommended == "cloud":  # rented: the GPUs it rents, as the PDF's
        # (review round 19: "1 × Generic 8x AMD MI325X OAM server node (8 × ... GPUs)")
        parts: tuple[tuple[str, int, str, str, str, str], ...] = (
            # the GPUs as rented (whole instances, or its own cheapest option alone), the
            # row g.cloud_gpus holds: retrieval_cloud_gpus, its GPUs in use, read 10 where
            # the cached text said 3 (review round 25)
            (retrieval_cell(j, "retrieval_cloud_gpus_rented"), g.cloud_gpus, f" × {gpu} ", "GPU",
             "GPUs", " rented in the cloud: "),
            (retrieval_cell(j, "retrieval_replicas"), g.replicas, " ", "replica", "replicas",
             f" for {kind}"))
    else:
        parts = ((retrieval_cell(j, "retrieval_nodes"), g.nodes, f" × {platform} ", "node",
                  "nodes", " ("),
                 (retrieval_cell(j, "retrieval_gpus"), g.gpus_purchased, f" × {gpu} ", "GPU",
                  "GPUs", "): "),
                 (retrieval_cell(j, "retrieval_replicas"), g.replicas, " ", "replica",
                  "replicas", f" for {kind}"))

    def q(text: str) -> str:
        return formula_text(clean_text(text))

    # the unit follows the live count, so a finance edit to 1 reads "1 × … GPU"
    formula = "&".join(f'{ref}&{q(pre)}&IF({ref}=1,{q(one)},{q(many)})&{q(post)}'
                       for ref, _v, pre, one, many, post in parts)
    text = "".join(f"{v}{pre}{one if v == 1 else many}{post}"
                   for _ref, v, pre, one, many, post in parts)
    return "=" + formula, clean_text(text)


def _share(book: Book, k: int, name: str) -> tuple[str, float] | None:
    """Workload ``k``'s share of the plan for Summary row ``name``: (Plan cell, value)."""
    share = _SHARE_OF.get(name)
    cell = share_cell(book.r, k, share) if share else None
    if share is None or cell is None:
        return None
    pool = next(p for p in book.r.plan.pools if k - 1 in p.workload_indices)
    return cell, pool.shares[pool.workload_indices.index(k - 1)][share]


_MEASURED_ROWS: tuple[tuple[str, str], ...] = (
    ("measured_tokens_per_s_per_replica", "Measured output tokens/s per replica"),
    ("modelled_replica_output_tokens_per_s", "Modelled output tokens/s per replica"),
    ("measured_vs_modelled", "Measured vs modelled"),
    ("measured_gap_risk", "Measured and modelled differ by over 25 % (risk)"),
)


# A rented plan's buying rows, said as the PDF's cards and the web's plan table say them:
# the GPUs, nodes and costs buying would take, beside a plan that rents (review round 19:
# a rented insurer's Summary led with "GPUs bought (its share)")
_IF_BOUGHT = {"nodes": "Nodes if bought (its share of the plan)",
              "gpus_purchased": "GPUs if bought (its share)",
              "capex": "Capital cost if bought (its share)",
              "annual_cost_onprem": "On-prem cost per year if bought (its share)"}


# ... and its node down is an instance down, as the PDF and the web say it (session 23: the
# workbook read "one node down" beside the PDF's "one instance down"); the calculation's label
# (plan_shares.py) stays the workbook's Plan-sheet row
_RENTED_WORDS = {**_IF_BOUGHT,
                 "headroom_after_node_loss": "Headroom with one instance down (its pool's)"}


def summary_label(name: str, rented: bool = False) -> str:
    """The Summary's label of row ``name`` (a _SUMMARY_ROWS key), as the account reads it."""
    label = dict(_SUMMARY_ROWS)[name]
    return _RENTED_WORDS.get(name, label) if rented else label


def _summary_rows(measured: bool, rented: bool = False) -> list[tuple[str, str]]:
    """The Summary's rows; measured vs modelled throughput side by side when any
    workload is sized from a benchmark; a rented plan's buying rows say "if bought", its
    node down "instance down"."""
    rows = [(n, summary_label(n, rented)) for n, _label in _SUMMARY_ROWS]
    if measured:
        at = next(i for i, (n, _) in enumerate(rows) if n == "slo_met") + 1
        rows[at:at] = _MEASURED_ROWS
    return rows


def _basis_row(book: Book, ws: Any, row: int) -> int:
    """'Sizing basis': modelled, or which benchmark figure was used and why."""
    ws.write_string(row, 0, "Sizing basis", book.f("header_top"))
    height = 15.0
    for k, w in enumerate(book.r.workloads, start=1):
        if w.mode == "measured":
            text = clean_text(w.measured_note or "measured (the customer's benchmark)")
        else:
            text = "modelled: roofline model with calibrated efficiencies"
        ws.write_string(row, 1 + k, text, book.f("wrap"))
        height = max(height, wrapped_height(text, 30, 11))
    ws.set_row(row, min(height, 400))
    return row + 1
