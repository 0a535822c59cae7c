"""Formatting for the PDF proposal: the one :class:`Formatter` for every number (templates,
chart labels, tests), and the few text helpers the sections share: clipping, short names,
control characters, an SVG chart as an inline image. No arithmetic on sizing quantities."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from markupsafe import Markup

from ...model.catalog import CLOUD_TIERS
from ...model.names import short_name

NBSP = "\u00a0"
# a headroom above this (10 = 1,000 %) prints as "> 1,000 %": Formatter.headroom
HEADROOM_SHOWN_UP_TO = 10.0


# ---- formatting: the one helper for every number in the PDF --------------------------------


class Formatter:
    """Formats numbers the same way everywhere (templates, chart labels, tests).

    Thousands separators; a no-break space between a number and its unit so the
    pair never wraps; currency as ``USD 1,234,567`` (cents below 100)."""

    def __init__(self, currency: str) -> None:
        self.currency = currency
        # the decimals every headroom in one document shows (:meth:`for_headrooms`); None: each
        # column or figure decides for itself
        self.headroom_places: int | None = None

    def for_headrooms(self, xs: Iterable[float]) -> Formatter:
        """This formatter, every headroom it prints to one precision: :meth:`headroom_digits`
        over all the headrooms a document shows. One figure, one look: the insurer's chat pool
        read "29 %" in the alternatives (a column with "200 %") and "28.6 %" in the plan."""
        self.headroom_places = self.headroom_digits(xs)
        return self

    @staticmethod
    def number(x: float, digits: int = 0) -> str:
        s = f"{float(x):,.{digits}f}"
        if s.startswith("-") and not s.strip("-0.,"):
            s = s[1:]  # no "-0"
        return s

    def count(self, x: float) -> str:
        return self.number(x, 0)

    @classmethod
    def stated(cls, x: float) -> str:
        """A figure the requirements state, as stated: "2.5" busiest-hour factor, "0.5"
        requests a second, "12,000" users (the whole-number format printed "2" and "0")."""
        return cls.number(x, 4).rstrip("0").rstrip(".") if "." in cls.number(x, 4) else cls.number(x)

    @classmethod
    def figures(cls, x: float) -> str:
        """A modelled quantity to three significant figures: "4.11" ms a sequence, "18.4"
        replicas (never "4.105" or "18.43": the fitted constants behind them are not that
        exact), whole from 100."""
        if abs(x) >= 100:
            return cls.number(float(f"{float(x):.3g}"), 0)
        return f"{float(x):.3g}"

    @classmethod
    def batch(cls, x: float) -> str:
        """The sequences a replica runs at the stated load (``batch_served``): whole as a
        count ("67", "1,024"), a mean over the replicas to three figures as :meth:`figures`
        ("9.71": 64 stated streams over the 6.59 replicas they need)."""
        return cls.number(x) if float(x).is_integer() else cls.figures(x)

    def approx(self, x: float) -> str:
        """An estimated quantity to three significant figures, whole: "461,000" for the
        460,930 million tokens a year that rest on estimated loads (a count keeps every digit)."""
        return self.number(float(f"{float(x):.3g}"), 0) if abs(x) >= 1000 else self.count(x)

    def millions(self, x: float) -> str:
        """A count given in millions, in the word a reader uses for its size, to three
        significant figures as :meth:`approx`: "461 million", "615 billion", "2.02 trillion"
        (review round 19: "2,020,000 million" tokens a year read oddly)."""
        shown = float(f"{float(x):.3g}")  # rounded first: 999.6 million is "1 billion"
        for scale, word in ((1e6, "trillion"), (1e3, "billion")):
            if abs(shown) >= scale:
                return f"{float(f'{shown / scale:.3g}'):,g}{NBSP}{word}"
        if abs(shown) >= 1:
            return f"{self.approx(x)}{NBSP}million"
        # below a million the count itself: "0 million" said nothing (a small account's
        # 0.4 million tokens a year is "400,000")
        return self.approx(float(f"{float(x) * 1e6:.3g}"))

    @staticmethod
    def precision(p: str) -> str:
        return precision_name(p)

    def count_of(self, x: float, noun: str, plural: str | None = None) -> str:
        """'1 GPU', '12 GPUs' (``plural`` for irregular nouns)."""
        return f"{self.count(x)} {noun if x == 1 else plural or noun + 's'}"

    def money(self, x: float) -> str:
        """Money rounded to what the inputs support (prices are +/-20-40 % estimates): three
        significant figures from a thousand up (USD 1.08 M, USD 501 k, USD 17.0 M), whole units
        from 100, one decimal from 10 (USD 61.9, never USD 61.94), cents below. The workbook
        keeps the exact figures."""
        if abs(x) < 1000:  # nothing is nothing: "USD 0", never "USD 0.00" (no licences)
            size = abs(float(f"{float(x):.3g}"))  # 99.96 is shown as 100, whole
            digits = 0 if size >= 100 or x == 0 else 1 if size >= 10 else 2
            return f"{self.currency}{NBSP}{self.number(x, digits)}"
        shown = float(f"{float(x):.3g}")
        for limit, suffix in ((1e9, "bn"), (1e6, "M"), (1e3, "k")):
            if abs(shown) >= limit:
                # three figures, as the costs section says, trailing zeros too: "USD 17.0 M"
                # beside "USD 15.2 M", not "USD 17 M" ('#' keeps them, and a point after "100")
                figures = f"{shown / limit:#.3g}".rstrip(".")
                if abs(shown) >= 1000 * limit:  # "USD 27,400 bn", never "USD 2.74e+04 bn"
                    figures = self.number(shown / limit, 0)
                return f"{self.currency}{NBSP}{figures}{NBSP}{suffix}"
        return f"{self.currency}{NBSP}{shown:g}"  # pragma: no cover - |x| >= 1000 above

    def unit_price(self, x: float) -> str:
        """A price per unit that may be a fraction of a cent (USD 0.0051 per million
        embedded tokens): two significant figures below one, else as ``money``."""
        if 0 < abs(x) < 1:  # two figures, a trailing zero kept: "USD 0.10" beside "USD 0.77"
            return f"{self.currency}{NBSP}{float(x):#.2g}"
        return self.money(x)

    def tariff(self, x: float) -> str:
        """An electricity tariff per kWh: three significant figures, as tariffs are quoted in
        fractions of a cent ("GBP 0.245", "USD 0.12", "JPY 18.2"); :meth:`money`'s cents
        printed a stated 0.245 GBP as "GBP 0.24" (review round 20)."""
        if 0 < abs(x) < 1000:
            return f"{self.currency}{NBSP}{float(x):.3g}"
        return self.money(x)

    def money_short(self, x: float) -> str:
        """Chart axes, as the text says money (:meth:`money`: USD 1.50 M, USD 60.0 k, three
        figures as the costs section promises; an axis read "USD 200k" under a text's "USD 200
        k"), the origin "0"."""
        return "0" if x == 0 else self.money(x)

    def pct(self, x: float, digits: int | None = None) -> str:
        """A share as "26.4 %": one decimal, dropped where it is 0 ("28 %"); a table column
        passes the ``digits`` of :meth:`pct_digits` so that it keeps one precision."""
        coarse, fine = f"{float(x):,.0%}", f"{float(x):,.1%}"
        if digits is not None:
            s = fine if digits else coarse
        else:
            s = coarse if fine.replace(".0%", "%") == coarse else fine
        if s.startswith("-") and not s.strip("-0.,%"):
            s = s[1:]
        return s.replace("%", f"{NBSP}%")

    def headroom(self, x: float, digits: int | None = None) -> str:
        """A headroom as :meth:`pct`, bounded: above 1,000 % it reads "> 1,000 %" (one L4 for
        four users printed "2,500 %", true but read as a bug; the smallest configuration that
        meets the targets carries far more than the load, and the workbook keeps the figure)."""
        if float(x) > HEADROOM_SHOWN_UP_TO:
            return f">{NBSP}{self.pct(HEADROOM_SHOWN_UP_TO, 0)}"
        # whole percents, always (headroom_digits: one rule on every account and document)
        return self.pct(x, self.headroom_digits([x]))

    def headroom_note(self, xs: Iterable[float]) -> str:
        """The sentence under a table where any of these headrooms prints as "> 1,000 %"."""
        if not any(float(x) > HEADROOM_SHOWN_UP_TO for x in xs):
            return ""
        return (f"A headroom above {self.pct(HEADROOM_SHOWN_UP_TO, 0)} is shown as "
                f"“{self.headroom(float('inf'))}”: the smallest configuration that meets the "
                "targets carries far more than the peak load (the workbook holds the figure).")

    @classmethod
    def headroom_digits(cls, xs: Iterable[float]) -> int:
        """The decimals of a headroom a customer reads: none, on every account, in every
        document (PDF, workbook text, terminal, web page) and column, whatever the figures.

        The rule was "one decimal unless any headroom of the account reaches 100 %", so one
        account read "30.2 %" and the next "28 %" (its alternatives reached 100 %): the same
        kind of figure with two precisions (review session 25). Whole percents are the
        precision the sizing has (its throughput is good to about +/-25 %, a tenth of a
        percent of spare capacity is noise) and the precision a policy states ("25 %")."""
        del xs  # one rule for every list: kept as the API the templates and columns call
        return 0

    @staticmethod
    def pct_digits(xs: Iterable[float]) -> int:
        """The decimals a column of shares shows, one for all its rows: 1 where any of them
        needs it ("28.0 %" beside "26.4 %", never "28 %"), else 0."""
        return int(any(not f"{float(x):.1%}".endswith(".0%") for x in xs))

    def ms(self, x: float, unit: str | None = None) -> str:
        """A latency to what the model supports (its first-token error is about +/-25 %,
        docs/calibration.md): three significant figures, "22.1 ms", "1,740 ms" (never
        "1,738 ms"), and in seconds from 10 s, "16.1 s", as the targets read. A table column
        passes the ``unit`` of :meth:`ms_unit`, so its rows share one unit."""
        if (unit or self.ms_unit([x])) == "s":
            return self.seconds(float(x) / 1000)
        # from 1 ms, a trailing zero kept: "58.0 ms" a token beside "22.1 ms", not "58 ms"
        # (a value that rounds up to 100 keeps no point: 99.99999 ms, an embedding latency at
        # its 100 ms target, read "100. ms" in review round 21)
        shown = f"{float(x):#.3g}".rstrip(".") if 1 <= abs(x) < 100 else self.figures(x)
        return f"{shown}{NBSP}ms"

    def ms_vs(self, x: float, target_s: float) -> str:
        """A latency beside its target in seconds, "X (target Y)": as :meth:`ms`, with more
        figures where three would round it onto the target as shown or past it ("16.99 s
        (target 17 s)" for 16,991 ms, not "17 s (target 17 s)")."""
        scale = 1000.0 if self.ms_unit([x]) == "s" else 1.0
        n = _figures_apart(float(x) / scale, float(target_s) * 1000 / scale,
                           float(f"{float(target_s):.3g}") * 1000 / scale)
        if n == 3:
            return self.ms(x)
        return f"{float(x) / scale:,.{n}g}{NBSP}{'s' if scale > 1 else 'ms'}"

    def tok_s_vs(self, x: float, target: float) -> str:
        """A per-user speed and its target, "X (target Y)", both as :meth:`tok_s` (one
        decimal, as every other per-user speed: session 23, Fabrikam's "25.04 tok/s" beside
        "25.0" everywhere else); where the speed rounds onto its target the side is said in
        words: "25.0 tok/s (target 25.0 tok/s, met)" for 25.04. No target: the speed alone."""
        if target <= 0:
            return self.tok_s(x)
        said, aim = self.tok_s(x), self.tok_s(target)
        side = "" if said != aim else ", met" if x >= target else ", not met"
        return f"{said} (target {aim}{side})"

    @staticmethod
    def ms_unit(xs: Iterable[float | None]) -> str:
        """The unit of a column of latencies in ms: "s" where any of them rounds to 10 s or
        more, else "ms"."""
        return "s" if any(x is not None and abs(float(f"{float(x):.3g}")) >= 10_000
                          for x in xs) else "ms"

    def tok_s(self, x: float) -> str:
        return f"{self.number(x, 1 if abs(x) < 100 else 0)}{NBSP}tok/s"

    def kw(self, x: float) -> str:
        """Power as every section shows it (the BOM's lines and totals, the prices' node
        power): one decimal below 100 kW, none from 100, a trailing '.0' dropped, so the
        same figure never reads 4.20 kW in one place and 4.2 kW in another."""
        s = self.number(x, 1 if abs(x) < 100 else 0).removesuffix(".0")
        return f"{s}{NBSP}kW"

    def gb(self, x: float) -> str:
        digits = 2 if abs(x) < 10 else 1 if abs(x) < 1000 else 0
        return f"{self.number(x, digits)}{NBSP}GB"

    def bytes(self, x: float) -> str:
        return f"{self.number(x, 0)}{NBSP}bytes"

    def seconds(self, x: float) -> str:
        return f"{float(x):,.3g}{NBSP}s" if abs(x) < 1000 else f"{self.number(x)}{NBSP}s"

    def decimal(self, x: float, digits: int = 2) -> str:
        return self.number(x, digits)

    def share(self, x: float, digits: int = 2) -> str:
        """A count that may be a share of something shared: whole as a count ("2", never
        "2.00", review round 18), a fraction with ``digits`` decimals ("1.33")."""
        return self.count(x) if float(x).is_integer() else self.number(x, digits)

    @staticmethod
    def whole(x: float) -> bool:
        """Whether a count is whole (a template's test: a share of a shared node may not be)."""
        return float(x).is_integer()

    def params(self, x: float) -> str:
        """Parameter counts as 70.6 billion."""
        if abs(x) >= 1e9:
            return f"{float(x) / 1e9:,.1f}{NBSP}billion"
        return f"{float(x) / 1e6:,.0f}{NBSP}million"

    def unit(self, x: float | str, unit: str) -> str:
        """A value with the unit the catalog or the Result states for it."""
        if isinstance(x, str):
            return x
        if unit in ("fraction", "share"):
            return self.pct(x)
        if unit == "ms":
            return self.ms(x)
        if unit == "GB":
            return self.gb(x)
        if unit == "kW":
            return self.kw(x)
        if unit in ("us", "µs"):
            return f"{self.number(x, 1 if abs(x) < 100 else 0)}{NBSP}µs"
        if unit in ("x", "ratio"):
            return f"{float(x):,.3g}"
        digits = 0 if float(x).is_integer() else 2
        return f"{self.number(x, digits)}{NBSP}{unit}"


# C0/C1 control characters (tab and newline excepted) and bidirectional overrides: they
# are never meant to be printed and can hide or reorder text ("trojan source").
CONTROL_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


# Requirement keys that the sizing layers name in sources and notes (the workbook and the
# CLI speak to the person who wrote the YAML): the proposal reader never saw that file, so
# the PDF says what each one is instead.
KEY_WORDS = {
    "costs.gpu_prices": "the GPU prices in the requirements",
    "costs.cloud_gpu_hour": "the cloud prices in the requirements",
    "costs.usd_exchange_rate": "the exchange rate in the requirements",
    "costs.cloud_tier": "the cloud price tier in the requirements",
    "policy.survive_node_loss": "the requirement to survive the loss of a node",
}
_KEYS = re.compile("|".join(re.escape(k) for k in KEY_WORDS))
# A tier id restated in brackets after its words: "committed one-year contract (committed_1yr)".
_TIER_IDS = re.compile(r"\s*\((?:" + "|".join(CLOUD_TIERS) + r")\)")


def customer_words(text: str) -> str:
    """``text`` with requirement keys in words and bracketed tier ids dropped."""
    return _KEYS.sub(lambda m: KEY_WORDS[m.group(0)], _TIER_IDS.sub("", text))


# The engine's advice names the targets by their input keys ("Relax e2e_p95_s to at least
# 13 s"; sizing/advice.py), which the CLI and the web page say in their own terms; the
# proposal says them in words (review round 22: the customer never saw the YAML).
_PHRASE_WORDS = {
    "response_time_s so that output_tokens / response_time_s is at most":
        "the response time so that the answer's tokens ÷ the response time is at most",
}
TARGET_KEY_WORDS = {
    "tokens_per_s_per_user": "the per-user speed target",
    "system_tokens_per_s": "the total output speed target",
    "response_time_s": "the response time",
    "output_tokens": "the answer's tokens",
    "ttft_s": "the mean first-token target",
    **{f"ttft_p{q}_s": f"the p{q} first-token target" for q in (50, 90, 95, 99)},
    **{f"itl_p{q}_ms": f"the p{q} inter-token target" for q in (50, 90, 95, 99)},
    "e2e_p95_s": "the p95 whole-answer target",
    "latency_p95_s": "the p95 latency target",
    "survive_node_loss": "the requirement to survive the loss of a node",
    "prefix_cache_hit": "the prefix-cache hit rate",
}
_PHRASES = re.compile("|".join(re.escape(k) for k in _PHRASE_WORDS))
_TARGET_KEYS = re.compile(r"(?<![\w.-])(" + "|".join(
    re.escape(k) for k in sorted(TARGET_KEY_WORDS, key=len, reverse=True)) + r")(?![\w-])")


def proposal_words(text: str) -> str:
    """:func:`customer_words`, and the targets' and policies' input keys in words
    (``TARGET_KEY_WORDS``): every value the proposal's templates print."""
    text = _PHRASES.sub(lambda m: _PHRASE_WORDS[m.group(0)], customer_words(text))
    return _TARGET_KEYS.sub(lambda m: TARGET_KEY_WORDS[m.group(1)], text)


# The catalog's notes name its own fields and files ("node_power_kw is an ESTIMATE", "reference
# prices.csv"): a reader of the proposal or the workbook never saw the catalog, so they read
# what each one is.
CATALOG_FIELD_WORDS = {
    "node_power_kw": "the power figure", "base_price_usd": "the price without GPUs",
    "max TP": "the largest tensor-parallel group", "max_tp": "the largest tensor-parallel group",
    # an encoder's config field, in the embedding models' sources (review round 22)
    "max_position_embeddings": "positions",
}
_CATALOG_FIELDS = re.compile(r"\b(?:" + "|".join(map(re.escape, CATALOG_FIELD_WORDS)) + r")\b")
# the project's own reference files: dropped where cited after a public source, else said
_CITED_FILE = re.compile(r"[;,] reference [a-z_]+\.(?:csv|md)(?=\))")
_REFERENCES = {"reference notes": "published specifications",
               "reference prices": "published prices"}
_REFERENCE = re.compile(r"\breference (?:[a-z_]+\.(?:csv|md)\b|notes\b|prices\b)")
# the catalog flags an estimate in capitals ("base_price_usd is an ESTIMATE"), which the proposal
# says as it says every other estimate, in lower case ("a flagged estimate")
_SHOUTED = re.compile(r"\b(ESTIMATE|DERIVED)(S?)\b")
# a note citing the project's own reference in passing ("secondary, in the project's
# infrastructure reference"): the customer never saw it, the public source is named
_PROJECT_REFERENCE = re.compile(r",? in the project's [a-z ]*reference\b")
# a count in engineering notation ("70.6e9 safetensors total"), said as the proposal says it
_BILLIONS = re.compile(r"\b(\d+(?:\.\d+)?)e9( safetensors total)?\b")


def _said(m: re.Match[str], words: str) -> str:
    """``words`` for the match, capitalised where it opens a sentence."""
    before = m.string[:m.start()].rstrip()
    return words[:1].upper() + words[1:] if not before or before.endswith(".") else words


def catalog_note(text: str, names: Mapping[str, str] | None = None) -> str:
    """A catalog note or source in words: its field names said (``CATALOG_FIELD_WORDS``), its
    ESTIMATE flags in lower case, the project's reference files left out, a catalog id in
    ``names`` (platform id -> name) by its name, and "70.6e9" as "70.6 billion"."""
    text = _CATALOG_FIELDS.sub(lambda m: _said(m, CATALOG_FIELD_WORDS[m.group(0)]), text)
    text = _SHOUTED.sub(lambda m: _said(m, (m.group(1) + m.group(2)).lower()), text)
    text = _PROJECT_REFERENCE.sub("", text)
    text = _REFERENCE.sub(lambda m: _REFERENCES.get(m.group(0), "published specifications"),
                          _CITED_FILE.sub("", text))
    if names:
        ids = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, sorted(names, key=len,
                                                                         reverse=True)))
                         + r")(?![\w-])")
        text = ids.sub(lambda m: names[m.group(1)], text)
    return _BILLIONS.sub(lambda m: f"{m.group(1)} billion"
                         + (" in the published weight files" if m.group(2) else ""), text)


def precision_name(precision: str) -> str:
    """'fp8' -> 'FP8', 'mxfp4' -> 'MXFP4': the catalog's ids are the formats' usual names
    in lower case."""
    return precision.upper()


def option_words(gpu_name: str, tp: int, weight_precision: str, kv_precision: str) -> str:
    """One configuration as a customer reads it: '4 × NVIDIA H100 SXM 80GB, FP8 weights, FP8
    KV cache' (the GPUs of one model copy, then the precisions), never the option id."""
    return (f"{tp} × {gpu_name}, {precision_name(weight_precision)} weights, "
            f"{precision_name(kv_precision)} KV cache")


# What sets apart options that share GPU, TP and precisions: (option value, words, unit, the
# value at which the feature is off)
_LAYOUT_WORDS = (("ep", "experts spread over", "GPUs", 1.0),
                 ("adp", "attention data-parallel over", "ranks", 1.0),
                 ("disagg_prefill_gpus", "decode only, prompts read by prefill replicas of",
                  "GPUs", 0.0))
LAYOUT_KEYS = tuple(key for key, *_ in _LAYOUT_WORDS)  # the option values option_label reads
# a layout value's words and unit ("experts spread over", "GPUs"), for a sentence that joins
# cells (the workbook's Summary)
LAYOUT_WORDS = {key: (words, unit) for key, words, unit, _ in _LAYOUT_WORDS}


def option_label(gpu_name: str, tp: int, weight_precision: str, kv_precision: str,
                 values: Mapping[str, object]) -> str:
    """An option as every document names it (the PDF's tables and sentences, the workbook's
    Options sheet, calculation-sheet headers and re-run check): :func:`option_words`, then its
    layout beyond TP ('· experts spread over 16 GPUs'), so no two options of a workload that
    differ there read alike."""
    extra = "".join(
        f" · {words} {Formatter.number(float(x))} {unit.removesuffix('s') if x == 1 else unit}"
        for key, words, unit, off in _LAYOUT_WORDS
        if isinstance(x := values.get(key), int | float) and float(x) > off)
    return f"{option_words(gpu_name, tp, weight_precision, kv_precision)}{extra}"


def chart_name(gpu_name: str) -> str:
    """'NVIDIA H100 SXM 80GB' -> 'H100 SXM 80GB' for chart labels. Whole: a chart wraps a
    long name at its words to the room it has (clipped at 26 letters, the memory chart read
    "RTX PRO 6000 Blackwell Se…")."""
    name = short_name(gpu_name)
    for vendor in ("NVIDIA ", "AMD ", "Intel "):
        name = name.removeprefix(vendor)
    return name


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def svg_image(svg: str, alt: str) -> Markup:
    """An SVG chart as an inline ``data:`` image: parsed as its own document (nothing in it
    can reach the HTML), drawn as vectors with its text kept as text."""
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return Markup('<img class="chart" alt="{}" src="data:image/svg+xml;base64,{}">').format(alt, data)


def and_list(items: Iterable[Any]) -> str:
    """A list in words: "A", "A and B", "A, B and C" (the alternatives read "shares with
    Company-wide chat, Knowledge-base RAG", session 23)."""
    names = [str(x) for x in items]
    if len(names) < 2:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def gpu_list(gpu_ids: Sequence[str], gpus: Mapping[str, Any]) -> str:
    """The GPUs by their catalog names: "A", "A and B", "A, B and C"."""
    return and_list(str(getattr(gpus.get(g), "name", g)) for g in gpu_ids)


def cloud_no_price_words(gpu_ids: Sequence[str], gpus: Mapping[str, Any],
                         unheld: Sequence[str] = (), tier: str = "") -> str:
    """Why ``gpu_ids`` have no cloud price, in the customer's words: none listed (in the
    ``tier``), or, for those of ``unheld``, an offer whose instances are all smaller than a
    replica (costs.py cloud_holds_replica)."""
    missing = [g for g in gpu_ids if g not in unheld]
    small = [g for g in gpu_ids if g in unheld]
    why = []
    if missing:
        why.append(f"no cloud price is listed for {gpu_list(missing, gpus)}{tier}")
    if small:
        why.append(f"the cloud offer for {gpu_list(small, gpus)} sells only instances smaller "
                   "than one replica, and a replica cannot run across instances")
    return ", and ".join(why)


def cloud_unpriced_words(gpu_ids: Sequence[str], gpus: Mapping[str, Any],
                         customer: bool = False, where: str = "",
                         unheld: Sequence[str] = ()) -> str:
    """Why the cloud total is not a number (Totals.cloud_unpriced): to whoever wrote the
    requirements (the CLI) with the keys to give, to the ``customer`` (PDF) in words, or
    naming ``where`` a price is given (the web form's field). Those of ``unheld``
    (Totals.cloud_unheld) have a price on an offer that sells no instance holding their
    replica (costs.py cloud_holds_replica): a price given would not help, and is not asked."""
    missing = [g for g in gpu_ids if g not in unheld]
    text = cloud_no_price_words(gpu_ids, gpus, unheld, " in this cloud tier") \
        + ", so the cloud cannot be compared"
    if not missing:
        return text
    where = where or (KEY_WORDS["costs.cloud_gpu_hour"] if customer
                      else ", ".join(f"costs.cloud_gpu_hour.{g}" for g in missing))
    return f"{text}; a price per GPU-hour in {where} makes it comparable"


def _apart(shown: float, x: float, target: float, shown_target: float) -> bool:
    """Whether a figure as shown stands on the same side of its target as shown as the
    figure does of the target (equal only where they are equal)."""
    if x == target:
        return True
    return shown != shown_target and (shown > shown_target) == (x > target)


def _figures_apart(x: float, target: float, shown_target: float) -> int:
    """The significant figures (3 to 7) that show ``x`` on its side of ``target``."""
    for n in range(3, 8):
        if _apart(float(f"{x:.{n}g}"), x, target, shown_target):
            return n
    return 7


def gpu_split(serving: float, standby: float, idle: float, retrieval: float = 0) -> str:
    """GPUs bought, split in the glossary's words: "15 serving, 8 on standby, 1 idle" (the
    parts add up to the GPUs bought; a part of 0 is left out); "" when every GPU serves.
    ``retrieval``: a node group's idle GPUs that run embedding or reranking servers, told
    apart ("128 serving, 5 running retrieval, 11 idle"; ``idle`` is then what is left).
    The PDF, the CLI and the web page say it with these words (tests/test_gpu_split.py)."""
    if not standby and not idle and not retrieval:
        return ""
    parts = [(serving, "serving"), (retrieval, "running retrieval"), (standby, "on standby"),
             (idle, "idle")]
    return ", ".join(f"{int(n):,} {words}" for n, words in parts if n)


def group_split(group: Any, retrieval: Iterable[Any]) -> str:
    """A language-model node group's GPUs as :func:`gpu_split` tells them, with the idle
    GPUs that the retrieval groups sharing it (``shares_with``) run: the cover's account
    split ("133 serving, 11 idle") then adds up with the plan's ("128 serving, 5 running
    retrieval, 11 idle"; review round 20, where the plan said "16 idle")."""
    from ...sizing.retrieval import lent_and_idle

    lent, idle = lent_and_idle(group, list(retrieval))
    return gpu_split(group.values["group_pool_gpus"], group.values["group_standby_gpus"], idle,
                     lent)


def retrieval_split(group: Any, retrieval: Iterable[Any]) -> str:
    """A retrieval group's own GPUs as :func:`gpu_split` tells them, with the idle GPUs that
    the retrieval groups after it run (review round 21: the reranker on the embedder's
    server: "4 GPUs bought: 1 serving, 2 running retrieval, 1 idle")."""
    from ...sizing.retrieval import lent_and_idle

    lent, idle = lent_and_idle(group, list(retrieval))
    return gpu_split(group.replicas, group.standby_gpus, idle, lent)


def shared_gpus_words(group: Any) -> str:
    """The GPUs a retrieval group sharing another group's nodes runs on, in words: the idle
    GPUs it takes and the GPUs it buys for those nodes' empty slots (session 22: Maple
    Ridge's embedder on a GPU added to the chat server's fourth slot read "use 1 idle GPU;
    no GPUs or servers bought for it")."""
    from ...sizing.retrieval import shared_split

    idle, bought = shared_split(group)
    parts = [f"{idle:,} idle GPU{'' if idle == 1 else 's'}" if idle else "",
             ("1 new GPU in an empty slot" if bought == 1 else
              f"{bought:,} new GPUs in empty slots") if bought else ""]
    # session 24: with N+1 its spare GPUs sit there too, on another server than its replicas'
    standby = f" ({group.standby_gpus:,} on standby)" if group.standby_gpus else ""
    return " and ".join(p for p in parts if p) + standby


def shared_place_words(group: Any, retrieval: Iterable[Any]) -> str:
    """Where a retrieval group sharing another group's nodes runs, in the CLI's and the PDF's
    words: "1 new GPU in an empty slot of the language-model servers, no server of its own"
    (session 23: the workbook's bill of materials read "Question embedding: 0 nodes, 1 GPU").
    The host is a language-model node group or an earlier retrieval group's servers."""
    host = next((h.workload for h in retrieval if h.id == group.shares_with), "language-model")
    return f"{shared_gpus_words(group)} of the {host} servers, no server of its own"


def batch_words(limit: float, served: float) -> str:
    """A replica's batch in a presales engineer's words, its two figures named: "batch limit
    67, 9.71 at peak" (batch_per_replica: the most a replica may hold at once; batch_served:
    what the stated load keeps it at). The university's stream job read "67 planned" in the
    PDF, "9.71" in the options and "batch 9" in the plan line (session 23)."""
    return f"batch limit {Formatter.number(limit)}, {Formatter.batch(served)} at peak"
