"""Ctrl-C while Python and click import, before a command runs: exit 130 at once.

Only ``os`` and ``signal`` here: the command line installs this before anything heavier
(``llmsizer/cli/__init__.py``)."""

from __future__ import annotations

import os
import signal


def _interrupted_early(signum: int, frame: object) -> None:
    """Ctrl-C while Python and click import, before a command runs: nothing is written
    yet, so exit 130 at once instead of a traceback from inside an import."""
    os.write(2, b"interrupted\n")
    os._exit(130)


def _install_early_interrupt() -> None:
    """The first thing the command line does: the imports after it take 50-300 ms."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not if inherited ignored
        signal.signal(signal.SIGINT, _interrupted_early)
