"""Config validation at start-up: ``streamdq run bad.yaml`` exits 2 before any Spark job runs,
with a message naming the file, the key path and what to fix; ``stream(spark, dict)`` raises
ConfigError for the same mistakes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration]

BASE = 'dataset: o\nsource: {type: files, path: "%s", format: json, schema: "a STRING"}\ncheckpoint: ./chk\n'

CASES = {
    "unknown_key": ("windwo: 1 minute\n", ["windwo", "unknown key", "known keys"]),
    "bad_duration": ("window: soon\n", ["window:", "'soon'", "positive duration"]),
    "bad_sink_port": ("sinks: [{type: prometheus, port: 99999}]\n", ["sinks[0].port", "99999", "0-65535"]),
    "bad_checks_file": ("checks_file: nope.yaml\n", ["checks_file", "nope.yaml"]),
}


def _run(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "streamdq.cli", "run", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("case", sorted(CASES))
def test_cli_run_bad_config_exits_2_naming_file_and_key(tmp_path, case):
    extra, needles = CASES[case]
    config = tmp_path / f"{case}.yaml"
    config.write_text(BASE % tmp_path + extra)
    done = _run(config)
    assert done.returncode == 2, done.stderr
    message = done.stderr + done.stdout
    assert f"{case}.yaml" in message
    for needle in needles:
        assert needle in message, message


def test_cli_run_unknown_source_type_names_the_choices(tmp_path):
    config = tmp_path / "src.yaml"
    config.write_text("dataset: o\nsource: {type: ftp}\ncheckpoint: ./chk\n")
    done = _run(config)
    assert done.returncode == 2
    message = done.stderr + done.stdout
    assert "src.yaml" in message and "source.type" in message and "ftp" in message
    assert "fix: use one of" in message and "kafka" in message


def test_stream_with_a_bad_dict_raises_config_error(tmp_path, spark):
    from streamdq.engine.streaming import stream
    from streamdq.errors import ConfigError

    cfg = {
        "dataset": "o",
        "source": {"type": "files", "path": str(tmp_path), "format": "json", "schema": "a STRING"},
        "checkpoint": str(tmp_path / "chk"),
        "window": "soon",
    }
    with pytest.raises(ConfigError, match="window"):
        stream(spark, cfg)
    with pytest.raises(ConfigError, match="windwo"):
        stream(spark, {**{k: v for k, v in cfg.items() if k != "window"}, "windwo": "1 minute"})
