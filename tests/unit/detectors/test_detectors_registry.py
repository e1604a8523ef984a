"""Registering a custom detector (this module deliberately does not postpone annotations).

The class is registered for each test by a fixture that unregisters it afterwards: the registry is
process-wide, and suites run later in the same process must not find it."""

from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from streamdq.detectors import (
    Detector,
    Point,
    Verdict,
    detector_from_spec,
    detector_types,
    register_detector,
    unregister_detector,
)
from streamdq.errors import ConfigError


@dataclass(frozen=True)
class AboveK(Detector):
    TYPE: ClassVar[str] = "test_above_k"

    k: float = 1.0
    limit: int | None = None

    def _initial_core(self) -> dict[str, Any]:
        return {}

    def _step(self, core: dict[str, Any], point: Point) -> tuple[dict[str, Any], Verdict]:
        return core, Verdict(float(point.value or 0.0) > self.k)


@pytest.fixture
def above_k():
    assert register_detector(AboveK) is AboveK
    yield AboveK
    assert unregister_detector(AboveK)


def test_custom_detector_from_spec_with_runtime_annotations(above_k) -> None:
    assert "test_above_k" in detector_types()
    detector = detector_from_spec({"type": "test_above_k", "k": 2, "limit": 3})
    assert detector == AboveK(k=2.0, limit=3)
    assert detector.detect([1.0, 3.0, 2.0]) == [1]
    with pytest.raises(ValueError, match="k: must be a number"):
        detector_from_spec({"type": "test_above_k", "k": "2"})


def test_a_type_name_cannot_be_registered_twice(above_k) -> None:
    @dataclass(frozen=True)
    class Other(AboveK):
        pass

    with pytest.raises(ValueError, match="registered twice"):
        register_detector(Other)


def test_unregister_forgets_only_the_class_that_holds_the_type(above_k) -> None:
    @dataclass(frozen=True)
    class Other(AboveK):
        pass

    assert not unregister_detector(Other)  # AboveK holds the type: nothing changes
    assert detector_from_spec({"type": "test_above_k"}) == AboveK()
    assert unregister_detector(AboveK)
    assert "test_above_k" not in detector_types() and not unregister_detector(AboveK)
    with pytest.raises(ConfigError, match="unknown detector type 'test_above_k'"):
        detector_from_spec({"type": "test_above_k"})
    assert register_detector(Other) is Other  # the type is free again
    assert unregister_detector(Other)
    register_detector(AboveK)  # for the fixture to take back
    assert "simple_threshold" in detector_types()  # the built-ins are untouched
