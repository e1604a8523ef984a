"""Every benchmark directory bench/NAME/ with a run.py has a working `make bench-NAME`.

`make -n` prints the commands without running them; a target that GNU make silently skips
("Nothing to be done", as a plain pattern rule does for a .PHONY target) prints no run.py line.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BENCHES = sorted(p.parent.name for p in (ROOT / "bench").glob("*/run.py"))


def test_the_benchmarks_exist():
    assert {"engine", "streaming", "detectors", "autovalidate"} <= set(BENCHES)


@pytest.mark.parametrize("name", BENCHES)
def test_make_bench_target_runs_the_benchmark_script(name):
    make = shutil.which("make")
    assert make, "make is required by the project (README: make demo / make test)"
    out = subprocess.run(
        [make, "-n", f"bench-{name}", "BENCH_ARGS=--probe-arg"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"bench/{name}/run.py --probe-arg" in out, out
