"""docs/your-own-data.md's walk, run on the palmerpenguins CSV it names: verify with the example
checks, a streaming run over a folder of per-year files (one with a bad line), then the
results, alerts and quarantine commands. Keeps the page true."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from streamdq.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "penguins"


def _penguins() -> Path:
    if os.environ.get("CI") == "true":
        import palmerpenguins
    else:
        palmerpenguins = pytest.importorskip("palmerpenguins")
    return Path(palmerpenguins.__file__).parent / "data" / "penguins.csv"


def test_the_page_names_the_files_it_uses() -> None:
    page = (REPO / "docs" / "your-own-data.md").read_text()
    for name in ("examples/penguins/checks.yaml", "examples/penguins/run.yaml", "--null-value NA"):
        assert name in page
    assert (EXAMPLE / "checks.yaml").is_file() and (EXAMPLE / "run.yaml").is_file()


def test_verify_the_csv_with_the_example_checks(spark, capsys: pytest.CaptureFixture[str]) -> None:
    data = _penguins()
    code = main(
        ["verify", "--data", str(data), "--null-value", "NA", "--checks", str(EXAMPLE / "checks.yaml")]
    )
    out = capsys.readouterr().out
    assert code == 0, out  # the error-level checks hold; warnings may fail
    assert "every penguin is identified" in out


def test_the_streaming_walk(spark, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = list(csv.DictReader(_penguins().open()))
    work = tmp_path / "penguins"
    incoming = work / "incoming"
    incoming.mkdir(parents=True)
    shutil.copy(EXAMPLE / "checks.yaml", work / "checks.yaml")
    # the example as shipped, but: any free port, and available_now (every file there now, then
    # stop) so the run ends when the walk's files are checked, however slow the machine
    config = (EXAMPLE / "run.yaml").read_text().replace("port: 9108", "port: 0")
    assert "trigger: 2 seconds" in config
    config = config.replace("trigger: 2 seconds", "trigger: available_now")
    (work / "run.yaml").write_text(config)
    for year in ("2007", "2008", "2009"):
        with (incoming / f"penguins-{year}.csv").open("w", newline="") as out:
            w = csv.DictWriter(out, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(r for r in rows if r["year"] == year)
    with (incoming / "penguins-2010.csv").open("w") as out:
        out.write(",".join(rows[0].keys()) + "\n")
        out.write("Adelie,Dream,abc,18.7,181,3750,male,2010\n")  # a bad bill length, line 2
        out.write("Adelie,Dream,39.1,18.7,181,3750,male,2010\n")
    assert main(["run", "--check-config", str(work / "run.yaml")]) == 0
    capsys.readouterr()
    # the job in its own process, as the page runs it (its own Spark session, stopped at the end)
    script = Path(sys.executable).with_name("streamdq")
    done = subprocess.run(
        [str(script), "run", str(work / "run.yaml"), "--duration", "1200"],
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "streamdq: validating dataset 'penguins'" in done.stderr
    assert "streamdq: stopped after" in done.stderr
    assert "346 rows, 1 bad" in done.stderr  # 344 penguins and the 2 lines of the extra file
    assert "penguins batch 0" in done.stdout
    assert "bad: 1 field bill_length_mm: expected DOUBLE; first at penguins-2010.csv:2" in done.stdout
    state = str(work / "work" / "state")
    assert main(["results", "--state", state, "--format", "json"]) == 0
    results = json.loads(capsys.readouterr().out)
    assert results and {r["dataset"] for r in results} == {"penguins"}
    assert main(["alerts", "--state", state]) == 0
    capsys.readouterr()
    assert main(["quarantine", "--state", state, "--format", "json"]) == 0
    bad = json.loads(capsys.readouterr().out)
    assert len(bad) == 1
    assert bad[0]["file"].endswith("penguins-2010.csv") and bad[0]["line"] == 2
    assert "bill_length_mm" in bad[0]["reason"]
