"""The closed value domain of a categorical column (issue 22): 1% foreign values from another
column (a schema change) move no share, length or distance enough at the 0.001 target, but none
of them was ever seen in the history. Profile-level, no Spark: profiles from the engine's builder."""

from __future__ import annotations

import json

import numpy as np
import pytest

from streamdq.autovalidate import Program, learn_from_profiles
from streamdq.autovalidate.avh.domain import METRIC, Domain, history_domain, off_domain_share
from streamdq.autovalidate.avh.profile import ColumnProfile
from tests.unit.autovalidate.avh_profiles import categorical_profile

AIRPORTS = ["EWR", "JFK", "LGA"]


def _day(rng: np.random.Generator, rows: int = 900) -> list[str | None]:
    """One day of flights' airports of origin, the mix moving from day to day."""
    mix = rng.dirichlet([30.0, 30.0, 30.0])
    return [str(v) for v in rng.choice(AIRPORTS, size=rows, p=mix)]


def _profile(values: list[str | None]) -> ColumnProfile:
    return categorical_profile(values, "origin")


def _foreign(values: list[str | None], share: float, rng: np.random.Generator) -> list[str | None]:
    """``share`` of the values replaced by carrier codes (the schema change's nearest column)."""
    out = list(values)
    for i in rng.choice(len(out), size=max(1, round(share * len(out))), replace=False):
        out[i] = str(rng.choice(["UA", "B6", "EV", "AA"]))
    return out


def test_history_domain_needs_a_closed_history_of_exact_tables():
    rng = np.random.default_rng(3)
    days = [_profile(_day(rng)) for _ in range(30)]
    assert history_domain(days) == Domain(frozenset(AIRPORTS))
    # a value seen on one day only (a route flown once): the domain is open, none is learned
    once = [*days[:-1], _profile([*_day(rng)[:-1], "BOS"])]
    assert history_domain(once) is None
    # a value seen on two days is part of it; NULLs never are
    twice = [*days[:-2], *(_profile([*_day(rng)[:-2], "BOS", None]) for _ in range(2))]
    assert history_domain(twice) == Domain(frozenset([*AIRPORTS, "BOS"]))
    assert history_domain(days[:3]) is None  # too few batches
    assert history_domain(days, max_values=2) is None  # too many values to be a code list


def test_off_domain_share_counts_non_null_values_outside():
    domain = Domain(frozenset(AIRPORTS))
    batch = _profile(["EWR", "JFK", "UA", "UA", None])
    assert off_domain_share(batch, domain) == pytest.approx(0.5)
    assert off_domain_share(_profile([None, None]), domain) is None


def test_one_percent_foreign_values_are_caught_and_ordinary_days_pass():
    rng = np.random.default_rng(5)
    days = [_day(rng) for _ in range(31)]
    history = [_profile(d) for d in days[:30]]
    corrupted = {"schema_change:1%": _profile(_foreign(days[29], 0.01, rng))}
    program = learn_from_profiles(history, corrupted, fpr=0.001)
    assert program.domain == Domain(frozenset(AIRPORTS))
    (closed,) = [c for c in program.constraints if c.metric == METRIC]
    assert closed.bound == "binomial" and closed.lower == 0.0 and closed.caught == ("schema_change:1%",)
    assert not program.judge_profile(_profile(days[30]))
    broken = _profile(_foreign(days[30], 0.01, rng))
    (violation,) = [v for v in program.judge_profile(broken) if v.constraint.metric == METRIC]
    assert violation.value == pytest.approx(9 / 900)
    # one new value in 900 is admitted at 0.001 (exact counting after 27,000 values inside)
    assert not program.judge_profile(_profile([*days[30][:-1], "BOS"]))


def test_a_program_keeps_its_domain_through_json_and_old_programs_load():
    rng = np.random.default_rng(11)
    days = [_day(rng) for _ in range(30)]
    corrupted = {"schema_change:1%": _profile(_foreign(days[-1], 0.01, rng))}
    program = learn_from_profiles([_profile(d) for d in days], corrupted, fpr=0.001)
    back = Program.from_dict(json.loads(json.dumps(program.to_dict())))
    assert back.domain == program.domain and isinstance(back.domain, Domain)
    assert back.constraints == program.constraints
    old = program.to_dict()
    del old["domain"]  # a program stored before domains existed has none
    assert Program.from_dict(old).domain is None
