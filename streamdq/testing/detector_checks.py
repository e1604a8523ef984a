"""``check_detector``: the Detector contract (DESIGN.md section 3), checked from a class's
``_unit_test_params()``.

Runs on the driver in pure Python (river's adapters included; no Spark), well under a second
per parameter set. For every parameter set the class's own ``_unit_test_params()`` yields
(river's ``check_estimator`` style), on a deterministic series (a noisy daily-looking wave with
spikes, missing values and infinities in it):

* **spec**: the detector is built from the params, ``to_spec()`` is JSON-able and
  ``detector_from_spec`` (after a JSON round trip) gives an equal detector; an unknown key, a
  value of the wrong type for each key and NaN for each number give a ``ConfigError`` whose
  ``key`` is that key;
* **purity**: ``update(state, point)`` never mutates the state it is given, and two calls on
  the same state and point give the same verdict and the same state;
* **serialization**: every state round-trips through ``dump_state`` / ``load_state`` to the same
  bytes;
* **replay safety**: a run restored from the dumped bytes of its state at any point gives the
  same verdicts as the run that was never interrupted; a point whose seq was already seen
  returns the stored verdict and leaves the state unchanged;
* **warm-up**: a verdict that says ``warming_up`` is never anomalous (no alarm before warm-up),
  and a detector that warms up says so from the first point;
* **missing and non-finite values**: None and NaN are never anomalous and, unless the class
  ``HANDLES_MISSING``, leave the learned state as it was; +-inf never changes what the detector
  learned (the learned part of the state equals that of the same run without the point);
* **empty series**: ``detect([])`` is ``[]`` (or a ``ValueError`` saying the series is empty,
  Deequ's strategies);
* **bounded state**: the state after four times as many points is at most half as large again
  (every state is bounded, so the cost per point does not grow with the history).

A class without its own ``_unit_test_params`` fails (``ContractViolation``): a new detector
cannot skip the laws. The suite runs this on every registered detector
(tests/laws/test_detector_conformance.py); users run it on theirs::

    from streamdq.testing import check_detector

    def test_my_detector():
        check_detector(MyDetector)

>>> from streamdq.detectors import SimpleThreshold
>>> check_detector(SimpleThreshold).laws > 100
True
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from streamdq.detectors.base import (
    Detector,
    DetectorState,
    Point,
    Verdict,
    dump_state,
    load_state,
)
from streamdq.detectors.register import detector_from_spec, registered_detectors
from streamdq.errors import ConfigError
from streamdq.testing.laws import ContractReport, ContractViolation, unit_test_params

HOUR = 3600.0


def series(n: int = 72, seed: int = 5) -> list[float | None]:
    """A deterministic hourly-looking series: a wave with noise, two spikes, a drop, two missing
    values (None, NaN) and two infinities; the first 12 points are plain values."""
    values: list[float | None] = []
    state = seed
    for i in range(n):
        state = (1103515245 * state + 12345) % 2**31  # a tiny LCG: the same series everywhere
        noise = (state / 2**31 - 0.5) * 2.0
        values.append(100.0 + 10.0 * math.sin(2 * math.pi * i / 24) + noise)
    for at, value in ((30, 400.0), (41, None), (47, math.inf), (52, -300.0), (58, math.nan), (63, -math.inf)):
        if at < n:
            values[at] = value
    values[min(n - 1, 66)] = 500.0
    return values


def points(values: Sequence[float | None], start_seq: int = 0) -> list[Point]:
    """Points one hour apart (epoch seconds), seq = index."""
    return [Point(time=(start_seq + i) * HOUR, value=v, seq=start_seq + i) for i, v in enumerate(values)]


def _params(cls: type[Detector]) -> list[dict[str, Any]]:
    return unit_test_params(cls, gives="the keyword arguments of one or more configurations to check")


def _bytes(state: DetectorState, where: str) -> bytes:
    try:
        return dump_state(state)
    except (TypeError, ValueError) as exc:
        raise ContractViolation(f"{where}: the state is not serializable by dump_state: {exc}") from None


def _same_verdict(a: Verdict, b: Verdict) -> bool:
    return json.dumps(a.to_dict(), sort_keys=True, default=repr) == json.dumps(
        b.to_dict(), sort_keys=True, default=repr
    )


def _run(
    detector: Detector, pts: Sequence[Point], where: str, report: ContractReport
) -> tuple[list[DetectorState], list[Verdict]]:
    """Feed ``pts``; checks purity, determinism and the bytes round trip at every step.
    Returns the state BEFORE each point (plus the final one) and each verdict."""
    state = detector.initial_state()
    states, verdicts = [state], []
    for point in pts:
        at = f"{where}, point seq={point.seq} value={point.value!r}"
        before = _bytes(state, at)
        new, verdict = detector.update(state, point)
        if _bytes(state, at) != before:  # the bytes hold every value of the state
            raise ContractViolation(f"{at}: update mutated the state it was given")
        again, verdict2 = detector.update(state, point)
        if _bytes(again, at) != _bytes(new, at) or not _same_verdict(verdict, verdict2):
            raise ContractViolation(f"{at}: two updates of the same state and point differ (not pure)")
        data = _bytes(new, at)
        if dump_state(load_state(data)) != data:
            raise ContractViolation(f"{at}: load_state(dump_state(s)) gives other bytes")
        if not isinstance(verdict, Verdict):
            raise ContractViolation(f"{at}: update returned {type(verdict).__name__}, not a Verdict")
        json.dumps(verdict.to_dict(), default=repr)
        report.laws += 4
        states.append(new)
        verdicts.append(verdict)
        state = new
    return states, verdicts


def _learned(state: DetectorState) -> bytes:
    """The learned part of a state (its core), as bytes."""
    return dump_state({"type": state["type"], "core": state["core"]})


def _check_one(cls: type[Detector], params: dict[str, Any], report: ContractReport) -> None:
    where = f"{cls.__name__} with params {params}"
    try:
        detector = cls(**params)
    except Exception as exc:
        raise ContractViolation(f"{where}: the class rejects its own test params: {exc}") from None
    # spec
    spec = detector.to_spec()
    try:
        text = json.dumps(spec)
    except (TypeError, ValueError) as exc:
        raise ContractViolation(f"{where}: to_spec() is not JSON-able: {exc}") from None
    back = detector_from_spec(json.loads(text))
    if back != detector or hash(back) != hash(detector):
        raise ContractViolation(f"{where}: detector_from_spec(to_spec()) is {back!r}, not {detector!r}")
    report.laws += 1
    _check_spec_errors(spec, where, report)

    values = series()
    pts = points(values)
    states, verdicts = _run(detector, pts, where, report)

    # replay from restored bytes, at several split points
    for split in (1, 13, 31, 48, len(pts) - 1):
        state = load_state(dump_state(states[split]))
        for point, want in zip(pts[split:], verdicts[split:], strict=True):
            state, got = detector.update(state, point)
            if not _same_verdict(got, want):
                raise ContractViolation(
                    f"{where}: restored from the bytes of its state after {split} points, the verdict of "
                    f"seq={point.seq} is {got!r}, not {want!r} as without the restore"
                )
        if dump_state(state) != dump_state(states[-1]):
            raise ContractViolation(f"{where}: restored after {split} points, the final state differs")
        report.laws += 1

    # a replayed seq: stored verdict, state unchanged
    final = states[-1]
    for back_by in (1, 2, 5):
        point = pts[-back_by]
        same, verdict = detector.update(final, point)
        if dump_state(same) != dump_state(final):
            raise ContractViolation(f"{where}: replaying seq={point.seq} changed the state")
        if not _same_verdict(verdict, verdicts[-back_by]):
            raise ContractViolation(
                f"{where}: replaying seq={point.seq} gave {verdict!r}, not the stored {verdicts[-back_by]!r}"
            )
        report.laws += 1

    # warm-up
    for point, verdict in zip(pts, verdicts, strict=True):
        if verdict.warming_up and verdict.anomalous:
            raise ContractViolation(f"{where}: seq={point.seq} is anomalous while warming up")
    report.laws += 1
    warms = any(v.warming_up for v in verdicts)
    if warms and not verdicts[0].warming_up:
        raise ContractViolation(f"{where}: warms up later on but not on the first point: {verdicts[0]!r}")
    _check_first_points(detector, where, report)

    # missing and non-finite values
    for i, (point, verdict) in enumerate(zip(pts, verdicts, strict=True)):
        value = point.value
        if value is None or (isinstance(value, float) and math.isnan(value)):
            if verdict.anomalous:
                raise ContractViolation(f"{where}: the missing value at seq={point.seq} is anomalous")
            if not cls.HANDLES_MISSING and _learned(states[i + 1]) != _learned(states[i]):
                raise ContractViolation(
                    f"{where}: the missing value at seq={point.seq} changed what was learned"
                )
            report.laws += 1
        elif isinstance(value, float) and math.isinf(value):
            _check_infinite(detector, states[i], point, where)
            report.laws += 1

    _check_bounded(detector, where, report)

    # empty series
    try:
        flagged = detector.detect([])
    except ValueError as exc:
        if "empty" not in str(exc):
            raise ContractViolation(
                f"{where}: detect([]) raised without saying the series is empty: {exc}"
            ) from None
    else:
        if flagged != []:
            raise ContractViolation(f"{where}: detect([]) is {flagged!r}, not []")
    report.laws += 1


def _rejects(spec: dict[str, Any], key: str, what: str, where: str) -> None:
    try:
        detector_from_spec(spec)
    except ConfigError as exc:
        if exc.key != key:
            raise ContractViolation(
                f"{where}: {what}: the ConfigError's key is {exc.key!r}, not {key!r}"
            ) from None
        return
    raise ContractViolation(f"{where}: {what}: the spec was accepted")


def _check_spec_errors(spec: dict[str, Any], where: str, report: ContractReport) -> None:
    """Table-driven over the spec's keys: each bad value is a ConfigError naming its key."""
    _rejects({**spec, "no_such_key": 1}, "no_such_key", "an unknown key", where)
    report.laws += 1
    for key, value in spec.items():
        if key == "type":
            continue
        _rejects({**spec, key: [value]}, key, f"a list for {key}", where)
        report.laws += 1
        if isinstance(value, float):
            _rejects({**spec, key: math.nan}, key, f"NaN for {key}", where)
            report.laws += 1


def _check_bounded(detector: Detector, where: str, report: ContractReport) -> None:
    sizes = []
    for n in (100, 400):
        state = detector.initial_state()
        for point in points(series(n)):
            state, _ = detector.update(state, point)
        sizes.append(len(dump_state(state)))
    if sizes[1] > 1.5 * sizes[0]:
        raise ContractViolation(
            f"{where}: the state grows with the history: {sizes[0]} bytes after 100 points, {sizes[1]} after 400"
        )
    report.laws += 1


def _check_first_points(detector: Detector, where: str, report: ContractReport) -> None:
    """Wild first points raise no alarm while the detector warms up, and its warm-up verdicts
    say what it waits for."""
    state = detector.initial_state()
    for seq, value in enumerate([1.0, 1e6, -1e6, 1e6, -1e6, 1.0, 1e6]):
        state, verdict = detector.update(state, Point(time=seq * HOUR, value=value, seq=seq))
        if verdict.warming_up:
            if verdict.anomalous:
                raise ContractViolation(
                    f"{where}: the wild value {value} at seq={seq} is anomalous while warming up"
                )
            if "waiting for" not in verdict.message:
                raise ContractViolation(
                    f"{where}: the warm-up verdict at seq={seq} does not say what it waits for: {verdict.message!r}"
                )
        report.laws += 1


def _check_infinite(detector: Detector, before: DetectorState, point: Point, where: str) -> None:
    """+-inf is judged but not learned: the learned part equals the run that had a missing value
    instead (for detectors that keep a phase) or no point at all."""
    after, verdict = detector.update(before, point)
    missing = Point(time=point.time, value=None, seq=point.seq)
    without, _ = detector.update(before, missing)
    reference = without if detector.HANDLES_MISSING else before
    if _learned(after) != _learned(reference):
        raise ContractViolation(
            f"{where}: the infinite value at seq={point.seq} changed what the detector learned"
        )
    if verdict.warming_up and verdict.anomalous:
        raise ContractViolation(
            f"{where}: the infinite value at seq={point.seq} is anomalous while warming up"
        )


def check_detector(cls: type[Detector]) -> ContractReport:
    """Check ``cls`` against the Detector contract; raises ``ContractViolation`` naming the law."""
    param_sets = _params(cls)
    report = ContractReport(cls.__name__, param_sets)
    for params in param_sets:
        _check_one(cls, params, report)
    return report


__all__ = ["check_detector", "points", "registered_detectors", "series"]
