"""The PDF's streams deflated at level 6 (documents/proposal/deflate.py): pydyf's streams are
still plain Flate, inflate to what was written, and only the level changes."""

from __future__ import annotations

import zlib

import pydyf
import pytest

from llmsizer.documents.proposal import deflate


def test_pydyf_streams_deflate_at_level_6_and_inflate_unchanged() -> None:
    if pydyf.__version__ != "0.13.0":
        pytest.skip("measured on pydyf 0.13.0 only: another version keeps its own level")
    assert deflate.install() and deflate.install()  # once per process, then a no-op
    raw = b"BT /F1 8 Tf 1 0 0 -1 52 760 Tm [(Acme Corp)] TJ ET\n" * 400
    stream = pydyf.Stream([raw], compress=True)
    written = stream.data  # dictionary, then the bytes between ``stream`` and ``endstream``
    assert b"/FlateDecode" in written
    data = written.split(b"\nstream\n", 1)[1].rsplit(b"\nendstream", 1)[0]
    plain = zlib.decompress(data)
    assert plain == b"\n".join([raw])
    level6, level9 = zlib.compressobj(level=6), zlib.compressobj(level=9)
    assert data == level6.compress(plain) + level6.flush()
    assert data != level9.compress(plain) + level9.flush()  # the level did change
