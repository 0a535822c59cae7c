"""scripts/setup.sh waits for another apt process's lock instead of aborting."""

from __future__ import annotations

import re
from pathlib import Path

SETUP = Path(__file__).resolve().parents[1] / "scripts" / "setup.sh"


def test_every_apt_call_waits_for_the_dpkg_lock() -> None:
    text = SETUP.read_text(encoding="utf-8")
    # join continued lines so an option on the next line still counts
    lines = text.replace("\\\n", " ").splitlines()
    calls = [ln for ln in lines if re.search(r"\bapt-get\b", ln) and not ln.lstrip().startswith("#")]
    assert len(calls) >= 2, calls  # update and install
    waits = re.search(r"apt_wait=\((.*)\)", text)
    assert waits is not None and "DPkg::Lock::Timeout=600" in waits.group(1)
    for call in calls:
        assert '"${apt_wait[@]}"' in call, f"apt-get without the lock timeout: {call.strip()}"
