"""Generated docs and JSON Schemas must match the code (no drift)."""

from __future__ import annotations

from helpers import ROOT

from llmsizer.docgen import generated


def test_generated_docs_do_not_drift() -> None:
    """Regenerate with `python -m llmsizer.docgen` when this fails."""
    for path, text in generated(ROOT).items():
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale"


def test_every_cli_command_has_help_and_is_documented() -> None:
    from click.testing import CliRunner

    from llmsizer.cli import main

    readme = (ROOT / "README.md").read_text()
    runner = CliRunner()
    for name in main.commands:
        result = runner.invoke(main, [name, "--help"])
        assert result.exit_code == 0, name
        assert len(result.output.strip().splitlines()) > 2
        assert f"llmsizer {name}" in readme, f"README does not show `llmsizer {name}`"
