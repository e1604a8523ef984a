"""``streamdq verify --rows-out PATH``: the rows failing row-level constraints, as Parquet.

Writes every row of the input that fails at least one row-level constraint of the checks
(``streamdq.checks.row_level``: completeness, compliance, pattern, containment, lengths,
uniqueness) with its columns as read plus ``_dq_failed_constraints`` (array of the names of
the constraints it fails). Dataset-level constraints never select a row. The rows are
written by Spark in one pass (nothing collected on the driver); PATH is replaced.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from streamdq.errors import ConfigError


def write_failing_rows(df: Any, checks: Iterable[Any], path: str) -> int:
    """Write the failing rows of ``df`` to Parquet at ``path``; return how many were written."""
    from streamdq.checks.row_level import failing_rows

    rows = failing_rows(df, checks).cache()
    try:
        count = rows.count()
        rows.write.mode("overwrite").parquet(path)
    except Exception as exc:  # an unwritable path, a bad predicate...
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError("--rows-out", f"{path}: cannot write the failing rows: {first}") from None
    finally:
        rows.unpersist()
    return count
