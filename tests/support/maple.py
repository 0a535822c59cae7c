"""Maple Ridge Credit Union (tests/data/cad-l40s-rag-r21.yaml: a chat pool, an embedder and a
reranker on L40S in 4-slot PCIe servers, priced in CAD) and its N+1 variant: the same file with
``policy.survive_node_loss: true`` added, nothing else changed. One home for the variant that
tests/test_retrieval_followups_r23.py and tests/test_embed_spare_s24.py both size."""

from __future__ import annotations

from pathlib import Path

MAPLE = Path(__file__).resolve().parents[1] / "data" / "cad-l40s-rag-r21.yaml"
HEADROOM_LINE = "  headroom: 0.25\n"


def maple_with_node_loss(folder: Path) -> Path:
    """Write Maple Ridge with N+1 asked into ``folder``; return the file's path."""
    text = MAPLE.read_text(encoding="utf-8")
    # the one line the variant adds goes under the policy's headroom, which the file states once,
    # and the file must not ask for N+1 already (else the variant would not differ)
    assert text.count(HEADROOM_LINE) == 1 and "survive_node_loss" not in text
    path = folder / "maple-n1.yaml"
    path.write_text(text.replace(HEADROOM_LINE, HEADROOM_LINE + "  survive_node_loss: true\n"),
                    encoding="utf-8")
    return path
