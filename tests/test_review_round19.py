"""Review round 19 (helper C): a rented account read as a customer reads it.

Each test fails on the code before the round:

1. the shipped knowledge base rented (inputs/rag-knowledge-base.yaml with
   policy.deployment: cloud) rents 2 + 3 AMD Instinct MI325X for its embedder and reranker
   (retrieval_cloud_gpus), yet the PDF said "Retrieval serving: buy 1 × Generic 8x AMD MI325X
   OAM server (8 GPUs)" twice, priced them on-premises (USD 74.0 k a year each), and its cover
   listed "8 × AMD Instinct MI325X in 1 × ... server" twice beside "in all 7 GPUs rented";
   the terminal and the web page said the same in their words;
2. a rented account's "cheaper way" sentence ("Buying and running the servers (on-premises)
   would cost EUR 172 k a year, against EUR 225 k for the cloud") did not say the buying
   figure is the same plan's GPUs bought: like with like, now said;
3. "the 12 GPUs the recommendation buys" and the what-if table's "GPUs bought" beside a
   plan that rents them;
4. a rented account whose embedding options have no price was told to state a purchase price.
"""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from llmsizer.documents.proposal.format import NBSP
from llmsizer.documents.proposal.render import render_html
from llmsizer.documents.textreport import print_result
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

ROOT = Path(__file__).resolve().parents[1]
RAG = ROOT / "inputs" / "rag-knowledge-base.yaml"
INSURER = ROOT / "tests" / "data" / "eur-insurer.yaml"
BANK = ROOT / "tests" / "data" / "eu-bank-cloud.yaml"


def _variant(tmp: Path, src: Path, name: str, **changes: dict[str, object]) -> Path:
    doc = yaml.safe_load(src.read_text(encoding="utf-8"))
    for key, values in changes.items():
        doc.setdefault(key, {}).update(values)
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    return path


def _words(html: str) -> str:
    """The page's words, one space apart; a tag before a comma or stop leaves no space."""
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).replace(NBSP, " ").split())
    return re.sub(r" ([,.;])", r"\1", text)


@pytest.fixture(scope="module")
def rented_rag(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Result]:
    path = _variant(tmp_path_factory.mktemp("rag"), RAG, "rag-rented",
                    policy={"deployment": "cloud"})
    r = size(load(path))
    assert r.deployment.recommended == "cloud"
    # the figures the documents must give: 2 and 3 MI325X rented, USD 24.8 k and 37.2 k a year
    # (session 24: storage for the GPUs rented, 2 / 8 and 3 / 8 of a server's 8,400; a whole
    # server's made them 31.1 k and 42.4 k)
    assert [(g.gpu, g.cloud_gpus, g.gpus_purchased, round(g.annual_cost_cloud))
            for g in r.plan.retrieval_groups] == [("mi325x", 2, 8, 24_792),
                                                  ("mi325x", 3, 8, 37_188)]
    # session 24: the assistant's 2 x GH200 (a TP2 replica on Lambda's 1-GPU-only GH200
    # instances) has no cloud price now: the plan rents it on 1 x B200 instead; 7 GPUs before
    assert r.totals.cloud_gpus_rented == 6
    return path, r


def test_a_rented_knowledge_base_pdf_rents_its_retrieval_servers(
        rented_rag: tuple[Path, Result]) -> None:
    _, r = rented_rag
    text = _words(render_html(r))
    assert ("Retrieval serving: rent 2 × AMD Instinct MI325X in the cloud for Query and corpus "
            "embedding and rent 3 × AMD Instinct MI325X in the cloud for Passage reranking.") in text
    assert "buy 1 × Generic 8x AMD MI325X OAM server" not in text
    # its table: the GPUs rented and the rent, never the 8-GPU servers and their buying cost
    table = text[text.index("Retrieval serving: rent"):text.index("A question answered")]
    assert "GPUs rented" in table and "USD 24.8 k" in table and "USD 37.2 k" in table
    assert "USD 74.0 k" not in table
    assert "Per million tokens, if bought" in table
    assert "Per year: the rent in the cloud, at the account's contract tier." in text
    # the cover adds up: 1 B200 + 2 + 3 MI325X = the 6 GPUs rented (session 24; 2 GH200, 7)
    cover = text[:text.index("Sized with llmsizer")]
    assert ("2 × AMD Instinct MI325X rented for Query and corpus embedding; 3 × AMD Instinct "
            "MI325X rented for Passage reranking, in all 6 GPUs rented") in cover
    # buying, the alternative, still names the servers a purchase takes
    assert cover.count("8 × AMD Instinct MI325X in 1 × Generic 8x AMD MI325X OAM server") == 2


def test_a_rented_knowledge_base_in_the_terminal_rents_its_retrieval_servers(
        rented_rag: tuple[Path, Result]) -> None:
    _, r = rented_rag
    con = Console(width=200, record=True, color_system=None)
    print_result(r, con)
    text = con.export_text()
    assert ("Plan, rented in the cloud: 2 × AMD Instinct MI325X for Query and corpus embedding"
            in " ".join(text.split()))
    assert "(8 GPUs bought" not in text  # the old "1 × Generic ... server (8 GPUs bought: ...)"
    for name in ("Query and corpus embedding —", "Passage reranking —"):
        block = text[text.index(name):]
        head = next(ln for ln in block.splitlines() if "limited" in ln)
        star = next(ln for ln in block.splitlines() if ln.lstrip("│ ").startswith("★"))
        assert "cloud" in head and "on-prem" not in head
        assert ("24.8 k" if "Query" in name else "37.2 k") in star  # s24: 31.1 k, 42.4 k


def test_a_rented_knowledge_base_on_the_web_page_rents_its_retrieval_servers(
        rented_rag: tuple[Path, Result]) -> None:
    from fastapi.testclient import TestClient

    from llmsizer.web.app import create_app

    path, _ = rented_rag
    with TestClient(create_app()) as client:
        page = client.post("/upload/yaml", files={"file": (
            "rag-rented.yaml", path.read_bytes())}).text
    page = page.replace("&nbsp;", " ").replace(NBSP, " ")
    groups = page[page.index('<table id="retrieval-groups">'):]
    groups = groups[:groups.index("</table>")]
    assert "GPUs rented" in groups and "Cloud per year" in groups
    assert "USD 24.8 k" in groups and "USD 37.2 k" in groups  # s24: 31.1 k and 42.4 k
    assert "On-premises per year" not in groups
    options = page[page.index("<h3>Query and corpus embedding"):]
    options = options[:options.index("</table>")]
    star = options[options.index('class="rec"'):]
    star = star[:star.index("</tr>")]
    assert "USD 24.8 k" in star and "no price" not in star  # 31.1 k before session 24


def test_a_rented_accounts_cheaper_way_is_the_same_plan_bought() -> None:
    r = size(load(BANK))
    assert r.deployment.recommended == "cloud" and r.deployment.cheaper == ["on_prem"]
    text = _words(render_html(r))
    assert ("Buying the same GPUs and running the servers (on-premises) would cost EUR 172 k a "
            "year, against EUR 225 k for renting them in the cloud: the same plan, priced both "
            "ways.") in text
    # the figure is this plan's GPUs bought: the cover's alternative
    assert "The alternative, buying: 8 × NVIDIA H200 SXM in 1 × Dell PowerEdge XE9680" in text


def test_a_rented_accounts_alternatives_and_what_if_do_not_say_bought() -> None:
    text = _words(render_html(size(load(INSURER))))
    assert "more than three times the 16 GPUs the recommendation would buy" in text
    assert "the recommendation buys" not in text
    what_if = text[text.index("What if: sensitivity"):text.index("Assumptions register")]
    # the cloud cost, what the recommendation pays, leads (review round 21)
    assert ("Scenario Cloud per year (recommended) GPUs if bought Nodes if bought Capital cost "
            "if bought") in what_if
    assert "GPUs bought" not in what_if.split("Scenario", 1)[1]
    # a bought account's table reads as before
    bought = _words(render_html(size(load(ROOT / "inputs" / "small-l4-l40s.yaml"))))
    assert "Scenario GPUs bought Nodes Capital cost On-premises per year" in bought


def test_a_rented_account_without_a_priced_embedder_is_told_to_state_a_cloud_price(
        tmp_path: Path) -> None:
    """H200 NVL and MI355X have neither a purchase nor a cloud price in the catalog: renting,
    the advice asks for what renting needs."""
    path = _variant(tmp_path, RAG, "rag-unpriced", policy={"deployment": "cloud"},
                    hardware={"gpus": ["h200-nvl", "mi355x"]})
    r = size(load(path))
    embed = next(w for w in r.retrieval if w.kind == "embed")
    assert embed.recommended is None and any(o.feasible for o in embed.options)
    assert embed.advice == ("no feasible GPU has a cloud price listed: state one among the "
                            "cloud prices per GPU-hour of the requirements")
    bought = size(load(_variant(tmp_path, RAG, "rag-unpriced-bought",
                                hardware={"gpus": ["h200-nvl", "mi355x"]})))
    assert next(w for w in bought.retrieval if w.kind == "embed").advice == (
        "no feasible GPU has a purchase price listed: state one among the GPU prices of the "
        "requirements")


def test_a_rented_web_pages_buying_columns_add_up_and_say_if_bought(
        rented_rag: tuple[Path, Result]) -> None:
    """The web page's per-workload table heads its column "GPUs if bought (its share)"; a
    rented knowledge base's retrieval rows gave the GPUs rented there (2 and 3) above an
    account row of the 18 bought. The plan table said "GPUs bought" and "Capital cost"."""
    from fastapi.testclient import TestClient

    from llmsizer.web.app import create_app

    path, r = rented_rag
    with TestClient(create_app()) as client:
        page = client.post("/upload/yaml", files={"file": (
            "rag-rented.yaml", path.read_bytes())}).text
    table = page[page.index('<table id="per-workload">'):]
    table = table[:table.index("</table>")]
    assert "GPUs if bought (its share)" in table
    counts = re.findall(r'<td class="n">—</td><td class="n">\d+</td><td class="n">(\d+)</td>',
                        table)
    # session 24: the assistant on 1 B200 of an 8-GPU HGX (2 GH200 before): 8 + 8 + 8 = 24
    assert counts == ["8", "8"] and r.totals.gpus_purchased == 24
    plan = page[page.index("<h2>Plan</h2>"):]
    plan = plan[:plan.index("</table>")]
    assert "GPUs if bought" in plan and "Capital cost if bought" in plan
    assert "GPUs bought" not in plan


def test_a_rented_workloads_walk_through_rents_its_gpus() -> None:
    """The walk-through's step 8 of a workload alone in its plan said "3 GPUs are bought" for
    an assistant the plan rents (tests/data/ref-a-rented.yaml: Ref A renting, at USD 35.5 k a
    year; its cheapest way since session 23 is buying); round 18 gave rent only to the step of
    a shared plan. Session 24: the cloud's storage is per GPU rented, a share of the bought
    server's (GPUs rented / its GPUs), so the same 3 L40S rent for less beside the 8-GPU
    XE7745 (3 / 8 x 8,400) than beside the generic 4-GPU server (3 / 4): USD 30.2 k."""
    r = size(load(ROOT / "tests" / "data" / "ref-a-rented.yaml"))
    assert r.deployment.recommended == "cloud"
    text = _words(render_html(r))
    assert ("3 GPUs = 3 replicas × TP1, rented in 3 cloud instances (if bought: 1 × Dell "
            "PowerEdge XE7745 (8x 350 W PCIe - L40S), a node holds up to 8 GPUs and 8 replicas; "
            "3 GPUs in all).") in text
    assert "GPUs are bought" not in text
    bank = _words(render_html(size(load(BANK))))
    assert "8 GPUs = 8 replicas × TP1, rented in 8 cloud instances (if bought: 1 × Dell" in bank
    bought = _words(render_html(size(load(ROOT / "inputs" / "small-l4-l40s.yaml"))))
    assert ("1 GPU = 1 replica × TP1, in 1 × Generic 2U 4-GPU PCIe Gen4 server (4x L4, 72 W), a "
            "node holds up to 4 GPUs and 4 replicas; 1 GPU is bought.") in bought


def test_the_cost_charts_workload_names_are_whole(tmp_path: Path) -> None:
    """The annual-cost and memory charts cut a workload's name at 28 characters: the insurer's
    "Claims document classification" read "Claims document classificat…" (PDF and web page).
    A label now has two lines, broken
    after a word; a name as long as two lines is still whole, and the chart stays clear of
    collisions (tests/test_chart_labels.py's reading of the SVG)."""
    from test_chart_labels import _chart_parts, _svgs, collisions

    def labels(path: Path, chart: str = "cost") -> list[str]:
        svg = dict(_svgs(path))[chart]
        assert collisions(svg) == []
        return [t.what for t in _chart_parts(svg)[1]]

    assert "Claims document classification" in labels(INSURER)
    # the memory chart's workload headings were cut the same way (the web page shows it too)
    assert "Claims document classification" in labels(INSURER, "memory")
    doc = yaml.safe_load(INSURER.read_text(encoding="utf-8"))
    doc["workloads"][0]["name"] = "Claims document classification and motor triage"
    longer = tmp_path / "insurer-long-name.yaml"
    longer.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    got = labels(longer)
    assert not any("…" in t for t in got), got
    assert "Claims document classification and" in got and "motor triage" in got, got
    memory = labels(longer, "memory")
    assert not any("…" in t for t in memory), memory
    assert "Claims document classification" in memory and "and motor triage" in memory


def test_the_glossary_speaks_of_renting_too() -> None:
    """A rented proposal's glossary defined a node as "bought", N+1 as "buying one node's worth
    more", headroom as "capacity bought" and the serving, standby and idle GPUs as "the GPUs
    bought": each entry now holds for a rented plan as well (one glossary for both ways)."""
    from llmsizer.documents.proposal.glossary import GLOSSARY

    meaning = {t.term: t.meaning for t in GLOSSARY}
    for term in ("Headroom", "N+1", "Node", "Serving, on standby, idle"):
        assert "rented" in meaning[term], (term, meaning[term])
    assert meaning["Node"] == ("One server with its GPUs, powered and failing as a unit; "
                               "rented, one cloud instance.")
    text = _words(render_html(size(load(INSURER))))
    assert "Node One server with its GPUs, powered and failing as a unit; rented, one cloud " \
           "instance." in text


def test_the_range_counts_the_retrieval_servers_as_the_total_does(
        rented_rag: tuple[Path, Result]) -> None:
    """The summary's range put the language-model servers' GPUs at both ends of the model's
    error beside a total that also counts the embedding and reranking servers: the rented
    knowledge base read "18 GPUs if bought; 2–3 GPUs if throughput is off", and the bought one
    "20 GPUs bought; the same" over a range of 4 to 4. Both ends now add the 16 GPUs its
    retrieval servers buy (8 + 8), as the total does."""
    _, r = rented_rag
    assert [g.gpus_purchased for g in r.plan.retrieval_groups] == [8, 8]
    # session 24: the assistant rents 1 B200 (its TP2 GH200 pair has no cloud price on
    # Lambda's 1-GPU instances), an 8-GPU HGX if bought: 8 + 8 + 8 = 24 (18 before)
    assert r.totals.gpus_purchased == 24
    assert (r.plan.gpus_purchased_if_throughput_high, r.plan.gpus_purchased_if_throughput_low) \
        == (24, 24)
    text = _words(render_html(r))
    # session 21: a rented plan's range is of the GPUs it rents (the GH200 servers' 2 one-GPU
    # instances, 3 at the low end, plus the 2 + 3 MI325X the retrieval servers rent), the
    # bought range following as the buying alternative's
    # (session 24: 1 B200 at both ends + 2 + 3 MI325X: 6; 7-8 on the GH200 pair before)
    assert (r.plan.cloud_gpus_rented_if_throughput_high,
            r.plan.cloud_gpus_rented_if_throughput_low) == (6, 6)
    assert ("Range: 6 GPUs rented; the same if throughput is off by the model's p90 "
            "error. The buying alternative, in whole servers: 24 GPUs; the same if "
            "throughput is off.") in text
    bought = size(load(RAG))
    # 20 before session 23: a PCIe server's network is now its front end, and the embedder
    # buys a 4-GPU server of 4 L40S, not the XE7745's 8 L4
    assert bought.totals.gpus_purchased == 16
    assert (bought.plan.gpus_purchased_if_throughput_high,
            bought.plan.gpus_purchased_if_throughput_low) == (16, 16)
    # an account without retrieval servers keeps its range (the insurer: 16 to 24; its H200
    # plan since s21-rented-spares)
    insurer = size(load(INSURER)).plan
    assert (insurer.gpus_purchased_if_throughput_high,
            insurer.gpus_purchased_if_throughput_low) == (16, 24)


def test_the_cost_table_gives_the_cloud_instance_size_rented() -> None:
    """inputs/legal-128k.yaml rents its 12 B200 in use as 6 instances of 2 GPUs at USD 4.58 a
    GPU-hour (the 2-GPU size's price): the cost table read "6 × 8" (the largest size's GPUs,
    48 GPUs that are not rented) and USD 4.44 (the 8-GPU size's price), figures that do not
    make its USD 498 k a year (session 24: 494 k, storage for the 12 GPUs rented, 12 / 8 x
    8,400 = 12,600, not 2 servers' 16,800)."""
    r = size(load(ROOT / "inputs" / "legal-128k.yaml"))
    (g,) = r.plan.node_groups
    v = g.values
    assert (v["cloud_instances"], v["cloud_instance_gpus"], v["cloud_gpus_rented"]) == (6, 2, 12)
    assert round(float(v["cloud_instance_gpu_hour"]), 2) == 4.58
    # the rent is those GPUs at that price, always on (calculations/costs.py annual_cloud_rent)
    assert float(v["annual_cloud_rent"]) == pytest.approx(12 * float(v["cloud_instance_gpu_hour"])
                                                          * 8760)
    text = _words(render_html(r))
    assert ("Cloud instances × GPUs each 6 × 2 Cloud price per GPU-hour paid, for the size "
            "rented USD 4.58 derived Cloud per year USD 494 k") in text  # "paid": round 24


def test_the_terminal_names_the_proposal_when_it_points_to_a_section() -> None:
    """The terminal's "Recommended way" sentence is the PDF's and pointed to "(section 6,
    prices used)", a section the terminal does not have: it names the PDF proposal (Ref A
    renting, tests/data/ref-a-rented.yaml: since session 23 its cheapest way is buying)."""
    r = size(load(ROOT / "tests" / "data" / "ref-a-rented.yaml"))
    con = Console(width=200, record=True, color_system=None)
    print_result(r, con)
    text = " ".join(con.export_text().split())
    assert ("The cloud figure rests on a price derived for that tier from another tier's dated "
            "price (the PDF proposal's section 6, prices used).") in text
    assert "(section 6" not in text


def test_a_rented_knowledge_base_workbook_rents_its_retrieval_servers(
        rented_rag: tuple[Path, Result], tmp_path: Path) -> None:
    """The workbook's Summary read "1 × Generic 8x AMD MI325X OAM server node (8 × AMD
    Instinct MI325X GPUs): 2 replicas for embedding" beside a language model "rented in 2
    cloud instances": rented, it gives the GPUs rented, live from the Retrieval sheet's
    "GPUs it rents in the cloud" row (LibreOffice recalculates it to the same words)."""
    import openpyxl

    from llmsizer.documents.workbook import write_workbook

    _, r = rented_rag
    path = tmp_path / "rented.xlsx"
    write_workbook(r, path)
    ws = openpyxl.load_workbook(path)["Summary"]
    cached = openpyxl.load_workbook(path, data_only=True)["Summary"]
    found = {}
    for row in ws.iter_rows(min_row=1, max_row=12):
        for cell in row:
            if isinstance(cell.value, str) and "rented in the cloud: " in cell.value:
                found[cached[cell.coordinate].value] = cell.value
    assert set(found) == {"2 × AMD Instinct MI325X GPUs rented in the cloud: 2 replicas for "
                          "embedding",
                          "3 × AMD Instinct MI325X GPUs rented in the cloud: 3 replicas for "
                          "reranking"}
    retrieval = openpyxl.load_workbook(path)["Retrieval"]
    for formula in found.values():
        ref = formula[1:].split("&", 1)[0].split("!")[1]
        # review 25b: the GPUs as rented (a guest may rent alone; the cached text read them
        # while the formula read retrieval_cloud_gpus: "3 ×" recalculated as "10 ×")
        assert retrieval[f"A{ref.lstrip('ABCDEFGHIJKLMNOPQRSTUVWXYZ')}"].value \
            == "retrieval_cloud_gpus_rented"
