"""Command line. Heavy libraries are imported inside commands so ``--help`` starts fast.

Exit codes: 0 ok; 1 some accounts of a batch failed; 2 bad input or arguments;
3 infeasible (nothing fits / meets the target); 130 interrupted (Ctrl-C); 143 stopped by
SIGTERM (128 + 15: `timeout`, a CI runner, a scheduler shutting down).

The group is here; the commands are in ``commands.py`` (validate, size, catalog, serve,
fidelity), ``estimating.py`` and ``reporting.py``, on ``errors.py`` (printing, one-line
errors, interrupts) and ``params.py`` (parameter types).
"""

from __future__ import annotations

from .early import _install_early_interrupt, _interrupted_early

# First thing: the imports below take 50-300 ms (ruff's E402 is off for this file).
_install_early_interrupt()

import signal
import sys
from typing import Any

import click

from .commands import catalog, fidelity, serve, size, validate
from .errors import _echo, _exit_interrupted
from .estimating import estimate
from .reporting import report

_HELP_ERRORS: tuple[type[click.UsageError], ...] = tuple(
    e for e in (getattr(click.exceptions, "NoArgsIsHelpError", None),) if e is not None)


class _Main(click.Group):
    """Usage errors as one line (``error: …``, exit 2) like every other bad input, and Ctrl-C
    as exit 130: click's standalone mode prints usage around the error and exits 1 on an
    interrupt, and the README reserves 1 for "some accounts of a batch failed"."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        if signal.getsignal(signal.SIGINT) is _interrupted_early:  # from here, clean-up runs
            signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            code = super().main(*args, **kwargs)
        except _HELP_ERRORS as exc:  # a bare `llmsizer`: the help, as click shows it
            _echo(exc.format_message(), err=True)
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            told = exc.format_message()
            # several problems, one a line: the pointer to the help on a line of its own, not
            # run on after the last problem's list (review round 25)
            gap = "\n" if "\n" in told else " "
            where = f"{gap}(see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
            _echo(f"error: {told}{where}", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            _echo(f"error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except (click.Abort, KeyboardInterrupt):
            _exit_interrupted("interrupted")
        sys.exit(code if isinstance(code, int) else 0)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="llmsizer")
def main() -> None:
    """Size GPU deployments for LLM serving from a requirements YAML file."""


for _command in (validate, size, catalog, estimate, report, serve, fidelity):
    main.add_command(_command)
