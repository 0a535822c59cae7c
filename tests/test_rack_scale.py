"""Rack-scale platforms and the GPUs added for them (issue 23 item 3): GB300 and its NVL72
rack, GH200 with 144 GB HBM3e, and the NVLink domain as a platform property that bounds the
tensor- and expert-parallel groups the search offers.

Numbers are pinned to the NVIDIA Blackwell Ultra datasheet (GB300 NVL72 column, per GPU,
dense, as tabulated by Verda) and the NVIDIA GH200 datasheet (HBM3e bin).
"""

from __future__ import annotations

import pytest

from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.search import TP_DEGREES, fast_group


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def test_gb300_datasheet(cat):
    """Blackwell Ultra datasheet, GB300 NVL72, per GPU dense: FP4 15 PF (printed dense, not
    half of 20), FP8 5 PF, BF16 2.5 PF, INT8 0.165 POPS, 279 GB, 8 TB/s, 1,400 W; NVLink 5 at
    1.8 TB/s bidirectional = 900 GB/s one direction."""
    g = cat.gpu("gb300")
    assert (g.memory_gb, g.bandwidth_tb_s, g.tdp_w) == (279, 8.0, 1400)
    assert (g.bf16_tflops, g.fp8_tflops, g.fp4_tflops, g.int8_tops) == (2500, 5000, 15000, 165)
    assert g.link_gb_s == 900
    # the rack's 72 GPUs: 1,080 PF dense FP4 and 576 TB/s, as the datasheet's rack column
    assert 72 * g.fp4_tflops / 1000 == pytest.approx(1080)
    assert 72 * g.bandwidth_tb_s == pytest.approx(576)


def test_gb300_price_is_a_flagged_estimate(cat):
    """No list price exists and the reference prices have none: the catalog carries a derived
    estimate (3.5M USD rack midpoint less the 580k base, over 72 GPUs) and says so."""
    g, rack = cat.gpu("gb300"), cat.platform("gb300-nvl72")
    assert g.price_usd == pytest.approx((3_500_000 - rack.base_price_usd) / 72, rel=0.02)
    assert g.price_source and g.price_source.startswith("ESTIMATE")


def test_gb300_is_not_b300(cat):
    """Same silicon, different bin: HGX B300 is 270 GB at 7.7 TB/s, 14 PF FP4, 1,100 W."""
    b, gb = cat.gpu("b300"), cat.gpu("gb300")
    assert (b.memory_gb, b.bandwidth_tb_s, b.fp4_tflops, b.tdp_w) == (270, 7.7, 14000, 1100)
    assert gb.memory_gb > b.memory_gb and gb.fp4_tflops > b.fp4_tflops


def test_gh200_144gb_datasheet(cat):
    """GH200 datasheet: the HBM3e bin has 144 GB at 4.9 TB/s, the HBM3 bin 96 GB at 4 TB/s;
    Hopper compute as H100 SXM (BF16 1,979 / FP8 3,958 TF sparse, halved)."""
    g, g96 = cat.gpu("gh200-hbm3e"), cat.gpu("gh200")
    assert (g.memory_gb, g.bandwidth_tb_s) == (144, 4.9)
    assert (g96.memory_gb, g96.bandwidth_tb_s) == (96, 4.0)
    assert g.bf16_tflops == pytest.approx(1979 / 2, abs=0.5)
    assert g.fp8_tflops == pytest.approx(3958 / 2, abs=0.5)
    assert g.fp4_tflops is None
    assert cat.platform(g.default_platform).gpus == ["gh200-hbm3e"]


def test_labels_name_the_right_bin(cat):
    """Benchmark labels find the new entries, and the 96 GB and 144 GB GH200 bins apart."""
    from llmsizer.model.catalog import LabelIndex

    idx = LabelIndex(cat)
    assert idx.gpu("GB300 NVL72") == "gb300"
    assert idx.gpu("GH200 144GB") == "gh200-hbm3e"
    assert idx.gpu("GH200 96GB") == "gh200"


def test_nvlink_domain_per_platform(cat):
    """8 for HGX/DGX boards, 4 for the 4-GPU HGX board, 72 for NVL72 racks, 1 over PCIe."""
    p = cat.platforms
    assert p["dgx-h100"].nvlink_domain == 8 and p["dgx-b200"].nvlink_domain == 8
    assert p["dell-xe8640"].nvlink_domain == 4
    assert p["gb200-nvl72"].nvlink_domain == 72 and p["gb300-nvl72"].nvlink_domain == 72
    assert p["gb300-nvl72"].gpus_per_node == 72
    assert p["dell-xe7745"].nvlink_domain == 1 and p["gh200-hbm3e-mgx-1"].nvlink_domain == 1
    for pid, plat in p.items():
        assert plat.nvlink_domain <= plat.gpus_per_node, pid


def test_parallel_groups_up_to_the_domain(cat):
    """A TP/EP group reaches the NVLink domain on a rack (72) and stays within the node's
    fast link elsewhere (8 on HGX, the GPU's bridge/PCIe limit on PCIe servers)."""
    assert fast_group(cat, "gb300", "gb300-nvl72") == 72
    assert fast_group(cat, "gb200", "gb200-nvl72") == 72
    assert fast_group(cat, "h100-sxm", "dgx-h100") == 8
    assert fast_group(cat, "h100-sxm", "dell-xe8640") == 4
    assert fast_group(cat, "l40s", "dell-xe7745") == cat.gpu("l40s").max_tp
    assert fast_group(cat, "gh200-hbm3e", "gh200-hbm3e-mgx-1") == 1


def _choices(cat, gpu, model, **hw):
    from llmsizer.inputs.loader import load_from_text
    from llmsizer.sizing.search import choices

    text = f"""schema_version: 1
account: {{name: Acme, currency: USD}}
workloads:
  - name: chat
    model: {model}
    concurrent_users: 100
    prompt_tokens: 1000
    output_tokens: 500
    targets: {{tokens_per_s_per_user: 30}}
hardware:
  gpus: [{gpu}]
  weight_precisions: [fp4]
"""
    for key, value in hw.items():
        text += f"  {key}: {value}\n"
    acc = load_from_text(text, "rack.yaml", cat)
    w = acc.req.workloads[0]
    return choices(acc.req, w, cat, cat.models[w.model])


def test_wide_expert_parallel_when_stated_on_a_rack(cat):
    """MoE on an NVL72 rack with tensor_parallel [16, 32, 72]: each group is tried plain, with
    expert parallelism and with attention data-parallel; an 8-GPU board only as expert
    parallelism across whole nodes; the default list stays 1-8 (the engine batch cap is per
    replica)."""
    rack = _choices(cat, "gb300", "deepseek-r1", tensor_parallel="[16, 32, 72]")
    assert {(c.tp, c.ep, c.adp) for c in rack} == {
        (n, ep, adp) for n in (16, 32, 72) for ep, adp in ((1, 1), (n, 1), (n, n))}
    # B200 boards: 8 GPUs of NVLink; past that only whole nodes of expert parallelism over the
    # network, on the platform whose network per GPU is stated (DGX B200)
    hgx = _choices(cat, "b200", "deepseek-r1", tensor_parallel="[16, 32, 72]")
    assert {(c.platform, c.tp, c.ep, c.adp) for c in hgx} == {
        ("dgx-b200", n, n, n) for n in (16, 32, 72)}
    assert max(c.tp for c in _choices(cat, "gb300", "deepseek-r1")) == max(TP_DEGREES)


def test_stated_degree_past_the_domain_is_not_tried(cat):
    """tensor_parallel: [16] is tried on a rack, not on an 8-GPU board."""
    assert {c.tp for c in _choices(cat, "gb300", "llama-3.3-70b", tensor_parallel="[16]")} == {16}
    assert not _choices(cat, "b200", "llama-3.3-70b", tensor_parallel="[16]")


def test_catalog_command_shows_the_nvlink_domain():
    """`llmsizer catalog platforms` lists each platform's NVLink domain (72 on the racks)."""
    import io

    from rich.console import Console

    from llmsizer.documents.textreport import print_catalog

    out = io.StringIO()
    cat = load_catalog()
    print_catalog("platforms", cat.platforms, Console(file=out, width=200))
    text = out.getvalue()
    assert "NVLink" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("gb300-nvl72"))
    assert row.split()[-4:-2] == ["72", "72"]  # GPUs per node, NVLink domain
