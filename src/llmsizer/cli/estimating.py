"""``llmsizer estimate``: throughput and latency of one configuration, and what would fit
when it does not."""

from __future__ import annotations

import json
from collections.abc import Callable

import click

from .errors import _clean_errors, _echo
from .params import _Choice, _FiniteRange, _Whole


@click.command(short_help="Throughput and latency of one configuration (no targets or cost).")
@click.option("--model", "model_id", required=True,
              help="Catalog model id (see `llmsizer catalog models`).")
@click.option("--gpu", required=True, help="Catalog GPU id (see `llmsizer catalog gpus`).")
@click.option("--tp", "tp_text", type=_Choice(["1", "2", "4", "8", "16", "32", "64", "72"]), default="1",
              show_default=True,
              help="Tensor-parallel degree: GPUs that hold one copy of the model (as "
                   "hardware.tensor_parallel allows: 1, 2, 4 or 8; 16 to 72 inside an NVL72 "
                   "rack's NVLink domain; up to the GPU's max_tp).")
@click.option("--replicas", type=_Whole(1, 100_000), default=1, show_default=True,
              help="Copies of the model; scales output_tokens_per_s.")
@click.option("--weights", "weight_precision", default="fp8", show_default=True,
              help="Weight precision: bf16, fp16, fp8, int8, int4, fp4 or mxfp4.")
@click.option("--kv", "kv_precision", default="fp8", show_default=True,
              help="KV-cache precision: bf16, fp16, fp8, int8, int4, fp4 or mxfp4.")
@click.option("--prompt-tokens", type=_Whole(1, 2_000_000), required=True,
              help="Input tokens per request.")
@click.option("--output-tokens", type=_Whole(1, 1_000_000), required=True,
              help="Generated tokens per request.")
@click.option("--concurrency", type=_Whole(1, 100_000),
              help="Users per replica (1-100,000), each sending the next request as its "
                   "answer ends, as benchmarks measure; those beyond what memory holds wait "
                   "for a slot, in the TTFT.")
@click.option("--offline", is_flag=True, help="No users: a batch job, as many requests at once "
              "as the KV-cache memory and the engine's batch cap allow.")
@click.option("--mbu", type=_FiniteRange(0.05, 1, min_open=True),
              help="Override bandwidth efficiency (share of peak memory bandwidth, over 0.05, "
                   "at most 1; as policy.mbu).")
@click.option("--mfu", type=_FiniteRange(0.05, 1, min_open=True),
              help="Override compute efficiency (share of peak tensor FLOPS, over 0.05, at most 1; "
                   "as policy.mfu).")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@_clean_errors
def estimate(model_id: str, gpu: str, tp_text: str, replicas: int, weight_precision: str,
             kv_precision: str, prompt_tokens: int, output_tokens: int,
             concurrency: int | None, offline: bool, mbu: float | None, mfu: float | None,
             as_json: bool) -> None:
    """Throughput and latency of one configuration (no targets, no cost).

    Exits 3, saying why and what would fit, when the model and one request's KV cache do
    not fit the GPUs' memory.
    """
    from ..inputs.options import estimate_problems, tp_problem
    from ..sizing.engine import estimate as run
    from ..sizing.engine import estimate_refusal

    if found := estimate_problems(model_id, gpu, weight_precision, kv_precision, concurrency,
                                  offline):  # every one at once, as a file's problems
        raise click.UsageError(found)
    if problem := tp_problem(gpu, int(tp_text)):
        raise click.BadParameter(problem, param_hint="'--tp'")
    tp = int(tp_text)
    if refusal := estimate_refusal(model_id, prompt_tokens, output_tokens):
        raise click.BadParameter(refusal[1], param_hint=f"'{refusal[0]}'")

    def fits(gpu_: str, tp_: int, weights: str) -> dict[str, float | str]:
        return run(model_id=model_id, gpu=gpu_, tp=tp_, replicas=replicas,
                   weight_precision=weights, kv_precision=kv_precision,
                   prompt_tokens=prompt_tokens, output_tokens=output_tokens,
                   concurrency=concurrency, mbu=mbu, mfu=mfu)

    out = fits(gpu, tp, weight_precision)
    if out["max_sequences_by_memory"] == 0:
        _not_fitting(out, fits, model_id, gpu, tp, weight_precision)
    if as_json:
        _echo(json.dumps(out, indent=2))
    else:
        for label, shown in _lines(out):
            _echo(f"{label:32} {shown}")


# What the figures are called where the calculation list has no row for them (the list's own
# label and unit otherwise: one name per figure in the CLI, the workbook and the PDF).
_NAMED = {"output_tokens_per_s": ("Output tokens/s, all replicas", "tok/s"),
          "calibration_derating": ("Speed credited", "ratio"),
          "bound": ("Limited by", "")}


def _lines(out: dict[str, float | str]) -> list[tuple[str, str]]:
    """The figures under the calculation list's labels with their units, rounded as the PDF
    rounds them (review round 20: the CLI printed its JSON keys, "tpot_ms 25.04"): counts
    whole, latencies and speeds to what the model supports, sizes in GB to the PDF's digits."""
    from ..documents.proposal.format import Formatter
    from ..model.calculations import CALCULATIONS

    rows = {c.name: (c.label, c.unit) for c in CALCULATIONS if c.label and c.unit}
    fmt = Formatter("USD")
    lines = []
    for key, v in out.items():
        label, unit = _NAMED.get(key) or rows[key]
        if isinstance(v, str):
            shown = v
        elif key == "calibration_derating":
            # "1 (measured ...)" read as a count (review round 22)
            shown = ("all of the modelled speed (measured results cover this GPU, precision "
                     "and model class)" if v == 1
                     else f"{v:.2g} of the modelled speed (no measured results for this GPU, "
                          "precision or model class)")
        elif unit == "tok/s":
            shown = fmt.tok_s(v)
        elif unit == "B":
            shown = fmt.bytes(v)
        elif unit == "sequences":
            shown = fmt.count_of(v, "sequence")
        else:
            shown = fmt.unit(v, unit)
        lines.append((label, shown.replace("\N{NO-BREAK SPACE}", " ")))
    return lines


def _not_fitting(out: dict[str, float | str],
                 fits: Callable[[str, int, str], dict[str, float | str]],
                 model_id: str, gpu: str, tp: int, weights: str) -> None:
    """Raise the infeasible error for ``estimate``: why, and the nearest settings that fit."""
    from ..base.errors import InfeasibleError
    from ..model.catalog import load_catalog

    cat = load_catalog()
    limit = min(cat.gpu(gpu).max_tp, max(p.gpus_per_node for p in cat.platforms.values()
                                         if gpu in p.gpus))
    would: list[str] = []
    bigger = [t for t in (2, 4, 8, 16, 32, 64, 72) if tp < t <= limit]
    for t in bigger:
        if fits(gpu, t, weights)["max_sequences_by_memory"] != 0:
            would.append(f"--tp {t}")
            break
    smaller = ("fp8", "int4") if weights in ("bf16", "fp16") else ("int4",) if weights in (
        "fp8", "int8") else ()
    for prec in smaller:
        if fits(gpu, tp, prec)["max_sequences_by_memory"] != 0:
            would.append(f"--weights {prec}")
            break
    # the smallest catalog GPU with more memory that holds it at the same TP
    others = sorted((g.memory_gb, key) for key, g in cat.gpus.items()
                    if g.memory_gb > cat.gpu(gpu).memory_gb and g.max_tp >= tp)
    for _, key in others:
        if fits(key, tp, weights)["max_sequences_by_memory"] != 0:
            would.append(f"--gpu {key}")
            break
    weights_gb, usable = float(out["weights_gb"]), float(out["usable_memory_gb"])
    kv_gb = float(out["kv_gb_per_request"])
    why = (f"{model_id} does not fit on {tp} × {gpu} with {weights} weights: the weights "
           f"({weights_gb:,.1f} GB) and one request's KV cache ({kv_gb:,.2f} GB) need more than "
           f"the {usable:,.1f} GB usable")
    fix = ("; it would fit with " + " or ".join(would)) if would else (
        "; no larger tensor-parallel group, lower precision or larger GPU in the catalog fits "
        "it: shorten the prompt or use a smaller model")
    raise InfeasibleError(why + fix)
