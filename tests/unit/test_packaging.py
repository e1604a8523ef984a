"""`pip install .` (non-editable) ships connectors/ and state/ as streamdq.connectors / streamdq.state.

`make test` itself runs on an editable install (`pip install -e .`); this test builds the wheel
and imports the installed copy with the current interpreter's dependencies.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_folder_is_listed_in_pyproject():
    """A sub-package missing from pyproject's explicit list is left out of the wheel (the editable
    install the suite runs on still finds it, so only this test and `make wheel-smoke` see it)."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    dirs = config["package-dir"]
    found = set()
    for name, folder in dirs.items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base).parts
            found.add(".".join((name, *rel)))
    assert found - listed == set(), f"add to [tool.setuptools] packages: {sorted(found - listed)}"


def test_wheel_installs_connectors_and_state_under_streamdq(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
    )
    wheel = next(tmp_path.glob("streamdq-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in (
        "streamdq/connectors/sources/kafka.py",
        "streamdq/connectors/sinks/prometheus.py",
        "streamdq/connectors/broker.py",
        "streamdq/state/delta_store.py",
        "streamdq/examples/demo_stream_checks.yaml",
        "streamdq/engine/handler.py",
        "streamdq/analyzers/frequency/states.py",
        "streamdq/autovalidate/avh/learner.py",  # the three autovalidate sub-packages
        "streamdq/autovalidate/quality/score.py",
        "streamdq/autovalidate/suggest/rules.py",
        "streamdq/aggregations/kll.py",  # the aggregation library and the contract kit users import
        "streamdq/testing/aggregations.py",
        "streamdq/jvm/jar.py",  # and the Java sources it compiles on first use
        "streamdq/jvm/java/io/streamdq/JsonDecode.java",
        "streamdq/jvm/java/io/streamdq/KeyRecordingParser.java",
        "streamdq/jvm/stubs/org/apache/spark/sql/execution/WholeStageCodegenExec.java",
    ):
        assert required in names, required
    assert not any(n.startswith(("connectors/", "state/")) for n in names)
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
    )
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "import streamdq.connectors.sinks, streamdq.state.delta_store, streamdq.engine.handler, streamdq; "
        "from streamdq.jvm.jar import java_sources; "
        "assert streamdq.__file__.startswith(sys.argv[1]), streamdq.__file__; "
        "assert [p.name for p in java_sources()] == sys.argv[2].split(','), java_sources(); "
        "assert str(java_sources()[0]).startswith(sys.argv[1]); print('ok')"
    )
    from streamdq.jvm.jar import java_sources

    shipped = ",".join(p.name for p in java_sources())  # every Java source of the tree is in the wheel
    out = subprocess.run(
        [sys.executable, "-c", code, str(target), shipped],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.stdout.strip() == "ok"
