"""What every command prints and how it stops: escape-safe lines, a user-fixable error as
one line and its exit code, an interrupt's exit, a file loaded with its warnings told."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def _echo(message: str, err: bool = False, nl: bool = True) -> None:
    """Every line the command line prints, escape-safe (issue 25, F2): a name read from a
    file (a workbook's embedded data, a CSV label) could otherwise clear the screen or ring
    the bell. JSON output is unchanged by it: ``json.dumps`` escapes control characters."""
    from ..base.textsafe import terminal_text

    click.echo(terminal_text(message), err=err, nl=nl)


def _clean_errors(fn: F) -> F:
    """Turn the user-fixable errors into one line and an exit code; bugs keep tracebacks."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from ..base.errors import LlmsizerError

        try:
            return fn(*args, **kwargs)
        except LlmsizerError as exc:
            _echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)

    return wrapper  # type: ignore[return-value]


def _exit_interrupted(message: str, code: int = 130) -> NoReturn:
    _echo(message, err=True)
    # Not sys.exit: CPython 3.11 remembers a Ctrl-C that escaped code a C extension ran
    # through PyRun_String while importing, and after our SystemExit kills itself with
    # SIGINT (returncode -2, seen in CI). Our own clean-up has run in `finally` blocks.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _load(file: Path) -> Any:
    """FILE's Loaded; a doubtful target (inputs/doubts.py) is sized as written, told on stderr."""
    from ..inputs.loader import load

    loaded = load(file)
    for w in loaded.warnings:
        _echo(f"warning: {w}", err=True)
    return loaded
