"""CLI `verify`, `profile` and `demo` run in-process through streamdq.cli.main (shared Spark)."""

from __future__ import annotations

import json

import pytest

from streamdq.cli import main
from streamdq.engine.plan import count_jobs

CHECKS_OK = """
dataset: people
checks:
  - description: people are sane
    level: error
    constraints:
      - has_size: {assertion: "== 3"}
      - is_unique: id
      - is_non_negative: age
  - description: people look usual
    level: warning
    constraints:
      - is_complete: {column: name, hint: "names are optional"}
"""

CHECKS_ERROR = """
checks:
  - description: ages are complete
    level: error
    constraints:
      - is_complete: age
"""

CSV = "id,name,age\n1,ann,30\n2,,41\n3,cid,\n"


@pytest.fixture()
def files(tmp_path, spark):
    csv = tmp_path / "people.csv"
    csv.write_text(CSV)
    jsonl = tmp_path / "people.jsonl"
    jsonl.write_text('{"id": 1, "name": "ann", "age": 30}\n{"id": 2, "age": 41}\n{"id": 3, "name": "cid"}\n')
    array = tmp_path / "people_array.json"
    array.write_text(
        '[{"id": 1, "name": "ann", "age": 30},\n {"id": 2, "age": 41},\n {"id": 3, "name": "cid"}]\n'
    )
    parquet = tmp_path / "people_parquet"
    spark.read.csv(str(csv), header=True, inferSchema=True).write.parquet(str(parquet))
    ok = tmp_path / "ok.yaml"
    ok.write_text(CHECKS_OK)
    err = tmp_path / "err.yaml"
    err.write_text(CHECKS_ERROR)
    return {
        "csv": csv,
        "jsonl": jsonl,
        "array": array,
        "parquet": parquet,
        "ok": ok,
        "err": err,
        "tmp": tmp_path,
    }


@pytest.mark.parametrize("data", ["csv", "jsonl", "array", "parquet"])
def test_verify_reads_every_format_and_exits_0_on_warning(files, data, capsys):
    code = main(["verify", "--data", str(files[data]), "--checks", str(files["ok"])])
    out = capsys.readouterr().out
    assert code == 0
    assert "Verification: Warning" in out
    assert "Dataset: people" in out
    assert "names are optional" in out


def test_verify_exits_1_when_an_error_level_check_fails_and_prints_json(files, capsys):
    code = main(["verify", "--data", str(files["csv"]), "--checks", str(files["err"]), "--format", "json"])
    assert code == 1
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "Error"
    (result,) = report["check_results"][0]["constraint_results"]
    assert result["status"] == "Failure"
    assert result["metric"]["value"] == pytest.approx(2 / 3)


def test_verify_exits_0_on_success(files, capsys):
    ok = files["tmp"] / "all_ok.yaml"
    ok.write_text("checks:\n- description: d\n  constraints:\n  - is_complete: id\n")
    assert main(["verify", "--data", str(files["csv"]), "--checks", str(ok)]) == 0
    assert "Verification: Success" in capsys.readouterr().out


def test_verify_exits_2_on_a_bad_checks_file_naming_file_and_path(files, capsys):
    bad = files["tmp"] / "bad.yaml"
    bad.write_text("checks:\n- description: d\n  constraints:\n  - is_complete: {colum: id}\n")
    assert main(["verify", "--data", str(files["csv"]), "--checks", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: checks[0].constraints[0].is_complete.colum: unknown key 'colum'" in err
    assert "did you mean 'column'?" in err


def test_verify_exits_2_on_missing_or_unknown_data(files, capsys):
    missing = files["tmp"] / "nope.parquet"
    assert main(["verify", "--data", str(missing), "--checks", str(files["ok"])]) == 2
    assert f"--data: {missing}: no such file or directory" in capsys.readouterr().err
    odd = files["tmp"] / "people.txt"
    odd.write_text(CSV)
    assert main(["verify", "--data", str(odd), "--checks", str(files["ok"])]) == 2
    assert "fix: pass --input-format parquet|csv|json" in capsys.readouterr().err
    assert main(["verify", "--data", str(odd), "--checks", str(files["ok"]), "--input-format", "csv"]) == 0
    corrupt = files["tmp"] / "corrupt.parquet"
    corrupt.write_text("this is not parquet")
    assert main(["verify", "--data", str(corrupt), "--checks", str(files["ok"])]) == 2
    assert f"--data: {corrupt}: cannot read as parquet:" in capsys.readouterr().err
    missing_checks = files["tmp"] / "none.yaml"
    assert main(["verify", "--data", str(files["csv"]), "--checks", str(missing_checks)]) == 2
    assert f"{missing_checks}: cannot read the checks file" in capsys.readouterr().err


def test_verify_usage_error_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["verify", "--data", "x.csv"])
    assert exc.value.code == 2
    assert "--checks" in capsys.readouterr().err


def test_profile_is_one_fused_pass(files, spark, capsys):
    table = spark.read.parquet(str(files["parquet"]))  # reading the footers is a job of its own
    with count_jobs(spark) as jobs:
        table.agg({"age": "max"}).collect()
    baseline = jobs[0]
    assert main(["profile", "--data", str(files["parquet"]), "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["rows"] == 3.0
    assert result["jobs"] == baseline
    age = result["columns"]["age"]
    assert age["Completeness"] == pytest.approx(2 / 3)
    assert (age["Minimum"], age["Maximum"], age["Mean"]) == (30.0, 41.0, 35.5)
    assert age["ApproxCountDistinct"] == 2.0
    assert age["DataType"] == {"Unknown": 1, "Integral": 2}
    assert set(age["ApproxQuantiles"]) == {"0.25", "0.5", "0.75"}
    name = result["columns"]["name"]
    assert (name["MinLength"], name["MaxLength"]) == (3.0, 3.0)
    assert "Mean" not in name
    assert main(["profile", "--data", str(files["csv"])]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Rows: 3")
    assert "\nage (int)" in text and "\nname (string)" in text


def test_batch_demo_runs(capsys):
    assert main(["demo", "--batch", "--rows", "2000"]) == 0
    out = capsys.readouterr().out
    assert "Verification: Warning" in out
    assert "[Success] orders are complete and consistent" in out
    assert "[Warning] orders look as usual" in out
    assert "bulk orders need manual review" in out
    # constraint lines show the judged value, not the whole distribution
    assert "has_data_type(column='amount', data_type='Numeric')  -> 1\n" in out
    assert "has_number_of_distinct_values(column='country') <= 5.0  -> 5\n" in out
