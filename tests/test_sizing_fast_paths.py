"""The option search's fast paths (issue #25 item 3) give the slow paths' results byte for
byte: the calculation list compiled with locals and inlined functions (expr.compile_program)
against the same trees walked by expr.evaluate, and the account's search memo
(search.SearchMemo) against working everything out per option."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmsizer.inputs.loader import load
from llmsizer.model.calculations import CALCULATIONS
from llmsizer.model.expr import Tables, Value, evaluate
from llmsizer.sizing import engine, search, sensitivity
from llmsizer.sizing import evaluate as evaluate_module
from llmsizer.sizing.engine import size

ROOT = Path(__file__).resolve().parents[1]
# aggregated and disaggregated (frontier-moe-rack) options, node loss (legal-128k), MoE
ACCOUNTS = ("example.yaml", "frontier-moe-rack.yaml", "legal-128k.yaml", "moe-chat.yaml")


def _walked() -> object:
    def run(env: dict[str, Value], tables: Tables) -> None:
        for c in CALCULATIONS:
            env[c.name] = evaluate(c.expr, env, tables)

    return run


@pytest.mark.parametrize("name", ACCOUNTS)
def test_compiled_list_gives_the_tree_walks_bytes(name: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load(ROOT / "inputs" / name)
    compiled = size(loaded).to_json()
    monkeypatch.setattr(evaluate_module, "program", _walked)
    monkeypatch.setattr(sensitivity, "program", _walked)
    walked = size(loaded).to_json()
    assert len(compiled) > 10_000 and compiled == walked


@pytest.mark.parametrize("name", ACCOUNTS)
def test_search_memo_gives_the_per_option_bytes(name: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load(ROOT / "inputs" / name)
    memoised = size(loaded).to_json()

    class Forgetful(search.SearchMemo):
        """Works every option's inputs out afresh, as the search did before the memo."""

        def efficiency(self, gpu: str, weight_precision: str) -> dict[str, float]:
            self._efficiency.clear()
            return super().efficiency(gpu, weight_precision)

        def calibration(self, *args: object) -> tuple[list[str], dict[str, float]]:
            self._calibration.clear()
            return super().calibration(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "SearchMemo", Forgetful)
    assert memoised == size(loaded).to_json()
