"""Recalculate .xlsx workbooks with a real spreadsheet engine (LibreOffice) for tests.

The product writes formulas WITH cached values (XlsxWriter ``value=``). LibreOffice
keeps cached values of OOXML files on load unless its profile says otherwise, so a
plain ``soffice --convert-to xlsx`` proves nothing. Every call here runs soffice with
a private, throw-away profile whose ``registrymodifications.xcu`` sets
``OOXMLRecalcMode`` (and ``ODFRecalcMode``) to 0 = "always recalculate on load".

Missing LibreOffice is an error (``RuntimeError``), never a skip: the tests that use
this module must fail on a machine that cannot check the workbook.

Measured behaviour of LibreOffice's formula engine: docs/libreoffice-findings.md.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import os
import shutil
import signal
import subprocess
import tempfile
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any, Literal

# openpyxl ships no type stubs; imported untyped so mypy --strict passes with or without
# types-openpyxl installed.
openpyxl: Any = importlib.import_module("openpyxl")

__all__ = [
    "LibreOfficeError",
    "RoundMode",
    "lo_add",
    "lo_approx_equal",
    "lo_compare",
    "lo_round",
    "lo_sub",
    "lo_sum",
    "lo_written",
    "read_values",
    "recalculate",
    "recalculated_values",
    "soffice_path",
    "to_pdf",
]

DEFAULT_TIMEOUT_S = 120.0

INSTALL_HINT = (
    "LibreOffice (soffice) is required to recalculate workbooks in tests but was not "
    "found on PATH. Install it, e.g. on Debian/Ubuntu: "
    "`apt-get install -y --no-install-recommends libreoffice-calc-nogui` "
    "(or set PATH so that `soffice` or `libreoffice` is found)."
)

# /org.openoffice.Office.Calc/Formula/Load: 0 = always recalculate, 1 = never, 2 = prompt.
_RECALC_XCU = """\
<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" \
xmlns:xs="http://www.w3.org/2001/XMLSchema" \
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">\
<prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">\
<prop oor:name="ODFRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"""

_XLSX_FILTER = "xlsx:Calc MS Excel 2007 XML"
_PDF_FILTER = "pdf:calc_pdf_Export"


class LibreOfficeError(RuntimeError):
    """soffice failed, timed out, or did not produce every expected output."""


def soffice_path() -> str:
    """Absolute path of the LibreOffice binary; ``RuntimeError`` with an install hint if absent."""
    for name in ("soffice", "libreoffice"):
        found = shutil.which(name)
        if found:
            return found
    raise RuntimeError(INSTALL_HINT)


def _write_profile(profile_dir: Path, *, force_recalc: bool) -> None:
    user = profile_dir / "user"
    user.mkdir(parents=True, exist_ok=True)
    if force_recalc:
        (user / "registrymodifications.xcu").write_text(_RECALC_XCU, encoding="utf-8")


def _run_soffice(
    convert_to: str,
    inputs: list[Path],
    outdir: Path,
    *,
    timeout: float,
    force_recalc: bool,
) -> subprocess.CompletedProcess[str]:
    """One soffice process, private profile, killed (whole process group) on timeout."""
    exe = soffice_path()
    with tempfile.TemporaryDirectory(prefix="llmsizer-lo-profile-") as tmp:
        profile = Path(tmp) / "profile"
        _write_profile(profile, force_recalc=force_recalc)
        cmd = [
            exe,
            f"-env:UserInstallation={profile.resolve().as_uri()}",
            "--headless",
            "--invisible",
            "--nologo",
            "--norestore",
            "--nodefault",
            "--nolockcheck",
            "--convert-to",
            convert_to,
            "--outdir",
            str(outdir),
            *(str(p) for p in inputs),
        ]
        env = dict(os.environ)
        env["HOME"] = tmp  # nothing of the caller's home (or a shared ~/.config) is touched
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,  # own process group: a timeout kills soffice.bin too
        )
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            raise LibreOfficeError(
                f"soffice timed out after {timeout:g} s converting {len(inputs)} file(s) "
                f"to {convert_to!r}: {[str(p) for p in inputs]}\n"
                f"stdout:\n{stdout}\nstderr:\n{stderr}"
            ) from None
        return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def _plan_outputs(paths: list[Path], outdir: Path, suffix: str) -> dict[Path, Path]:
    if not paths:
        raise ValueError("no input files given")
    outdir.mkdir(parents=True, exist_ok=True)
    plan: dict[Path, Path] = {}
    seen: dict[Path, Path] = {}
    for path in paths:
        src = Path(path).resolve()
        if not src.is_file():
            raise FileNotFoundError(f"workbook not found: {path}")
        out = (outdir / (src.stem + suffix)).resolve()
        if out == src:
            raise ValueError(
                f"output {out} would overwrite its input: use an outdir other than the input's folder"
            )
        if out in seen:
            raise ValueError(
                f"{seen[out]} and {src} would both be written to {out}: "
                "input file names (stems) must be unique in one call"
            )
        seen[out] = src
        plan[Path(path)] = out
    for out in plan.values():  # never mistake a stale output from an earlier run for a result
        out.unlink(missing_ok=True)
    return plan


def _convert(
    paths: list[Path],
    outdir: Path,
    convert_to: str,
    suffix: str,
    *,
    timeout: float,
    force_recalc: bool,
) -> dict[Path, Path]:
    plan = _plan_outputs(list(paths), Path(outdir), suffix)
    srcs = [Path(p).resolve() for p in plan]
    proc = _run_soffice(convert_to, srcs, Path(outdir).resolve(), timeout=timeout, force_recalc=force_recalc)
    missing = [str(src) for src, out in plan.items() if not out.is_file()]
    if proc.returncode != 0 or missing:
        raise LibreOfficeError(
            f"soffice exit status {proc.returncode}; no output for {len(missing)} of "
            f"{len(plan)} file(s): {missing}\ncommand: {' '.join(proc.args)}\n"
            f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
    return plan


def recalculate(
    paths: list[Path],
    outdir: Path,
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    force_recalc: bool = True,
) -> dict[Path, Path]:
    """Recalculate every workbook in ONE soffice call; return input path -> recalculated copy.

    Outputs are ``outdir/<stem>.xlsx`` (stems must be unique; outdir must not be an
    input's folder). Raises ``LibreOfficeError`` with soffice's output if it fails, times
    out, or leaves any output missing (soffice exits 0 even when a file fails to load).

    ``force_recalc=False`` leaves LibreOffice's default (keep cached values): it exists
    only for the control test that shows the forced mode matters. Do not use it in checks.
    """
    return _convert(paths, outdir, _XLSX_FILTER, ".xlsx", timeout=timeout, force_recalc=force_recalc)


def read_values(path: Path) -> dict[str, dict[str, object]]:
    """``{sheet: {cell_ref: cached value}}`` of every non-empty cell (openpyxl data_only)."""
    wb = openpyxl.load_workbook(path, data_only=True)
    try:
        values: dict[str, dict[str, object]] = {}
        for ws in wb.worksheets:
            sheet: dict[str, object] = {}
            for row in ws.iter_rows():
                for cell in row:
                    if cell.value is not None:
                        sheet[cell.coordinate] = cell.value
            values[ws.title] = sheet
        return values
    finally:
        wb.close()


def recalculated_values(
    path: Path, workdir: Path, *, timeout: float = DEFAULT_TIMEOUT_S
) -> dict[str, dict[str, object]]:
    """Recalculate one workbook and return ``{sheet: {cell_ref: value}}``.

    Values as openpyxl ``data_only=True`` reads them: numbers are ``int``/``float``,
    booleans ``bool``, text ``str``, errors the error string (e.g. ``'#DIV/0!'``).
    Empty cells are left out.
    """
    out = recalculate([Path(path)], Path(workdir), timeout=timeout)[Path(path)]
    return read_values(out)


def to_pdf(path: Path, outdir: Path, *, timeout: float = DEFAULT_TIMEOUT_S,
           force_recalc: bool = True) -> Path:
    """Render all sheets of a workbook to ``outdir/<stem>.pdf`` (recalculated first).

    ``force_recalc=False`` exports with a fresh default profile, as a user's LibreOffice
    does (cached values kept): tests/test_workbook_consumers.py checks that path, which
    once aborted with "Unspecified Application Error" (docs/libreoffice-findings.md)."""
    return _convert([Path(path)], Path(outdir), _PDF_FILTER, ".pdf", timeout=timeout,
                    force_recalc=force_recalc)[Path(path)]


# --------------------------------------------------------------------------------------
# Reference model of LibreOffice 7.4 ROUND / ROUNDUP / ROUNDDOWN (measured, see
# docs/libreoffice-findings.md). Pure Python, no soffice needed: the product's
# evaluator can be checked against it, and the harness tests check it against soffice.

RoundMode = Literal["nearest", "up", "down"]

_TWO_52 = 2.0**52


def _std_round(v: float) -> float:
    """C ``std::round``: half away from zero (v >= 0 here)."""
    r = math.floor(v)
    return r + 1.0 if v - r >= 0.5 else r


def _approx_value(v: float) -> float:
    """``rtl::math::approxValue``: v rounded to 15 significant digits, unless it is an
    integer or has at most 11 bits after the binary point."""
    a = abs(v)
    if a == 0.0 or not math.isfinite(a) or a.is_integer():
        return v
    frac_bits = a.as_integer_ratio()[1].bit_length() - 1
    if frac_bits <= 11:
        return v
    n = 14 - math.floor(math.log10(a))
    f = 10.0 ** abs(n)
    s = _std_round(a * f if n >= 0 else a / f)
    r = s / f if n >= 0 else s * f
    return math.copysign(r, v) if math.isfinite(r) else v


def _round_significant(a: float, digits: int) -> float:
    """``ROUNDSIG``-style rounding of a (> 0) to ``digits`` significant digits."""
    t = math.floor(_approx_value(math.log10(a))) + 1 - digits
    return _std_round(10.0**-t * a) * 10.0**t


def _rtl_round(a: float, digits: int, mode: RoundMode) -> float:
    """``rtl::math::round`` for a > 0."""
    if digits >= 0 and (a >= _TWO_52 or a.is_integer()):
        return a
    if digits > 0:
        # no more decimals than the binary precision holds
        digits = min(digits, 52 - (math.frexp(a)[1] - 1))
    f = 10.0 ** abs(digits)
    v = a if digits == 0 else (a * f if digits > 0 else a / f)
    if not math.isfinite(v):
        return a
    if v < _TWO_52:
        if mode == "up":
            v = float(math.ceil(_approx_value(v)))
        elif mode == "down":
            v = float(math.floor(_approx_value(v)))
        else:
            v = _std_round(_approx_value(v))
    if digits == 0:
        return v
    return v / f if digits > 0 else v * f


def lo_round(x: float, digits: float = 0, mode: RoundMode = "nearest") -> float:
    """LibreOffice 7.4 ``ROUND`` (mode "nearest"), ``ROUNDUP`` ("up", away from zero) and
    ``ROUNDDOWN`` ("down", toward zero) with an explicit ``digits`` argument.

    Measured rule (0 mismatches on ~3,000 noisy values, docs/libreoffice-findings.md):

    - ``digits`` is truncated toward zero (``2.9`` -> 2, ``-0.5`` -> 0).
    - ROUNDUP/ROUNDDOWN, when ``digits < 12`` and x is not an integer: first round |x|
      to 12 significant digits (half away from zero). So ``ROUNDUP(1.00000000001,0)``
      is 2 but ``ROUNDUP(1.000000000001,0)`` is 1, and ``ROUNDUP(12345678901234.5,0)``
      is 12345678901200.
    - then scale |x| by 10**digits, snap it to 15 significant digits (unless it has at
      most 11 fractional bits) and take ceil / floor / half-away-from-zero; scale back.
    - ``ROUND(x, 0)`` is plain half-away-from-zero on the raw double (no snapping).
    """
    d = int(digits)
    if x == 0.0 or not math.isfinite(x):
        return x
    a = abs(x)
    if mode == "nearest" and d == 0:
        r = _std_round(a)
    else:
        if mode != "nearest" and d < 12 and not a.is_integer():
            a = _round_significant(a, 12)
        r = _rtl_round(a, d, mode)
    return math.copysign(r, x) if r != 0.0 else 0.0


def lo_written(value: float) -> float:
    """The number LibreOffice writes to .xlsx for ``value``: 15 significant digits.

    LibreOffice rounds the shortest round-trip decimal (``repr``) half-up to 15
    significant digits, so compare a Python result with a recalculated cell as
    ``lo_written(py) == cell`` (or with a relative tolerance of 5e-15), never ``==``.
    """
    if value == 0.0 or not math.isfinite(value):
        return value
    dec = Decimal(repr(float(value)))
    quantum = Decimal(1).scaleb(dec.adjusted() - 14)
    return float(dec.quantize(quantum, rounding=ROUND_HALF_UP))


# --------------------------------------------------------------------------------------
# Reference model of LibreOffice 7.4 "approximate" arithmetic (measured): + and - snap a
# near-cancelling result to exactly 0, and = < > <> treat numbers within ~2^-48 relative
# as equal. * / ^ and functions are plain IEEE doubles (same as Python).

_E48 = 2.0**-48
_E44 = 2.0**-44
_TWO_53 = 2.0**53


def _representable_integer(v: float) -> bool:
    return v < _TWO_53 and v.is_integer()


def lo_approx_equal(a: float, b: float) -> bool:
    """``rtl::math::approxEqual``: the equality used by Calc's = <> < > and by + / -."""
    if a == b:
        return True
    if a == 0.0 or b == 0.0:
        return False
    d = abs(a - b)
    if not math.isfinite(d):
        return False
    a, b = abs(a), abs(b)
    if d > a * _E44 or d > b * _E44:
        return False
    if _representable_integer(d) and _representable_integer(a) and _representable_integer(b):
        return False
    return d < a * _E48 and d < b * _E48


def lo_add(a: float, b: float) -> float:
    """Calc ``a+b``: 0 when the operands (of opposite sign) cancel to ~2^-48 relative."""
    if ((a < 0.0 < b) or (b < 0.0 < a)) and lo_approx_equal(a, -b):
        return 0.0
    return a + b


def lo_sub(a: float, b: float) -> float:
    """Calc ``a-b``: ``=0.1*3-0.3`` is exactly 0 (Python: 5.55e-17)."""
    if ((a < 0.0 and b < 0.0) or (a > 0.0 and b > 0.0)) and lo_approx_equal(a, b):
        return 0.0
    return a - b


def lo_compare(a: float, b: float) -> int:
    """-1, 0, 1 as Calc's comparison operators see a and b (0: approximately equal)."""
    if lo_approx_equal(a, b):
        return 0
    return -1 if a - b < 0.0 else 1


def lo_sum(values: list[float]) -> float:
    """Calc ``SUM`` (``KahanSum``): Neumaier-compensated sum, except that the LAST
    non-zero addend is added with ``lo_add`` semantics (so ``SUM(1E16,1,-1E16)`` is 0).
    Zeros are skipped. ``SUM(0.1,0.2,0.3)`` is 0.6 exactly (Python ``sum``:
    0.6000000000000001)."""
    total = 0.0
    err = 0.0
    mem = 0.0
    for x in values:
        if x == 0.0:
            continue
        if mem == 0.0:
            mem = x
            continue
        t = total + mem
        if abs(total) >= abs(mem):
            err += (total - t) + mem
        else:
            err += (mem - t) + total
        total = t
        mem = x
    running = total + err
    if mem == 0.0:
        return running
    if ((mem < 0.0 < running) or (running < 0.0 < mem)) and lo_approx_equal(mem, -running):
        return 0.0
    t = total + mem
    if abs(total) >= abs(mem):
        err += (total - t) + mem
    else:
        err += (mem - t) + total
    return t + err
