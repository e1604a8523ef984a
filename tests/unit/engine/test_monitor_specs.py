"""Monitor sections are parsed once, at load, into ``MonitorSpec`` values; the engine builds each
monitor once from them (streamdq.monitors: ``parse_all`` / ``build``). No Spark."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from streamdq.engine.config import load_run_config
from streamdq.engine.monitor import build_monitors
from streamdq.errors import ConfigError
from streamdq.monitors import MONITORS, MonitorRegistry, MonitorSpec

CALLS: Counter[str] = Counter()


@dataclass(frozen=True)
class _Settings:
    every: int


class _Every:
    key = "every_n"

    def __init__(self, settings: _Settings) -> None:
        self.settings = settings


def _parse(section: Any) -> _Settings:
    CALLS["parse"] += 1
    if not isinstance(section, dict) or not isinstance(section.get("n"), int):
        raise ConfigError("every_n.n", f"expected an integer, got {section!r}", "write every_n: {n: 2}")
    return _Settings(section["n"])


def _build(settings: _Settings, dataset: str) -> _Every:
    CALLS["build"] += 1
    assert isinstance(settings, _Settings), "the factory is handed the parsed settings"
    return _Every(settings)


@pytest.fixture
def registered() -> Iterator[None]:
    CALLS.clear()
    MONITORS.register("every_n", _build, parse=_parse)  # type: ignore[arg-type]
    try:
        yield
    finally:
        MONITORS.unregister("every_n")


def _base(tmp_path: Path) -> dict[str, Any]:
    return {"dataset": "d", "source": {"type": "generator"}, "checkpoint": str(tmp_path / "chk")}


def test_a_section_is_parsed_at_load_and_built_once_by_the_engine(tmp_path: Path, registered: None) -> None:
    cfg = load_run_config({**_base(tmp_path), "every_n": {"n": 3}})
    assert cfg.monitor_specs == (MonitorSpec("every_n", _Settings(3)),)
    assert Counter(parse=1) == CALLS  # validated without building a monitor
    (monitor,) = build_monitors(cfg)
    assert isinstance(monitor, _Every) and monitor.settings.every == 3
    assert Counter(parse=1, build=1) == CALLS  # nothing parsed again


def test_mistakes_of_several_monitor_sections_come_at_once(tmp_path: Path, registered: None) -> None:
    with pytest.raises(ConfigError) as err:
        load_run_config({**_base(tmp_path), "every_n": {"n": "x"}, "quality_score": {"alert_at": 70}})
    keys = [e.key for e in err.value.errors_list()]
    assert "every_n.n" in keys and any(k.startswith("quality_score.") for k in keys), keys


def test_a_key_without_a_parser_is_validated_by_its_factory() -> None:
    reg = MonitorRegistry()
    built: list[Any] = []

    def factory(section: Any, dataset: str) -> None:
        built.append(section)

    reg.register("raw", factory)
    assert reg.parse_all({"raw": {"a": 1}}) == (MonitorSpec("raw", {"a": 1}, parsed=False),)
    assert built == [{"a": 1}]
    assert reg.build(reg.parse_all({}), "d") == [] and reg.build([MonitorSpec("gone", 1)], "d") == []


def test_quality_score_is_parsed_at_load_and_built_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import streamdq.autovalidate.quality.monitor as quality_monitor

    seen: Counter[str] = Counter()
    for name in ("quality_settings", "quality_monitor"):
        original = getattr(quality_monitor, name)

        def counted(*args: Any, _original: Any = original, _name: str = name, **kwargs: Any) -> Any:
            seen[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(quality_monitor, name, counted)
    cfg = load_run_config({**_base(tmp_path), "quality_score": {"alert_at": 7}})
    assert seen == Counter(quality_settings=1)  # parsed, nothing built
    (spec,) = cfg.monitor_specs
    assert isinstance(spec.settings, quality_monitor.QualitySettings) and spec.settings.config.alert_at == 7
    (monitor,) = build_monitors(cfg)
    assert monitor.key == "quality_score" and seen == Counter(quality_settings=1, quality_monitor=1)


def test_the_builtin_monitors_are_parsed_at_load_and_built_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import streamdq.autovalidate.avh.monitor as avh_monitor
    import streamdq.autovalidate.quality.monitor as quality_monitor

    seen: Counter[str] = Counter()
    for module, name in (
        (avh_monitor, "auto_validate_settings"),
        (avh_monitor, "auto_validate_monitor"),
        (quality_monitor, "quality_settings"),
        (quality_monitor, "quality_monitor"),
    ):
        original = getattr(module, name)

        def counted(*args: Any, _original: Any = original, _name: str = name, **kwargs: Any) -> Any:
            seen[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)
    cfg = load_run_config(
        {
            **_base(tmp_path),
            "auto_validate": {"columns": ["amount"], "history": 8},
            "quality_score": {"alert_at": 7},
        }
    )
    assert seen == Counter(auto_validate_settings=1, quality_settings=1)  # parsed, nothing built
    auto, quality = cfg.monitor_specs
    assert isinstance(auto.settings, avh_monitor.AutoValidateSettings) and auto.settings.min_history == 8
    assert isinstance(quality.settings, quality_monitor.QualitySettings)
    assert quality.settings.config.alert_at == 7
    monitors = build_monitors(cfg)
    assert [m.key for m in monitors] == ["auto_validate", "quality_score"]
    assert seen == Counter(
        auto_validate_settings=1, quality_settings=1, auto_validate_monitor=1, quality_monitor=1
    )


def test_every_auto_validate_mistake_at_once() -> None:
    from streamdq.autovalidate.avh.monitor import auto_validate_settings

    with pytest.raises(ConfigError) as err:
        auto_validate_settings({"columns": [], "fpr": 2, "level": "loud", "colour": 1})
    keys = [e.key for e in err.value.errors_list()]
    assert keys == [
        "auto_validate.colour",
        "auto_validate.columns",
        "auto_validate.fpr",
        "auto_validate.level",
    ]
    assert all(e.fix for e in err.value.errors_list())


def test_every_quality_score_mistake_at_once() -> None:
    from streamdq.autovalidate.quality.monitor import quality_settings

    with pytest.raises(ConfigError) as err:
        quality_settings({"variance": 2, "alert_at": 0, "columns": "amount", "alpha": 1})
    keys = [e.key for e in err.value.errors_list()]
    assert keys == [
        "quality_score.alpha",
        "quality_score.variance",
        "quality_score.alert_at",
        "quality_score.columns",
    ]
