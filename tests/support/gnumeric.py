"""Recalculate .xlsx workbooks with Gnumeric (``ssconvert``), a second spreadsheet engine.

LibreOffice is not the only reader a workbook meets. Gnumeric shares no code with it, so a
formula that only works because of a LibreOffice quirk shows up here. ``ssconvert --recalc
in.xlsx out.xlsx`` loads the file, recalculates every formula and writes an .xlsx whose
cached values are Gnumeric's (without ``--recalc`` the cached values are copied unchanged:
tests/test_workbook_consumers.py keeps a control that shows the difference).

Missing ssconvert is an error (``RuntimeError`` with an install hint), never a skip.
Measured notes: docs/libreoffice-findings.md ("Gnumeric").
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["GnumericError", "recalculate", "ssconvert_path"]

INSTALL_HINT = (
    "Gnumeric's ssconvert is required to check workbooks with a second spreadsheet engine but "
    "was not found on PATH. Install it, e.g. on Debian/Ubuntu: `apt-get install -y "
    "--no-install-recommends gnumeric` (scripts/setup.sh does)."
)
DEFAULT_TIMEOUT_S = 120.0


class GnumericError(RuntimeError):
    """ssconvert failed, timed out, or wrote no output."""


def ssconvert_path() -> str:
    """Absolute path of ``ssconvert``; ``RuntimeError`` with an install hint if absent."""
    found = shutil.which("ssconvert")
    if not found:
        raise RuntimeError(INSTALL_HINT)
    return found


def recalculate(path: Path, out: Path, *, recalc: bool = True,
                timeout: float = DEFAULT_TIMEOUT_S) -> Path:
    """Write ``out`` (.xlsx), ``path`` as Gnumeric recalculates it; ``recalc=False`` only for
    the control that shows recalculation matters."""
    exe = ssconvert_path()
    out.unlink(missing_ok=True)
    cmd = [exe, *(["--recalc"] if recalc else []), "--export-type=Gnumeric_Excel:xlsx2",
           str(path), str(out)]
    with tempfile.TemporaryDirectory(prefix="llmsizer-gnumeric-") as home:
        env = dict(os.environ, HOME=home)  # no user settings read or written
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                                  stdin=subprocess.DEVNULL, check=False)
        except subprocess.TimeoutExpired as exc:
            raise GnumericError(f"ssconvert timed out after {timeout:g} s: {path}") from exc
    if proc.returncode != 0 or not out.is_file():
        raise GnumericError(f"ssconvert exit status {proc.returncode}, no {out}\n"
                            f"command: {' '.join(cmd)}\nstdout:\n{proc.stdout}\n"
                            f"stderr:\n{proc.stderr}")
    return out
