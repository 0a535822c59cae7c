"""The money logic a CFO would question (PDF review, round 14).

1. "cheapest" with a GPU without a purchase price: the on-premises figure leaves the GPU out
   (a floor), so it must not win the comparison (tests/data/unpriced-cheapest.yaml).
2. A break-even past the amortisation period is no case for buying (Litware,
   tests/data/api-cheapest.yaml: 218 months on a 3-year write-off; 214 before session 23).
3. (Not kept: one server buying no scale-out network share. Decided per node group, it made a
   plan that splits off a one-server group cheaper than the same servers in one group, and a
   plan dearer than its workloads sized alone: tests/test_plan.py. Session 23 prices each
   server's network from its own platform instead (the GPU fabric's share per fabric port on
   platforms built for one, the front-end ports on every server), never from a count.)
4. Retrieval on idle GPUs already bought costs nothing extra: said in words, never "USD 0" per
   million tokens (tests/data/rag-shared.yaml).
5. Section 5 for a cloud recommendation advises a spare instance, not a spare node
   (tests/data/eu-bank-cloud.yaml)."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import openpyxl
import pytest
import yaml
from helpers import EXAMPLE

from llmsizer.documents.proposal import build_context
from llmsizer.documents.proposal.render import render_html
from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

DATA = Path(__file__).resolve().parent / "data"
CAT = load_catalog()


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(html).replace("\xa0", " "))


# ---- 1. cheapest with an unpriced GPU ---------------------------------------------------------

def test_an_on_premises_figure_without_its_gpus_never_wins_cheapest() -> None:
    r = size(load(DATA / "unpriced-cheapest.yaml"))
    d, t = r.deployment, r.totals
    (w,) = r.workloads
    assert w.best is not None and w.best.gpu == "a10" and not w.best.priced
    # one A10 rented all year at the account's 3.00 an hour, plus its storage: session 24, the
    # GPU rented's share of a 4-GPU server's 10 TB x 70 x 12 (2,100; 8,400 before, a whole
    # server's storage for one GPU rented)
    assert t.annual_cost_cloud == pytest.approx(3.0 * 8760 + 1 / 4 * 10 * 70 * 12)
    # the on-premises figure leaves the GPU out: it is below the cloud's, but only a floor
    assert t.annual_cost_onprem < t.annual_cost_cloud
    assert d.incomplete == ["on_prem"]
    assert (d.cheapest, d.recommended, d.cheaper) == ("cloud", "cloud", [])
    lead = _text(build_context(r)["deployment"]["lead"])
    assert "the cheapest of the ways priced in full" in lead
    # one A10 server: its 2 x 25 GbE front end (USD 274.66) is its network, not 17,578 of
    # InfiniBand fabric (USD 26.8 k a year before session 23)
    assert "on-premises left out: USD 19.3 k a year without the GPUs" in lead


def test_a_complete_figure_still_compares_as_before() -> None:
    """Every GPU priced: nothing is left out (Litware: the hosted API is the cheapest)."""
    d = size(load(DATA / "api-cheapest.yaml")).deployment
    assert d.incomplete == [] and d.recommended == d.cheapest == "api"


# ---- 2. break-even past the write-off ---------------------------------------------------------

def test_a_break_even_past_the_write_off_says_buying_does_not_pay_back(tmp_path: Path) -> None:
    r = size(load(DATA / "api-cheapest.yaml"))
    assert r.account_inputs["amortization_years"] == 3
    (pool,) = r.plan.pools
    (share,) = pool.shares
    # computed once (calculations: plan_breakeven_months, plan_breakeven_in_writeoff)
    # the PDF read "Buying beats renting after 214 months" on a 3-year write-off; 218 since
    # session 23 priced the XE9680's 2 x 200 GbE front end (USD 2,197.25) beside its fabric
    assert share["plan_breakeven_months"] == pytest.approx(217.9, abs=0.05)
    assert share["plan_breakeven_in_writeoff"] == 0
    html = _text(render_html(r))
    assert "218 months, past the 3 years of amortisation" in html
    assert '<td class="n name">218 months</td>' not in html
    # the workbook: the Summary's row is a formula over the Plan sheet's, cached as the JSON's
    book = tmp_path / "b.xlsx"
    write_workbook(r, book)
    ws = openpyxl.load_workbook(book)["Summary"]
    (row,) = [row for row in ws.iter_rows()
              if row[0].value == "Buying pays back within the amortisation period"]
    assert str(row[2].value).startswith("=Plan!")
    assert '"no"' in row[2].number_format
    plan = openpyxl.load_workbook(book)["Plan"]
    (prow,) = [row for row in plan.iter_rows() if row[0].value == "plan_breakeven_in_writeoff"]
    # IF(AND(..), 1, 0): a number, as Excel caches it (tests/test_workbook_excel_rules.py)
    assert any(isinstance(c.value, str) and c.value.startswith("=IF(AND(") for c in prow)


def test_a_break_even_within_the_write_off_still_reads_in_months() -> None:
    """Acme (inputs/example.yaml): 25 months on a 3-year write-off."""
    r = size(load(EXAMPLE))
    shares = [s for p in r.plan.pools for s in p.shares]
    assert shares and all(s["plan_breakeven_in_writeoff"] == 1 for s in shares)
    months = round(shares[0]["plan_breakeven_months"])
    assert 0 < months <= 36
    assert f'<td class="n name">{months} months</td>' in _text(render_html(r))


# ---- the scale-out network per server (kept) ----------------------------------------------------

# Session 23: the network is a server's own, from its platform's ports (calculations
# network_per_node_used), never from a group's server count: the GPU fabric's share per fabric
# port (prices.yaml: 17,578 USD per 8-GPU node of a 1,024-GPU NDR fat tree / 8 ports =
# 2,197.25) only on a platform built for a GPU fabric (platforms.yaml gpu_fabric), and every
# server's front-end ports at their speed (2,197.25 / 400 Gb/s = 5.493125 per Gb/s).
FABRIC_PORT, FRONTEND_GBPS = 17_578 / 8, 17_578 / 8 / 400


def test_several_servers_keep_their_network_and_switch() -> None:
    """Acme: 5 XE8640 servers (4-GPU HGX: 4 fabric ports, 2 x 200 GbE front end) keep 5 x
    USD 10,986.25 of network (17,578 a server before session 23, as if it had 8 GPUs and no
    front end) and one front-end leaf."""
    r = size(load(EXAMPLE))
    (g,) = r.plan.node_groups
    assert (g.platform, g.nodes) == ("dell-xe8640", 5)
    per_server = 4 * FABRIC_PORT + 2 * 200 * FRONTEND_GBPS
    assert per_server == pytest.approx(10_986.25)
    assert g.values["capex_network"] == pytest.approx(5 * per_server)
    assert r.bom.totals["bom_frontend_leaf_switches"] == 1


def _university(tmp_path: Path, **costs: float) -> Result:
    data = yaml.safe_load((DATA / "gbp-university-r22.yaml").read_text(encoding="utf-8"))
    data["costs"].update(costs)
    path = tmp_path / "university.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return size(load(path))


def test_a_pcie_server_pays_its_front_end_network_only(tmp_path: Path) -> None:
    """University: 10 x Dell R760xa (PCIe, no GPU fabric: its replicas stay in one server).
    Each paid GBP 13,886.62 of InfiniBand fabric (17,578 x 0.79), 13.5 % of the capital cost
    of GBP 1,027,616.20; now its 2 x 100 GbE front-end ports: 200 x 5.493125 x 0.79 = GBP
    867.91 a server, capex GBP 158,000 servers + 730,750 GPUs + 8,679.14 network."""
    r = _university(tmp_path)
    (g,) = r.plan.node_groups
    assert (g.platform, g.nodes) == ("dell-r760xa", 10)
    assert CAT.platforms["dell-r760xa"].gpu_fabric is False
    assert g.values["capex_network"] == pytest.approx(10 * 2 * 100 * FRONTEND_GBPS * 0.79)
    assert r.totals.capex == pytest.approx(158_000 + 730_750 + 8_679.1375)
    assert r.bom.totals["bom_fabric_ports"] == 0
    # the prices used name both prices per port with their catalog source, no per-node figure
    items = {p.item: p for p in r.prices}
    assert "extra:network_per_node" not in items
    assert items["extra:network_per_frontend_gbps"].value == pytest.approx(FRONTEND_GBPS * 0.79)
    assert items["extra:network_per_fabric_port"].date == "2026-06"


def test_the_account_network_per_node_is_charged_on_every_node(tmp_path: Path) -> None:
    """costs.network_per_node means what its label says: that figure on every node, whatever
    the platform's ports (GBP 5,000 x 10 servers)."""
    r = _university(tmp_path, network_per_node=5000)
    (g,) = r.plan.node_groups
    assert r.account_inputs["network_per_node_stated"] == 1
    assert g.values["capex_network"] == pytest.approx(10 * 5000)
    used = {p.item: p for p in r.prices}
    assert used["extra:network_per_node"].value == 5000
    assert used["extra:network_per_node"].source == "account requirements (costs)"
    assert not any(i.startswith("extra:network_per_f") for i in used)
    html = _text(render_html(r))
    assert "Network per node, the account's figure" in html


def test_only_platforms_built_for_a_gpu_fabric_carry_it() -> None:
    """HGX/DGX/OAM boards and NVL72 racks are built with a fabric NIC per GPU; PCIe servers
    (one GPU per scale-up domain, bought part full) are not, and a replica spans servers only
    over a stated scale-out network (sizing.search), which only fabric platforms state."""
    for pid, p in CAT.platforms.items():
        pcie = p.nvlink_domain == 1 and not p.sold_full
        assert p.gpu_fabric is not pcie, pid
        if p.scaleout_gb_s is not None:
            assert p.gpu_fabric, pid


# ---- 4. retrieval on idle GPUs ------------------------------------------------------------------

def test_retrieval_on_idle_gpus_reads_no_extra_cost_not_zero(tmp_path: Path) -> None:
    r: Result = size(load(DATA / "rag-shared.yaml"))
    (rg,) = r.plan.retrieval_groups
    assert rg.shares_with and rg.nodes == 0 and rg.annual_cost_onprem == 0
    html = _text(render_html(r))
    assert html.count("no extra cost: on GPUs already bought") == 2  # plan and costs tables
    assert re.search(r'<td class="n">\s*(<strong>)?USD 0(</strong>)?\s*</td>\s*<td>OpenAI',
                     html) is None
    book = tmp_path / "b.xlsx"
    write_workbook(r, book)
    ws = openpyxl.load_workbook(book)["Retrieval"]
    (row,) = [row for row in ws.iter_rows()
              if row[0].value == "retrieval_cost_per_million_tokens_onprem"]
    cell = row[3]
    assert str(cell.value).startswith("=IF(")  # still the formula: an edit shows a price
    assert cell.number_format.endswith(';"no extra cost: on GPUs already bought"')


# ---- 5. section 5 for a cloud recommendation ----------------------------------------------------

def _headroom_section(r: Result) -> str:
    html = _text(render_html(r))
    section = html[html.index('id="headroom"'):]
    return section[:section.index("</section>")]


def test_cloud_recommendation_advises_a_spare_instance() -> None:
    """Northwind Retail rents 3 one-GPU L40S instances, no spare asked: one instance down
    leaves 2 replicas, headroom -11.6 % (s21-rented-loss), so the advice is a spare instance,
    never a spare node. Renting is asked (tests/data/ref-a-rented.yaml): since session 23 the
    cheapest is buying (one 4-GPU PCIe server's network is its 2 x 100 GbE front end, USD
    1,098.63, not 17,578: USD 32.4 k a year bought against 35.5 k rented)."""
    r = size(load(DATA / "ref-a-rented.yaml"))
    assert r.deployment.recommended == "cloud"
    section = _headroom_section(r)
    # -11.6 % in whole percents: the proposal shows every headroom to one precision, and its
    # alternatives reach 100 % (session 23, Formatter.for_headrooms)
    assert "headroom -12 %" in section
    assert "consider renting a spare instance" in section
    assert "spare node" not in section.replace("No spare node was requested", "")
    assert "the provider replaces one that fails" in section


def test_cloud_recommendation_met_with_an_instance_down_advises_nothing() -> None:
    """Banque Lumière rents 8 one-GPU H100 instances: one down leaves 7 replicas, headroom
    7.3 % (7 / 6.52 - 1), peak still met, so no spare is advised (before session 21 the
    figures were of one 8-GPU server bought, and the section advised a spare instance)."""
    r = size(load(DATA / "eu-bank-cloud.yaml"))
    assert r.deployment.recommended == "cloud"
    section = _headroom_section(r)
    # 7.3 % in whole percents, as every headroom of this proposal (session 23)
    assert "headroom 7 %, and peak demand is still met" in section
    assert "consider renting a spare" not in section


def test_on_premises_still_advises_a_spare_node() -> None:
    html = _text(render_html(size(load(DATA / "tiny-startup.yaml"))))
    assert "consider asking for a spare node" in html
    assert "spare instance" not in html
