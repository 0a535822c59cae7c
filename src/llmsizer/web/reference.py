"""Reference pages: the catalog's GPUs, models, platforms and dated prices with their
sources, and the estimate page (one configuration: batch and context sliders, TTFT, ITL,
throughput and the roofline chart), all from the catalog and the engine the CLI uses."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from ..base.errors import LlmsizerError
from ..documents.charts import PHONE_WIDTH_IN
from ..documents.proposal.format import Formatter, svg_image
from ..documents.roofline import roofline_chart
from ..model.calculations import INPUTS
from ..model.expr import Value
from ..sizing.costs import tier_words
from ..sizing.debugger import roofline
from ..sizing.engine import estimate
from .fields import COST_FIELDS
from .render import display, page
from .service import catalog

router = APIRouter()

KINDS = ("gpus", "models", "platforms", "prices")
# the catalog's bill-of-materials extras by the words of the form's cost fields they feed
# (the network's prices per port feed no form field: their words are the calculations' inputs')
EXTRA_WORDS = {f.key: f.label for f in COST_FIELDS} | {
    i.name: i.label for i in INPUTS
    if i.name in ("network_per_fabric_port", "network_per_frontend_gbps")}


@router.get("/catalog/{kind}", response_class=HTMLResponse)
def catalog_page(request: Request, kind: str) -> HTMLResponse:
    if kind not in KINDS:
        return page(request, "problem.html.j2", 404,
                    message=f"no catalog page {kind!r}; there are {', '.join(KINDS)}")
    return page(request, "catalog.html.j2", kind=kind, catalog=catalog(), kinds=KINDS,
                tier_words=tier_words, usd=Formatter("USD"), extra_words=EXTRA_WORDS)


# the estimate page's terms: the proposal's glossary entries it uses, then the roofline's own
# words, which the proposal has no chart for (the page used them with no meaning given)
ESTIMATE_TERMS = ("TTFT", "Inter-token latency", "Tensor parallelism (TP)",
                  "BF16, FP16, FP8, FP4, INT8, INT4, MXFP4", "KV cache", "Batch", "Decode")
ROOFLINE_TERMS = (
    ("Roofline", "A chart of the computing speed a GPU can reach (TFLOP/s, trillions of "
                 "floating-point operations a second) against the arithmetic intensity of the "
                 "work: the roof is the lower of two ceilings, the memory bandwidth times the "
                 "intensity and the GPU's peak compute."),
    ("Arithmetic intensity (FLOP per byte)", "The floating-point operations a decode step does "
     "for each byte it reads from GPU memory (the weights, once for the whole batch, and each "
     "sequence's KV cache): a larger batch does more work for the same weights read."),
    ("Ridge point", "The intensity where the two ceilings meet: the GPU's peak TFLOP/s divided "
                    "by its memory bandwidth. Left of it a step waits on memory (bound by "
                    "memory bandwidth), right of it on compute."),
    ("Operating point", "This configuration's decode step at its batch: its intensity and the "
                        "TFLOP/s per GPU it reaches in the sizing model."),
)


@dataclass(frozen=True)
class Estimate:
    """The estimate form's settings (the CLI's ``estimate`` options)."""

    model: str = "llama-3.1-70b"
    gpu: str = "h200-sxm"
    tp: int = 1
    weights: str = "fp8"
    kv: str = "fp8"
    prompt: int = 1024
    output: int = 128
    batch: int = 16


def _settings(request: Request) -> Estimate:
    q = request.query_params
    d = Estimate()

    def num(key: str, default: int, lo: int, hi: int) -> int:
        try:
            return max(lo, min(hi, int(q.get(key, default))))
        except ValueError:
            return default

    return Estimate(model=q.get("model", d.model), gpu=q.get("gpu", d.gpu),
                    tp=num("tp", d.tp, 1, 72), weights=q.get("weights", d.weights),
                    kv=q.get("kv", d.kv), prompt=num("prompt", d.prompt, 1, 2_000_000),
                    output=num("output", d.output, 1, 1_000_000),
                    batch=num("batch", d.batch, 1, 100_000))


def _figures(s: Estimate) -> tuple[dict[str, float | str] | None, tuple[Markup, Markup] | None,
                                   str | None]:
    env: dict[str, Value] = {}
    model = catalog().models.get(s.model)
    if model is not None and s.prompt + s.output > model.max_context:
        # refused as the command line and a requirements file refuse it: figures for a
        # request the model cannot hold would describe no service that can run
        return None, None, (f"{display(s.model)} serves at most {model.max_context:,} tokens "
                            f"of context; this request needs {s.prompt + s.output:,} (prompt "
                            f"{s.prompt:,} + answer {s.output:,}): shorten them, or choose a "
                            "model with a longer context")
    try:
        out = estimate(model_id=s.model, gpu=s.gpu, tp=s.tp, replicas=1,
                       weight_precision=s.weights, kv_precision=s.kv, prompt_tokens=s.prompt,
                       output_tokens=s.output, concurrency=s.batch, with_env=env)
    except LlmsizerError as exc:
        return None, None, str(exc)
    if out["max_sequences_by_memory"] == 0:
        # the catalog's names, as the form's lists show them (never the YAML keys)
        return out, None, (f"{display(s.model)} and one request's KV cache do not fit "
                           f"{s.tp} × {display(s.gpu)} with {display(s.weights)} weights: "
                           "raise the TP, lower the precision or shorten the context")
    from .service import CHARTS

    # drawn twice, as the results' charts: at the page's width, and at a phone's (shown below
    # 640 px, app.css): at 390 px the 576 px chart scrolled sideways, its legend cut
    alt = "Roofline: arithmetic intensity against the compute and bandwidth ceilings"
    line = roofline(env)
    with CHARTS:  # one matplotlib figure per chart kind and process (documents/charts.py)
        chart = (svg_image(roofline_chart(line, f"batch {s.batch}"), alt),
                 svg_image(roofline_chart(line, f"batch {s.batch}", PHONE_WIDTH_IN), alt))
    return out, chart, None


@router.get("/estimate", response_class=HTMLResponse)
def estimate_page(request: Request) -> HTMLResponse:
    s = _settings(request)
    out, chart, error = _figures(s)
    template = "_estimate.html.j2" if request.headers.get("hx-request") else "estimate.html.j2"
    return page(request, template, s=s, out=out, chart=chart, error=error, catalog=catalog(),
                terms=ESTIMATE_TERMS, roofline_terms=ROOFLINE_TERMS)
