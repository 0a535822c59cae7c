"""Tests for llmsizer.inputs.yamlsafe: the strict, position-keeping YAML loader."""

from __future__ import annotations

import math
import pathlib
import time

import pydantic
import pytest
import yaml

from llmsizer.base.errors import InputError
from llmsizer.inputs.yamlfile import MAX_BYTES
from llmsizer.inputs.yamlpositions import Located
from llmsizer.inputs.yamlsafe import MAX_DEPTH, load_file, load_text

VALID = """\
# Acme sizing requirements
schema_version: 1
customer: "Acme"
workloads:
  - name: chat
    input_tokens: 1000
    output_tokens: 200
  - name: batch
    input_tokens: 4000
    output_tokens: 0
slo:
  ttft_ms: 500
tags: [a, b]
"""


def refused(text: str | bytes, *fragments: str) -> InputError:
    """Load ``text`` expecting an InputError whose message contains every fragment."""
    with pytest.raises(InputError) as info:
        load_text(text, "req.yaml")
    err = info.value
    for fragment in fragments:
        assert fragment in err.message, (fragment, err.message)
    assert err.file == "req.yaml"
    assert "\n" not in str(err)
    return err


# --------------------------------------------------------------------------- valid input


def test_valid_nested_file_data() -> None:
    located = load_text(VALID, "req.yaml")
    assert isinstance(located, Located)
    assert located.data == {
        "schema_version": 1,
        "customer": "Acme",
        "workloads": [
            {"name": "chat", "input_tokens": 1000, "output_tokens": 200},
            {"name": "batch", "input_tokens": 4000, "output_tokens": 0},
        ],
        "slo": {"ttft_ms": 500},
        "tags": ["a", "b"],
    }


@pytest.mark.parametrize(
    ("loc", "expected"),
    [
        ((), (2, 1)),  # the whole file: its first key (after the comment)
        (("schema_version",), (2, 1)),
        (("customer",), (3, 1)),
        (("workloads",), (4, 1)),
        (("workloads", 0), (5, 5)),  # a list item: the item itself, after "- "
        (("workloads", 1), (8, 5)),
        (("workloads", 1, "output_tokens"), (10, 5)),
        (("workloads", 0, "input_tokens"), (6, 5)),
        (("slo", "ttft_ms"), (12, 3)),
        (("tags", 1), (13, 11)),
    ],
)
def test_positions_of_existing_paths(loc: tuple[str | int, ...], expected: tuple[int, int]) -> None:
    assert load_text(VALID, "req.yaml").position(loc) == expected


@pytest.mark.parametrize(
    ("loc", "expected"),
    [
        (("workloads", 1, "max_latency_ms"), (8, 5)),  # missing key -> its parent mapping
        (("slo", "p99_ms"), (11, 1)),  # parent is a mapping value -> the `slo:` key
        (("region",), (2, 1)),  # missing top-level key -> the top-level mapping
        (("workloads", 7, "name"), (4, 1)),  # missing list item -> the list's key
        (("workloads", 1, "output_tokens", "int_parsed"), (10, 5)),  # pydantic-internal part
        (("workloads", True), (4, 1)),  # a bool never matches list index 1
    ],
)
def test_positions_of_missing_paths(loc: tuple[str | int, ...], expected: tuple[int, int]) -> None:
    assert load_text(VALID, "req.yaml").position(loc) == expected


def test_extra_key_points_at_the_key_itself() -> None:
    located = load_text("schema_version: 1\nnested:\n  ok: 1\n  bogus:\n    deep: 2\n", "r.yaml")
    assert located.position(("nested", "bogus")) == (4, 3)


def test_positions_map_pydantic_errors_back() -> None:
    class Workload(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="forbid")
        name: str
        output_tokens: pydantic.PositiveInt

    class Req(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="forbid")
        schema_version: int
        workloads: list[Workload]

    text = (
        "schema_version: 1\n"
        "workloads:\n"
        "  - name: chat\n"
        "    output_tokens: 5\n"
        "  - name: batch\n"
        "    output_tokens: 0\n"
        "    colour: red\n"
        "  - output_tokens: 3\n"
    )
    located = load_text(text, "acme.yaml")
    with pytest.raises(pydantic.ValidationError) as info:
        Req.model_validate(located.data)
    found = {
        (err["type"], located.position(err["loc"]))
        for err in info.value.errors(include_input=False)
    }
    assert found == {
        ("greater_than", (6, 5)),
        ("extra_forbidden", (7, 5)),
        ("missing", (8, 5)),
    }


def test_crlf_line_endings_and_bom_keep_positions() -> None:
    text = "\ufeffa: 1\r\nb:\r\n  c: 2\r\n"
    located = load_text(text.encode("utf-8"), "r.yaml")
    assert located.data == {"a": 1, "b": {"c": 2}}
    assert located.position(("a",)) == (1, 1)
    assert located.position(("b", "c")) == (3, 3)


def test_load_file_reads_bytes(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "req.yaml"
    path.write_text(VALID, encoding="utf-8")
    located = load_file(path)
    assert located.data["workloads"][1]["name"] == "batch"
    assert located.position(("workloads", 1, "output_tokens")) == (10, 5)
    assert load_file(str(path)).data == located.data


# --------------------------------------------------------------------------- scalars


def test_yaml_1_1_surprises_are_avoided() -> None:
    data = load_text(
        "country: NO\n"
        "switch: on\n"
        "answer: yes\n"
        "short: n\n"
        "id: 010\n"
        "id2: 00.5\n"
        "version: 1.10\n"
        "quoted_version: '1.10'\n"
        "time: 1:20\n"
        "date: 2024-01-31\n"
        "hex: 0x1F\n"
        "octal: 0o17\n"
        "grouped: 1_000\n"
        "t1: true\n"
        "t2: TRUE\n"
        "t3: False\n"
        "n1: null\n"
        "n2: ~\n"
        "n3:\n"
        "n4: NULL\n"
        "i1: 42\n"
        "i2: -7\n"
        "i3: +3\n"
        "i4: 0\n"
        "f1: 0.5\n"
        "f2: .5\n"
        "f3: 1e3\n"
        "f4: -2.5E-3\n"
        "f5: .inf\n"
        "f6: -.Inf\n"
        "f7: .nan\n"
        "q1: '42'\n"
        'q2: "true"\n',
        "r.yaml",
    ).data
    assert data["country"] == "NO"
    assert data["switch"] == "on"
    assert data["answer"] == "yes"
    assert data["short"] == "n"
    assert data["id"] == "010"
    assert data["id2"] == "00.5"
    assert data["version"] == 1.1 and isinstance(data["version"], float)
    assert data["quoted_version"] == "1.10"
    assert data["time"] == "1:20"
    assert data["date"] == "2024-01-31"
    assert data["hex"] == "0x1F"
    assert data["octal"] == "0o17"
    assert data["grouped"] == "1_000"
    assert (data["t1"], data["t2"], data["t3"]) == (True, True, False)
    assert [data[k] for k in ("n1", "n2", "n3", "n4")] == [None] * 4
    assert [data[k] for k in ("i1", "i2", "i3", "i4")] == [42, -7, 3, 0]
    assert all(type(data[k]) is int for k in ("i1", "i2", "i3", "i4"))
    assert [data[k] for k in ("f1", "f2", "f3", "f4")] == [0.5, 0.5, 1000.0, -0.0025]
    assert data["f5"] == math.inf and data["f6"] == -math.inf and math.isnan(data["f7"])
    assert (data["q1"], data["q2"]) == ("42", "true")


def test_pyyaml_global_safe_loader_is_untouched() -> None:
    load_text("a: yes\n", "r.yaml")
    assert yaml.safe_load("a: yes\nb: 010\n") == {"a": True, "b": 8}


def test_number_with_too_many_digits() -> None:
    err = refused("a: " + "9" * 5000 + "\n", "too many digits")
    assert (err.line, err.column) == (1, 4)


# --------------------------------------------------------------------------- size, encoding


def test_too_large_text_refused() -> None:
    big = "a: " + "x" * (2 * MAX_BYTES) + "\n"
    refused(big, "too large", "1,000,000")
    refused(big.encode(), "too large")


def test_too_large_multibyte_text_refused() -> None:
    # fewer characters than MAX_BYTES, but more bytes once encoded
    refused("a: " + "é" * (MAX_BYTES // 2 + 10) + "\n", "too large")


def test_too_large_file_refused_before_parsing(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"\x00\xff" * MAX_BYTES)  # 2 MB of binary: the size check comes first
    with pytest.raises(InputError) as info:
        load_file(path)
    assert "too large" in info.value.message
    assert info.value.file == str(path)


def test_missing_file(tmp_path: pathlib.Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        load_file(tmp_path / "nope.yaml")
    with pytest.raises(InputError, match="folder"):
        load_file(tmp_path)


@pytest.mark.parametrize("text", ["", "   \n\n\t\n", b"", b"\n \n"])
def test_empty_file(text: str | bytes) -> None:
    err = refused(text, "file is empty", "schema_version: 1")
    assert err.line is None


def test_comment_only_file() -> None:
    refused("# nothing yet\n", "only comments", "schema_version: 1")


def test_non_utf8_bytes() -> None:
    err = refused(b"a: 1\nname: caf\xe9\n", "not valid UTF-8", "byte offset 14", "line 2", "UTF-8")
    assert (err.line, err.column) == (2, 10)


def test_utf16_file() -> None:
    refused("a: 1\n".encode("utf-16"), "UTF-16")


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("a: 1\nb: x\x00y\n", "NUL"),
        (b"a: 1\nb: x\x00y\n", "NUL"),
        ("a: 1\nb: x\x07y\n", "U+0007"),
        ("a: 1\nb: x\x1by\n", "U+001B"),
    ],
)
def test_binary_control_characters(text: str | bytes, what: str) -> None:
    err = refused(text, what, "not a plain text file")
    assert (err.line, err.column) == (2, 5)


# --------------------------------------------------------------------------- syntax


def test_tab_indentation_hint() -> None:
    err = refused("schema_version: 1\nslo:\n\tttft_ms: 500\n", "not valid YAML", "tabs", "spaces")
    assert err.message.count("YAML does not allow tabs for indentation; use spaces") == 1
    assert (err.line, err.column) == (3, 1)


def test_not_yaml_gives_line_and_problem() -> None:
    # session 23: the hint in words, not the parser's "mapping values are not allowed here"
    err = refused("a: 1\nb: c: d\n", "not valid YAML", "a value contains `: `")
    assert "mapping values" not in err.message
    assert (err.line, err.column) == (2, 5)


def test_unclosed_quote() -> None:
    err = refused("a: 1\nb: 'open\n", "not valid YAML", "never closed", "line 2")
    assert err.line == 3


def test_bad_indentation_is_explained_without_pyyaml_jargon() -> None:
    err = refused("a:\n  - b\n c: 1\n", "not valid YAML", "indentation")
    assert "<block" not in err.message
    assert err.line == 3


@pytest.mark.parametrize(
    ("text", "what", "line"),
    [
        ("- a\n- b\n", "a list", 1),
        ("just some text\n", "the text 'just some text'", 1),
        ("42\n", "the number 42", 1),
        ("---\n", "empty", 2),
    ],
)
def test_top_level_must_be_a_mapping(text: str, what: str, line: int) -> None:
    err = refused(text, "top level", "must be a mapping", what)
    assert err.line == line


# --------------------------------------------------------------------------- refusals


def test_anchor_and_alias_refused() -> None:
    err = refused("base: &b 1\nother: *b\n", "anchors/aliases are not allowed in requirement files")
    assert (err.line, err.column) == (1, 7)
    # an alias whose anchor is missing is still refused as an alias (not a composer error)
    err = refused("a: 1\nb: *nowhere\n", "anchors/aliases are not allowed", "*nowhere")
    assert (err.line, err.column) == (2, 4)


def test_merge_key_refused() -> None:
    err = refused("a: 1\nb:\n  <<: {x: 1}\n", "merge keys", "anchors/aliases are not allowed")
    assert (err.line, err.column) == (3, 3)
    refused("base: &b {x: 1}\nb:\n  <<: *b\n", "anchors/aliases are not allowed")


def test_quoted_merge_like_key_is_just_text() -> None:
    assert load_text("'<<': 1\n", "r.yaml").data == {"<<": 1}


def test_billion_laughs_refused_quickly() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    start = time.process_time()  # CPU, not wall: parallel test workers must not fail it
    err = refused("\n".join(lines) + "\n", "anchors/aliases are not allowed")
    assert time.process_time() - start < 1.0
    assert err.line == 1


@pytest.mark.parametrize(
    ("text", "tag"),
    [
        ("a: !!python/object:os.system 1\n", "!!python/object:os.system"),
        ("a: !!python/object/apply:os.system ['echo hi']\n", "!!python/object/apply:os.system"),
        ("a: !foo bar\n", "!foo"),
        ("a: !!str 1\n", "!!str"),
        ("a: !!map {b: 1}\n", "!!map"),
    ],
)
def test_explicit_tags_refused(text: str, tag: str) -> None:
    err = refused(text, "tags", tag, "not allowed")
    assert (err.line, err.column) == (1, 4)


def test_multiple_documents_refused() -> None:
    err = refused("a: 1\n---\nb: 2\n", "more than one YAML document")
    assert err.line == 2
    refused("---\na: 1\n...\n---\nb: 2\n", "more than one YAML document")


def test_single_explicit_document_is_fine() -> None:
    assert load_text("---\na: 1\n...\n", "r.yaml").data == {"a": 1}


def test_duplicate_keys_refused() -> None:
    err = refused(
        "a: 1\nnested:\n  x: 1\n  y: 2\n  x: 3\n", "duplicate key 'x'", "line 3", "line 5"
    )
    assert (err.line, err.column) == (5, 3)
    refused('a: 1\n"a": 2\n', "duplicate key 'a'")  # quoting does not make it different


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("1: a\n", "the key 1 is read as the number 1, not as text"),
        ("1.5: a\n", "the key 1.5 is read as the number 1.5, not as text"),
        ("true: a\n", "the key true is read as the boolean true, not as text"),
        ("a:\n  null: 1\n", "the key null is read as empty (null), not as text"),
        ("a: 1\n? \n: 2\n", "a key is empty"),
        ("{? : 1}\n", "a key is empty"),
        ("? [a, b]\n: 1\n", "not a list"),
        ("? {a: 1}\n: 1\n", "not a mapping"),
    ],
)
def test_non_string_keys_refused(text: str, fragment: str) -> None:
    refused(text, fragment)


def test_quoted_numeric_key_is_fine() -> None:
    assert load_text("'1': a\n", "r.yaml").data == {"1": "a"}


# --------------------------------------------------------------------------- depth


def test_depth_at_the_limit_is_fine() -> None:
    # the top-level mapping is level 1; `a: [[...]]` with 39 brackets is level 40
    text = "a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n"
    data = load_text(text, "r.yaml").data
    depth, node = 1, data["a"]
    while node:
        depth, node = depth + 1, node[0]
    assert depth == MAX_DEPTH - 1


def test_depth_over_the_limit_refused() -> None:
    text = "a: " + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "\n"
    err = refused(text, "more than 40 levels")
    assert (err.line, err.column) == (1, 3 + MAX_DEPTH)


@pytest.mark.parametrize(
    "text",
    [
        "[" * 10_000 + "]" * 10_000 + "\n",  # flow sequences
        "a: " + "{a: " * 10_000 + "1" + "}" * 10_000 + "\n",  # flow mappings
        "- " * 10_000 + "x\n",  # block sequences, nested on one line
        "".join(" " * i + f"k{i}:\n" for i in range(1000)),  # block mappings (0.5 MB)
    ],
    ids=["flow-seq", "flow-map", "block-seq", "block-map"],
)
def test_ten_thousand_deep_refused_fast(text: str) -> None:
    # CPU time, not wall time: other tests on the same cores (pytest-xdist) must not fail it
    start = time.process_time()
    with pytest.raises(InputError) as info:  # never RecursionError, never a crash
        load_text(text, "deep.yaml")
    assert time.process_time() - start < 1.0
    assert "more than 40 levels" in info.value.message


def test_deep_block_file_is_refused_for_depth_not_size() -> None:
    text = "".join(" " * i + f"k{i}:\n" for i in range(1000))
    assert len(text.encode()) < MAX_BYTES
    err = refused(text, "more than 40 levels")
    assert err.line == MAX_DEPTH + 1
