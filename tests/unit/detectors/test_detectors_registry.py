"""Registering a custom detector (this module deliberately does not postpone annotations)."""

from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from streamdq.detectors import Detector, Point, Verdict, detector_from_spec, detector_types, register_detector


@register_detector
@dataclass(frozen=True)
class AboveK(Detector):
    TYPE: ClassVar[str] = "test_above_k"

    k: float = 1.0
    limit: int | None = None

    def _initial_core(self) -> dict[str, Any]:
        return {}

    def _step(self, core: dict[str, Any], point: Point) -> tuple[dict[str, Any], Verdict]:
        return core, Verdict(float(point.value or 0.0) > self.k)


def test_custom_detector_from_spec_with_runtime_annotations() -> None:
    assert "test_above_k" in detector_types()
    detector = detector_from_spec({"type": "test_above_k", "k": 2, "limit": 3})
    assert detector == AboveK(k=2.0, limit=3)
    assert detector.detect([1.0, 3.0, 2.0]) == [1]
    with pytest.raises(ValueError, match="k: must be a number"):
        detector_from_spec({"type": "test_above_k", "k": "2"})


def test_a_type_name_cannot_be_registered_twice() -> None:
    @dataclass(frozen=True)
    class Other(AboveK):
        pass

    with pytest.raises(ValueError, match="registered twice"):
        register_detector(Other)
