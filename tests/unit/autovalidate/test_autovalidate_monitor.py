"""auto_validate: in the streaming handler: learned once enough windows closed, judges each closed
window, results flow as check results; programs persisted in the state store and shown by the CLI."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import numpy as np
import pytest

from streamdq.autovalidate.avh.features import VOLUME_METRICS
from streamdq.autovalidate.avh.monitor import AutoValidateMonitor, auto_validate_monitor_from_config
from streamdq.autovalidate.avh.profile import ColumnProfile
from streamdq.autovalidate.avh.reconstruct import rescale, sample_frame
from streamdq.cli import main
from streamdq.engine.handler import BatchHandler
from streamdq.engine.judge import BatchJudge
from streamdq.engine.monitor import analyze_segments
from streamdq.errors import ConfigError

SCHEMA = "ts timestamp, amount double, country string"
T0 = datetime(2025, 12, 31, 23, 52, 0)  # window 8 starts on New Year's Day (UTC)


def _rows(rng, minute: int, n: int = 150, unit: float = 1.0, upper: bool = False):
    out = []
    for i in range(n):
        country = str(rng.choice(["us", "de", "fr"]))
        out.append(
            (
                T0 + timedelta(minutes=minute, seconds=int(i * 59 / n)),
                round(float(rng.normal(50, 5)) * unit, 2),
                country.upper() if upper else country,
            )
        )
    return out


def _handler(store, monitor):
    return BatchHandler(
        dataset="orders",
        query_id="q-av",
        judge=BatchJudge([]),
        window_seconds=60,
        watermark_seconds=0,
        event_time="ts",
        store=store,
        monitors=[monitor],
    )


def _monitor():
    return auto_validate_monitor_from_config(
        {
            "columns": {"amount": "numeric", "country": "categorical"},
            "history": 10,
            "min_history": 6,
            "holidays": "US",
        },
        "orders",
        analysis=analyze_segments,
    )


def test_config_errors_name_the_key():
    with pytest.raises(ConfigError, match="auto_validate.columns"):
        auto_validate_monitor_from_config({"columns": []}, "d")
    with pytest.raises(ConfigError, match="auto_validate.colums"):
        auto_validate_monitor_from_config({"colums": ["a"]}, "d")
    with pytest.raises(ConfigError, match="auto_validate.fpr"):
        auto_validate_monitor_from_config({"columns": ["a"], "fpr": 2}, "d")
    with pytest.raises(ConfigError, match="auto_validate.min_history"):
        auto_validate_monitor_from_config({"columns": ["a"], "history": 5, "min_history": 8}, "d")
    # structured: the key, the problem and the fix apart
    with pytest.raises(ConfigError) as err:
        auto_validate_monitor_from_config({"columns": ["a"], "level": "loud"}, "d")
    assert (
        err.value.key == "auto_validate.level"
        and "loud" in err.value.problem
        and "warning" in (err.value.fix or "")
    )
    with pytest.raises(ConfigError) as err:
        auto_validate_monitor_from_config({"columns": ["a"], "relearn_every": 0}, "d")
    assert err.value.key == "auto_validate.relearn_every" and err.value.fix == "set relearn_every: 10"
    m = auto_validate_monitor_from_config({"columns": ["a"]}, "d")
    assert isinstance(m, AutoValidateMonitor) and m.history == 30 and m.fpr == 0.001
    # an unknown kind needs both analyzer sets until the first window tells which one it is
    assert {a.NAME for a in m.analyzers()} >= {"Mean", "Histogram"}


def test_sample_rebuilt_from_a_categorical_profile_keeps_its_shares():
    p = ColumnProfile("c", "categorical", 10_000, values={"a": 6000, "b": 3000, "NullValue": 1000})
    frame = sample_frame(p, max_rows=100)
    assert len(frame) == 100
    assert frame["c"].value_counts(dropna=False).to_dict() == {"a": 60, "b": 30, None: 10}
    clean = ColumnProfile("c", "categorical", 100, {"row_count": 100, "completeness": 0.9, "str_len": 1})
    bad = ColumnProfile("c", "categorical", 50, {"row_count": 50, "completeness": 0.5, "str_len": 1})
    real = ColumnProfile("c", "categorical", 10_000, {"row_count": 10_000, "completeness": 0.9, "str_len": 1})
    moved = rescale(real, clean, bad)
    assert moved.rows == 5000 and moved.scalars["completeness"] == pytest.approx(0.5)


def test_monitor_learns_judges_persists_and_shows(spark, tmp_path, capsys):
    from streamdq.state.delta_store import DeltaStateStore

    rng = np.random.default_rng(11)
    state = str(tmp_path / "state")
    monitor = _monitor()
    handler = _handler(DeltaStateStore(state), monitor)
    reports = []
    for minute in range(9):  # batch i closes window i - 1: windows 0..7 close
        reports.append(handler.handle(spark.createDataFrame(_rows(rng, minute), SCHEMA), minute))
    assert set(monitor.programs) == {"amount", "country"}
    judged = [r for rep in reports for r in rep.check_results if r.check.startswith("auto-validated")]
    assert judged and all(r.status == "Success" for r in judged)  # clean windows pass
    incident = handler.handle(spark.createDataFrame(_rows(rng, 9, unit=100, upper=True), SCHEMA), 9)
    assert not [r for r in incident.check_results if r.status != "Success"]  # window 8 (clean) closed
    after = handler.handle(spark.createDataFrame(_rows(rng, 10), SCHEMA), 10)
    failed = {r.check: r for r in after.check_results if r.status != "Success"}
    assert set(failed) == {"auto-validated amount", "auto-validated country"}
    bad = [c for c in failed["auto-validated amount"].constraint_results if c.failed]
    assert bad and bad[0].scope == "window" and "breaks the learned" in (bad[0].message or "")
    assert bad[0].window is not None and bad[0].window.start.replace(tzinfo=None) == T0 + timedelta(minutes=9)
    # the incident window is not learned as normal (on a holiday, only volume is excused)
    assert len(monitor.profiles["amount"]) == 9
    # nor is it the reference of the next window's distances: window 10 is compared with window 8
    assert monitor.programs["amount"].reference.scalars["mean"] < 100  # the incident's is ~5,000
    # window 11, on the holiday, carries half the rows: the learned sum would flag it, but volume
    # is not judged on a day off, so it leaves the result; the other constraints are judged (and
    # the row count's level bounds a day off above only: fewer rows pass)
    program = monitor.programs["amount"]
    (volume,) = [c for c in program.constraints if c.metric == "sum"]
    assert not volume.admits(75 * 50.0)
    handler.handle(spark.createDataFrame(_rows(rng, 11, n=75), SCHEMA), 11)  # closes window 10
    holiday = handler.handle(spark.createDataFrame(_rows(rng, 12), SCHEMA), 12)  # closes window 11
    (amount,) = [r for r in holiday.check_results if r.check == "auto-validated amount"]
    # the metric of "lo <= metric(column) <= hi", under its transforms (log(std)(amount))
    judged = {
        re.match(r"(?:diff\d*\()?(?:log\()?(\w+)", c.constraint.split()[1]).group(1)  # type: ignore[union-attr]
        for c in amount.constraint_results
    }
    assert amount.status == "Success" and judged and not judged & (VOLUME_METRICS - {"row_count"})
    # judged by the off-day selection the program was learned with (the calendar is configured)
    assert program.off_day_constraints is not None
    assert judged == {c.metric for c in program.off_day_constraints}
    # windows 0-7 on 31 December, 8, 10 and 11 on New Year's Day (9, the incident, was not kept)
    assert monitor.holidays["amount"] == [False] * 7 + [True] * 3
    # programs live in the state store; a restarted job reloads them
    restarted = _monitor()
    _handler(DeltaStateStore(state), restarted).restore()
    assert restarted.programs == monitor.programs and restarted.last_seq == monitor.last_seq
    assert restarted.holidays == monitor.holidays
    assert main(["autovalidate", "show", "--state", state, "--dataset", "orders"]) == 0
    out = capsys.readouterr().out
    assert "amount (numeric)" in out and "country (categorical)" in out
    assert main(["autovalidate", "show", "--state", state, "--dataset", "nope"]) == 2


def test_run_config_rejects_bad_monitor_keys_at_load_naming_the_file(tmp_path):
    from streamdq.engine.config import load_run_config
    from streamdq.engine.monitor import build_monitors

    base = {"dataset": "d", "source": {"type": "generator"}, "checkpoint": str(tmp_path / "chk")}
    run = tmp_path / "run.yaml"
    run.write_text(
        "dataset: d\nsource: {type: generator}\ncheckpoint: chk\nauto_validate: {columns: [a], fpr: 5}\n"
    )
    with pytest.raises(ConfigError, match=r"run\.yaml.*auto_validate\.fpr"):
        load_run_config(str(run))
    cfg = load_run_config({**base, "auto_validate": {"columns": ["a"]}, "quality_score": {}})
    assert [m.key for m in build_monitors(cfg)] == ["auto_validate", "quality_score"]


def test_units_of_windows_merge_the_engines_states_through_the_handler(spark, tmp_path):
    """``unit_windows: 2`` in the streaming handler: each unit's profile is built from the real
    engine states of its two windows merged (moments, HLL, KLL, frequencies), and equals the profile
    of the two windows' rows computed in one engine run (the sketches within their error)."""
    import pandas as pd
    from streamdq.state.delta_store import DeltaStateStore

    from streamdq.learning import profile_frames

    rng = np.random.default_rng(12)

    def monitor_():
        return auto_validate_monitor_from_config(
            {"columns": {"amount": "numeric", "country": "categorical"}, "unit_windows": 2, "min_history": 4},
            "orders",
            analysis=analyze_segments,
        )

    state = str(tmp_path / "state")
    monitor = monitor_()
    handler = _handler(DeltaStateStore(state), monitor)
    batches = [_rows(rng, minute, n=120) for minute in range(5)]  # batch i closes window i - 1
    for minute, rows in enumerate(batches[:4]):
        handler.handle(spark.createDataFrame(rows, SCHEMA), minute)
    # windows 0-1 make a unit, window 2 waits in the next one: a restarted job reloads it
    assert monitor.pending_windows == 1 and len(monitor.profiles["amount"]) == 1
    restarted = monitor_()
    _handler(DeltaStateStore(state), restarted).restore()
    assert restarted.pending_windows == 1 and set(restarted.pending) == set(monitor.pending)
    for a in monitor.analyzers():  # the same states (an HLL sketch may come back re-serialized)
        key = a.state_key()
        assert a.metric(restarted.pending[key]).value == a.metric(monitor.pending[key]).value, key
    handler.handle(spark.createDataFrame(batches[4], SCHEMA), 4)
    assert monitor.pending_windows == 0 and [p.rows for p in monitor.profiles["amount"]] == [240, 240]
    frames = [pd.DataFrame(batches[0] + batches[1], columns=["ts", "amount", "country"])]
    (numeric,) = profile_frames([f[["amount"]] for f in frames], "amount", "numeric")
    (categorical,) = profile_frames([f[["country"]] for f in frames], "country", "categorical")
    merged = monitor.profiles["amount"][0]
    for name in ("row_count", "completeness", "mean", "min", "max", "sum", "std", "zero_ratio"):
        assert merged.scalars[name] == pytest.approx(numeric.scalars[name], rel=1e-9), name
    for name in ("distinct_count", "median"):  # HLL union and KLL merge: within the sketches' error
        assert merged.scalars[name] == pytest.approx(numeric.scalars[name], rel=0.03), name
    assert monitor.profiles["country"][0] == categorical
