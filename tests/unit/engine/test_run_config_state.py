"""state: in the run config: log retention reaches the Delta store; bad values name the key."""

from __future__ import annotations

import pytest

from streamdq.engine.config import load_run_config
from streamdq.errors import ConfigError

BASE = {"dataset": "d", "source": {"type": "generator"}, "checkpoint": "/tmp/chk"}


def test_log_retention_hours_default_and_value():
    assert load_run_config(dict(BASE)).state.log_retention_hours == 1.0
    cfg = load_run_config({**BASE, "state": {"path": "/tmp/s", "log_retention_hours": 24}})
    assert cfg.state.log_retention_hours == 24.0


@pytest.mark.parametrize("bad", [-1, "soon", True])
def test_bad_log_retention_names_the_key(bad):
    with pytest.raises(ConfigError, match=r"state\.log_retention_hours"):
        load_run_config({**BASE, "state": {"path": "/tmp/s", "log_retention_hours": bad}})


def test_the_store_gets_the_configured_retention(tmp_path, spark):
    from streamdq.engine.streaming import StreamRunner

    cfg = load_run_config(
        {
            **BASE,
            "checkpoint": str(tmp_path / "chk"),
            "state": {"path": str(tmp_path / "s"), "log_retention_hours": 5},
        }
    )
    assert StreamRunner(spark, cfg).store.log_retention_hours == 5.0
