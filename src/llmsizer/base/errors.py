"""The exceptions llmsizer raises for problems a user can fix.

    LlmsizerError            base; ``str()`` is one line a user can act on
    ├── InputError           a requirements file is wrong (file, line, column, field path)
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


class CatalogError(LlmsizerError):
    """An id that is not in a catalog, or a catalog file that is itself broken."""


class InfeasibleError(LlmsizerError):
    """No option fits or meets the target; the message says the best achievable."""

    exit_code = 3
