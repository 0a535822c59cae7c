"""Review round 25: the CLI used as a presales engineer would, on good inputs and broken ones
(a YAML with three mistakes in different fields, a missing file, a near-miss model name, a
folder with one bad account among good ones, a CSV that is not a results file). What a user
noticed first (the web's half: test_review_web_r25.py):

- an unknown model with a close guess ("did you mean llama-3.1-70b?") was followed by the
  catalog's 41 model ids, a 700-character line, twice that in `report`'s batch line; with a
  guess the message names the command that lists them (as `estimate --model` already did),
  the whole list only where nothing is close;
- `fidelity` on a CSV that is not a results file named the 15 columns twice ("header lacks
  column(s) source, model, ...; expected source, model, ...") and never what it found; a
  header with a few missing still names them;
- `estimate` with several bad options ran "(see 'llmsizer estimate --help')" on after the
  last one, as if part of the precision list; it has a line of its own;
- `fidelity`'s rows it could not read were listed "   1  isl is not a number ...", the
  format of the summary's counts per reason printed under them ("  27  GPU ... is not in
  the catalog"): each now reads "row 1: ...";
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = (ROOT / "inputs" / "example.yaml").read_text()


def _run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "llmsizer.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


def _three_mistakes(folder: Path, name: str = "acme.yaml") -> Path:
    """concurrent_users in words, a misspelt model, a headroom in percent: three fields."""
    text = EXAMPLE.replace("concurrent_users: 200", "concurrent_users: two hundred", 1)
    text = text.replace("model: llama-3.1-70b\n    concurrent_users: 100",
                        "model: lama-3.1-70b\n    concurrent_users: 100", 1)
    text = text.replace("headroom: 0.25", "headroom: 25", 1)
    path = folder / name
    path.write_text(text)
    return path


def test_a_near_miss_model_names_the_listing_command_not_every_model(tmp_path: Path) -> None:
    path = _three_mistakes(tmp_path)
    proc = _run("validate", path.name, cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert lines[0] == "error: acme.yaml: 3 problems:", lines
    (model,) = [line for line in lines if "workloads[1].model" in line]
    assert model == (
        "  acme.yaml:19:5: workloads[1].model: unknown model 'lama-3.1-70b': did you mean "
        "llama-3.1-70b? `llmsizer catalog models` lists them all (or the path of a Hugging "
        "Face config.json next to this file)")
    # it listed all 41: "The catalog's models: deepseek-r1, deepseek-v3, ..."
    assert "deepseek" not in proc.stderr and max(map(len, lines)) < 250, lines


def test_an_unknown_name_with_nothing_close_still_lists_the_catalog(tmp_path: Path) -> None:
    (tmp_path / "acme.yaml").write_text(EXAMPLE.replace("model: llama-3.1-70b\n",
                                                        "model: zzzz-qqqq\n", 1))
    proc = _run("validate", "acme.yaml", cwd=tmp_path)
    assert proc.returncode == 2
    assert "unknown model 'zzzz-qqqq'. The catalog's models: deepseek-r1, " in proc.stderr


def test_fidelity_on_another_csv_says_what_its_header_holds(tmp_path: Path) -> None:
    (tmp_path / "prices.csv").write_text("gpu,price_usd\nh100-sxm,25000\n")
    proc = _run("fidelity", "--summary", "prices.csv", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == (
        "error: prices.csv:1: is not a measured-results file: its header has gpu, price_usd "
        "(14 of the 15 columns missing); expected source, model, gpu, gpu_count, tp, "
        "precision_weights, "
        "precision_kv, isl, osl, concurrency, scenario, metric, value, unit, notes")


def test_fidelity_still_names_the_few_columns_a_header_lacks(tmp_path: Path) -> None:
    header = (ROOT / "tests" / "data" / "calibration_points.csv").read_text().splitlines()[0]
    (tmp_path / "short.csv").write_text(header.removesuffix(",value,unit,notes") + "\n")
    proc = _run("fidelity", "short.csv", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: short.csv:1: header lacks column(s) value, unit, "
                                  "notes; expected source, "), proc.stderr


def test_estimate_s_pointer_to_its_help_is_a_line_of_its_own(tmp_path: Path) -> None:
    proc = _run("estimate", "--model", "lama-3.1-70b", "--gpu", "h100", "--weights", "fp9",
                "--prompt-tokens", "500", "--output-tokens", "300", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert lines[0] == "error: 4 problems:", lines
    assert lines[-2].startswith("  --weights: unknown precision 'fp9': did you mean fp8? ")
    assert lines[-2].endswith("int4, int8, mxfp4"), lines[-2]
    assert lines[-1] == "(see 'python -m llmsizer.cli estimate --help')", lines


def test_fidelity_names_the_row_of_each_reason_unlike_the_counts(tmp_path: Path) -> None:
    lines = (ROOT / "tests" / "data" / "calibration_points.csv").read_text().splitlines()
    header = lines[0].split(",")
    bad = lines[1].split(",")
    bad[header.index("isl")] = "lots"
    (tmp_path / "points.csv").write_text("\n".join([lines[0], ",".join(bad), lines[2]]) + "\n")
    proc = _run("fidelity", "points.csv", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    at = out.index("1 row not interpreted (every reason):")
    assert out[at + 1] == "  row 1: isl is not a number of tokens: 'lots'", out[at:at + 3]
    # the summary's count per reason keeps its own form
    assert "    1  isl is not a number of tokens" in out, out[-6:]
