"""streamdq autovalidate learn: offline programs from a table of batches, holdout judged."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from streamdq.cli import main


def test_learn_offline_judges_the_holdout_and_writes_yaml(tmp_path, capsys, spark):
    rng = np.random.default_rng(5)
    frames = []
    for day in range(12):
        n = int(rng.integers(180, 220))
        amount = rng.normal(20, 2, n)
        if day == 11:
            amount = amount * 1000  # the held-out last batch changed its unit
        frames.append(pd.DataFrame({"day": day, "amount": amount}))
    data = tmp_path / "t.parquet"
    pd.concat(frames).to_parquet(data)
    out = tmp_path / "programs.yaml"
    args = ["autovalidate", "learn", "--data", str(data), "--batch-by", "day", "--column", "amount"]
    assert main([*args, "--holdout", "2", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "amount (numeric)" in text and "learned from 10 batches" in text
    assert "batch day=10: passes" in text
    assert "batch day=11:" in text and "breaks the learned" in text
    assert "auto-validated amount" in out.read_text() or "# Learned" in out.read_text()
    assert main([*args[:-1], "nope"]) == 2
    assert "no column 'nope'" in capsys.readouterr().err
    assert main([*args, "--fpr", "3"]) == 2


def test_learn_offline_with_a_holiday_calendar_does_not_judge_volume_on_a_day_off(tmp_path, capsys, spark):
    """The held-out Christmas batch carries half the rows: a volume violation without a calendar,
    not judged with ``--holidays US`` (its other constraints still are)."""
    import datetime as dt

    rng = np.random.default_rng(6)
    frames = []
    for i in range(12):
        day = dt.date(2025, 12, 14) + dt.timedelta(days=i)
        n = int(rng.integers(190, 210)) // (2 if day == dt.date(2025, 12, 25) else 1)
        frames.append(pd.DataFrame({"day": [day] * n, "amount": rng.normal(20, 2, n)}))
    data = tmp_path / "t.parquet"
    pd.concat(frames).to_parquet(data)
    args = [
        "autovalidate",
        "learn",
        "--data",
        str(data),
        "--batch-by",
        "day",
        "--column",
        "amount",
        "--holdout",
        "1",
    ]
    assert main(args) == 0
    blind = capsys.readouterr().out
    assert "batch day=2025-12-25: " in blind and "violation(s)" in blind
    assert main([*args, "--holidays", "US"]) == 0
    aware = capsys.readouterr().out
    assert "batch day=2025-12-25: passes (day off: " in aware and "not judged)" in aware
    numbered = tmp_path / "n.parquet"
    pd.DataFrame({"day": [1, 2], "amount": [1.0, 2.0]}).to_parquet(numbered)
    assert main([*args[:2], "--data", str(numbered), *args[4:], "--holidays", "US"]) == 2
    assert "--holidays needs --batch-by values that are dates" in capsys.readouterr().err
    assert main([*args, "--holidays", "XX"]) == 2
    assert "--holidays.country" in capsys.readouterr().err
    assert main([*args, "--holidays", "{country: US, days_after: 9}"]) == 2  # the config's YAML form
    assert "--holidays.days_after" in capsys.readouterr().err


def test_learn_offline_in_units_of_batches(tmp_path, capsys, spark):
    """``--unit-batches 3``: 16 days make 5 units counted back from the newest (the oldest day is
    left out, a note says so); ``--holdout`` counts units; the held-out unit, one of whose days
    changed its unit, is judged as a whole."""
    rng = np.random.default_rng(7)
    frames = []
    for day in range(16):
        amount = rng.normal(20, 2, 60)
        if day == 14:
            amount = amount * 1000
        frames.append(pd.DataFrame({"day": day, "amount": amount}))
    data = tmp_path / "t.parquet"
    pd.concat(frames).to_parquet(data)
    args = ["autovalidate", "learn", "--data", str(data), "--batch-by", "day", "--column", "amount"]
    assert main([*args, "--unit-batches", "3", "--holdout", "1"]) == 0
    text = capsys.readouterr().out
    assert "the oldest 1 batch(es) of day fill no unit of 3 and are left out (0)" in text
    assert "learned from 4 batches" in text
    # a unit holds 3 x 60 rows: its row count is learned at that scale, above any one day's 60
    bound = re.search(r"([\d.]+) <= row_count\(amount\) <= ([\d.]+)", text)
    assert bound is not None and 60 < float(bound.group(1)) < 180 < float(bound.group(2))
    assert "unit day=13..15: " in text and "breaks the learned" in text
    assert main([*args, "--unit-batches", "0"]) == 2
    assert "--unit-batches must be at least 1" in capsys.readouterr().err
    assert main([*args, "--unit-batches", "8", "--holdout", "2"]) == 2
    assert "no batch left to learn from (16 batches, 2 units of 8)" in capsys.readouterr().err


def test_holidays_lists_the_days_a_calendar_mutes_with_their_reason(capsys):
    """``US-NY`` widened by a day holds New York's own observances (Lincoln's Birthday; in the
    ``holidays`` package of 2026 also Susan B. Anthony Day: nine February days in 2013); the
    federal calendar holds only Washington's Birthday there. The expected days come from the
    package's own table, so a release that files an observance elsewhere moves both sides."""
    import datetime as dt

    import holidays

    args = ["autovalidate", "holidays", "--from", "2013-02-01", "--to", "2013-02-28"]
    assert main([*args, "--holidays", "{country: US, subdiv: NY, days_before: 1, days_after: 1}"]) == 0
    out = capsys.readouterr().out.splitlines()
    table = holidays.country_holidays("US", subdiv="NY", years=2013)
    february = [dt.date(2013, 2, d) for d in range(1, 29)]
    expected = [d for d in february if any(d + dt.timedelta(days=k) in table for k in (-1, 0, 1))]
    assert [line[:10] for line in out[:-1]] == [str(d) for d in expected]
    assert "2013-02-11 Mon  Lincoln's Birthday - 1 day" in out
    assert "2013-02-12 Tue  Lincoln's Birthday" in out
    assert out[-1].startswith(f"{len(expected)} day(s) off from 2013-02-01 to 2013-02-28")
    assert main([*args, "--holidays", "US"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:-1] == ["2013-02-18 Mon  Washington's Birthday"]
    assert out[-1].startswith("1 day(s) off from 2013-02-01 to 2013-02-28")


def test_holidays_reads_a_run_config_and_names_its_mistakes(tmp_path, capsys):
    run = tmp_path / "run.yaml"
    base = "dataset: d\nsource: {type: generator}\ncheckpoint: chk\n"
    run.write_text(base + "auto_validate: {columns: [a], holidays: {country: US, dates: [2013-03-05]}}\n")
    args = ["autovalidate", "holidays", "--config", str(run), "--from", "2013-03-01", "--to", "2013-03-31"]
    assert main(args) == 0
    assert capsys.readouterr().out.splitlines()[0] == "2013-03-05 Tue  listed date"
    run.write_text(base + "auto_validate: {columns: [a]}\n")
    assert main(args) == 2
    assert "sets no auto_validate.holidays" in capsys.readouterr().err
    run.write_text(base + "auto_validate: {columns: [a], holidays: {country: XX}}\n")
    assert main(args) == 2
    assert re.search(r"run\.yaml.*auto_validate\.holidays\.country", capsys.readouterr().err)
    assert (
        main(["autovalidate", "holidays", "--holidays", "US", "--from", "2013-03-01", "--to", "2013-02-01"])
        == 2
    )
    assert "before --from" in capsys.readouterr().err
    assert main(["autovalidate", "holidays", "--holidays", "US", "--from", "March"]) == 2
    assert "--from/--to" in capsys.readouterr().err
