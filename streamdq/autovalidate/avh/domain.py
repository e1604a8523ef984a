"""The value domain of a categorical column: the values a closed history kept to (issue 22).

A categorical column often takes its values from a small closed set: three airports of origin,
sixteen carriers, the weather's three stations. A foreign value in it (1% of the values taken
from another column by a schema change, a code mistyped upstream) moves no share, length or
distance of a batch enough for the 0.001 target when it is 1% of the rows, and the distinct
count is priced with Chebyshev on a floor of half a value (``3 +- 15.8`` distinct airports at
1e-3). What does not move is the set itself: ``history_domain`` learns it from the history's
value tables, when the history is **closed**: every batch's values all appear in some other
batch of the history (leave-one-out: no batch ever brought a value the others lacked). A route
flown once in the month, or a tail number new every day, opens the domain and none is learned.

The learner prices "values outside the domain" (``off_domain``, a share of the batch's non-null
values) as a rare event, as it prices values off the lattice or the support
(``bounds.binomial_count``: no new value in any of the history's batches, each left out in turn;
at the 0.001 target a 900-row batch may then hold one or two). The program keeps the domain
(``Program.domain``, sorted values). Only batches whose value table is exact (not the bounded
form of a histogram past ``MAX_KEYS``) define or judge a domain.

>>> d = Domain(frozenset({"EWR", "JFK", "LGA"}))
>>> d.off_count({"EWR": 20.0, "JFK": 3.0, "UA": 1.0, "NullValue": 2.0})
1.0
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from streamdq.autovalidate.avh.lattice import MIN_BATCHES
from streamdq.autovalidate.avh.profile import CATEGORICAL, NULL_KEY, ColumnProfile

METRIC = "off_domain"  # the share of a batch's non-null values outside the domain (a learner metric)
# a domain larger than this is not kept (a program stays small; a column with that many values is
# not a closed code list)
MAX_VALUES = 500


@dataclass(frozen=True)
class Domain:
    """The values a column's history kept to; any other non-null value is off the domain."""

    values: frozenset[str]

    def off_count(self, counts: Mapping[str, float]) -> float:
        """The (weighted) number of non-null values in ``counts`` (value -> count) outside the domain."""
        return float(sum(c for v, c in counts.items() if v != NULL_KEY and v not in self.values))

    def to_list(self) -> list[str]:
        return sorted(self.values)

    @classmethod
    def from_list(cls, data: Iterable[str]) -> Domain:
        return cls(frozenset(str(v) for v in data))


def _table(profile: ColumnProfile) -> dict[str, float] | None:
    """A batch's exact value table without NULLs, or None (not categorical, bounded form)."""
    if profile.kind != CATEGORICAL or profile.approximate:
        return None
    return {k: c for k, c in profile.values.items() if k != NULL_KEY and c > 0}


def history_domain(history: Sequence[ColumnProfile], max_values: int = MAX_VALUES) -> Domain | None:
    """The domain of a categorical column's history (module docstring), or None: a numeric
    column, a batch with an inexact value table, fewer than ``MIN_BATCHES`` batches with values,
    more than ``max_values`` values, or a history that is not closed (a value seen in one batch
    only).

    >>> from streamdq.autovalidate.avh.profile import ColumnProfile
    >>> day = lambda *v: ColumnProfile("o", "categorical", 3.0, values={x: 1.0 for x in v})
    >>> sorted(history_domain([day("EWR", "JFK", "LGA")] * 5).values)
    ['EWR', 'JFK', 'LGA']
    >>> history_domain([day("EWR", "JFK", "LGA")] * 4 + [day("EWR", "JFK", "BOS")]) is None
    True
    """
    tables = [_table(p) for p in history]
    if any(t is None for t in tables):
        return None
    filled = [t for t in tables if t]
    if len(filled) < MIN_BATCHES:
        return None
    seen_in: dict[str, int] = {}
    for t in filled:
        for v in t:
            seen_in[v] = seen_in.get(v, 0) + 1
    if len(seen_in) > max_values or any(n < 2 for n in seen_in.values()):
        return None
    return Domain(frozenset(seen_in))


def off_domain_share(profile: ColumnProfile, domain: Domain) -> float | None:
    """The share of a batch's non-null values outside ``domain``; None without values or without
    an exact value table."""
    table = _table(profile)
    if not table:
        return None
    total = sum(table.values())
    return domain.off_count(table) / total if total > 0 else None
