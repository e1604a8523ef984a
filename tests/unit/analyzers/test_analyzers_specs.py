"""Every scan-shareable analyzer round-trips through its spec and is a hashable value."""

from __future__ import annotations

import pytest

from streamdq.analyzers import (
    AggregationAnalyzer,
    Compliance,
    FrequencySpec,
    Histogram,
    StandardDeviation,
    Variance,
)
from streamdq.analyzers.register import analyzer_from_spec
from streamdq.errors import ConfigError
from tests.unit.analyzers.test_analyzers_fused_jobs import ALL_SCAN


@pytest.mark.parametrize("analyzer", ALL_SCAN, ids=lambda a: a.NAME)
def test_spec_round_trip(analyzer):
    assert analyzer_from_spec(analyzer.to_spec()) == analyzer
    assert hash(analyzer_from_spec(analyzer.to_spec())) == hash(analyzer)
    assert analyzer.key() == analyzer_from_spec(analyzer.to_spec()).key()


def test_where_is_part_of_identity_and_kinds_differ():
    assert Compliance("c", "x > 0", ("x",), where="y = 1").to_spec()["where"] == "y = 1"
    assert Compliance("c", "x > 0") != Compliance("c", "x > 0", where="y = 1")
    assert StandardDeviation("x") != Variance("x")
    assert StandardDeviation("x").key() != Variance("x").key()


def test_unknown_parameter_is_rejected():
    with pytest.raises(ValueError, match="unknown parameters"):
        analyzer_from_spec({"analyzer": "Sum", "column": "x", "colum": "y"})


# -- config mistakes are ConfigError(key, problem, fix): ``exc.key`` says which key (issue 21)


def test_unknown_parameter_names_the_key_and_the_fix():
    with pytest.raises(ConfigError) as info:
        analyzer_from_spec({"analyzer": "Sum", "column": "x", "colum": "y"})
    assert info.value.key == "colum" and "unknown parameters ['colum']" in info.value.problem
    assert info.value.fix == "use the parameters of Sum: column, where"


def test_missing_parameter_and_missing_analyzer_name_the_key():
    with pytest.raises(ConfigError) as info:
        analyzer_from_spec({"analyzer": "Compliance", "name": "positive"})
    assert info.value.key == "predicate" and "missing parameter 'predicate'" in info.value.problem
    with pytest.raises(ConfigError) as info:
        analyzer_from_spec({"column": "x"})
    assert info.value.key == "analyzer" and info.value.fix
    with pytest.raises(KeyError, match="unknown analyzer 'Meen'"):  # the checks layer reports these
        analyzer_from_spec({"analyzer": "Meen", "column": "x"})


def test_an_unknown_analyzer_is_a_keyed_streamdq_error_naming_the_known_ones():
    """``UnknownName``: a StreamdqError, still a KeyError for older callers; its message (plain,
    not quoted as a KeyError's) names the unknown name, a close one and every known one."""
    from streamdq.analyzers.register import analyzer_class, registered_analyzers
    from streamdq.errors import StreamdqError, UnknownName

    for look_up in (
        lambda: analyzer_from_spec({"analyzer": "Meen", "column": "x"}),
        lambda: analyzer_class("Meen"),
    ):
        with pytest.raises(UnknownName) as info:
            look_up()
        err = info.value
        assert isinstance(err, StreamdqError) and isinstance(err, KeyError)
        assert (err.what, err.name, err.known) == ("analyzer", "Meen", tuple(sorted(registered_analyzers())))
        assert str(err).startswith("unknown analyzer 'Meen'; did you mean 'Mean'? (known: ")
        assert "Completeness, " in str(err) and str(err) == err.args[0]
    with pytest.raises(UnknownName, match=r"^unknown analyzer 'Zzz' \(known: "):  # nothing close
        analyzer_class("Zzz")
    with pytest.raises(UnknownName, match=r"unknown analyzer \['Mean'\]"):  # not even a name
        analyzer_from_spec({"analyzer": ["Mean"], "column": "x"})


def test_a_check_naming_an_unknown_analyzer_reports_the_metric_analyzer_key():
    from streamdq.checks.spec import loads_suite

    text = (
        "checks:\n- description: x\n  level: error\n  constraints:\n"
        "  - has_no_anomalies: {metric: {analyzer: Meen, column: a}, detector: {type: online_normal}}\n"
    )
    with pytest.raises(ConfigError) as info:
        loads_suite(text)
    (err,) = info.value.errors_list()
    assert err.key == "checks[0].constraints[0].has_no_anomalies.metric.analyzer"
    assert err.problem.startswith("unknown analyzer 'Meen'; did you mean 'Mean'? (known: ")


def test_histogram_binning_that_is_not_a_mapping_names_the_key():
    with pytest.raises(ConfigError) as info:
        Histogram("c", binning=[1, 2])  # type: ignore[arg-type]
    assert info.value.key == "binning" and info.value.fix == "give a mapping of value -> bin name"


def test_aggregation_params_that_are_not_a_mapping_name_the_key():
    with pytest.raises(ConfigError) as info:
        AggregationAnalyzer("median", "x", params=[1, 2])
    assert info.value.key == "params" and "must be a mapping" in info.value.problem
    with pytest.raises(ConfigError) as info:
        AggregationAnalyzer("median", "x", params={"k": object()})
    assert info.value.key == "params" and "plain JSON" in info.value.problem


def test_a_bad_max_groups_is_a_config_error_before_any_spark_work():
    from streamdq.analyzers.frequency.query import compute_frequency_state

    with pytest.raises(ConfigError) as info:
        compute_frequency_state(None, FrequencySpec(("k",)), max_groups=0)  # type: ignore[arg-type]
    assert info.value.key == "max_groups" and "got 0" in info.value.problem


def test_an_analyzers_key_is_computed_once_and_invisible_to_equality() -> None:
    import pickle

    from streamdq.analyzers import Completeness

    a = Completeness("email", where="amount > 0")
    b = Completeness("email", where="amount > 0")
    first = a.key()
    assert a.key() is first  # kept, not rebuilt
    assert a == b and hash(a) == hash(b)  # b has no kept key yet
    assert "_key" not in a.to_spec()
    assert pickle.loads(pickle.dumps(a)) == b
    assert b.key() == first
