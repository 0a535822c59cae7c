"""The exceptions llmsizer raises for problems a user can fix.

    LlmsizerError            base; ``str()`` is one line a user can act on
    ├── InputError           a requirements file is wrong (file, line, column, field path)
    │   └── InputErrors      several problems in one file, told at once (:func:`combined`)
    ├── CatalogError         an unknown GPU / model / platform / precision (lists valid names)
    └── InfeasibleError      nothing fits or meets the target (says the best achievable)

Only the CLI turns these into a message and an exit code; any other exception is
a bug and keeps its traceback.
"""

from __future__ import annotations


class LlmsizerError(Exception):
    """Base class: a problem with what the user gave us, not a bug."""

    exit_code = 2


class InputError(LlmsizerError):
    """A requirements file (or value) is invalid.

    ``file``/``line``/``column`` locate it (1-based); ``field`` is a dotted path such as
    ``workloads[1].output_tokens``.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.field = field
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = self.file
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            where += ": "
        field = f"{self.field}: " if self.field else ""
        return f"{where}{field}{self.message}"


MAX_SHOWN = 20  # problems of one file told at once; the rest are counted


class InputErrors(InputError):
    """Every problem found in one file, told in one block (issue 25): fixing a file one error
    per run is slow. The attributes of :class:`InputError` are the first problem's, so a caller
    that shows one (the web form's field) still can; ``problems`` holds the first
    :data:`MAX_SHOWN` and ``more`` counts the rest."""

    def __init__(self, problems: list[InputError], more: int = 0) -> None:
        first = problems[0]
        self.problems = problems
        self.more = more
        super().__init__(first.message, file=first.file, line=first.line, column=first.column,
                         field=first.field)

    def __str__(self) -> str:
        total = len(self.problems) + self.more
        head = f"{self.file}: " if self.file else ""
        lines = [f"{head}{total} problems:"]
        lines += [f"  {InputError.__str__(p)}" for p in self.problems]
        if self.more:
            lines.append(f"  and {self.more} more (fix these and run again to see them)")
        return "\n".join(lines)


def combined(problems: list[InputError]) -> InputError:
    """One error for ``problems`` (at least one): the problem itself when it is alone, else an
    :class:`InputErrors` showing the first :data:`MAX_SHOWN` and counting the rest. A problem
    that is itself an :class:`InputErrors` contributes its parts."""
    flat: list[InputError] = []
    hidden = 0
    for p in problems:
        if isinstance(p, InputErrors):
            flat += p.problems
            hidden += p.more
        else:
            flat.append(p)
    if len(flat) == 1 and not hidden:
        return flat[0]
    return InputErrors(flat[:MAX_SHOWN], len(flat[MAX_SHOWN:]) + hidden)


class CatalogError(LlmsizerError):
    """An id that is not in a catalog, or a catalog file that is itself broken."""


class InfeasibleError(LlmsizerError):
    """No option fits or meets the target; the message says the best achievable."""

    exit_code = 3
