"""Every scan-shareable analyzer round-trips through its spec and is a hashable value."""

from __future__ import annotations

import pytest

from streamdq.analyzers import Analyzer, Compliance, StandardDeviation, Variance
from tests.unit.analyzers.test_analyzers_fused_jobs import ALL_SCAN


@pytest.mark.parametrize("analyzer", ALL_SCAN, ids=lambda a: a.NAME)
def test_spec_round_trip(analyzer):
    assert Analyzer.from_spec(analyzer.to_spec()) == analyzer
    assert hash(Analyzer.from_spec(analyzer.to_spec())) == hash(analyzer)
    assert analyzer.key() == Analyzer.from_spec(analyzer.to_spec()).key()


def test_where_is_part_of_identity_and_kinds_differ():
    assert Compliance("c", "x > 0", ("x",), where="y = 1").to_spec()["where"] == "y = 1"
    assert Compliance("c", "x > 0") != Compliance("c", "x > 0", where="y = 1")
    assert StandardDeviation("x") != Variance("x")
    assert StandardDeviation("x").key() != Variance("x").key()


def test_unknown_parameter_is_rejected():
    with pytest.raises(ValueError, match="unknown parameters"):
        Analyzer.from_spec({"analyzer": "Sum", "column": "x", "colum": "y"})
