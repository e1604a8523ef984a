"""``streamdq verify --rows-out PATH`` and ``verify(..., row_level=True)``."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from streamdq.checks import Check, Level
from streamdq.checks.verification import verify
from streamdq.cli import main

CHECKS = """
checks:
  - description: orders
    constraints:
      - is_complete: name
      - is_contained_in: {column: status, values: [new, paid]}
      - has_size: {assertion: "> 100"}
"""


def test_rows_out_writes_failing_rows_with_their_reasons(tmp_path: Path, capsys) -> None:
    data = tmp_path / "orders.csv"
    data.write_text("id,name,status\n1,a,new\n2,,paid\n3,c,lost\n4,,lost\n5,e,paid\n")
    checks = tmp_path / "checks.yaml"
    checks.write_text(CHECKS)
    out = tmp_path / "failing"
    assert main(["verify", "--data", str(data), "--checks", str(checks), "--rows-out", str(out)]) == 1
    table = pq.read_table(out).to_pylist()
    got = sorted((r["id"], r["_dq_failed_constraints"]) for r in table)
    contained = "is_contained_in(column='status', values=['new', 'paid'])"
    assert got == [
        (2, ["is_complete(column='name')"]),
        (3, [contained]),
        (4, ["is_complete(column='name')", contained]),
    ]  # has_size failed too, yet stamps no row
    assert "3 failing rows written" in capsys.readouterr().err


def test_rows_out_to_an_unwritable_path_is_exit_2(tmp_path: Path, capsys) -> None:
    data = tmp_path / "d.csv"
    data.write_text("id,name,status\n1,,new\n")
    checks = tmp_path / "checks.yaml"
    checks.write_text(CHECKS)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code = main(["verify", "--data", str(data), "--checks", str(checks), "--rows-out", str(blocker / "sub")])
    assert code == 2
    assert "--rows-out" in capsys.readouterr().err


def test_verify_row_level_returns_outcome_columns(spark) -> None:
    df = spark.createDataFrame([(1, "a"), (2, None), (3, "c")], "id int, name string")
    check = Check(Level.ERROR, "c").is_complete("name", where="id > 1").has_size("> 0")
    plain = verify(df, [check])
    assert plain.row_level is None
    result = verify(df, [check], row_level=True, filtered_row="null")
    assert result.row_level is not None
    rows = result.row_level.orderBy("id").collect()
    assert [r["is_complete(column='name') where id > 1"] for r in rows] == [None, False, True]
    assert result.row_level.columns == ["id", "name", "is_complete(column='name') where id > 1"]
