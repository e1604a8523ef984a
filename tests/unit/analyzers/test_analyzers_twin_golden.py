"""Golden pins of the twin analyzers (Minimum/Maximum, MinLength/MaxLength, Mean/Sum and the
grouping analyzers on one column set), written with the code BEFORE the twins were folded
into shared pieces (issue 21).

What a stored state store holds must keep meaning the same thing: the analyzer's key (the
state store's key of its state), the state's bytes, and the metric read from those bytes.
If one of these fails, a refactoring changed a stored contract: restore it, or bump the
state's FORMAT_VERSION and keep reading the old bytes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql.types import StringType, StructField, StructType

from streamdq.analyzers import (
    Analyzer,
    Completeness,
    Compliance,
    CountDistinct,
    Distinctness,
    Kurtosis,
    Maximum,
    MaxLength,
    Mean,
    Minimum,
    MinLength,
    NonFinite,
    PatternMatch,
    Range,
    Size,
    Skewness,
    StandardDeviation,
    Sum,
    Uniqueness,
    UniqueValueRatio,
    Variance,
    ZerosCount,
    state_from_bytes,
)
from streamdq.analyzers.basic_states import MaxState, MinState, NumMatches, NumMatchesAndCount
from streamdq.analyzers.register import analyzer_from_spec

GOLDEN = Path(__file__).parent / "golden"

# analyzer, its key, the hex bytes of a state it stores, the metric value of that state
SCAN_TWINS = [
    (
        Minimum("x"),
        '{"analyzer":"Minimum","column":"x"}',
        "5344515300034d696e00017b2276616c7565223a2d322e357d",
        -2.5,
    ),
    (
        Maximum("x", where="y > 0"),
        '{"analyzer":"Maximum","column":"x","where":"y > 0"}',
        "5344515300034d617800017b2276616c7565223a372e307d",
        7.0,
    ),
    (
        MinLength("s", null_behavior="empty_string"),
        '{"analyzer":"MinLength","column":"s","null_behavior":"empty_string"}',
        "5344515300034d696e00017b2276616c7565223a302e307d",
        0.0,
    ),
    (
        MaxLength("s"),
        '{"analyzer":"MaxLength","column":"s","null_behavior":"ignore"}',
        "5344515300034d617800017b2276616c7565223a31322e307d",
        12.0,
    ),
    (
        Mean("x"),
        '{"analyzer":"Mean","column":"x"}',
        "53445153000353756d00017b226e223a342c22746f74616c223a31302e307d",
        2.5,
    ),
    (
        Sum("x", where="y > 0"),
        '{"analyzer":"Sum","column":"x","where":"y > 0"}',
        "53445153000353756d00017b226e223a342c22746f74616c223a31302e307d",
        10.0,
    ),
]


# the share of rows in scope that match: one stored NumMatchesAndCount(matches=3, count=5, evaluated=4)
MATCHES = (
    "5344515300124e756d4d617463686573416e64436f756e7400017b22636f756e74223a352c226576616c7561746564"
    "223a342c226d617463686573223a337d"
)
SCAN_TWINS += [
    (Completeness("c"), '{"analyzer":"Completeness","column":"c"}', MATCHES, 0.6),
    (
        PatternMatch("c", "^a", where="n > 1"),
        '{"analyzer":"PatternMatch","column":"c","pattern":"^a","where":"n > 1"}',
        MATCHES,
        0.6,
    ),
    (
        Compliance("pos", "x > 0", ("x",)),
        '{"analyzer":"Compliance","columns":["x"],"name":"pos","predicate":"x > 0"}',
        MATCHES,
        0.6,
    ),
]


# the analyzers that read one numeric column through the non-finite policy: stored Moments
# (format v2, n=4, mean=2.5, m2=5.0, m3=0.0, m4=10.25) and Range(-1.0, 5.0) states
MOMENTS = (
    "5344515300074d6f6d656e747300027b226d32223a352e302c226d33223a302e302c226d34223a31302e32352c226d"
    "65616e223a322e352c226e223a342c226f72646572223a347d"
)
SCAN_TWINS += [
    (StandardDeviation("x"), '{"analyzer":"StandardDeviation","column":"x"}', MOMENTS, 1.118033988749895),
    (Variance("x", where="n > 1"), '{"analyzer":"Variance","column":"x","where":"n > 1"}', MOMENTS, 1.25),
    (Skewness("x"), '{"analyzer":"Skewness","column":"x"}', MOMENTS, 0.0),
    (Kurtosis("x"), '{"analyzer":"Kurtosis","column":"x"}', MOMENTS, -1.36),
    (
        Range("x"),
        '{"analyzer":"Range","column":"x"}',
        "53445153000552616e676500017b226d6178696d756d223a352e302c226d696e696d756d223a2d312e307d",
        6.0,
    ),
]


def test_share_of_rows_when_nothing_matched_or_nothing_was_evaluated() -> None:
    nothing_evaluated = NumMatchesAndCount(0, 2, 0)
    assert Completeness("c").metric(nothing_evaluated).value == 0.0
    assert PatternMatch("c", "EMAIL").metric(nothing_evaluated).value == 0.0
    failed = Compliance("pos", "x > 0", ("x",)).metric(nothing_evaluated)
    assert failed.failure == "Compliance 'pos': predicate 'x > 0' is NULL on every row in scope"
    assert not failed.empty


@pytest.mark.parametrize("analyzer,key,hex_bytes,value", SCAN_TWINS, ids=lambda v: getattr(v, "NAME", ""))
def test_scan_twin_reads_its_stored_state(analyzer: Analyzer, key: str, hex_bytes: str, value: float) -> None:
    assert analyzer.key() == key and analyzer.state_key() == key
    assert analyzer_from_spec(analyzer.to_spec()) == analyzer
    state = state_from_bytes(bytes.fromhex(hex_bytes))
    assert isinstance(state, type(analyzer.empty_state()))
    assert state.to_bytes().hex() == hex_bytes
    metric = analyzer.metric(state)
    assert metric.value == value and not metric.approximate and metric.failure is None
    # merging with the stored empty state changes nothing; the empty state alone is an empty Failure
    assert analyzer.metric(state.merge(analyzer.empty_state())).value == value
    empty = analyzer.metric(analyzer.empty_state())
    assert empty.failure is not None and empty.empty


def test_min_and_max_states_stay_distinct_types() -> None:
    low = state_from_bytes(bytes.fromhex(SCAN_TWINS[0][2]))
    high = state_from_bytes(bytes.fromhex(SCAN_TWINS[1][2]))
    assert isinstance(low, MinState) and isinstance(high, MaxState)
    assert low != high and MinState(7.0) != high  # same value, other tag: not equal


# counts of rows: one stored NumMatches(matches=7); zero rows is 0.0, a success
SEVEN = "53445153000a4e756d4d61746368657300017b226d617463686573223a377d"
COUNTS = [
    (Size(), '{"analyzer":"Size"}'),
    (Size(where="n > 1"), '{"analyzer":"Size","where":"n > 1"}'),
    (ZerosCount("x"), '{"analyzer":"ZerosCount","column":"x"}'),
    (NonFinite("x", where="n > 1"), '{"analyzer":"NonFinite","column":"x","where":"n > 1"}'),
]


@pytest.mark.parametrize("analyzer,key", COUNTS, ids=lambda v: getattr(v, "NAME", ""))
def test_count_reads_its_stored_state(analyzer: Analyzer, key: str) -> None:
    assert analyzer.key() == key and analyzer.state_key() == key
    state = state_from_bytes(bytes.fromhex(SEVEN))
    assert isinstance(state, NumMatches) and state.to_bytes().hex() == SEVEN
    assert analyzer.metric(analyzer.empty_state().merge(state)).value == 7.0
    empty = analyzer.metric(analyzer.empty_state())
    assert (empty.value, empty.failure, empty.empty) == (0.0, None, False)


FREQ_KEY = 'frequency:{"columns":["k"],"histogram":false,"where":null}'
# analyzer, key, metric on frequency_exact_v3.bin, (value, error bound) on frequency_sample_v3.bin
GROUPING_TWINS = [
    (
        Uniqueness(("k",)),
        '{"analyzer":"Uniqueness","columns":["k"]}',
        0.16666666666666666,
        (0.0, 0.029742052391209712),
    ),
    (
        Distinctness(("k",)),
        '{"analyzer":"Distinctness","columns":["k"]}',
        0.5,
        (0.04005006257822278, 0.029742052391209712),
    ),
    (
        UniqueValueRatio(("k",)),
        '{"analyzer":"UniqueValueRatio","columns":["k"]}',
        0.3333333333333333,
        (0.0, 0.05280452075036672),
    ),
    (CountDistinct(("k",)), '{"analyzer":"CountDistinct","columns":["k"]}', 3.0, None),
]


@pytest.mark.parametrize("analyzer,key,exact,sampled", GROUPING_TWINS, ids=lambda v: getattr(v, "NAME", ""))
def test_grouping_twin_reads_the_stored_frequency_states(
    analyzer: Analyzer, key: str, exact: float, sampled: tuple[float, float] | None
) -> None:
    assert analyzer.key() == key and analyzer.state_key() == FREQ_KEY
    assert analyzer_from_spec(analyzer.to_spec()) == analyzer
    m = analyzer.metric(state_from_bytes((GOLDEN / "frequency_exact_v3.bin").read_bytes()))
    assert (m.value, m.approximate, m.error_bound) == (exact, False, None)
    if sampled is not None:
        s = analyzer.metric(state_from_bytes((GOLDEN / "frequency_sample_v3.bin").read_bytes()))
        assert s.approximate and (s.value, s.error_bound) == sampled


def test_count_distinct_of_two_columns_with_a_filter_keeps_its_key() -> None:
    a = CountDistinct(("k", "j"), where="x > 1")
    assert a.key() == '{"analyzer":"CountDistinct","columns":["k","j"],"where":"x > 1"}'
    assert a.state_key() == 'frequency:{"columns":["k","j"],"histogram":false,"where":"x > 1"}'
    assert a.metric(state_from_bytes((GOLDEN / "frequency_exact_v3.bin").read_bytes())).value == 3.0


@pytest.mark.parametrize("cls", [Uniqueness, Distinctness, UniqueValueRatio, CountDistinct])
def test_grouping_twin_without_columns_fails_its_precondition(cls: type[Analyzer]) -> None:
    schema = StructType([StructField("k", StringType())])
    assert cls(()).preconditions(schema) == f"{cls.NAME} needs at least one column"  # type: ignore[call-arg]
    assert cls(("k",)).preconditions(schema) is None  # type: ignore[call-arg]
