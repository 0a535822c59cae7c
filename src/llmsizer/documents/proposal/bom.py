"""The bill of materials (templates/partials/bom.html.j2): the plan's servers, GPUs, network,
storage, racks, power, licences and support, one row each, in plain words. Every figure is the
Result's ``bom`` (llmsizer.sizing.bom) formatted once here; the workbook's BOM sheet holds the
same figures as formulas."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...model.names import short_name
from ...sizing.results import Result
from .format import NBSP, Formatter


@dataclass(frozen=True)
class BomRow:
    item: str
    quantity: str
    detail: str
    estimate: bool = False  # rests on a figure flagged as an estimate


def unit_word(platform: str) -> str:
    """What one node of a platform is called: "rack" where the node is a whole rack-scale
    NVLink domain (the NVL72 racks: gpus_per_node = nvlink_domain = 72), else "server".
    Review round 25: Northwind Research's BOM read "NVIDIA GB300 NVL72 rack — 8 servers" for
    8 racks. (Round 20 pinned "2 servers" for Harrow & Finch's racks: its subject was that
    only the lines bought are listed, no "0 servers" line; it still holds, as "2 racks".)"""
    from ...model.catalog import load_catalog

    p = load_catalog().platforms.get(platform)
    rack = p is not None and p.nvlink_domain > 8 and p.gpus_per_node == p.nvlink_domain
    return "rack" if rack else "server"


def _tb(fmt: Formatter, x: float, digits: int) -> str:
    return f"{fmt.number(x, digits)}{NBSP}TB"


def _switches(fmt: Formatter, leaves: float, spines: float, ports: float) -> str:
    if leaves <= 0:  # one server (calculations/bom.py): it read "0 leaf switches of 64 ports"
        return "no switch of its own: a single server plugs into the customer's network"
    text = f"{fmt.count_of(leaves, 'leaf switch', 'leaf switches')}"
    if spines > 0:
        text += f" and {fmt.count_of(spines, 'spine switch', 'spine switches')}"
    return f"{text} of {fmt.count(ports)} ports"


def _racks_detail(fmt: Formatter, bom: Any, lines: list[Any], p: dict[str, Any]) -> str:
    """The Racks row's words: the rack's limits and the average draw. A server that alone
    draws more than a rack is planned for (a rack-scale system: servers per rack is at least
    1 in the calculation list) fills a rack of its own, so the average passes the limit: said
    as that, never as "at most 40 kW per rack, 132 kW per rack on average" side by side
    (review round 19, Northwind Research's 8 GB300 NVL72 racks at 132 kW each: the count is
    right, one server a rack; the words read as a broken limit). Words only: every figure is
    the BOM's."""
    t = bom.totals
    limit = p["kw_per_rack"].value
    over = [ln for ln in lines if ln.values["line_node_power_kw"] > limit]
    limits = (f"at most {fmt.unit(limit, 'kW')} and "
              f"{fmt.count_of(p['rack_units_per_rack'].value, 'rack unit')} per rack")
    average = f"{fmt.kw(t['bom_kw_per_rack_used'])} per rack on average"
    if not over:
        return f"{limits}, {average}"
    names = " and ".join(dict.fromkeys(
        f"{short_name(ln.platform_name)} ({fmt.kw(ln.values['line_node_power_kw'])})"
        for ln in over))
    own = (f"each {names} draws more than the {fmt.unit(limit, 'kW')} a rack is planned for "
           "here, so it fills a rack of its own whose power and cooling must carry it")
    if len(over) == len(lines):
        return own
    return f"{own}; for the other servers {limits}; {average}, all racks counted"


def bom_rows(result: Result, fmt: Formatter) -> list[BomRow]:
    """The rows of the proposal's bill of materials, in order."""
    bom = result.bom
    if not bom.lines:
        return []
    t = bom.totals
    p = {x.name: x for x in bom.parameters}
    rows: list[BomRow] = []
    # the lines that buy servers: a retrieval group on a language-model group's idle GPUs keeps
    # its BOM line at 0 (the workbook's column is live: a what-if may give it servers), which
    # read "Servers: NVIDIA GB300 NVL72 rack, 0 servers, 0 × NVIDIA GB300 in all" twice under
    # the 2 racks bought (review round 20, Harrow & Finch)
    lines = [ln for ln in bom.lines if ln.values["line_nodes"] > 0] or bom.lines[:1]
    # a retrieval group's GPUs bought for another line's empty slots (session 22: Maple
    # Ridge's embedder in the chat server's fourth slot) are counted in that line's servers
    hosted = {rg.id: rg.shares_with for rg in result.plan.retrieval_groups if rg.shares_with}
    for ln in lines:
        v = ln.values
        guests = [(g.values["line_gpus"], next(rg.workload for rg in result.plan.retrieval_groups
                                               if rg.id == g.id))
                  for g in bom.lines if g not in lines and hosted.get(g.id) == ln.id
                  and g.values["line_gpus"] > 0]
        added = "".join(f", and {fmt.count(n)} for {name} in "
                        f"{'an empty slot' if n == 1 else 'empty slots'}" for n, name in guests)
        rows.append(BomRow(
            f"Servers: {short_name(ln.platform_name)}",
            fmt.count_of(v["line_nodes"], unit_word(ln.platform)),
            f"{ln.vendor}; {fmt.count(v['line_gpus'])} × {ln.gpu_name}"
            f"{added if added else ' in all'}; "
            f"{fmt.count_of(v['line_rack_units_per_node'], 'rack unit')} and "
            f"{fmt.kw(v['line_node_power_kw'])} each", ln.estimate))
    rows.append(BomRow("GPUs", fmt.count_of(t["bom_gpus"], "GPU"), "Bought with the servers."))
    fe = lines[0].values
    speeds = sorted({ln.values["line_frontend_gbps"] for ln in lines})
    fe_switches = _switches(fmt, t["bom_frontend_leaf_switches"],
                            t["bom_frontend_spine_switches"], p["frontend_switch_ports"].value)
    speed = " or ".join(fmt.unit(s, "Gb/s") for s in speeds)
    rows.append(BomRow(
        "Front-end network", fmt.count_of(t["bom_frontend_ports"], "port"),
        f"{fmt.count(fe['line_frontend_nics_per_node'])} ports per server at {speed} for "
        f"users, storage and management; {fe_switches}", p["frontend_switch_ports"].estimate))
    if t["bom_fabric_ports"] > 0:
        fab = _switches(fmt, t["bom_fabric_leaf_switches"], t["bom_fabric_spine_switches"],
                        p["fabric_switch_ports"].value)
        rows.append(BomRow(
            "GPU fabric", fmt.count_of(t["bom_fabric_ports"], "port"),
            f"A model copy spans servers: one fabric network card per GPU; {fab} (two-tier, "
            "non-blocking)"))
    else:
        rows.append(BomRow("GPU fabric", "none",
                           "Not needed: every model copy fits within one server, whose GPUs "
                           "talk over their own links."))
    # review round 25: "5.2 TB" beside "the costs provide 50 TB" read as two figures for one
    # thing: the first is what the plan needs, the second what the cost table charges for
    rows.append(BomRow(
        "Storage", f"{_tb(fmt, t['bom_storage_tb'], 1)} needed",
        f"Needed: model repository {_tb(fmt, t['bom_model_repository_tb'], 2)} (weights "
        f"{fmt.gb(t['bom_weights_gb'])} × {fmt.count(p['model_versions_kept'].value)} "
        f"versions kept) + logs {fmt.unit(p['logs_tb'].value, 'TB')}. "
        f"{storage_costed_words(result, fmt)}", True))
    rows.append(BomRow(
        "Racks", fmt.count_of(t["bom_racks"], "rack"),
        f"{fmt.count_of(t['bom_rack_units'], 'rack unit')} of servers; "
        f"{_racks_detail(fmt, bom, lines, p)}",
        p["kw_per_rack"].estimate))
    rows.append(BomRow("PDUs", fmt.count(t["bom_pdus"]),
                       f"{fmt.count(p['pdus_per_rack'].value)} per rack (two power feeds)",
                       p["pdus_per_rack"].estimate))
    rows.append(BomRow(
        "Power", f"{fmt.kw(t['bom_power_kw'])} IT",
        f"{fmt.kw(t['bom_facility_power_kw'])} at the facility "
        f"(IT × PUE {result.account_inputs['pue']:g}), every server at full load"))
    nvaie = p["nvidia_ai_enterprise_per_gpu_year"].value
    licence = result.account_inputs["software_per_gpu_year"]
    if t["bom_annual_software"] > 0:
        name = "NVIDIA AI Enterprise at " if licence == nvaie else ""
        rows.append(BomRow("Software licences", f"{fmt.money(t['bom_annual_software'])} per year",
                           f"{name}{fmt.money(licence)} per GPU-year"))
    else:
        rows.append(BomRow(
            "Software licences", "none",
            f"Open-source serving. NVIDIA AI Enterprise lists {fmt.money(nvaie)} per GPU-year "
            f"(NVIDIA, November 2023): {fmt.money(t['bom_nvidia_ai_enterprise_per_year'])} "
            "per year for these GPUs, if wanted"))
    rows.append(BomRow("Support", f"{fmt.money(t['bom_annual_support'])} per year",
                       f"{fmt.pct(result.account_inputs['support_rate'])} of the capital cost "
                       "per year"))
    rows.append(BomRow("Capital cost", fmt.money(t["bom_capex"]),
                       "Servers, GPUs and network, as in the cost table"))
    return rows


def storage_costed_words(result: Result, fmt: Formatter, *, in_costs: bool = False) -> str:
    """What the cost table charges for storage beside what the plan needs: the BOM's storage
    row "The cost table charges for 50 TB, the 10 TB per server of its 5 servers: more than
    the 5.2 TB needed"; the cost table's note (``in_costs``) "50 TB over the 5 servers, more
    than the 5.2 TB the bill of materials needs"."""
    t = result.bom.totals
    costed, needed = t["bom_storage_tb_costed"], t["bom_storage_tb"]
    than = ("more than" if costed > needed else "less than" if costed < needed
            else "the same as")
    unit = unit_word_of(result)
    nodes = fmt.count_of(t["bom_nodes"], unit, unit + "s")
    if in_costs:
        return (f"{_tb(fmt, costed, 0)} over the {nodes}, {than} the {_tb(fmt, needed, 1)} "
                "the bill of materials needs")
    return (f"The cost table charges for {_tb(fmt, costed, 0)}, the "
            f"{_tb(fmt, result.account_inputs['storage_tb_per_node'], 0)} per {unit} of the "
            f"{nodes}: {than} the {_tb(fmt, needed, 1)} needed")


def unit_word_of(result: Result) -> str:
    """"rack" where every line of the plan's bill of materials is a rack-scale platform."""
    units = {unit_word(ln.platform) for ln in result.bom.lines}
    return "rack" if units == {"rack"} else "server"


def bom_context(result: Result, fmt: Formatter) -> dict[str, Any]:
    """``bom``: the rows of partials/bom.html.j2; ``bom_storage``: the cost table's words on
    the storage it charges for beside the storage needed (partials/tco.html.j2)."""
    rows = bom_rows(result, fmt)
    return {"bom": rows,
            "bom_storage": storage_costed_words(result, fmt, in_costs=True) if rows else ""}
