"""AVH reaches the engine only by dependency inversion (issue 21 item 1): the learner and Program
never import it; streamdq.learning (above the engine) binds the engine's analysis for the
DataFrame entry points, and the engine hands it to the streaming monitor when it builds it."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pytest
from pyspark.sql import functions as F

import streamdq.autovalidate as autovalidate
import streamdq.autovalidate.avh as avh
import streamdq.learning as learning
from streamdq.analyzers import Mean, Size
from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.state import State
from streamdq.autovalidate.avh.monitor import AutoValidateMonitor, auto_validate_monitor_from_config
from streamdq.autovalidate.avh.profile import CATEGORICAL
from streamdq.engine.config import load_run_config
from streamdq.engine.monitor import analyze_segments, build_monitors
from streamdq.monitors import MonitorOutput, MonitorRegistry, SegmentedAnalysis, UsesAnalysis
from streamdq.report import Window


def test_the_dataframe_entry_points_are_streamdq_learning_under_their_old_names():
    for name in ("learn", "judge", "profile_frames"):
        assert getattr(autovalidate, name) is getattr(learning, name)
        assert getattr(avh, name) is getattr(learning, name)
    assert autovalidate.learn_from_profiles is avh.learner.learn_from_profiles


def test_importing_autovalidate_and_its_monitors_does_not_import_the_engine():
    code = (
        "import sys, streamdq.autovalidate, streamdq.autovalidate.avh.monitor, "
        "streamdq.autovalidate.avh.reconstruct, streamdq.autovalidate.avh.profiling, "
        "streamdq.autovalidate.quality.monitor\n"
        "print(sorted(m for m in sys.modules if m.startswith('streamdq.engine')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_analyze_segments_gives_states_per_segment_value_and_failures(spark):
    df = spark.createDataFrame([(1, 2.0), (1, 4.0), (2, 10.0)], "g INT, x DOUBLE")
    states, failures = analyze_segments([Size(), Mean("x"), Mean("missing")], df, F.col("g"))
    assert sorted(states) == [1, 2]
    assert Size().metric(states[1][Size()]).value == 2.0
    assert Mean("x").metric(states[1][Mean("x")]).value == 3.0
    assert Mean("x").metric(states[2][Mean("x")]).value == 10.0
    assert list(failures) == [Mean("missing")]


class _Sampler:
    """A user monitor that asks for the engine's analysis."""

    key = "sampler"

    def __init__(self) -> None:
        self.analysis: SegmentedAnalysis | None = None

    def use_analysis(self, analysis: SegmentedAnalysis) -> None:
        self.analysis = analysis

    def analyzers(self) -> Sequence[Analyzer]:
        return ()

    def observe(
        self, window: Window, seq: int, metrics: Mapping[Analyzer, Metric], states: Mapping[str, State]
    ) -> MonitorOutput:
        return MonitorOutput()

    def dump_state(self) -> bytes:
        return b""

    def load_state(self, blob: bytes) -> None:
        pass


def test_the_registry_hands_the_analysis_to_the_monitors_that_use_one():
    reg = MonitorRegistry()
    reg.register("sampler", lambda section, dataset: _Sampler())

    def analysis(analyzers: Sequence[Analyzer], df: Any, segment: Any, *, max_groups: int = 10) -> Any:
        return {}, {}

    (without,) = reg.build_all({"sampler": {}}, "d")
    assert isinstance(without, _Sampler) and without.analysis is None
    (given,) = reg.build_all({"sampler": {}}, "d", analysis=analysis)
    assert isinstance(given, _Sampler) and given.analysis is analysis
    assert isinstance(given, UsesAnalysis)


def test_the_engine_builds_the_auto_validate_monitor_with_its_analysis(tmp_path):
    cfg = load_run_config(
        {
            "dataset": "d",
            "source": {"type": "generator"},
            "checkpoint": str(tmp_path / "chk"),
            "auto_validate": {"columns": ["amount"]},
        }
    )
    (monitor,) = build_monitors(cfg)
    assert isinstance(monitor, AutoValidateMonitor) and monitor.analysis is analyze_segments


def _history(spark, n: int = 6) -> list:
    rng = np.random.default_rng(3)
    frames = [pd.DataFrame({"c": rng.choice(["a", "b", "c"], 200, p=[0.6, 0.3, 0.1])}) for _ in range(n)]
    return learning.profile_frames(frames, "c", CATEGORICAL, spark=spark)


def test_the_monitor_learns_with_the_analysis_it_was_handed(spark):
    monitor = auto_validate_monitor_from_config(
        {"columns": {"c": "categorical"}, "history": 6, "min_history": 4}, "d", analysis=analyze_segments
    )
    monitor.profiles["c"] = _history(spark)
    monitor.holidays["c"] = [False] * 6
    monitor._maybe_learn("c", monitor.profiles["c"][-1])
    assert monitor.programs["c"].constraints  # learned, recall estimated on profiled corruptions


def test_a_monitor_without_an_analysis_learns_nothing_and_says_so_once(spark, caplog):
    monitor = auto_validate_monitor_from_config(
        {"columns": {"c": "categorical"}, "history": 6, "min_history": 4}, "d"
    )
    monitor.profiles["c"] = _history(spark)
    monitor.holidays["c"] = [False] * 6
    with caplog.at_level(logging.WARNING, logger="streamdq.autovalidate.avh.monitor"):
        monitor._maybe_learn("c", monitor.profiles["c"][-1])
        monitor._maybe_learn("c", monitor.profiles["c"][-1])
    assert monitor.programs == {}
    assert [r.getMessage() for r in caplog.records].count(
        "auto-validation of d cannot learn: no analysis to profile samples with (build the monitor with "
        "streamdq.engine.monitor.build_monitors, or pass analysis=streamdq.engine.monitor.analyze_segments)"
    ) == 1
    monitor.use_analysis(analyze_segments)
    monitor._maybe_learn("c", monitor.profiles["c"][-1])
    assert monitor.programs["c"].constraints


def test_analyze_segments_example_runs(spark):
    import doctest

    import streamdq.engine.monitor as engine_monitor

    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder().find(engine_monitor.analyze_segments, globs=vars(engine_monitor)):
        runner.run(test)
    assert runner.tries > 0 and runner.failures == 0


def test_learn_refuses_bad_arguments_with_a_streamdq_error_before_profiling():
    """An empty history, a rate outside (0, 1), holidays not one per batch: InvalidArgument (a
    StreamdqError, still a ValueError), raised before any frame is profiled (no Spark needed)."""
    from streamdq.errors import InvalidArgument, StreamdqError

    frame = pd.DataFrame({"amount": [1.0, 2.0]})
    cases = [
        (lambda: learning.learn([], "amount"), "non-empty history"),
        (lambda: learning.learn([frame], "amount", fpr=1.0), r"fpr must be in \(0, 1\), got 1.0"),
        (lambda: learning.learn([frame, frame], "amount", holidays=[True]), "holidays has 1 flags for 2"),
    ]
    for call, message in cases:
        with pytest.raises(InvalidArgument, match=message) as info:
            call()
        assert isinstance(info.value, StreamdqError) and isinstance(info.value, ValueError)
