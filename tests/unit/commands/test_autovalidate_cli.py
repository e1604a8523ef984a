"""streamdq autovalidate learn: offline programs from a table of batches, holdout judged."""

from __future__ import annotations

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
