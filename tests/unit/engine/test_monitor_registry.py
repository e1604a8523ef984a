"""Window monitors are found by run-config key through a registry filled by explicit calls
(streamdq.monitors, streamdq.register), so the engine never names autovalidate. No Spark."""

from __future__ import annotations

import doctest
import importlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.state import State
from streamdq.engine.config import load_run_config
from streamdq.engine.monitor import build_monitors
from streamdq.errors import ConfigError
from streamdq.monitors import MONITORS, MonitorOutput, MonitorRegistry
from streamdq.register import monitor_registry, register_monitors
from streamdq.report import Window


class _Counter:
    """A user monitor: counts the windows it saw."""

    def __init__(self, every: int) -> None:
        self.key = "window_counter"
        self.every = every
        self.seen = 0

    def analyzers(self) -> Sequence[Analyzer]:
        return ()

    def observe(
        self, window: Window, seq: int, metrics: Mapping[Analyzer, Metric], states: Mapping[str, State]
    ) -> MonitorOutput:
        self.seen += 1
        return MonitorOutput()

    def dump_state(self) -> bytes:
        return str(self.seen).encode()

    def load_state(self, blob: bytes) -> None:
        self.seen = int(blob)


def _counter(section: Any, dataset: str) -> _Counter:
    if not isinstance(section, dict) or not isinstance(section.get("every"), int):
        raise ConfigError("window_counter.every", "expected an integer", "e.g. window_counter: {every: 2}")
    return _Counter(section["every"])


@pytest.fixture
def counter_registered() -> Iterator[None]:
    monitor_registry().register("window_counter", _counter)
    try:
        yield
    finally:
        MONITORS.unregister("window_counter")


def _base(tmp_path: Path) -> dict[str, Any]:
    return {"dataset": "d", "source": {"type": "generator"}, "checkpoint": str(tmp_path / "chk")}


def test_a_monitor_registered_by_key_is_validated_and_built_from_the_run_config(
    tmp_path: Path, counter_registered: None
) -> None:
    cfg = load_run_config({**_base(tmp_path), "window_counter": {"every": 3}, "quality_score": {}})
    assert cfg.monitors == {"quality_score": {}, "window_counter": {"every": 3}}
    monitors = build_monitors(cfg)
    # registration order: the built-ins first, then the user's
    assert [m.key for m in monitors] == ["quality_score", "window_counter"]
    assert isinstance(monitors[1], _Counter) and monitors[1].every == 3
    with pytest.raises(ConfigError, match=r"window_counter\.every"):
        load_run_config({**_base(tmp_path), "window_counter": {"every": "x"}})


def test_an_unregistered_key_is_an_unknown_key_naming_the_registered_monitors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"window_counter.*unknown key.*auto_validate.*quality_score"):
        load_run_config({**_base(tmp_path), "window_counter": {"every": 3}})


def test_a_fresh_registry_is_empty_until_the_builtins_are_registered() -> None:
    reg = MonitorRegistry()
    assert reg.keys() == ()
    assert reg.build_all({"quality_score": {}}, "d") == []  # importing registered nothing
    register_monitors(reg)
    assert reg.keys() == ("auto_validate", "quality_score")
    (monitor,) = reg.build_all({"quality_score": {}, "auto_validate": None}, "d")
    assert monitor.key == "quality_score"


@pytest.mark.parametrize("name", ["streamdq.monitors", "streamdq.register"])
def test_docstring_examples_run(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
