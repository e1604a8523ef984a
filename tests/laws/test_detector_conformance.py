"""Every registered detector through the Detector laws (streamdq.testing.detector_checks), and the
kit catching broken detectors. The classes come from the registry, not a hand list: a new built-in
detector without ``_unit_test_params`` fails here."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from streamdq.detectors import Point, SimpleThreshold, Verdict
from streamdq.detectors.base import Detector, register_detector, unregister_detector
from streamdq.testing import ContractViolation
from streamdq.testing.detector_checks import check_detector, registered_detectors


def _builtin_types() -> list[str]:
    return sorted(k for k, c in registered_detectors().items() if c.__module__.startswith("streamdq."))


@pytest.mark.parametrize("kind", _builtin_types())
def test_every_registered_detector_keeps_the_laws(kind: str) -> None:
    report = check_detector(registered_detectors()[kind])
    assert report.params and report.laws >= 100


def test_the_registry_holds_the_built_in_detectors() -> None:
    assert len(_builtin_types()) >= 10


# -- the kit finds broken detectors (classes built here, never registered) ------------------------


@dataclass(frozen=True)
class _Counter(Detector):
    TYPE: ClassVar[str] = "test_counter"
    limit: float = 5.0

    @classmethod
    def _unit_test_params(cls) -> Any:
        yield {}

    def _initial_core(self) -> dict[str, Any]:
        return {"n": 0, "seen": []}

    def _step(self, core: dict[str, Any], point: Point) -> tuple[dict[str, Any], Verdict]:
        core["n"] = core["n"] + 1
        return core, Verdict(False, message=f"{core['n']} points")


@pytest.fixture
def registered():
    """Register a test class for the duration of one test (spec round trips need the registry),
    through the public register_detector / unregister_detector."""
    added: list[type[Detector]] = []

    def add(cls: type[Detector]) -> type[Detector]:
        added.append(register_detector(cls))
        return cls

    yield add
    for cls in added:
        assert unregister_detector(cls)


def test_a_well_behaved_detector_passes(registered) -> None:
    assert check_detector(registered(_Counter)).laws > 100


def test_a_detector_without_unit_test_params_fails(registered) -> None:
    @dataclass(frozen=True)
    class NoParams(SimpleThreshold):
        TYPE: ClassVar[str] = "test_no_params"

    registered(NoParams)
    with pytest.raises(ContractViolation, match="defines no _unit_test_params"):
        check_detector(NoParams)


def test_a_detector_that_mutates_its_input_state_fails(registered) -> None:
    @dataclass(frozen=True)
    class Mutating(_Counter):
        TYPE: ClassVar[str] = "test_mutating"

        @classmethod
        def _unit_test_params(cls) -> Any:
            yield {}

        def _step(self, core: dict[str, Any], point: Point) -> tuple[dict[str, Any], Verdict]:
            core["seen"].append(point.seq)  # in place: the caller's list
            return core, Verdict(False)

    registered(Mutating)
    with pytest.raises(ContractViolation, match="mutated the state"):
        check_detector(Mutating)


def test_a_detector_that_alarms_while_warming_up_fails(registered) -> None:
    @dataclass(frozen=True)
    class Eager(_Counter):
        TYPE: ClassVar[str] = "test_eager"

        @classmethod
        def _unit_test_params(cls) -> Any:
            yield {}

        def _step(self, core: dict[str, Any], point: Point) -> tuple[dict[str, Any], Verdict]:
            core["n"] = core["n"] + 1
            return core, Verdict(
                abs(float(point.value or 0)) > 1000, warming_up=core["n"] < 5, message="waiting for 5"
            )

    registered(Eager)
    with pytest.raises(ContractViolation, match="while warming up"):
        check_detector(Eager)


def test_a_detector_whose_restored_state_forgets_fails(registered) -> None:
    @dataclass(frozen=True)
    class Forgetful(_Counter):
        """Keeps part of its memory outside the state: a restore loses it."""

        TYPE: ClassVar[str] = "test_forgetful"
        memory: ClassVar[dict[int, int]] = {}

        @classmethod
        def _unit_test_params(cls) -> Any:
            yield {}

        def _step(self, core: dict[str, Any], point: Point) -> tuple[dict[str, Any], Verdict]:
            key = id(core.get("token"))
            count = self.memory.get(key, 0) + 1
            self.memory[key] = count
            core["token"] = core.get("token") or [point.seq]
            return core, Verdict(False, message=f"{count}")

    registered(Forgetful)
    with pytest.raises(ContractViolation, match="not pure|restored"):
        check_detector(Forgetful)


def test_a_detector_that_learns_infinity_fails(registered) -> None:
    """The base class keeps +-inf out of the learned state; a class that overrides update to learn
    every value is caught."""

    @dataclass(frozen=True)
    class LearnsAll(_Counter):
        TYPE: ClassVar[str] = "test_learns_all"

        @classmethod
        def _unit_test_params(cls) -> Any:
            yield {}

        def update(self, state: dict[str, Any], point: Point) -> tuple[dict[str, Any], Verdict]:
            if point.value is not None and point.value == point.value and abs(point.value) == float("inf"):
                point = dataclasses.replace(point, value=1e308)
            return super().update(state, point)

    registered(LearnsAll)
    with pytest.raises(ContractViolation, match="infinite value"):
        check_detector(LearnsAll)


def test_a_detector_whose_state_grows_with_the_history_fails(registered) -> None:
    @dataclass(frozen=True)
    class Hoarder(_Counter):
        TYPE: ClassVar[str] = "test_hoarder"

        @classmethod
        def _unit_test_params(cls) -> Any:
            yield {}

        def _step(self, core: dict[str, Any], point: Point) -> tuple[dict[str, Any], Verdict]:
            core["seen"] = [*core["seen"], point.value]  # every value, forever
            return core, Verdict(False)

    registered(Hoarder)
    with pytest.raises(ContractViolation, match="grows with the history"):
        check_detector(Hoarder)


def test_one_infinity_in_the_warm_up_does_not_turn_every_later_point_into_an_alarm() -> None:
    """The defect the non-finite law found: OnlineNormal learned +inf during its warm-up, its mean
    became inf and its variance NaN, and every later point was anomalous."""
    from streamdq.detectors import OnlineNormal

    detector = OnlineNormal(min_points=3)
    state = detector.initial_state()
    verdicts = []
    for seq, value in enumerate([1.0, 2.0, float("inf"), 1.0, 2.0, 1.5, 1.0, 2.0, 1.5, 1.0]):
        state, verdict = detector.update(state, Point(float(seq), value, seq))
        verdicts.append(verdict)
    assert verdicts[2].warming_up and not verdicts[2].anomalous
    assert "non-finite value: not learned" in verdicts[2].message
    assert not any(v.anomalous for v in verdicts[3:])
    assert state["core"]["mean"] == pytest.approx(1.5, abs=0.2)


def test_the_kit_examples_run() -> None:
    import doctest

    import streamdq.testing.detector_checks as kit

    assert doctest.testmod(kit).failed == 0


def test_nan_in_a_spec_is_named_as_nan() -> None:
    """NaN was rejected only by the range checks, with messages such as 'factor cannot be negative,
    got nan'; the spec reader now says what is wrong."""
    from streamdq.detectors import detector_from_spec
    from streamdq.errors import ConfigError

    with pytest.raises(ConfigError, match="must be a number, got NaN") as caught:
        detector_from_spec({"type": "online_normal", "lower_factor": float("nan")})
    assert caught.value.key == "lower_factor"
