"""The contract kit (streamdq.testing) on every registered aggregation and state, and on broken
classes (it must catch them). The aggregations come from the registry, not a hand list: a new
built-in (or installed entry point) without ``_unit_test_params`` fails here."""

from __future__ import annotations

import pytest

from streamdq.aggregations import Aggregation, registry
from streamdq.analyzers.aggregation_registry import AggregationRegistry
from streamdq.analyzers.register import registered_states
from streamdq.testing import ContractViolation, check_aggregation, check_state
from tests.unit.aggregations import user_aggs


def _names() -> list[str]:
    reg = AggregationRegistry()  # what registry() holds, without resolving at collection time
    reg.register_builtins()
    reg.load_entry_points()
    return reg.names()


@pytest.mark.parametrize("name", _names())
def test_every_registered_aggregation_keeps_the_contract(name: str) -> None:
    report = check_aggregation(registry().resolve(name))
    assert report.laws >= 10 and report.params


def test_the_registry_holds_the_seed_library() -> None:
    assert {
        "discreteValuesHistogram",
        "uniqueValues",
        "numericHistogram",
        "average",
        "standardDeviation",
        "median",
    } <= set(registry().names())


@pytest.mark.parametrize("tag", sorted(registered_states()))
def test_every_registered_state_keeps_the_state_contract(tag: str) -> None:
    cls = registered_states()[tag]
    assert check_state(cls, load=cls.from_bytes if issubclass(cls, Aggregation) else None).laws > 0


def test_a_user_class_passes_and_a_spark_only_one_is_checked_on_its_states() -> None:
    assert check_aggregation(user_aggs.WindowMax).laws > 10
    assert check_aggregation(user_aggs.SparkOnlyTotal).laws > 5


def test_a_class_without_unit_test_params_fails() -> None:
    with pytest.raises(ContractViolation, match="defines no _unit_test_params"):
        check_aggregation(user_aggs.NoParams)


def test_a_merge_that_breaks_the_laws_fails() -> None:
    with pytest.raises(ContractViolation, match="identity|commutative"):
        check_aggregation(user_aggs.NotMergeable)


def test_an_approximate_class_outside_its_bounds_fails() -> None:
    from dataclasses import dataclass

    from streamdq.aggregations.kll import Median

    @dataclass(frozen=True)
    class OverconfidentMedian(Median):
        TYPE_TAG = "test.OverconfidentMedian"

        def error_bound(self, params: object) -> float:
            return 0.0

        def value(self, params: object) -> float:  # the minimum, not the median
            return float(self._sketch().get_min_value())

    with pytest.raises(ContractViolation, match="outside its error bound"):
        check_aggregation(OverconfidentMedian)


def test_bytes_that_change_on_a_round_trip_fail() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Unstable(user_aggs.WindowMax):
        TYPE_TAG = "test.Unstable"

        def payload(self) -> bytes:
            return b'{"max":' + repr(self.max).encode() + b', "pad": 1}'

        @classmethod
        def from_payload(cls, payload: bytes, version: int) -> Unstable:
            import json

            return cls(json.loads(payload)["max"])

    with pytest.raises(ContractViolation):
        check_aggregation(Unstable)
