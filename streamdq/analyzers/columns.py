"""Spark column helpers every analyzer uses: literal column references and the ``where`` scope.

They run on the driver while a plan is built (no Spark job); ``where`` is a Spark SQL
predicate, and a row is in scope only where it is TRUE (FALSE and NULL are out). They live
apart from ``base.py`` so that the analyzers' own building blocks (``frequency/``) can use them
without importing the analyzer contracts (no circle base <-> frequency).

With a SparkSession active (``col`` builds a Spark column)::

    df.select(conditional(col("a.b"), "amount > 0"))   # a.b where amount > 0, else NULL
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F


def col(name: str) -> Column:
    """A column reference that takes ``name`` literally (dots and spaces are not parsed)."""
    return F.col("`" + name.replace("`", "``") + "`")


def in_scope(where: str | None) -> Column:
    """TRUE for rows in scope: the filter is TRUE (FALSE and NULL are out of scope)."""
    if where is None:
        return F.lit(True)
    return F.coalesce(F.expr(where).cast("boolean"), F.lit(False))


def conditional(value: Column, where: str | None) -> Column:
    """``value`` on rows in scope and NULL elsewhere (Deequ's conditionalSelection)."""
    if where is None:
        return value
    return F.when(in_scope(where), value)


__all__ = ["col", "conditional", "in_scope"]
