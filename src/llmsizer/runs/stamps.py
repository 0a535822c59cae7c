"""Resume stamps: a hash of what an account's outputs were made from (the requirements file,
every file it names, the catalog, the llmsizer version, the templates, whether the formula
appendix was asked for), written beside the outputs, so a re-run skips what is done."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from importlib import resources
from pathlib import Path

from ..base.version import __version__

OUTPUT_SUFFIXES = (".json", ".xlsx", ".pdf")


def _stamp_path(out: Path, stem: str) -> Path:
    return out / f".{stem}.stamp"


def _referenced_files(path: Path) -> list[tuple[str, int]]:
    """Files a requirements file names that the loader reads (a model given as a path to a
    config.json, benchmark results), with the loader's size limit for each, so a change to
    any of them re-runs the account. A model named like a catalog id is a catalog id,
    whatever lies beside the file under that name."""
    from ..inputs.benchfiles import MAX_BENCH_BYTES
    from ..inputs.modelconfig import MAX_CONFIG_BYTES

    refs: set[tuple[str, int]] = set()
    with contextlib.suppress(Exception):
        from ..inputs.yamlsafe import load_file

        data = load_file(path).data
        for w in data.get("workloads", []) if isinstance(data, dict) else []:
            if not isinstance(w, dict):
                continue
            model = w.get("model")
            if isinstance(model, str) and model.endswith(".json"):  # as requirements.resolve
                refs.add((model, MAX_CONFIG_BYTES))
            measured = w.get("measured")
            if isinstance(measured, dict):
                f = measured.get("file")
                for n in f if isinstance(f, list) else [f]:
                    if isinstance(n, str):
                        refs.add((n, MAX_BENCH_BYTES))
    return sorted(refs)


def _reference_bytes(base: Path, rel: str, limit: int) -> bytes | None:
    """A referenced file's bytes through the loader's checks: resolved (symbolic links
    included) inside the requirements file's folder, a regular file, at most ``limit``
    bytes. ``None`` for anything else: validation then reports it."""
    try:
        root = base.resolve()
        target = (root / rel).resolve()
        if Path(rel).is_absolute() or not target.is_relative_to(root):
            return None
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
                return None
            data = handle.read(limit + 1)
    except (OSError, RuntimeError, ValueError):
        return None
    return data if len(data) <= limit else None


def snapshot(path: Path) -> tuple[bytes | None, list[tuple[str, bytes | None]]]:
    """The requirements file's bytes and those of every file it names, as the loader would
    read them (None: unreadable or refused)."""
    from ..inputs.yamlfile import MAX_BYTES

    own = _reference_bytes(path.parent, path.name, MAX_BYTES)
    return own, [(rel, _reference_bytes(path.parent, rel, limit))
                 for rel, limit in _referenced_files(path)]


def fingerprint(path: Path, templates: Path | None, appendix: bool = False) -> str:
    return fingerprint_of(*snapshot(path), templates, appendix)


def fingerprint_of(own: bytes | None, refs: list[tuple[str, bytes | None]],
                   templates: Path | None, appendix: bool = False) -> str:
    """The resume stamp of an account whose file and referenced files hold these bytes."""
    from ..model.catalog import load_catalog

    h = hashlib.sha256()
    h.update(own if own is not None else b"\0unreadable")
    for rel, data in refs:
        h.update(f"\0{rel}\0".encode())
        h.update(data if data is not None else b"\0unreadable")
    h.update(b"\0appendix" if appendix else b"")
    h.update(load_catalog().digest.encode())
    h.update(__version__.encode())
    # The shipped templates too: edited in place (an editable install), they change the
    # proposal without a new version number.
    shipped = Path(str(resources.files("llmsizer.templates")))
    for folder in (templates, shipped):
        if folder:
            for t in sorted(folder.rglob("*")):
                if t.is_file() and "__pycache__" not in t.parts:
                    h.update(str(t.relative_to(folder)).encode())
                    h.update(t.read_bytes())
    return h.hexdigest()


def is_fresh(path: Path, out: Path, stem: str, templates: Path | None,
             appendix: bool = False) -> bool:
    from .report import complete_set

    stamp = _stamp_path(out, stem)
    if not stamp.is_file() or not complete_set(out, stem, [f"{stem}{s}" for s in OUTPUT_SUFFIXES]):
        return False
    try:
        return stamp.read_text() == fingerprint(path, templates, appendix)
    except OSError:
        return False
