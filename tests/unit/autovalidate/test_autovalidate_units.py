"""auto_validate's ``unit_windows``: N closed windows merged into one learned and judged unit (no
Spark: the states are built here as the engine would hand them over)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pytest

from streamdq.analyzers.basic_states import NumMatches
from streamdq.analyzers.frequency.states import FrequencyState
from streamdq.autovalidate.avh.learner import learn_from_profiles
from streamdq.autovalidate.avh.monitor import AutoValidateMonitor, auto_validate_monitor_from_config
from streamdq.autovalidate.avh.profile import CATEGORICAL, MAX_KEYS, NULL_KEY, column_analyzers
from streamdq.errors import ConfigError
from streamdq.report import Window
from tests.unit.autovalidate.avh_profiles import categorical_profile

T0 = datetime(2025, 12, 31, 23, 57, tzinfo=UTC)  # minute-long windows from 31 December, 23:57 UTC


def _states(values: list[str | None]) -> dict:
    """The Size and Histogram states of one window of column ``c``, keyed as the handler keys them."""
    size, histogram = column_analyzers("c", CATEGORICAL)
    counts = Counter(NULL_KEY if v is None else v for v in values)
    keys = sorted(counts)
    table = pa.table({"k0": keys, "count": pa.array([counts[k] for k in keys], pa.int64())})
    frequency = FrequencyState.from_table(table, n=len(values), total=len(values), max_groups=MAX_KEYS)
    return {size.state_key(): NumMatches(len(values)), histogram.state_key(): frequency}


def _window(minute: int) -> Window:
    return Window(T0 + timedelta(minutes=minute), T0 + timedelta(minutes=minute + 1))


def _values(minute: int, n: int = 20) -> list[str | None]:
    return ["a" if (i + minute) % 3 else "b" for i in range(n)]


def _monitor(**kw) -> AutoValidateMonitor:
    return AutoValidateMonitor("d", {"c": "categorical"}, history=10, min_history=4, unit_windows=3, **kw)


def test_a_unit_merges_its_windows_and_is_judged_once_with_its_own_window():
    monitor = _monitor()
    # a program learned from unit-sized profiles (three windows of 20 rows), as the monitor learns
    history = [categorical_profile(_values(m, 60), "c") for m in range(8)]
    bad = categorical_profile([v.upper() if v else v for v in _values(0, 60)], "c")
    monitor.programs["c"] = learn_from_profiles(history, {"casing_change:100%:upper": bad}, fpr=0.001)
    outputs = [monitor.observe(_window(m), m, {}, _states(_values(m))) for m in range(6)]
    # nothing is reported until a unit closes, then one result for the unit
    assert [len(o.check_results) for o in outputs] == [0, 0, 1, 0, 0, 1]
    (result,) = outputs[2].check_results
    assert result.status == "Success" and result.constraint_results
    assert {c.window for c in result.constraint_results} == {Window(_window(0).start, _window(2).end)}
    # the unit's profile is that of the three windows' rows together
    merged = [v for m in range(3) for v in _values(m)]
    kept = monitor.profiles["c"]
    assert len(kept) == 2 and kept[0] == categorical_profile(merged, "c") and kept[0].rows == 60
    assert monitor.pending == {} and monitor.pending_windows == 0
    # a unit in which one window went wrong fails as a unit
    for m in (6, 7):
        assert not monitor.observe(_window(m), m, {}, _states(_values(m))).check_results
    upper = [v.upper() if v else v for v in _values(8)]
    (failed,) = monitor.observe(_window(8), 8, {}, _states(upper)).check_results
    assert failed.status == "Warning" and any(c.failed for c in failed.constraint_results)
    assert len(monitor.profiles["c"]) == 2  # a failing unit is not learned as normal


def test_an_open_unit_survives_a_restart():
    steady, restarted = _monitor(), _monitor()
    for m in range(5):  # one unit closed, two windows of the next one held
        steady.observe(_window(m), m, {}, _states(_values(m)))
    assert steady.pending_windows == 2 and steady.pending_start == _window(3)
    restarted.load_state(steady.dump_state())
    assert restarted.pending_windows == 2 and restarted.pending_start == _window(3)
    for monitor in (steady, restarted):
        monitor.observe(_window(5), 5, {}, _states(_values(5)))
        monitor.observe(_window(5), 5, {}, _states(_values(5)))  # a replayed batch is ignored
    assert restarted.profiles == steady.profiles and len(steady.profiles["c"]) == 2
    assert steady.profiles["c"][1].rows == 60 and restarted.pending_windows == 0
    # a closed unit leaves nothing open in the stored state
    assert b'"unit"' not in restarted.dump_state()


def test_a_unit_is_a_day_off_when_any_of_its_windows_starts_on_one():
    monitor = auto_validate_monitor_from_config(
        {"columns": {"c": "categorical"}, "unit_windows": 3, "holidays": "US", "min_history": 4}, "d"
    )
    start = datetime(2025, 12, 30, 12, tzinfo=UTC)
    half_days = [
        Window(start + timedelta(hours=12 * i), start + timedelta(hours=12 * (i + 1))) for i in range(6)
    ]
    for i, window in enumerate(half_days):  # units: 30 Dec noon - 31 Dec; 1 Jan - 2 Jan noon
        monitor.observe(window, i, {}, _states(_values(i)))
    # the second unit starts on New Year's Day and ends on an ordinary day: a day off as a whole
    assert monitor.holidays["c"] == [False, True]


def test_unit_windows_is_validated_and_defaults_to_one():
    assert auto_validate_monitor_from_config({"columns": ["a"]}, "d").unit_windows == 1
    assert auto_validate_monitor_from_config({"columns": ["a"], "unit_windows": 7}, "d").unit_windows == 7
    with pytest.raises(ConfigError) as err:
        auto_validate_monitor_from_config({"columns": ["a"], "unit_windows": 0}, "d")
    assert err.value.key == "auto_validate.unit_windows"
