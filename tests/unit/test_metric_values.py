"""Distribution-valued metrics carry typed, frozen values (issue 21 item 1, "type Metric.value for
distributions"): ``Distribution`` for Histogram and DataType, ``Quantiles`` for ApproxQuantiles.
Their JSON is the plain dict streamdq always wrote, so reports stored before still read, and come
back typed."""

from __future__ import annotations

import copy
import json
import pickle

import datasketches as ds
import pyarrow as pa
import pytest

from streamdq.analyzers import ApproxQuantiles, DataType, DataTypeState
from streamdq.analyzers.frequency import FrequencyState
from streamdq.analyzers.histogram import Histogram
from streamdq.metric import COLUMN, Bin, Distribution, Metric, Quantiles, ValueShapeError, typed_value
from streamdq.report import ScopedMetric

# the JSON a report of an earlier version holds for each distribution metric (copied from such a
# report's metrics: the shapes must keep reading)
STORED_HISTOGRAM = {
    "entity": "Column",
    "name": "Histogram",
    "instance": "item",
    "value": {
        "number_of_bins": 3,
        "values": {"a": {"absolute": 2, "ratio": 0.5}, "b": {"absolute": 1, "ratio": 0.25}},
        "tail_count": 1,
    },
}
STORED_DATA_TYPE = {
    "entity": "Column",
    "name": "DataType",
    "instance": "x",
    "value": {"number_of_bins": 2, "values": {"Integral": {"absolute": 3, "ratio": 1.0}}},
}
STORED_QUANTILES = {
    "entity": "Column",
    "name": "ApproxQuantiles",
    "instance": "x",
    "value": {"0.1": 1.0, "0.9": 9.0},
    "approximate": True,
    "error_bound": 0.013,
}


@pytest.mark.parametrize("stored", [STORED_HISTOGRAM, STORED_DATA_TYPE, STORED_QUANTILES])
def test_a_stored_metric_reads_back_typed_and_writes_the_same_json(stored: dict) -> None:
    metric = Metric.from_dict(json.loads(json.dumps(stored)))
    assert isinstance(metric.value, Quantiles if stored["name"] == "ApproxQuantiles" else Distribution)
    assert metric.value == stored["value"]  # still equal to the plain dict
    again = metric.to_dict()
    assert again == stored and type(again["value"]) is dict  # plain JSON out
    assert json.dumps(again, sort_keys=True) == json.dumps(stored, sort_keys=True)


def test_the_typed_accessors() -> None:
    hist = Metric.from_dict(STORED_HISTOGRAM).value
    assert hist.bins == {"a": Bin(2, 0.5), "b": Bin(1, 0.25)}
    assert (hist.number_of_bins, hist.tail_count, hist.absolute("a"), hist.ratio("b")) == (3, 1, 2, 0.25)
    assert Metric.from_dict(STORED_DATA_TYPE).value.tail_count is None
    quantiles = Metric.from_dict(STORED_QUANTILES).value
    assert quantiles.quantile(0.9) == 9.0
    with pytest.raises(KeyError):
        quantiles.quantile(0.5)


def test_the_values_are_frozen_hashable_and_survive_copy_and_pickle() -> None:
    hist = Metric.from_dict(STORED_HISTOGRAM).value
    for mutate in (
        lambda: hist.__setitem__("tail_count", 0),
        lambda: hist["values"].pop("a"),
        lambda: hist["values"]["a"].update(absolute=9),
        lambda: hist.clear(),
        lambda: hist.setdefault("x", 1),
    ):
        with pytest.raises(TypeError, match="read-only"):
            mutate()
    assert hist == Distribution.from_json(STORED_HISTOGRAM["value"])
    assert hash(hist) == hash(Distribution.from_json(STORED_HISTOGRAM["value"]))
    metric = Metric.from_dict(STORED_HISTOGRAM)
    assert hash(metric) == hash(Metric.from_dict(STORED_HISTOGRAM))  # a distribution metric hashes now
    assert copy.deepcopy(hist) is hist
    back = pickle.loads(pickle.dumps(hist))
    assert type(back) is Distribution and back == hist


def test_a_value_of_another_shape_is_kept_as_it_is() -> None:
    odd = {"entity": "Column", "name": "Histogram", "instance": "x", "value": {"bins": [1, 2]}}
    assert type(Metric.from_dict(odd).value) is dict
    assert typed_value("Mean", {"values": {}}) == {"values": {}}
    with pytest.raises(ValueShapeError):
        Distribution.from_json({"number_of_bins": 1, "values": {"a": {"absolute": 1}}})
    with pytest.raises(ValueShapeError):
        Quantiles.from_json({"0.5": "high"})
    # a bin whose count or ratio is not a number: another shape too, kept as it is when read
    for bad in ({"absolute": None, "ratio": 1.0}, {"absolute": 1, "ratio": "all"}):
        with pytest.raises(ValueShapeError):
            Distribution.from_json({"number_of_bins": 1, "values": {"a": bad}})
        stored = {"entity": "Column", "name": "Histogram", "instance": "x"}
        value = {"number_of_bins": 1, "values": {"a": bad}}
        assert Metric.from_dict({**stored, "value": value}).value == value
    with pytest.raises(ValueShapeError):
        Distribution.from_json({"number_of_bins": "many", "values": {}})


def test_the_analyzers_give_typed_values() -> None:
    assert isinstance(DataType("x").metric(DataTypeState(integral=3)).value, Distribution)
    sk = ds.kll_doubles_sketch(200)
    for v in range(1, 11):
        sk.update(float(v))
    q = ApproxQuantiles("x", (0.1, 0.9))
    value = q.metric(q.state_from([sk.serialize()], 0).merge(q.empty_state())).value
    assert isinstance(value, Quantiles) and value.quantile(0.1) == 1.0
    table = pa.table({"k0": ["a", "b"], "count": pa.array([3, 1], pa.int64())})
    state = FrequencyState.from_table(table, n=4, total=4, max_groups=100)
    hist = Histogram("item", max_detail_bins=1).metric(state.merge(Histogram("item").empty_state())).value
    assert isinstance(hist, Distribution)
    assert (hist.bins, hist.number_of_bins, hist.tail_count) == ({"a": Bin(3, 0.75)}, 2, 1)


def test_a_report_round_trip_keeps_the_typed_value() -> None:
    scoped = ScopedMetric("batch", Metric.from_dict(STORED_HISTOGRAM))
    back = ScopedMetric.from_dict(json.loads(json.dumps(scoped.to_dict())))
    assert isinstance(back.metric.value, Distribution) and back == scoped


def test_a_metric_on_a_distribution_json_dumps_as_before() -> None:
    value = Distribution.of({"a": (1, 1.0)}, number_of_bins=1, tail_count=0)
    assert json.dumps(Metric(COLUMN, "Histogram", "x", value).to_dict()["value"], sort_keys=True) == (
        '{"number_of_bins": 1, "tail_count": 0, "values": {"a": {"absolute": 1, "ratio": 1.0}}}'
    )
    assert json.dumps(value, sort_keys=True) == json.dumps(value.to_json(), sort_keys=True)
