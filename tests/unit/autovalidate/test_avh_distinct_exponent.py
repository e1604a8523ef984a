"""The distinct exponent of a column whose values repeat on small batches (issue 22): 24 hourly dew
points a day hold 4 to 21 distinct values, and the log of that count stretches the few calm days
into a left tail that Shapiro-Wilk rejects. The exponent keeps the normal tail there
(``learner.NORMAL_ALWAYS``): under the skewed tail its lower bound fell below 0, and a day redrawn
from its lowest tenth (one or two values repeated 24 times) passed. Profile-level, no Spark."""

from __future__ import annotations

import math

from streamdq.autovalidate import learn_from_profiles
from streamdq.autovalidate.avh.features import single_metrics
from streamdq.autovalidate.avh.learner import NORMAL_ALWAYS, looks_normal
from streamdq.autovalidate.avh.profile import NUMERIC, ColumnProfile

# the distinct dew points of 30 days at Newark before 2013-02-06 (24 readings a day), in an order
# that stays level (ADF keeps the series as it is): four calm days with 4 or 5 distinct values
DISTINCT: tuple[int, ...] = (11, 9, 14, 4, 10, 15, 12, 9, 16, 10, 5, 13, 11, 14, 9, 12, 10, 15, 4, 11)
DISTINCT += (17, 9, 14, 10, 12, 5, 11, 15, 10, 9)


def _day(distinct: int, rows: int = 24) -> ColumnProfile:
    """A complete day of ``rows`` readings holding ``distinct`` distinct values."""
    scalars = {
        "row_count": float(rows),
        "completeness": 1.0,
        "distinct_count": float(distinct),
        "unique_ratio": distinct / rows,
    }
    return ColumnProfile("dewp", NUMERIC, float(rows), scalars)


def test_the_exponent_of_repeated_values_keeps_the_normal_tail_and_catches_a_redrawn_tenth():
    history = [_day(d) for d in DISTINCT]
    exponents = [single_metrics(p)["distinct_exponent"] for p in history]
    # the log of the counts is skewed to the left, the counts themselves are not
    assert not looks_normal(exponents) and looks_normal([float(d) for d in DISTINCT])
    assert "distinct_exponent" in NORMAL_ALWAYS
    # the lowest tenth of the newest day (two values) redrawn 24 times: two distinct values
    program = learn_from_profiles(history, {"distribution_change:10%:first": _day(2)}, fpr=0.001)
    (exponent,) = [c for c in program.constraints if c.metric == "distinct_exponent"]
    assert exponent.bound == "normal" and exponent.caught == ("distribution_change:10%:first",)
    # log 2 / log 24 = 0.22 is below the bound, a calm day with four values (0.44) above it
    assert math.log(2) / math.log(24) < exponent.lower < math.log(4) / math.log(24)
    assert [v.constraint.metric for v in program.judge_profile(_day(1))] == ["distinct_exponent"]
    assert not program.judge_profile(_day(4))
    assert not program.judge_profile(_day(17))
