"""The house (issue #20, docs/architecture.md): layers in the order data flows, no import
circle, no import from a layer above, no module over 600 lines, a docstring atop each.

The graph is built from every import statement in ``src/llmsizer`` (those inside functions
too: a lazy import still ties two modules together). Negative fixtures prove each check
can fail."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import tomllib
from pathlib import Path

import pytest

import llmsizer

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "llmsizer"
# bottom to top; a module may import only from its own layer or one below it
LAYERS = ("base", "model", "inputs", "sizing", "documents", "runs", "web", "cli")
MAX_LINES = 600

Graph = dict[str, set[str]]


def module_name(path: Path) -> str:
    parts = ["llmsizer", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def _resolve(node: ast.ImportFrom, here: str, is_package: bool, known: dict[str, Path]) -> list[str]:
    if node.level == 0:
        base = node.module or ""
    else:
        pkg = here.split(".") if is_package else here.split(".")[:-1]
        pkg = pkg[: len(pkg) - (node.level - 1)]
        base = ".".join(pkg + ([node.module] if node.module else []))
    # ``from pkg import mod`` names the module mod; ``from mod import name`` names mod
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]


def import_graph(mods: dict[str, Path]) -> Graph:
    graph: Graph = {m: set() for m in mods}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                targets = _resolve(node, name, path.name == "__init__.py", mods)
            for t in targets:
                # the longest known module the target names
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != name and t != "llmsizer":
                    graph[name].add(t)
    return graph


def cycles(graph: Graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) < 2:
        raise ValueError(f"{module} is the package root, not a layer")
    return LAYERS.index(parts[1])


def upward(graph: Graph) -> list[tuple[str, str]]:
    return sorted((a, b) for a, bs in graph.items() if a != "llmsizer"
                  for b in bs if layer(b) > layer(a))


# ---- negative fixtures: each check can fail ---------------------------------------------

def test_cycle_check_finds_a_planted_circle() -> None:
    planted = {"llmsizer.runs.batch": {"llmsizer.runs.summary"},
               "llmsizer.runs.summary": {"llmsizer.runs.batch"},
               "llmsizer.base.errors": set()}
    assert cycles(planted) == [["llmsizer.runs.batch", "llmsizer.runs.summary"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_layer_check_finds_a_planted_upward_import() -> None:
    planted = {"llmsizer.sizing.costs": {"llmsizer.documents.charts", "llmsizer.model.expr"}}
    assert upward(planted) == [("llmsizer.sizing.costs", "llmsizer.documents.charts")]


def test_graph_reads_relative_lazy_and_package_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "llmsizer"
    (pkg / "sizing").mkdir(parents=True)
    (pkg / "runs").mkdir()
    (pkg / "__init__.py").write_text('"""root"""\n')
    (pkg / "sizing" / "__init__.py").write_text('"""s"""\n')
    (pkg / "runs" / "__init__.py").write_text('"""r"""\n')
    (pkg / "runs" / "batch.py").write_text('"""b"""\n')
    (pkg / "sizing" / "engine.py").write_text(
        '"""e"""\ndef f():\n    from ..runs import batch\n    return batch\n')
    global SRC
    saved, SRC = SRC, pkg
    try:
        graph = import_graph(modules())
    finally:
        SRC = saved
    assert graph["llmsizer.sizing.engine"] == {"llmsizer.runs.batch"}
    assert upward(graph) == [("llmsizer.sizing.engine", "llmsizer.runs.batch")]


# ---- the package as it is ---------------------------------------------------------------

def test_every_module_sits_in_a_documented_layer() -> None:
    mods = modules()
    assert len(mods) > 40, "the scan must see the package"
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    for name in mods:
        if name == "llmsizer":
            continue
        assert name.split(".")[1] in LAYERS, f"{name} is in no layer of {LAYERS}"
    for pkg in LAYERS[:-1]:
        assert f"`{pkg}/`" in doc, f"docs/architecture.md does not describe {pkg}/"


def test_no_import_circle() -> None:
    assert cycles(import_graph(modules())) == []


def test_no_import_from_a_layer_above() -> None:
    graph = import_graph(modules())
    assert sum(len(v) for v in graph.values()) > 100, "the graph must hold the real imports"
    assert upward(graph) == []
    # the root only re-exports the version
    assert graph["llmsizer"] == {"llmsizer.base.version"}


def test_no_module_over_600_lines_and_each_opens_with_a_docstring() -> None:
    long = {}
    for name, path in modules().items():
        text = path.read_text(encoding="utf-8")
        n = text.count("\n")
        if n > MAX_LINES:
            long[name] = n
        assert ast.get_docstring(ast.parse(text)), f"{name} has no module docstring"
    assert long == {}


def test_every_module_is_importable_and_shipped() -> None:
    """Every file under src/ is a module the installed package reaches, and every package
    directory is in pyproject's package list (else a wheel would leave it out)."""
    found = {"llmsizer"} | {m.name for m in pkgutil.walk_packages(llmsizer.__path__, "llmsizer.")}
    on_disk = set(modules())
    assert on_disk - found == set()
    for name in sorted(on_disk):
        importlib.import_module(name)
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    packages = {module_name(p) for p in SRC.rglob("__init__.py")}
    assert packages - listed == set()
    assert "llmsizer.model.catalogs" in listed  # data folder: the YAML catalogs ship


@pytest.mark.parametrize("pkg", LAYERS[:-1])
def test_each_layer_lists_its_modules_in_a_sorted_all(pkg: str) -> None:
    mod = importlib.import_module(f"llmsizer.{pkg}")
    names = list(getattr(mod, "__all__", []))
    assert names == sorted(names)
    here = SRC / pkg
    present = sorted(p.stem for p in here.glob("*.py") if p.stem != "__init__") + sorted(
        d.name for d in here.iterdir() if (d / "__init__.py").exists())
    assert names == sorted(present)


def test_architecture_doc_names_only_real_paths() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    paths = set(re.findall(r"`((?:base|model|inputs|sizing|documents|runs|web)/[\w/]*\.?\w*)`", doc))
    assert paths, "the doc should point at modules"
    for p in paths:
        assert (SRC / p).exists(), f"docs/architecture.md names {p}, which does not exist"
