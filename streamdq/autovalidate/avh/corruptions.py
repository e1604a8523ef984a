"""Synthetic data-quality issues (AVH, Sec. 4.3 and Appendix B): the "training data" for recall.

Pure pandas/numpy, no Spark. ``apply(frame, column, corruption, rng)`` returns a NEW frame in which
only ``column`` is corrupted (``volume_change`` is the exception: it resamples whole rows); the input
frame is never mutated. Everything random is drawn from the given ``numpy.random.Generator`` in a
fixed order, so the same frame, corruption and seed always give the same output.

The ten issue types and the paper's magnitudes (``corruptions_for`` lists them per column kind):

========================  =========================  ============================================
issue                     magnitude                  what changes
========================  =========================  ============================================
schema_change             p = 0.01, 0.1, 1.0         p of the values replaced by values sampled from
                                                     the nearest column of the same kind
unit_change (numeric)     factor 10, 100, 1000       every value multiplied by the factor
casing_change (categ.)    p = 0.01, 0.1, 1.0         p of the values upper-cased (variant ``upper``)
                                                     or lower-cased (variant ``lower``), picked among
                                                     the values the change alters (an all-upper
                                                     column has nothing to upper-case: a no-op)
increased_nulls           p = 0.01, 0.5, 1.0         p of the values replaced by the paper's null
                                                     stand-in: ``""`` (categorical) / ``0`` (numeric);
                                                     variant ``null``: a real missing value instead
volume_change             factor 2, 10, 0.5, 0.1     rows up-sampled (original rows kept, extra rows
                                                     drawn with replacement) or down-sampled
                                                     (without replacement, row order kept)
distribution_change       p = 0.1, 0.5               values sorted, the ``first`` / ``last`` p of
                                                     them form a biased sample that replaces the
                                                     column (drawn with replacement, same length)
character_perturbation    p = 0.01, 0.1, 1.0         each character, with probability p, becomes a
                                                     different character of its class
                                                     ([0-9], [a-z], [A-Z]; others untouched)
insertion                 p = 0.1, 0.5               each value, with probability p, gets one random
                                                     character inserted at a random position
deletion                  p = 0.1, 0.5               each value, with probability p, loses one
                                                     random character
whitespace_padding        p = 0.1, 0.5, 1.0          p of the values get one leading or trailing
(categorical)                                        space (chosen at random per value); variants
                                                     ``leading`` / ``trailing``: the same side for
                                                     every value (how real padding looks: a
                                                     fixed-width export; it keeps the distinct
                                                     count when p = 1)
========================  =========================  ============================================

The paper's ten forms come first in ``corruptions_for``; the variants this module adds (real
missing values, one-sided padding) are listed after the paper's form of their issue, and the
one-sided padding, being the newest, last: a catalogue index, and so every seed derived from one,
keeps naming the same corruption when variants are added at the end.

Contracts and choices the paper leaves open:

- "p of the values" means exactly ``max(1, round(p * n))`` rows (n = rows in the frame), capped at
  the number of non-null values, chosen without replacement among the non-null values; nulls are
  never "corrupted" except by ``distribution_change``/``volume_change`` which move whole values/rows.
  The per-character / per-value issues (perturbation, insertion, deletion) are Bernoulli(p) draws.
- Numeric columns stay numeric. Character perturbation, insertion and deletion operate on the digits
  of the plain decimal representation (``np.format_float_positional(v, trim='-')``, ints as ``str``;
  sign and decimal point are never touched) and parse the result back. A deletion that removes the
  only digit of a value leaves a missing value (a truncated number reads as missing); integer
  columns then become float64. Inserted characters are digits. ``increased_nulls:*:null`` on an
  integer column also promotes it to float64. Non-finite values are left alone.
- Categorical insertions draw from ``[a-z]`` / ``[A-Z]`` / ``[0-9]`` (one class chosen uniformly).
  Categorical outputs keep the input dtype (a ``category`` column comes back as ``object``).
- ``schema_change`` takes its source from the nearest column of the same kind (ties: the right-hand
  one), or ``source=`` when given. With no such column it casts another column: a numeric target
  takes the string length of a categorical column's values, a categorical target takes
  ``str()`` of a numeric column's values. A frame with no other column at all is shuffled (values
  permuted), which changes nothing but row order: the only "schema change" a single column allows.
- An empty frame comes back as an (empty) copy for every corruption.
"""

from __future__ import annotations

import math
import string
from dataclasses import dataclass

import numpy as np
import pandas as pd

from streamdq.errors import InvalidArgument, UnknownName

ISSUE_TYPES: tuple[str, ...] = (
    "schema_change",
    "unit_change",
    "casing_change",
    "increased_nulls",
    "volume_change",
    "distribution_change",
    "character_perturbation",
    "insertion",
    "deletion",
    "whitespace_padding",
)

KINDS: tuple[str, ...] = ("numeric", "categorical")

# issue -> (magnitudes, variants) per Appendix B; the variant "" is the paper's own form.
_MAGNITUDES: dict[str, tuple[tuple[float, ...], tuple[str, ...]]] = {
    "schema_change": ((0.01, 0.1, 1.0), ("",)),
    "unit_change": ((10.0, 100.0, 1000.0), ("",)),
    "casing_change": ((0.01, 0.1, 1.0), ("upper", "lower")),
    "increased_nulls": ((0.01, 0.5, 1.0), ("", "null")),
    "volume_change": ((2.0, 10.0, 0.5, 0.1), ("",)),
    "distribution_change": ((0.1, 0.5), ("first", "last")),
    "character_perturbation": ((0.01, 0.1, 1.0), ("",)),
    "insertion": ((0.1, 0.5), ("",)),
    "deletion": ((0.1, 0.5), ("",)),
    "whitespace_padding": ((0.1, 0.5, 1.0), ("", "leading", "trailing")),
}

_NUMERIC_ONLY = frozenset({"unit_change"})
_CATEGORICAL_ONLY = frozenset({"casing_change", "whitespace_padding"})
_FACTOR_ISSUES = frozenset({"unit_change", "volume_change"})
_VARIANTS: dict[str, frozenset[str]] = {
    "casing_change": frozenset({"upper", "lower"}),
    "increased_nulls": frozenset({"", "null"}),
    "distribution_change": frozenset({"first", "last"}),
    "whitespace_padding": frozenset({"", "leading", "trailing"}),
}

_DIGITS = string.digits
_LOWER = string.ascii_lowercase
_UPPER = string.ascii_uppercase


@dataclass(frozen=True)
class Corruption:
    """One synthetic issue: type, the paper's magnitude and an optional variant.

    ``magnitude`` is a fraction in (0, 1] for the p-issues, a multiplier for ``unit_change``
    (> 0) and ``volume_change`` (> 0, != 1). ``variant`` is ``upper``/``lower`` for casing,
    ``first``/``last`` for distribution change (default ``first``), ``""``/``null`` for increased
    nulls, ``""``/``leading``/``trailing`` for whitespace padding (random side per value, or one
    side for all), and empty otherwise. Invalid combinations raise ``ValueError``.
    """

    issue: str
    magnitude: float
    variant: str = ""

    def __post_init__(self) -> None:
        if self.issue not in ISSUE_TYPES:
            raise InvalidArgument(f"unknown issue type {self.issue!r}; expected one of {ISSUE_TYPES}")
        m = float(self.magnitude)
        if not math.isfinite(m) or m <= 0:
            raise InvalidArgument(f"{self.issue}: magnitude must be a positive number, got {self.magnitude}")
        if self.issue not in _FACTOR_ISSUES and m > 1.0:
            raise InvalidArgument(f"{self.issue}: magnitude is a fraction in (0, 1], got {self.magnitude}")
        if self.issue == "volume_change" and m == 1.0:
            raise InvalidArgument("volume_change: a factor of 1 changes nothing")
        allowed = _VARIANTS.get(self.issue, frozenset({""}))
        if self.issue == "casing_change" and self.variant == "":
            object.__setattr__(self, "variant", "upper")
        elif self.issue == "distribution_change" and self.variant == "":
            object.__setattr__(self, "variant", "first")
        if self.variant not in allowed:
            raise InvalidArgument(
                f"{self.issue}: variant must be one of {sorted(allowed)}, got {self.variant!r}"
            )

    @property
    def name(self) -> str:
        """Stable id: ``issue:label[:variant]``, e.g. ``unit_change:x100``, ``increased_nulls:1%:null``."""
        if self.issue in _FACTOR_ISSUES:
            label = f"x{self.magnitude:g}"
        else:
            label = f"{self.magnitude * 100:g}%"
        return f"{self.issue}:{label}" + (f":{self.variant}" if self.variant else "")

    def applies_to(self, kind: str) -> bool:
        """Whether this corruption is defined for a column of ``kind`` ("numeric"/"categorical")."""
        _check_kind(kind)
        if kind == "numeric":
            return self.issue not in _CATEGORICAL_ONLY
        return self.issue not in _NUMERIC_ONLY


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise InvalidArgument(f"kind must be one of {KINDS}, got {kind!r}")


def corruptions_for(kind: str) -> list[Corruption]:
    """All corruptions applicable to a ``kind`` column, with Appendix B's magnitudes, in a stable order.

    Numeric: every issue but casing change and whitespace padding (which would turn numbers into
    strings). Categorical: every issue but unit change. Increased nulls comes in the paper's form
    (``""`` / ``0``) and with real missing values (variant ``null``: NaN in a numeric column,
    None in a categorical one; the engine reads both as NULL); casing in both directions;
    whitespace padding on a random side per value and on one side for every value.
    """
    _check_kind(kind)
    out = []
    for issue in ISSUE_TYPES:
        magnitudes, variants = _MAGNITUDES[issue]
        for variant in variants:
            for m in magnitudes:
                c = Corruption(issue, m, variant)
                if c.applies_to(kind):
                    out.append(c)
    return out


def column_kind(series: pd.Series) -> str:
    """``numeric`` for numeric dtypes (booleans excluded), else ``categorical``."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "categorical"
    return "numeric" if pd.api.types.is_numeric_dtype(dtype) else "categorical"


def apply(
    frame: pd.DataFrame,
    column: str,
    corruption: Corruption,
    rng: np.random.Generator,
    *,
    source: str | None = None,
) -> pd.DataFrame:
    """A new frame with ``corruption`` injected into ``column`` (see the module docstring).

    ``source`` overrides the neighbouring column used by ``schema_change``. Raises ``UnknownName``
    (also a ``KeyError``) for an unknown column and ``InvalidArgument`` (also a ``ValueError``) when
    the corruption does not apply to the column's kind.
    """
    if column not in frame.columns:
        raise UnknownName("column", column, [str(c) for c in frame.columns])
    kind = column_kind(frame[column])
    if not corruption.applies_to(kind):
        raise InvalidArgument(f"{corruption.name} does not apply to {kind} column {column!r}")
    out = frame.copy(deep=True)
    if len(out) == 0:
        return out
    if corruption.issue == "volume_change":
        return _volume(out, corruption.magnitude, rng)
    col = out[column]
    if isinstance(col.dtype, pd.CategoricalDtype):
        col = col.astype(object)
    handler = _HANDLERS[corruption.issue]
    new = handler(out, column, col, kind, corruption, rng, source)
    out[column] = new
    return out


# ----------------------------------------------------------------------------------------------
# helpers


def _pick(
    col: pd.Series, p: float, rng: np.random.Generator, eligible: np.ndarray | None = None
) -> np.ndarray:
    """Positions of exactly max(1, round(p * n)) non-null (and ``eligible``) values, capped, no repeats."""
    mask = col.notna().to_numpy()
    if eligible is not None:
        mask = mask & eligible
    pool = np.flatnonzero(mask)
    k = min(len(pool), max(1, round(p * len(col))))
    if k == 0:
        return pool[:0]
    return np.sort(rng.choice(pool, size=k, replace=False))


def _set_positions(col: pd.Series, positions: np.ndarray, values: list | np.ndarray) -> pd.Series:
    new = col.copy()
    if len(positions):
        new.iloc[positions] = values
    return new


def _is_int(col: pd.Series) -> bool:
    return pd.api.types.is_integer_dtype(col.dtype)


def _as_float_if_int(col: pd.Series) -> pd.Series:
    """Integer columns become float64 (numpy ints cannot hold NaN); others unchanged."""
    if _is_int(col):
        return col.astype("float64")
    return col


def _num_to_text(v: object) -> str | None:
    """Plain decimal text of a finite number (no exponent), None for missing/non-finite."""
    if v is None or v is pd.NA:
        return None
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return str(int(v))
    f = float(v)  # type: ignore[arg-type]
    if not math.isfinite(f):
        return None
    return np.format_float_positional(f, trim="-")


def _text_to_num(s: str, integer: bool) -> float | int:
    if not any(ch.isdigit() for ch in s):
        return math.nan
    if integer and "." not in s:
        return int(s)
    return float(s)


def _other_in_class(ch: str, rng: np.random.Generator) -> str:
    for alphabet in (_DIGITS, _LOWER, _UPPER):
        if ch in alphabet:
            j = alphabet.index(ch)
            k = int(rng.integers(len(alphabet) - 1))
            return alphabet[k if k < j else k + 1]
    return ch


def _perturb_text(s: str, p: float, rng: np.random.Generator, digits_only: bool) -> str:
    draws = rng.random(len(s))
    chars = list(s)
    for i, ch in enumerate(chars):
        if draws[i] < p and (ch.isdigit() if digits_only else ch.isascii() and ch.isalnum()):
            chars[i] = _other_in_class(ch, rng)
    return "".join(chars)


def _random_char(rng: np.random.Generator, digits_only: bool) -> str:
    if digits_only:
        return _DIGITS[int(rng.integers(10))]
    alphabet = (_LOWER, _UPPER, _DIGITS)[int(rng.integers(3))]
    return alphabet[int(rng.integers(len(alphabet)))]


def _insert_text(s: str, rng: np.random.Generator, digits_only: bool) -> str:
    ch = _random_char(rng, digits_only)
    if digits_only:
        start = 1 if s.startswith("-") else 0  # never in front of the sign
        pos = int(rng.integers(start, len(s) + 1))
    else:
        pos = int(rng.integers(len(s) + 1))
    return s[:pos] + ch + s[pos:]


def _delete_text(s: str, rng: np.random.Generator, digits_only: bool) -> str:
    candidates = [i for i, ch in enumerate(s) if ch.isdigit()] if digits_only else list(range(len(s)))
    if not candidates:
        return s
    i = candidates[int(rng.integers(len(candidates)))]
    return s[:i] + s[i + 1 :]


def _per_value_text(
    col: pd.Series,
    kind: str,
    rng: np.random.Generator,
    edit: str,
    p: float,
) -> pd.Series:
    """Apply a text edit to the values (numeric: on their digits, then parsed back)."""
    numeric = kind == "numeric"
    integer = _is_int(col)
    values = col.tolist()
    out: list = list(values)
    changed_to_nan = False
    for i, v in enumerate(values):
        if numeric:
            text = _num_to_text(v)
        else:
            text = v if isinstance(v, str) else None
        if text is None:
            continue
        if edit == "perturb":
            new_text = _perturb_text(text, p, rng, digits_only=numeric)
        else:
            if rng.random() >= p:
                continue
            if edit == "insert":
                new_text = _insert_text(text, rng, digits_only=numeric)
            else:
                new_text = _delete_text(text, rng, digits_only=numeric)
        if new_text == text:
            continue
        if numeric:
            parsed = _text_to_num(new_text, integer)
            if isinstance(parsed, float) and math.isnan(parsed):
                changed_to_nan = True
            out[i] = parsed
        else:
            out[i] = new_text
    if numeric:
        result_dtype = "float64" if (changed_to_nan and integer) else col.dtype
        if integer and not changed_to_nan and any(isinstance(x, float) for x in out):
            result_dtype = "float64"
        return pd.Series(out, index=col.index, name=col.name).astype(result_dtype)
    return pd.Series(out, index=col.index, name=col.name, dtype=col.dtype)


# ----------------------------------------------------------------------------------------------
# handlers: (frame, column, col, kind, corruption, rng, source) -> new column


def _schema(
    frame: pd.DataFrame,
    column: str,
    col: pd.Series,
    kind: str,
    c: Corruption,
    rng: np.random.Generator,
    source: str | None,
) -> pd.Series:
    names = list(frame.columns)
    if source is not None:
        if source not in frame.columns or source == column:
            # the source must be another column of the frame
            raise UnknownName("schema_change source column", source, [str(n) for n in names if n != column])
        src_name: str | None = source
    else:
        here = names.index(column)
        others = sorted(
            (n for n in names if n != column),
            key=lambda n: (abs(names.index(n) - here), names.index(n) < here),
        )
        same = [n for n in others if column_kind(frame[n]) == kind]
        src_name = same[0] if same else (others[0] if others else None)
    positions = _pick(col, c.magnitude, rng)
    if src_name is None:
        # single-column frame: the values are permuted among the picked rows
        vals = col.iloc[positions].to_numpy()
        return _set_positions(col, positions, vals[rng.permutation(len(vals))])
    src = frame[src_name]
    src_kind = column_kind(src)
    if src_kind != kind:
        if kind == "numeric":  # categorical -> numeric: string length
            src = src.map(lambda v: len(v) if isinstance(v, str) else None).astype("float64")
        else:  # numeric -> categorical: text of the number
            src = src.map(lambda v: _num_to_text(v)).astype(object)
    pool = src.dropna().to_numpy()
    if len(pool) == 0:
        drawn: np.ndarray = np.full(len(positions), np.nan if kind == "numeric" else None, dtype=object)
    else:
        drawn = pool[rng.integers(len(pool), size=len(positions))]
    if kind == "numeric":
        target = col
        if _is_int(col) and (len(pool) == 0 or not pd.api.types.is_integer_dtype(src.dtype)):
            target = col.astype("float64")
        return _set_positions(target, positions, list(drawn))
    return _set_positions(col, positions, list(drawn))


def _unit(
    frame: pd.DataFrame,
    column: str,
    col: pd.Series,
    kind: str,
    c: Corruption,
    rng: np.random.Generator,
    source: str | None,
) -> pd.Series:
    factor = c.magnitude
    if _is_int(col) and float(factor).is_integer():
        return col * int(factor)
    return col * factor


def _casing(
    frame: pd.DataFrame,
    column: str,
    col: pd.Series,
    kind: str,
    c: Corruption,
    rng: np.random.Generator,
    source: str | None,
) -> pd.Series:
    def recase(v: str) -> str:
        return v.upper() if c.variant == "upper" else v.lower()

    changeable = col.map(lambda v: isinstance(v, str) and recase(v) != v).astype(bool)
    positions = _pick(col, c.magnitude, rng, eligible=changeable.to_numpy())
    new = [recase(v) for v in col.iloc[positions].tolist()]
    return _set_positions(col, positions, new)


def _nulls(
    frame: pd.DataFrame,
    column: str,
    col: pd.Series,
    kind: str,
    c: Corruption,
    rng: np.random.Generator,
    source: str | None,
) -> pd.Series:
    positions = _pick(col, c.magnitude, rng)
    if c.variant == "null":
        if kind == "numeric":
            target = _as_float_if_int(col) if len(positions) else col
            return _set_positions(target, positions, [np.nan] * len(positions))
        return _set_positions(col, positions, [None] * len(positions))
    if kind == "numeric":
        return _set_positions(col, positions, [0] * len(positions))
    return _set_positions(col, positions, [""] * len(positions))


def _volume(frame: pd.DataFrame, factor: float, rng: np.random.Generator) -> pd.DataFrame:
    n = len(frame)
    if factor > 1:
        extra = max(1, round(n * (factor - 1)))
        idx = np.concatenate([np.arange(n), rng.integers(n, size=extra)])
    else:
        keep = min(n, max(1, round(n * factor)))
        idx = np.sort(rng.choice(n, size=keep, replace=False))
    return frame.iloc[idx].reset_index(drop=True)


def _distribution(
    frame: pd.DataFrame,
    column: str,
    col: pd.Series,
    kind: str,
    c: Corruption,
    rng: np.random.Generator,
    source: str | None,
) -> pd.Series:
    present = col.notna().to_numpy()
    values = col[present]
    if len(values) == 0:
        return col
    if kind == "numeric":
        ordered = np.sort(values.to_numpy())
    else:
        ordered = np.array(sorted(values.tolist(), key=str), dtype=object)
    k = max(1, round(c.magnitude * len(ordered)))
    biased = ordered[:k] if c.variant == "first" else ordered[-k:]
    drawn = biased[rng.integers(len(biased), size=len(values))]
    positions = np.flatnonzero(present)
    return _set_positions(col, positions, list(drawn))


def _perturbation(
    frame: pd.DataFrame,
    column: str,
    col: pd.Series,
    kind: str,
    c: Corruption,
    rng: np.random.Generator,
    source: str | None,
) -> pd.Series:
    return _per_value_text(col, kind, rng, "perturb", c.magnitude)


def _insertion(
    frame: pd.DataFrame,
    column: str,
    col: pd.Series,
    kind: str,
    c: Corruption,
    rng: np.random.Generator,
    source: str | None,
) -> pd.Series:
    return _per_value_text(col, kind, rng, "insert", c.magnitude)


def _deletion(
    frame: pd.DataFrame,
    column: str,
    col: pd.Series,
    kind: str,
    c: Corruption,
    rng: np.random.Generator,
    source: str | None,
) -> pd.Series:
    return _per_value_text(col, kind, rng, "delete", c.magnitude)


def _padding(
    frame: pd.DataFrame,
    column: str,
    col: pd.Series,
    kind: str,
    c: Corruption,
    rng: np.random.Generator,
    source: str | None,
) -> pd.Series:
    positions = _pick(col, c.magnitude, rng)
    if c.variant:
        leading = np.full(len(positions), c.variant == "leading")
    else:
        leading = rng.random(len(positions)) < 0.5
    vals = col.iloc[positions].tolist()
    new = [(" " + v if lead else v + " ") for v, lead in zip(vals, leading, strict=True)]
    return _set_positions(col, positions, new)


_HANDLERS = {
    "schema_change": _schema,
    "unit_change": _unit,
    "casing_change": _casing,
    "increased_nulls": _nulls,
    "distribution_change": _distribution,
    "character_perturbation": _perturbation,
    "insertion": _insertion,
    "deletion": _deletion,
    "whitespace_padding": _padding,
}
