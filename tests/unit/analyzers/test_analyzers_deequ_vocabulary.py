"""Range, InterquartileRange, ExactQuantile, ColumnCount, Histogram binning/tail and
ApproxQuantile's relative_error: Deequ's values, NULLs, where filters, empty input, failures."""

from __future__ import annotations

import math

import datasketches as ds
import numpy as np
import pytest

from streamdq.analyzers import (
    Analyzer,
    ApproxQuantile,
    ApproxQuantiles,
    ColumnCount,
    ExactQuantile,
    Histogram,
    InterquartileRange,
    Range,
)
from streamdq.analyzers.approx_quantile import k_for_relative_error
from streamdq.analyzers.exact_quantile import ExactQuantileState
from streamdq.analyzers.interquartile_range import interpolated_quantile
from streamdq.analyzers.register import analyzer_from_spec
from streamdq.analyzers.sketch_states import KllState
from tests.unit.analyzers.analyzer_testkit import assert_failed, metrics_of


@pytest.fixture(scope="module")
def df(spark):
    rows = [(i, float(i), str(i)) for i in range(1, 7)] + [(7, None, "x"), (8, float("nan"), "y")]
    return spark.createDataFrame(rows, "id int, x double, s string")


@pytest.fixture(scope="module")
def empty(spark):
    return spark.createDataFrame([], "id int, x double, s string")


def test_deequ_values_on_one_to_six(df):
    rng, iqr, q25, median, q1 = metrics_of(
        df,
        Range("x"),
        InterquartileRange("x"),
        ExactQuantile("x", 0.25),
        ExactQuantile("x", 0.5),
        ExactQuantile("x", 1.0),
    )
    assert rng.value == 5.0  # NULL and NaN skipped
    assert iqr.value == 2.5  # 4.75 - 2.25, linear interpolation as Deequ's percentile
    assert not iqr.approximate  # the sketch still holds every value
    assert (q25.value, median.value, q1.value) == (2.25, 3.5, 6.0)
    assert median.extra == {"mergeable": False}


def test_where_filters(df):
    rng, iqr, median = metrics_of(
        df,
        Range("x", where="id > 2"),
        InterquartileRange("x", where="id > 2"),
        ExactQuantile("x", 0.5, where="id > 2"),
    )
    assert rng.value == 3.0  # 3..6
    assert iqr.value == pytest.approx(float(np.subtract(*np.percentile([3, 4, 5, 6], [75, 25]))))
    assert median.value == 4.5


@pytest.mark.parametrize("analyzer", [Range("x"), InterquartileRange("x"), ExactQuantile("x", 0.5)])
def test_empty_input_is_an_empty_failure(empty, analyzer: Analyzer):
    (m,) = metrics_of(empty, analyzer)
    assert_failed(m, empty=True)


@pytest.mark.parametrize("analyzer", [Range("x"), InterquartileRange("x"), ExactQuantile("x", 0.5)])
def test_filter_keeping_nothing_is_an_empty_failure(df, analyzer: Analyzer):
    (m,) = metrics_of(df, type(analyzer)(**{**analyzer.__dict__, "where": "id > 100"}))
    assert_failed(m, empty=True)


@pytest.mark.parametrize(
    ("analyzer", "contains"),
    [
        (Range("s"), "numeric"),
        (InterquartileRange("s"), "numeric"),
        (ExactQuantile("s", 0.5), "numeric"),
        (ExactQuantile("x", 1.5), "closed interval [0, 1]"),
        (ExactQuantile("x", -0.1), "closed interval [0, 1]"),
        (Range("nope"), "does not exist"),
        (InterquartileRange("x", k=2), "k must be"),
    ],
)
def test_failures_where_deequ_fails(df, analyzer: Analyzer, contains: str):
    (m,) = metrics_of(df, analyzer)
    assert_failed(m, contains=contains, empty=False)


def test_exact_quantile_is_not_mergeable():
    a, b = ExactQuantileState(1.0), ExactQuantileState(3.0)
    assert a.merge(ExactQuantileState.empty()) == a
    merged = a.merge(b)
    assert merged.merged and b.merge(a).merged
    m = ExactQuantile("x", 0.5).metric(merged)
    assert_failed(m, contains="not mergeable", empty=False)


def test_interquartile_range_merges_and_stays_within_rank_error():
    rng = np.random.default_rng(7)
    values = rng.normal(size=20_000)
    parts = []
    for chunk in np.array_split(values, 4):
        sk = ds.kll_doubles_sketch(200)
        sk.update(np.array(chunk, dtype=np.float64))
        parts.append(KllState.of_sketch(sk))
    state = parts[0].merge(parts[1]).merge(parts[2]).merge(parts[3])
    m = InterquartileRange("x").metric(state)
    assert m.approximate and m.error_bound is not None
    eps = m.error_bound
    lo = np.quantile(values, 0.75 - eps) - np.quantile(values, 0.25 + eps)
    hi = np.quantile(values, 0.75 + eps) - np.quantile(values, 0.25 - eps)
    assert lo <= m.value <= hi


def test_interpolated_quantile_equals_numpy_while_exact():
    values = [5.0, 1.0, 9.0, 2.0, 2.0, 7.5, -3.0]
    sk = ds.kll_doubles_sketch(200)
    sk.update(np.array(values))
    for q in (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0):
        assert interpolated_quantile(KllState.of_sketch(sk), q) == pytest.approx(np.quantile(values, q))


def test_column_count_counts_data_columns_only(spark, df):
    (m,) = metrics_of(df, ColumnCount())
    assert m.value == 3.0 and m.entity == "Dataset"
    meta = spark.createDataFrame([(1, "e")], "a int, _streamdq_error string")
    (m2,) = metrics_of(meta, ColumnCount())
    assert m2.value == 1.0


def test_column_count_is_a_schema_metric_even_without_rows(empty):
    """Deequ's ColumnCount reads the schema: zero rows still have their columns."""
    (m,) = metrics_of(empty, ColumnCount())
    assert m.ok and m.value == 3.0
    (filtered,) = metrics_of(empty, ColumnCount(where="id > 100"))
    assert filtered.ok and filtered.value == 3.0
    assert not ColumnCount().metric(ColumnCount().empty_state()).ok  # no input seen at all


def test_approx_quantile_relative_error_maps_to_k(df):
    assert k_for_relative_error(0.01) == 269
    error = ds.kll_doubles_sketch.get_normalized_rank_error
    assert error(269, False) <= 0.01 < error(268, False)
    assert k_for_relative_error(1.0) == 8 and k_for_relative_error(1e-9) == 65535
    m, many = metrics_of(
        df, ApproxQuantile("x", 0.5, relative_error=0.05), ApproxQuantiles("x", (0.5,), relative_error=0.05)
    )
    assert m.value == 3.0 and many.value == {"0.5": 3.0}
    assert m.error_bound == pytest.approx(error(k_for_relative_error(0.05), False))
    assert m.error_bound is not None and m.error_bound <= 0.05


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5, True, "x"])
def test_approx_quantile_relative_error_outside_zero_one_fails(df, bad):
    m, many = metrics_of(
        df, ApproxQuantile("x", 0.5, relative_error=bad), ApproxQuantiles("x", (0.5,), relative_error=bad)
    )
    assert_failed(m, contains="Relative error parameter must be in the interval (0, 1]")
    assert_failed(many, contains="Relative error parameter")


def test_relative_error_absent_keeps_the_old_key():
    assert "relative_error" not in ApproxQuantile("x", 0.5).to_spec()
    assert ApproxQuantile("x", 0.5, relative_error=0.1).to_spec()["relative_error"] == 0.1
    a = ApproxQuantile("x", 0.5, relative_error=0.1)
    assert analyzer_from_spec(a.to_spec()) == a


@pytest.fixture(scope="module")
def countries(spark):
    rows = [("DE",), ("DE",), ("FR",), ("US",), ("US",), ("US",), (None,), ("JP",)]
    return spark.createDataFrame(rows, "c string")


def test_histogram_tail_count_is_the_mass_outside_the_detail_bins(countries):
    full, top2 = metrics_of(countries, Histogram("c"), Histogram("c", max_detail_bins=2))
    assert full.value["tail_count"] == 0
    assert list(top2.value["values"]) == ["US", "DE"]
    assert top2.value["tail_count"] == 3  # FR, JP, NullValue
    assert top2.value["number_of_bins"] == 5


def test_histogram_binning_map_with_default_bin(countries):
    h = Histogram("c", binning={"DE": "EU", "FR": "EU", "NullValue": "unknown"}, default_bin="other")
    keep = Histogram("c", binning={"DE": "EU", "FR": "EU"})
    binned, kept = metrics_of(countries, h, keep)
    assert binned.value["values"] == {
        "other": {"absolute": 4, "ratio": 0.5},
        "EU": {"absolute": 3, "ratio": 3 / 8},
        "unknown": {"absolute": 1, "ratio": 1 / 8},
    }
    assert binned.value["number_of_bins"] == 3
    assert set(kept.value["values"]) == {"EU", "US", "NullValue", "JP"}
    assert analyzer_from_spec(h.to_spec()) == h
    assert "binning" not in Histogram("c").to_spec()  # unchanged key without binning


def test_histogram_binning_must_be_a_mapping():
    with pytest.raises(ValueError, match="binning"):
        Histogram("c", binning=5)  # type: ignore[arg-type]


def test_histogram_binning_with_where(countries):
    (m,) = metrics_of(countries, Histogram("c", binning={"US": "NA"}, default_bin="rest", where="c != 'US'"))
    assert m.value["values"]["rest"]["absolute"] == 4  # DE DE FR JP; NULL filtered (NULL predicate)
    assert "NA" not in m.value["values"]
    assert m.value["values"]["rest"]["ratio"] == 4 / 8  # Deequ: the unfiltered row count
    assert not math.isnan(m.value["values"]["rest"]["ratio"])
