"""The arithmetic a document prints for the reader to check by hand ("2 (keys and values) ×
80 layers × 8 KV heads × 128 dimensions × 1.00 bytes (FP8) = 163,840 bytes per token"),
found in its text and checked within the rounding of the printed figures.

Each ``=`` in a block of text (a paragraph, list item, table cell) is read as an equation: the
expression on each side is the run of figures joined by ``×`` ``x`` ``*`` ``/`` ``÷`` ``+``
``−`` (and a spaced ``-``), with parentheses; words and descriptive parentheses ("(FP8)",
"(keys and values)") between them are units and labels, skipped. ``TP4`` is the figure 4.
``%`` divides by 100, a ``k``/``M`` suffix multiplies by 10³/10⁶, thousands separators are
read. A side that counts requests "an hour" against a result in "requests/s" is divided by
3,600 s (the one unit conversion the proposal leaves to the reader).

Rounding: a printed figure stands for the interval of half a unit of its last digit
("0.56" is 0.555–0.565); an integer's trailing zeros past three significant figures may be
rounding ("1,290" is 1,285–1,295: the proposal prints modelled quantities to three figures).
A whole number of countable things (the figure before "×", or before "layers", "GPUs"...,
or a busiest-hour factor, printed as the requirements state it)
is exact: "5 replicas × TP4" cannot be 4.5 × 4. The intervals are carried through the
arithmetic; an equation holds when the two sides' intervals meet.

An ``=`` that is not arithmetic is returned with the reason, never dropped: a side without a
figure (a definition, "the power figure = 4 x 0.35 kW + 0.8 kW host", or a formula in words),
one quantity named in two units ("5 replicas = 20 GPUs"), a range ("1–3"), or operands
given in words ("3.5M less the rack's base price ... over 72 GPUs").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

__all__ = ["Equation", "blocks", "equations"]

def _names(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Elements whose text is one block: an equation never spans two of them.
_BLOCK = _names(
    "p li td th h1 h2 h3 h4 h5 h6 div section article header footer figcaption caption dt dd "
    "table tr tbody thead ul ol dl figure blockquote br title text tspan")
_SKIP = _names("style script head")


class _Blocks(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.now: list[str] = []
        self.skip = 0

    def _flush(self) -> None:
        text = re.sub(r"\s+", " ", "".join(self.now)).strip()
        if text:
            self.out.append(text)
        self.now = []

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag in _SKIP:
            self.skip += 1
        elif tag in _BLOCK:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag in _BLOCK:
            self._flush()

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.now.append(data)


def blocks(html: str) -> list[str]:
    """The text of each block element of ``html``, whitespace collapsed."""
    parser = _Blocks()
    parser.feed(html)
    parser.close()
    parser._flush()
    return parser.out


_NUM = re.compile(
    r"(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<dec>\d+))?(?P<suf>[kM](?![\w]))?"
    r"(?![\w/\-–]|[.,]\d)(?P<pct>\s?%)?(?P<spaced>\s[kM](?![\w\-]))?")
_TOKEN = re.compile(
    r"(?P<ws>\s+)|(?P<tp>\bTP(?P<tpn>\d+)\b)|(?P<num>\d)|(?P<cmp><=|>=|==|!=|≈|≤|≥)"
    r"|(?P<eq>=)|(?P<op>[×*+−÷]|(?<=\s)[x/-](?=\s))|(?P<lp>\()|(?P<rp>\))"
    r"|(?P<punct>[:;,.—?!<>\[\]{}|\"“”]+)|(?P<word>[^\s():;,=×*+−÷—?!<>\"“”]+)")
_RANGE = re.compile(r"\d[\d.,]*[–-]\d[\d.,]*[kM]?")
_DIGIT_WORD = re.compile(r"\d[^\s():;=×*+−÷—?!]*")
_OPS = {"×": "*", "x": "*", "*": "*", "/": "/", "÷": "/", "+": "+", "−": "-", "-": "-"}
_WORD_OPS = _names("less over plus minus times divided")
COUNT_NOUNS = _names(
    "layers layer keys KV heads dimensions values GPUs GPU replicas replica nodes node sequences "
    "ranks experts tokens bytes users requests prefill")
# A figure the requirements state, printed with every decimal it has (Formatter.stated).
_STATED = ("in the busiest hour",)
_HOURLY = re.compile(r"\b(an|per|a) hour\b|/h\b")
_PER_SECOND = re.compile(r"/s\b")


@dataclass(frozen=True)
class Tok:
    kind: str  # num, range, op, eq, lp, rp, word, punct
    text: str
    lo: float = 0.0
    hi: float = 0.0


def _number(m: re.Match[str]) -> tuple[float, float, float]:
    """(value, half-unit) of a printed figure."""
    digits = m["int"].replace(",", "")
    dec = m["dec"] or ""
    value = float(f"{digits}.{dec}" if dec else digits)
    if dec:
        half = 0.5 * 10 ** -len(dec)
    else:
        zeros = len(digits) - len(digits.rstrip("0")) if value else 0
        half = 0.5 * 10 ** max(0, min(zeros, len(digits) - 3))
    scale = 1.0
    suffix = m["suf"] or (m["spaced"] or "").strip()
    if suffix == "k":
        scale = 1e3
    elif suffix == "M":
        scale = 1e6
    if m["pct"]:
        scale /= 100
    return value * scale, half * scale, value


def tokens(text: str) -> list[Tok]:
    out: list[Tok] = []
    at = 0
    while at < len(text):
        m = _TOKEN.match(text, at)
        assert m is not None, text[at:]
        kind = m.lastgroup if m.lastgroup != "tpn" else "tp"
        if kind == "ws":
            at = m.end()
            continue
        if kind == "tp":
            n = float(m["tpn"])
            out.append(Tok("num", m.group(), n, n))
            at = m.end()
            continue
        if kind == "num":
            nm = _NUM.match(text, at)
            if nm:
                value, half, _ = _number(nm)
                out.append(Tok("num", nm.group().strip(), value - half, value + half))
                at = nm.end()
                continue
            # a figure run into letters or dashes: "80GB", a date "2026-11-09", a range "3-4M"
            w = _DIGIT_WORD.match(text, at)
            assert w is not None
            word = w.group().rstrip(".,")
            out.append(Tok("range" if _RANGE.fullmatch(word) else "word", word))
            at += len(word)
            continue
        out.append(Tok(str(kind), m.group()))
        at = m.end()
    return out


@dataclass(frozen=True)
class Equation:
    text: str  # the equation as printed, from the first figure to the last
    block: str  # its whole block of text
    lhs: tuple[float, float] | None = None
    rhs: tuple[float, float] | None = None
    skipped: str = ""  # why it is not arithmetic ("" when it was checked)

    @property
    def holds(self) -> bool:
        if self.lhs is None or self.rhs is None:
            return False
        tol = 1e-9 * max(1.0, abs(self.lhs[1]), abs(self.rhs[1]))
        return self.lhs[0] <= self.rhs[1] + tol and self.rhs[0] <= self.lhs[1] + tol


def _group(toks: list[Tok], close: int) -> int:
    """The index of the ``(`` that ``toks[close]`` (a ``)``) closes, or -1."""
    depth = 0
    for k in range(close, -1, -1):
        depth += {"rp": 1, "lp": -1}.get(toks[k].kind, 0)
        if depth == 0:
            return k
    return -1


def _close(toks: list[Tok], open_: int) -> int:
    depth = 0
    for k in range(open_, len(toks)):
        depth += {"lp": 1, "rp": -1}.get(toks[k].kind, 0)
        if depth == 0:
            return k
    return -1


def _arithmetic(toks: list[Tok]) -> bool:
    return any(t.kind == "op" for t in toks) and any(t.kind == "num" for t in toks)


def _side_back(toks: list[Tok], end: int) -> tuple[int, int] | None:
    """The span [start, end) of the expression that ends just before ``end`` (the ``=``)."""
    k = end - 1
    start = None
    while True:
        # trailing units and labels of an operand
        while k >= 0 and (toks[k].kind == "word" or (toks[k].kind == "rp" and _group(toks, k) >= 0
                                                     and not _arithmetic(toks[_group(toks, k):k + 1]))):
            k = _group(toks, k) - 1 if toks[k].kind == "rp" else k - 1
        if k < 0:
            break
        if toks[k].kind == "num":
            operand = k
        elif toks[k].kind == "rp" and _group(toks, k) >= 0:
            operand = _group(toks, k)
        elif toks[k].kind == "range":
            return (k, end)
        else:
            break
        start = operand
        j = operand - 1
        while j >= 0 and toks[j].kind == "word":
            j -= 1
        if j >= 0 and toks[j].kind == "op":
            k = j - 1
            continue
        if any(toks[w].text in _WORD_OPS for w in range(j + 1, operand)):
            return (j + 1, end)  # prose operators: reported as such
        break
    return None if start is None else (start, end)


def _side_forward(toks: list[Tok], begin: int) -> tuple[int, int] | None:
    k = begin
    stop = None
    while True:
        while k < len(toks) and toks[k].kind == "word":
            k += 1
        if k >= len(toks):
            break
        if toks[k].kind == "num":
            last = k
        elif toks[k].kind == "lp" and _close(toks, k) > 0 and _arithmetic(toks[k:_close(toks, k) + 1]):
            last = _close(toks, k)
        elif toks[k].kind == "range":
            return (begin, k + 1)
        else:
            break
        stop = last + 1
        j = last + 1
        while j < len(toks) and (toks[j].kind == "word" or (
                toks[j].kind == "lp" and _close(toks, j) > 0
                and not _arithmetic(toks[j:_close(toks, j) + 1]))):
            j = _close(toks, j) + 1 if toks[j].kind == "lp" else j + 1
        if j < len(toks) and toks[j].kind == "op":
            k = j + 1
            continue
        break
    return None if stop is None else (begin, stop)


class _Eval:
    """Interval arithmetic over the figures and operators of one side (words skipped)."""

    def __init__(self, toks: list[Tok]) -> None:
        self.t = [t for t in _drop_labels(toks) if t.kind in ("num", "op", "lp", "rp")]
        self.i = 0

    def run(self) -> tuple[float, float]:
        value = self.sum()
        if self.i != len(self.t):
            raise ValueError(f"unread {self.t[self.i:]}")
        return value

    def sum(self) -> tuple[float, float]:
        a = self.product()
        while self.i < len(self.t) and _OPS.get(self.t[self.i].text) in ("+", "-"):
            op = _OPS[self.t[self.i].text]
            self.i += 1
            b = self.product()
            a = (a[0] + b[0], a[1] + b[1]) if op == "+" else (a[0] - b[1], a[1] - b[0])
        return a

    def product(self) -> tuple[float, float]:
        a = self.atom()
        while self.i < len(self.t) and _OPS.get(self.t[self.i].text) in ("*", "/"):
            op = _OPS[self.t[self.i].text]
            self.i += 1
            b = self.atom()
            if op == "/":
                if b[0] <= 0 <= b[1]:
                    raise ValueError("division by an interval holding 0")
                b = (1 / b[1], 1 / b[0])
            corners = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
            a = (min(corners), max(corners))
        return a

    def atom(self) -> tuple[float, float]:
        t = self.t[self.i]
        self.i += 1
        if t.kind == "num":
            return (t.lo, t.hi)
        if t.kind == "lp":
            value = self.sum()
            if self.i >= len(self.t) or self.t[self.i].kind != "rp":
                raise ValueError("unbalanced parenthesis")
            self.i += 1
            return value
        raise ValueError(f"unexpected {t.text!r}")


def _drop_labels(toks: list[Tok]) -> list[Tok]:
    """Without descriptive parentheses ("(FP8)"); whole counts made exact."""
    out: list[Tok] = []
    k = 0
    while k < len(toks):
        t = toks[k]
        if t.kind == "lp":
            c = _close(toks, k)
            if c > 0 and not _arithmetic(toks[k:c + 1]):
                k = c + 1
                continue
        if t.kind == "num" and _whole_count(toks, k):
            mid = (t.lo + t.hi) / 2
            t = Tok("num", t.text, mid, mid)
        out.append(t)
        k += 1
    return out


def _whole_count(toks: list[Tok], k: int) -> bool:
    t = toks[k]
    if not re.fullmatch(r"\d{1,3}", t.text):
        return t.lo == t.hi
    nxt = toks[k + 1] if k + 1 < len(toks) else None
    if nxt is not None and nxt.kind == "lp" and k + 2 < len(toks):
        nxt = toks[k + 2]
    after = " ".join(x.text for x in toks[k + 1:k + 5])
    return nxt is not None and (nxt.text in ("×", "x") or nxt.text in COUNT_NOUNS
                                or after.startswith(_STATED))


def _text(toks: list[Tok], a: int, b: int) -> str:
    return " ".join(t.text for t in toks[a:b])


def _words(toks: list[Tok], a: int, b: int) -> str:
    return " ".join(t.text for t in toks[a:b] if t.kind == "word")


def equations(html: str) -> list[Equation]:
    """Every ``=`` in the text of ``html`` as an :class:`Equation`, checked or skipped."""
    found: list[Equation] = []
    for block in blocks(html):
        toks = tokens(block)
        eqs = [k for k, t in enumerate(toks) if t.kind == "eq"]
        for n, k in enumerate(eqs):
            left = _side_back(toks, k)
            right = _side_forward(toks, k + 1)
            if left and n and left[0] <= eqs[n - 1]:
                left = None
            a = left[0] if left else k
            b = right[1] if right else k + 1
            # the words after the last figure (units of the result) end the quoted text
            tail = b
            while tail < len(toks) and toks[tail].kind == "word" and tail - b < 4:
                tail += 1
            shown = _text(toks, a, tail)
            if left is None or right is None:
                found.append(Equation(shown, block, skipped="a side without a figure (a "
                                      "definition or a formula in words)"))
                continue
            sides = [toks[left[0]:left[1]], toks[right[0]:right[1]]]
            if any(t.kind == "range" for s in sides for t in _drop_labels(s)):
                found.append(Equation(shown, block, skipped="a range, not one figure"))
                continue
            if any(t.text in _WORD_OPS for s in sides for t in s if t.kind == "word"):
                found.append(Equation(shown, block, skipped="operands given in words "
                                      "(prose operators such as 'less', 'over')"))
                continue
            if not any(t.kind == "op" for s in sides for t in s):
                found.append(Equation(shown, block, skipped="one quantity named in two units "
                                      "(no operator)"))
                continue
            try:
                lhs, rhs = _Eval(sides[0]).run(), _Eval(sides[1]).run()
            except (ValueError, IndexError) as exc:
                found.append(Equation(shown, block, skipped=f"unparsed: {exc}"))
                continue
            # requests "an hour" on one side against requests/s on the other
            lw, rw = _words(toks, *left), _words(toks, right[0], tail)
            if _HOURLY.search(lw) and _PER_SECOND.search(rw):
                lhs = (lhs[0] / 3600, lhs[1] / 3600)
            elif _HOURLY.search(rw) and _PER_SECOND.search(lw):
                rhs = (rhs[0] / 3600, rhs[1] / 3600)
            found.append(Equation(shown, block, lhs, rhs))
    return found


# "70.6 GB of weights at 4 × 3.35 TB/s × 100 % efficiency: 5.27 ms": a division the walk-through
# prints with a colon for "="; GB / (TB/s) is ms.
_STREAM = re.compile(
    r"(?P<gb>[\d.,]+) GB(?: of weights)?,? at (?P<tp>\d+) × (?P<bw>[\d.]+) TB/s × "
    r"(?P<eff>[\d.]+)\s?% efficiency(?: × (?P<credit>[\d.]+)\s?% of the modelled speed credited)?"
    r"(?P<rest>: [\d.,]+ ms|;)")


def streaming(html: str) -> list[Equation]:
    """The weight-streaming steps, read as "GB / (TP × TB/s × efficiency) = ms" and checked
    as :func:`equations` checks; one whose time is printed as a sum ("; the step waits for
    the busiest GPU: ... = 9.99 ms") is left to :func:`equations`, and returned skipped."""
    found: list[Equation] = []
    for block in blocks(html):
        for m in _STREAM.finditer(block):
            if m["rest"] == ";":
                found.append(Equation(m.group(), block, skipped="the time is printed as a sum"))
                continue
            credit = f" × {m['credit']} %" if m["credit"] else ""
            expr = (f"<p>{m['gb']} GB / ( {m['tp']} × {m['bw']} TB/s × {m['eff']} %{credit} ) = "
                    f"{m['rest'][2:]}</p>")
            (eq,) = equations(expr)
            found.append(Equation(m.group(), block, eq.lhs, eq.rhs, eq.skipped))
    return found
