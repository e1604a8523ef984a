"""Row-level outcomes (Deequ's rowLevelResults) and the failing rows with their reasons."""

from __future__ import annotations

import pytest

from streamdq.checks import Check, Level
from streamdq.checks.row_level import (
    FAILED_COLUMN,
    failing_rows,
    is_row_level,
    row_level_rules,
    with_outcomes,
)
from streamdq.checks.verification import verify

ROWS = [
    # id, name, email, amount, grp
    (1, "alice", "a@x.com", 10.0, "a"),
    (2, None, "not-an-email", -1.0, "a"),
    (3, "bo", None, None, "b"),
    (4, "carol", "c@x.com", 5.0, "b"),
    (4, "dave", "d@x.com", 7.0, None),
    (None, "eve", "e@x.com", 1.0, "a"),
]
SCHEMA = "id int, name string, email string, amount double, grp string"


@pytest.fixture(scope="module")
def df(spark):
    return spark.createDataFrame(ROWS, SCHEMA)


def _outcomes(df, check, filtered_row="true"):
    out = with_outcomes(df, [check], filtered_row=filtered_row).orderBy("name").collect()
    names = [r.name for r in row_level_rules([check])]
    return {n: [row[n] for row in out] for n in names}


# rows ordered by name: NULL, alice, bo, carol, dave, eve
def test_completeness_pattern_compliance_outcomes(df):
    check = (
        Check(Level.ERROR, "c")
        .is_complete("name")
        .contains_email("email")
        .satisfies("amount > 0", "positive amount", columns=["amount"])
        .is_non_negative("amount")
    )
    got = list(_outcomes(df, check).values())
    assert got[0] == [False, True, True, True, True, True]
    assert got[1] == [False, True, False, True, True, True]  # NULL email is not a match
    assert got[2] == [False, True, None, True, True, True]  # NULL predicate stays NULL (Deequ)
    assert got[3] == [False, True, True, True, True, True]  # isNonNegative: NULL passes


def test_containment_and_lengths(df):
    check = (
        Check(Level.ERROR, "c")
        .is_contained_in("grp", ["a"])
        .has_min_length("name", ">= 3")
        .has_max_length("name", "<= 4", null_behavior="fail")
        .has_min_length("name", ">= 1", null_behavior="empty_string")
    )
    got = list(_outcomes(df, check).values())
    assert got[0] == [True, True, False, False, True, True]  # NULL passes containment
    assert got[1] == [True, True, False, True, True, True]  # ignore: NULL passes
    assert got[2] == [False, False, True, False, True, True]  # fail: NULL fails
    assert got[3] == [False, True, True, True, True, True]  # empty_string: length 0


def test_uniqueness_and_primary_key(df):
    check = Check(Level.ERROR, "c").is_unique("id").is_primary_key("id", "grp")
    got = list(_outcomes(df, check).values())
    assert got[0] == [True, True, True, False, False, True]  # the NULL id row is TRUE
    assert got[1] == [True, True, True, True, True, True]  # (4,b) and (4,NULL) differ


def test_filtered_row_true_or_null(df):
    check = Check(Level.ERROR, "c").is_complete("name", where="grp = 'a'").is_unique("id", where="grp = 'b'")
    assert list(_outcomes(df, check, "true").values()) == [
        [False, True, True, True, True, True],
        [True, True, True, True, True, True],  # grp b holds ids 3 and 4 once each
    ]
    nulls = list(_outcomes(df, check, "null").values())
    assert nulls[0] == [False, True, None, None, None, True]
    assert nulls[1] == [None, None, True, True, None, None]
    with pytest.raises(ValueError, match="filtered_row"):
        with_outcomes(df, [check], filtered_row="false")


def test_dataset_level_constraints_have_no_outcome(df):
    check = (
        Check(Level.ERROR, "c")
        .has_size("> 0")
        .has_mean("amount", "> 0")
        .has_min_length("name", lambda v: v > 1)  # a Python assertion has no row form
        .is_complete("name")
    )
    assert [is_row_level(c) for c in check.constraints] == [False, False, False, True]
    assert len(row_level_rules([check])) == 1


def test_failing_rows_carry_the_names_of_the_constraints_they_fail(df):
    check = Check(Level.ERROR, "c").is_complete("name").is_unique("id").has_size("> 100")
    rows = failing_rows(df, [check]).orderBy("name").collect()
    assert [(r.name, r[FAILED_COLUMN]) for r in rows] == [
        (None, ["is_complete(column='name')"]),
        ("carol", ["is_unique(column='id')"]),
        ("dave", ["is_unique(column='id')"]),
    ]


def test_failing_rows_match_the_metric(df):
    """A row fails exactly when the metric counts it against the constraint."""
    check = Check(Level.ERROR, "c").satisfies("amount > 0", "positive", columns=["amount"])
    result = verify(df, [check])
    ratio = next(iter(result.metrics.values())).value
    failed = failing_rows(df, [check]).count()
    assert failed == round((1 - ratio) * len(ROWS)) == 2  # -1.0 and NULL


def test_same_constraint_in_two_checks_gets_distinct_names(df):
    a = Check(Level.ERROR, "first").is_complete("name")
    b = Check(Level.WARNING, "second").is_complete("name")
    names = [r.name for r in row_level_rules([a, b])]
    assert names == ["first: is_complete(column='name')", "second: is_complete(column='name')"]
    out = with_outcomes(df, [a, b])
    assert out.columns[-2:] == names
