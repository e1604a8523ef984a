"""CLI ``streamdq suggest`` in-process through streamdq.cli.main (shared Spark session)."""

from __future__ import annotations

import json

import pytest

from streamdq.checks.spec import load_suite, loads_suite
from streamdq.cli import main

CSV = "id,status,amount,email\n" + "".join(
    f"{i},{['new', 'paid', 'shipped'][i % 3]},{(i % 4) * 2.5},{'' if i % 5 == 0 else f'u{i}@x.org'}\n"
    for i in range(40)
)


@pytest.fixture()
def data(tmp_path, spark):
    path = tmp_path / "orders.csv"
    path.write_text(CSV)
    return path


def test_suggest_writes_a_checks_yaml_that_verify_accepts(data, tmp_path, capsys):
    out = tmp_path / "checks.yaml"
    assert main(["suggest", "--data", str(data), "--out", str(out), "--dataset", "orders"]) == 0
    err = capsys.readouterr().err
    assert "columns from 40 rows (Spark jobs:" in err and f"wrote {out}" in err
    text = out.read_text()
    assert text.startswith(f"# Suggested by `streamdq suggest` from {data}:")
    assert "# RetainCompleteness: completeness 0.8 over 40 rows;" in text
    assert "# CategoricalRange: 3 distinct values, 0 of them seen once" in text
    suite = load_suite(out)
    assert suite.dataset == "orders"
    kinds = {c.kind for check in suite.checks for c in check.constraints}
    assert {"is_complete", "has_completeness", "is_contained_in", "is_unique", "has_mean"} <= kinds
    assert main(["verify", "--data", str(data), "--checks", str(out)]) == 0
    assert "Verification: Success" in capsys.readouterr().out


def test_suggest_json_to_stdout_on_a_sample_with_warning_level(data, capsys):
    argv = ["suggest", "--data", str(data), "--format", "json", "--sample-fraction", "0.5", "--seed", "3"]
    assert main([*argv, "--level", "warning"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert {c["level"] for c in doc["checks"]} == {"warning"}
    assert loads_suite(captured.out, file="s.json").checks
    assert ", a 0.5 sample (Spark jobs:" in captured.err


def test_suggest_text_lists_rules_reasons_and_code(data, capsys):
    assert main(["suggest", "--data", str(data), "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert "id: CompleteIfComplete\n    why:  completeness 1.0 (no NULL in 40 rows)\n" in out
    assert "code: .is_contained_in('status', values=['new', 'paid', 'shipped'])" in out


@pytest.mark.parametrize("fraction", ["0", "1.5", "-0.2"])
def test_suggest_rejects_a_bad_sample_fraction(data, fraction, capsys):
    assert main(["suggest", "--data", str(data), "--sample-fraction", fraction]) == 2
    assert (
        f"--sample-fraction: got {float(fraction)!r}; expected a number in (0, 1]" in capsys.readouterr().err
    )


def test_suggest_usage_errors_exit_2_naming_the_argument(data, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["suggest", "--data", str(data), "--sample-fraction", "half"])
    assert exc.value.code == 2
    assert "--sample-fraction" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["suggest"])
    assert exc.value.code == 2
    assert "--data" in capsys.readouterr().err


def test_suggest_exits_2_on_missing_data_or_unwritable_out(data, tmp_path, capsys):
    missing = tmp_path / "nope.csv"
    assert main(["suggest", "--data", str(missing)]) == 2
    assert f"--data: {missing}: no such file or directory" in capsys.readouterr().err
    nowhere = tmp_path / "no" / "such" / "dir" / "checks.yaml"
    assert main(["suggest", "--data", str(data), "--out", str(nowhere)]) == 2
    assert "--out:" in capsys.readouterr().err and not nowhere.exists()
    assert main(["suggest", "--data", str(data), "--out", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
