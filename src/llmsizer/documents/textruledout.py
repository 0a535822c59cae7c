"""The configurations a narrow terminal lists under a table as ruled out, each with its
reason (a wide one shows them in its "why not" column)."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from ..sizing.results import Option, RetrievalOption
from .textoptions import OptionNames
from .textwords import folded


def ruled_out(options: list[Option] | list[RetrievalOption], names: OptionNames,
              con: Console) -> None:
    """Each ruled-out configuration in words and why, folded under itself at the width; those
    ruled out for the same reason on several servers in one line naming them all."""
    lines = [folded(f"{first}, {second}: {options[members[0]].reason}", con.width, "  ", "      ")
             for members, first, second in names.fold_servers(options, [o.reason for o in options])]
    con.print(Text("Ruled out:", style="bold"), highlight=False)
    con.print(Text("\n".join(lines)), highlight=False, no_wrap=True, crop=False)
