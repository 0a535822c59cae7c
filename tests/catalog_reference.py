"""The catalogs against the project's verified reference tables (copies in
tests/data/reference, with their sources; the package never reads that folder).

Each check returns finding lines: "MISMATCH ..." where the catalog disagrees with the
reference and its entry does not say why, "flagged ..." where the entry's notes or source
say why (an estimate, usable vs physical memory, a secondary source). Used by
scripts/check_catalog_reference.py and tests/test_catalog_reference.py.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from llmsizer.model.catalog import Catalog, load_catalog

DATA = Path(__file__).parent / "data" / "reference"
REL = 0.005  # reference figures are printed to 3-4 significant digits

# gpu_specs.csv row -> gpus.yaml id
GPU_IDS = {
    "A10": "a10", "A10G": "a10g", "L4": "l4", "L40S": "l40s",
    "A100 40GB PCIe": "a100-40gb-pcie", "A100 80GB PCIe": "a100-80gb-pcie",
    "A100 80GB SXM": "a100-sxm", "H100 PCIe": "h100-pcie", "H100 SXM": "h100-sxm",
    "H100 NVL": "h100-nvl", "H200 SXM": "h200-sxm", "H200 NVL": "h200-nvl", "B200": "b200",
    "B300 (Blackwell Ultra)": "b300", "GB200 (per GPU)": "gb200", "RTX 4090": "rtx-4090",
    "RTX PRO 6000 Blackwell Server Edition": "rtx-pro-6000", "MI300X": "mi300x",
    "MI325X": "mi325x", "MI355X": "mi355x", "Gaudi 3": "gaudi3",
}
# gpus.yaml field -> gpu_specs.csv column (the same unit unless _convert says otherwise)
GPU_FIELDS = {
    "memory_gb": "memory_gb", "bandwidth_tb_s": "mem_bw_TBps",
    "bf16_tflops": "bf16_fp16_dense_tflops", "fp8_tflops": "fp8_dense_tflops",
    "int8_tops": "int8_dense_tops", "fp4_tflops": "fp4_dense_tflops", "tdp_w": "tdp_w",
    "link_gb_s": "scaleup_bw_GBps_bidir_per_gpu",
}
# words by which an entry says a figure is not the reference's on purpose
FLAG_WORDS = ("estimate", "usable", "physical", "secondary", "not published", "midpoint")


class RefValue:
    """A reference cell: '350-400' (range), '~500 (est)' (estimate), '1075 (secondary)'."""

    def __init__(self, cell: str) -> None:
        text = cell.strip()
        self.flagged = bool(re.search(r"~|est|secondary|low confidence", text))
        nums = [float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*\.?\d*", text)]
        if not nums or text.lower().startswith("not"):
            self.low = self.high = None
        elif re.match(r"^~?\d[\d,.]*\s*-\s*\d", text):
            self.low, self.high = nums[0], nums[1]
        else:
            self.low = self.high = nums[0]

    def holds(self, value: float, rel: float = REL) -> bool:
        assert self.low is not None and self.high is not None
        return self.low * (1 - rel) <= value <= self.high * (1 + rel)


def _convert(field: str, ref: RefValue, row: dict[str, str]) -> RefValue:
    """The reference in the catalog's unit: scale-up links are one direction (half the
    bidirectional figure); TDP given as a range is the upper value (gpus.yaml header)."""
    if field == "link_gb_s" and ref.low is None and row["scaleup_interconnect"].startswith("none"):
        ref.low = ref.high = 32 * 2 ** (int(row["pcie_gen"][0]) - 3)  # x16 slot, both ways
    if field == "link_gb_s" and ref.low is not None and ref.high is not None:
        ref.low, ref.high = ref.low / 2, ref.high / 2
    if field == "tdp_w" and ref.high is not None:
        ref.low = ref.high
    return ref


_RATES = ("tensor rate", "tensor throughput")
FIELD_WORDS = {
    "memory_gb": ("memory_gb", " gb"), "bandwidth_tb_s": ("bandwidth", "tb/s"),
    "bf16_tflops": ("bf16", *_RATES), "fp8_tflops": ("fp8", *_RATES),
    "int8_tops": ("int8", *_RATES), "fp4_tflops": ("fp4", *_RATES), "tdp_w": ("tdp",),
    "link_gb_s": ("link", "infinity fabric", "nvlink"), "price_usd": ("price",),
}


def flags(text: str, field: str) -> bool:
    """Whether an entry's notes/source say this field deliberately differs: one sentence
    names the field (or what it measures) together with a flag word."""
    for sentence in re.split(r"[.;]\s", text.lower()):
        if any(w in sentence for w in FIELD_WORDS[field]) and any(
                w in sentence for w in FLAG_WORDS):
            return True
    return False


def gpu_rows(folder: Path = DATA) -> list[dict[str, str]]:
    with (folder / "gpu_specs.csv").open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def gpu_findings(cat: Catalog, folder: Path = DATA) -> list[str]:
    out = []
    for row in gpu_rows(folder):
        gid = GPU_IDS[row["gpu"]]
        gpu = cat.gpus[gid]
        for field, col in GPU_FIELDS.items():
            text = f"{gpu.notes}. {gpu.source}"
            ours = getattr(gpu, field)
            ref = _convert(field, RefValue(row[col]), row)
            where = f"{gid}.{field}: catalog {ours}, reference {row[col]!r}"
            if ref.low is None and ours is None:
                continue
            if ref.low is None or ours is None:
                kind = "flagged" if flags(text, field) else "MISMATCH"
                out.append(f"{kind} {where}")
            elif not ref.holds(ours):
                out.append(f"{'flagged' if flags(text, field) else 'MISMATCH'} {where}")
            elif ref.flagged and not flags(text, field):
                out.append(f"MISMATCH {where} (reference flags it uncertain; catalog silent)")
    return out


def platform_findings(cat: Catalog) -> list[str]:
    """A platform's node power is one figure for every GPU it lists, so they must all draw
    the same board power: else one GPU is charged another's (XE9780: B200 at the B300's)."""
    out = []
    for pid, plat in cat.platforms.items():
        tdps = {gid: cat.gpus[gid].tdp_w for gid in plat.gpus}
        if len(set(tdps.values())) > 1:
            out.append(f"MISMATCH {pid}: one node_power_kw {plat.node_power_kw} for GPUs of "
                       f"different power {tdps}")
        budget = plat.gpus_per_node * max(tdps.values()) / 1000
        if plat.node_power_kw < budget:
            out.append(f"MISMATCH {pid}: node_power_kw {plat.node_power_kw} below its GPUs' "
                       f"{budget:g} kW")
    return out


# Platform facts the reference states (gpu_specs.md "8-GPU server platforms",
# infrastructure.md): platform id, GPUs per node, power and what the power is.
#   max     the node's maximum (vendor or secondary): the catalog carries it
#   budget  the GPUs' power budget only: the catalog's node figure must exceed it
#   range   a rack's power range (secondary): the catalog's figure must lie in it
PLATFORM_FACTS: list[tuple[str, int, str, float, float, str]] = [
    ("dgx-h100", 8, "max", 10.2, 10.2, "gpu_specs.md: DGX H100 / DGX H200, 10.2 kW max"),
    ("dgx-h200", 8, "max", 10.2, 10.2, "gpu_specs.md: DGX H100 / DGX H200, 10.2 kW max"),
    ("dgx-b200", 8, "max", 14.3, 14.3,
     "gpu_specs.md and infrastructure.md: DGX B200, 14.3 kW max, 10 RU"),
    ("dgx-b300", 8, "max", 14.5, 14.5, "gpu_specs.md: DGX B300, 14.5 kW (secondary)"),
    ("gb200-nvl72", 72, "max", 120, 120, "gpu_specs.md: GB200 NVL72, ~120 kW per rack"),
    ("gb300-nvl72", 72, "range", 132, 140,
     "infrastructure.md: GB300 NVL72 rack, about 132-140 kW (8 x 33 kW shelves; secondary)"),
    ("dell-xe9680", 8, "budget", 5.6, 5.6, "gpu_specs.md: XE9680 GPU budget 5.6 kW (H100/H200)"),
    ("dell-xe9680-mi300x", 8, "budget", 6.0, 6.0, "gpu_specs.md: XE9680 GPU budget 6.0 kW (MI300X)"),
    ("dell-xe9680-gaudi3", 8, "budget", 7.2, 7.2, "gpu_specs.md: XE9680 GPU budget 7.2 kW (Gaudi 3)"),
    ("dell-xe9685l", 8, "budget", 8.0, 8.0, "gpu_specs.md: XE9685L 8x B200, 8 kW GPU budget"),
    ("dell-xe9780", 8, "budget", 8.8, 8.8, "gpu_specs.md: XE9780 air, GPU budget 8.8 kW (B300)"),
    ("dell-xe9780-b200", 8, "budget", 8.0, 8.0,
     "gpu_specs.md: XE9780 also takes B200 (HGX B200: up to 1 kW per GPU, 8 kW for 8)"),
    ("dell-xe9785l", 8, "budget", 11.2, 11.2, "gpu_specs.md: XE9785(L) GPU budget 11.2 kW (MI355X)"),
    ("dell-xe7745", 8, "budget", 4.8, 4.8, "gpu_specs.md: XE7745 8x 600 W PCIe, budget 4.8 kW"),
    ("dell-r760xa", 4, "budget", 1.4, 1.4, "gpu_specs.md: R760xa up to 4 double-width cards "
     "(power not found; 4 x 350 W cards)"),
]


def platform_fact_findings(cat: Catalog) -> list[str]:
    out = []
    for pid, per_node, kind, low, high, source in PLATFORM_FACTS:
        if pid not in cat.platforms:
            out.append(f"MISMATCH {pid}: not in the catalog; reference {source}")
            continue
        plat = cat.platforms[pid]
        where = (f"{pid}: catalog {plat.gpus_per_node} GPUs, {plat.node_power_kw} kW; "
                 f"reference {source}")
        kw = plat.node_power_kw
        if plat.gpus_per_node != per_node or not (
                low <= kw <= high if kind in ("max", "range") else kw > low):
            out.append(f"MISMATCH {where}")
    return out


# Rack units and networks per node the reference states (platform, rack units or None,
# north-south NICs x Gb/s, east-west NICs x Gb/s or None, source). North-south per the NVIDIA
# Enterprise RAs (infrastructure.md): 2 x 400 GbE for B300 nodes, 2 x 200 GbE for
# H100/H200/B200 nodes.
INFRA_FACTS: list[tuple[str, int | None, tuple[int, int], tuple[int, int] | None, str]] = [
    ("dgx-b200", 10, (2, 200), (8, 400), "infrastructure.md: DGX B200 10 RU, 8 x ConnectX-7 400 Gb/s"),
    ("dgx-h100", None, (2, 200), None, "infrastructure.md: Enterprise RA, H100 north-south"),
    ("dgx-h200", None, (2, 200), None, "infrastructure.md: Enterprise RA, H200 north-south"),
    ("dell-xe9680", 6, (2, 200), None, "gpu_specs.md: XE9680 6U; Enterprise RA H100/H200"),
    ("dell-xe9685l", 4, (2, 200), None, "gpu_specs.md: XE9685L 4U; Enterprise RA B200"),
    ("dgx-b300", None, (2, 400), None, "infrastructure.md: Enterprise RA, B300 north-south"),
    ("dell-xe9780", 10, (2, 400), None, "gpu_specs.md: XE9780 air 10U; Enterprise RA B300"),
    ("dell-xe9780-b200", 10, (2, 200), None, "gpu_specs.md: XE9780 air 10U; Enterprise RA B200"),
    ("dell-xe7745", 4, (2, 200), None, "gpu_specs.md: XE7745 4U"),
]


def infra_findings(cat: Catalog) -> list[str]:
    out = []
    assert cat.infrastructure is not None
    for pid, units, front, fabric, source in INFRA_FACTS:
        if pid not in cat.infrastructure.platforms:
            out.append(f"MISMATCH {pid}: not in the catalog; reference {source}")
            continue
        rack = cat.infrastructure.platforms[pid]
        ours = (rack.rack_units, (rack.frontend_nics, rack.frontend_gbps),
                (rack.fabric_nics, rack.fabric_gbps))
        if (units not in (None, ours[0]) or ours[1] != front
                or fabric not in (None, ours[2])):
            out.append(f"MISMATCH {pid}: catalog {ours}; reference {source}")
    return out


def all_findings(folder: Path = DATA) -> list[str]:
    cat = load_catalog()
    return (gpu_findings(cat, folder) + price_findings(cat, folder) + platform_findings(cat)
            + platform_fact_findings(cat) + infra_findings(cat))


# prices.csv hardware rows priced per GPU -> gpus.yaml id (used cards left out)
HARDWARE_IDS = {"H100 SXM GPU": "h100-sxm", "H100 GPU": "h100-sxm", "H200 SXM GPU": "h200-sxm",
                "B200 GPU": "b200", "MI300X GPU": "mi300x"}


def _year(date: str | None) -> str:
    found = re.search(r"20\d\d", date or "")
    return found.group(0) if found else "no date"


def _provider(name: str) -> str:
    """'Lambda Inference' -> 'lambda', 'NVIDIA (SemiAnalysis est.)' -> 'nvidia'."""
    return re.split(r"[\s(/]", name.strip().lower())[0]


def price_rows(folder: Path = DATA) -> list[dict[str, str]]:
    with (folder / "prices.csv").open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _family(label: str) -> str:
    """'H100 SXM GPU' and 'h100-nvl' -> 'h100': a price row names a GPU family, not always
    the form factor (the price must match as well)."""
    return re.sub(r"[^a-z0-9]", "", re.split(r"[\s-]", label.strip().lower())[0])


def _dated(ours: str | None, theirs: str) -> bool:
    """The catalog's date is the reference's (its date column, or a date its notes give):
    the same YYYY-MM(-DD); within a coarser period the reference gives ('2026 (mid)',
    '2026-Q1', '2025-2026'); or both undated (a snapshot)."""
    if ours is None:
        return not re.match(r"\d{4}-\d\d", theirs)
    if str(ours) in theirs:
        return True
    coarse = re.match(r"(\d{4})(?: \(mid\)|-[QH]\d|-(\d{4}))?(?:\s|$)", theirs)
    return coarse is not None and any(y and y in str(ours) for y in coarse.groups())


def _offers(rows: list[dict[str, str]], specs: list[dict[str, str]], gid: str
            ) -> list[tuple[float, str, str]]:
    """(USD per GPU-hour, date, provider) of every reference cloud offer for a GPU family."""
    out = [(float(r["price_per_gpu_hour"]), f"{r['date']} {r['notes']}", r["provider"])
           for r in rows if r["category"] == "cloud_gpu_hour" and r["price_per_gpu_hour"]
           and _family(r["item"]) == _family(gid)]
    for row in specs:  # gpu_specs.csv cloud columns: SkyPilot snapshots, undated
        if GPU_IDS[row["gpu"]] == gid:
            for n in ("cloud1", "cloud2"):
                v = RefValue(row[f"{n}_usd_per_gpu_hr"])
                if v.low is not None:
                    out.append((v.low, row[f"{n}_source"], row[f"{n}_instance"].split()[0]))
    return out


def price_findings(cat: Catalog, folder: Path = DATA) -> list[str]:
    rows, specs = price_rows(folder), gpu_rows(folder)
    out = []
    # purchase price per GPU: gpu_specs.csv's estimate or a prices.csv hardware row
    for gid, gpu in cat.gpus.items():
        if gpu.price_usd is None:
            continue
        refs = [(RefValue(r["price_usd_estimate"]), r["price_source_year"]) for r in specs
                if GPU_IDS[r["gpu"]] == gid and RefValue(r["price_usd_estimate"]).low]
        refs += [(RefValue(r["price"]), r["date"]) for r in rows if r["category"] == "hardware"
                 and HARDWARE_IDS.get(r["item"]) == gid]
        where = f"{gid}.price_usd {gpu.price_usd:g} ({gpu.price_date})"
        if not refs:
            out.append(f"flagged {where}: not in the reference; catalog source "
                       f"{gpu.price_source!r}")
        elif not any(v.holds(gpu.price_usd) for v, _ in refs):
            out.append(f"MISMATCH {where}: reference {[(v.low, v.high, d) for v, d in refs]}")
        elif not any(v.holds(gpu.price_usd) and _year(gpu.price_date) in d for v, d in refs):
            out.append(f"MISMATCH {where}: reference dates {[d for _, d in refs]}")
    # cloud offers: price per GPU-hour and date
    for gid, tiers in cat.prices.cloud.items():
        offers = _offers(rows, specs, gid)
        for tier, o in tiers.items():
            where = f"{gid}.{tier} {o.usd_per_gpu_hour:g} USD/GPU-h ({o.date}, {o.offer})"
            said = f"{o.offer} {o.source}".lower()
            same = [r for r in offers if abs(r[0] / o.usd_per_gpu_hour - 1) <= REL
                    and _provider(r[2]) in said]
            if not same:
                kind = "flagged" if flags(f"price {o.offer}. price {o.source}",
                                         "price_usd") else "MISMATCH"
                out.append(f"{kind} {where}: no reference offer at that price")
            elif not any(_dated(o.date, d) for _, d, _ in same):
                out.append(f"MISMATCH {where}: reference dates {[d for _, d, _ in same]}")
    # hosted-API token prices: input and output per million tokens, date
    for mid, a in cat.prices.api.items():
        mine = [r for r in rows if r["category"] == "api_tokens" and r["item"].lower() == mid
                and _provider(r["provider"]) in a.provider.lower()]
        ins = {(float(r["price"]), r["date"]) for r in mine if r["tier"] == "serverless_input"}
        outs = {(float(r["price"]), r["date"]) for r in mine if r["tier"] == "serverless_output"}
        if (a.input_usd_per_million, a.date) not in ins or (
                a.output_usd_per_million, a.date) not in outs:
            out.append(f"MISMATCH api {mid}: {a.input_usd_per_million}/"
                       f"{a.output_usd_per_million} ({a.date}) not a reference row")
    return out
