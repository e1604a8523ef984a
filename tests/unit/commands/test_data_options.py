"""`verify`, `profile` and `suggest` on public-data-style CSVs: the NA null marker, the separator,
files without a header, a schema bound by the header's names; pandas and Polars frames in
Python; `--version`; `has_no_anomalies` in a batch verify."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import polars as pl
import pytest

from streamdq.cli import main

# palmerpenguins' penguins.csv style: NA for missing values, columns in the package's order
PENGUINS = (
    "species,island,bill_length_mm,bill_depth_mm,body_mass_g,sex,year\n"
    "Adelie,Torgersen,39.1,18.7,3750,male,2007\n"
    "Adelie,Torgersen,NA,NA,NA,NA,2007\n"
    "Gentoo,Biscoe,46.1,13.2,4500,female,2008\n"
    "Chinstrap,Dream,46.5,17.9,3500,female,2009\n"
)

CHECKS = """
dataset: penguins
checks:
  - description: penguins
    level: error
    constraints:
      - has_completeness: {column: bill_length_mm, assertion: ">= 0.75"}
      - is_non_negative: body_mass_g
      - has_mean: {column: body_mass_g, assertion: "> 3000"}
"""

ANOMALY_CHECKS = """
dataset: penguins
checks:
  - description: penguins
    level: error
    constraints:
      - has_no_anomalies:
          metric: {analyzer: Mean, column: body_mass_g}
          detector: {type: online_normal}
"""


@pytest.fixture()
def penguins(tmp_path, spark):
    path = tmp_path / "penguins.csv"
    path.write_text(PENGUINS)
    checks = tmp_path / "checks.yaml"
    checks.write_text(CHECKS)
    return path, checks


def _profile(args, capsys):
    assert main(["profile", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_profile_reads_na_as_null(penguins, capsys):
    path, _ = penguins
    plain = _profile(["--data", str(path)], capsys)
    # without the option NA is a string: the numeric column becomes a complete string column
    assert plain["columns"]["bill_length_mm"]["type"] == "string"
    assert plain["columns"]["bill_length_mm"]["Completeness"] == 1.0
    na = _profile(["--data", str(path), "--null-value", "NA"], capsys)
    assert na["columns"]["bill_length_mm"]["type"] == "double"
    assert na["columns"]["bill_length_mm"]["Completeness"] == 0.75
    assert na["columns"]["body_mass_g"]["Mean"] == pytest.approx((3750 + 4500 + 3500) / 3)


def test_verify_with_na_sep_no_header_and_schema(penguins, tmp_path, capsys):
    path, checks = penguins
    assert main(["verify", "--data", str(path), "--checks", str(checks)]) == 1  # NA as text
    capsys.readouterr()
    assert main(["verify", "--data", str(path), "--checks", str(checks), "--null-value", "NA"]) == 0
    capsys.readouterr()

    body = PENGUINS.split("\n", 1)[1].replace(",", ";")
    semi = tmp_path / "semi.csv"
    semi.write_text(body)
    ddl = (
        "species STRING, island STRING, bill_length_mm DOUBLE, bill_depth_mm DOUBLE, "
        "body_mass_g INT, sex STRING, year INT"
    )
    args = ["--null-value", "NA", "--sep", ";", "--no-header", "--schema", ddl]
    assert main(["verify", "--data", str(semi), "--checks", str(checks), *args]) == 0
    capsys.readouterr()
    out = _profile(["--data", str(semi), *args], capsys)
    assert out["columns"]["body_mass_g"]["type"] == "int" and out["rows"] == 4


def test_schema_binds_csv_columns_by_header_name(tmp_path, spark, capsys):
    swapped = tmp_path / "swapped.csv"
    # the same data with body_mass_g and bill_length_mm swapped in the file
    swapped.write_text("species,body_mass_g,bill_length_mm\nAdelie,3750,39.1\nGentoo,4500,NA\n")
    ddl = "species STRING, bill_length_mm DOUBLE, body_mass_g INT"
    out = _profile(["--data", str(swapped), "--null-value", "NA", "--schema", ddl], capsys)
    assert list(out["columns"]) == ["species", "bill_length_mm", "body_mass_g"]
    assert out["columns"]["body_mass_g"]["Maximum"] == 4500
    assert out["columns"]["bill_length_mm"]["Maximum"] == 39.1

    assert main(["profile", "--data", str(swapped), "--schema", "species STRING, flipper INT"]) == 2
    err = capsys.readouterr().err
    assert "swapped.csv" in err and "flipper" in err and "--schema" in err


def test_suggest_takes_the_csv_options(penguins, capsys):
    path, _ = penguins
    assert main(["suggest", "--data", str(path), "--null-value", "NA", "--format", "json"]) == 0
    suite = json.loads(capsys.readouterr().out)
    text = json.dumps(suite)
    assert "bill_length_mm" in text and '"is_non_negative"' in text


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {"species": ["Adelie", "Gentoo", None], "body_mass_g": [3750.0, 4500.0, float("nan")]}
    )


@pytest.mark.parametrize("kind", ["pandas", "polars", "polars-lazy"])
def test_verify_profile_suggest_take_pandas_and_polars(kind, spark):
    import streamdq
    from streamdq.checks import Check, Level

    frame = _frame()
    if kind != "pandas":
        frame = pl.from_pandas(frame)
        if kind == "polars-lazy":
            frame = frame.lazy()
    check = Check(Level.ERROR, "penguins").has_size("== 3").is_complete("body_mass_g")
    result = streamdq.verify(frame, [check])
    assert result.status == "Error"  # the NaN/None row
    (failed,) = result.failed_constraints()
    assert "Completeness" in failed.constraint or "complete" in failed.constraint
    assert streamdq.profile(frame)["rows"] == 3
    assert any(s.column == "species" for s in streamdq.suggest(frame))


def test_to_spark_rejects_other_objects():
    from streamdq.frames import to_spark

    with pytest.raises(TypeError, match="PySpark, pandas or Polars DataFrame, got builtins.list"):
        to_spark([1, 2])


def test_version_from_package_metadata():
    from importlib.metadata import version

    out = subprocess.run(
        [sys.executable, "-m", "streamdq.cli", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"streamdq {version('streamdq')}"


def test_has_no_anomalies_in_verify_without_history_is_not_a_failure(penguins, tmp_path, capsys):
    path, _ = penguins
    checks = tmp_path / "anomaly.yaml"
    checks.write_text(ANOMALY_CHECKS)
    assert main(["verify", "--data", str(path), "--checks", str(checks), "--null-value", "NA"]) == 0
    out = capsys.readouterr().out
    assert "not enough history: no history given of Mean(body_mass_g)" in out
    assert "none is registered" not in out
    strict = ["--anomalies-need-history", "--null-value", "NA"]
    assert main(["verify", "--data", str(path), "--checks", str(checks), *strict]) == 1


def test_has_no_anomalies_in_verify_judges_against_history(spark):
    import streamdq
    from streamdq.checks import Check, Level

    check = Check(Level.ERROR, "penguins").has_no_anomalies(
        {"analyzer": "Mean", "column": "body_mass_g"}, {"type": "online_normal"}
    )
    frame = pd.DataFrame({"body_mass_g": [3700.0, 3800.0]})
    usual = [3750.0 + (i % 5) * 10 for i in range(30)]
    seen: list[str] = []

    def history(constraint):
        seen.append(constraint.analyzer.instance)
        return usual

    assert streamdq.verify(frame, [check], history=history).status == "Success"
    assert seen == ["body_mass_g"]
    odd = streamdq.verify(frame.assign(body_mass_g=[9000.0, 9100.0]), [check], history=history)
    assert odd.status == "Error"
    assert odd.failed_constraints()[0].message.startswith("anomaly (online_normal) against 30 earlier")
    few = streamdq.verify(frame, [check], history=lambda c: usual[:3])
    assert few.status == "Success"
    assert few.constraint_results[0].message.startswith("not enough history: 3 earlier point(s)")


def _store_with_window_means(path: str, means: list[float]) -> None:
    """A real Delta state store holding closed windows of Mean(body_mass_g) (as a stream writes)."""
    from datetime import UTC, datetime, timedelta

    from streamdq.state.delta_store import DeltaStateStore
    from streamdq.state.records import records_for_batch

    from streamdq.analyzers.metric import Metric
    from streamdq.checks.kinds import make
    from streamdq.report import BatchReport, ScopedMetric, Window

    key = make("Mean", column="body_mass_g").key()
    store = DeltaStateStore(path)
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    for i, mean in enumerate(means):
        window = Window(t0 + timedelta(hours=i), t0 + timedelta(hours=i + 1))
        report = BatchReport(
            dataset="penguins",
            query_id="q",
            batch_id=i,
            processing_time=window.end,
            metrics=(
                ScopedMetric("window", Metric("Column", "Mean", "body_mass_g", value=mean), window, key),
            ),
            closed_windows=(window,),
        )
        records = records_for_batch(report, total={}, open_windows={})
        store.commit(
            "q",
            i,
            dataset="penguins",
            states=records.states,
            metrics=records.metrics,
            results=[],
            report=report,
        )


def test_verify_state_judges_has_no_anomalies_against_the_stored_windows(penguins, tmp_path, capsys):
    path, _ = penguins
    checks = tmp_path / "anomaly.yaml"
    # judged against the constraint's scope in the store: here the closed windows
    checks.write_text(
        ANOMALY_CHECKS.replace(
            "detector: {type: online_normal}", "detector: {type: online_normal}\n          scope: window"
        )
    )
    state = tmp_path / "state"
    # the table's Mean(body_mass_g) is 3916.7; the stored windows say ~ 5000
    _store_with_window_means(str(state), [5000.0 + (i % 3) * 10 for i in range(12)])
    args = ["verify", "--data", str(path), "--checks", str(checks), "--null-value", "NA"]
    assert main([*args, "--state", str(state)]) == 1
    out = capsys.readouterr().out
    assert "anomaly (online_normal) against 12 earlier point(s)" in out
    assert main([*args, "--state", str(tmp_path / "nowhere")]) == 2
    assert "--state" in capsys.readouterr().err
