"""Any supported DataFrame as a Spark DataFrame: ``to_spark(df, spark=None)``.

``verify``, ``profile`` and ``suggest`` take a PySpark DataFrame, a pandas DataFrame or a Polars
DataFrame (a ``polars.LazyFrame`` is collected first). pandas and Polars frames are converted on the
driver with Spark's ``createDataFrame`` (pandas through Arrow; Polars as an Arrow table), into the
active session or ``streamdq.spark.get_spark()``'s. The conversion copies the data to Spark once;
for tables that do not fit the driver's memory, read them with Spark instead. Anything else raises
``TypeError`` naming the type and what is accepted.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession

from streamdq.errors import InvalidArgument, InvalidType


def _session(spark: SparkSession | None) -> SparkSession:
    if spark is not None:
        return spark
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    from streamdq.spark import get_spark

    return get_spark()


def to_spark(df: Any, spark: SparkSession | None = None) -> DataFrame:
    """``df`` as a Spark DataFrame (see the module docstring)."""
    if isinstance(df, DataFrame):
        return df
    module = type(df).__module__.split(".")[0]
    if module == "pandas":
        import pandas as pd

        if isinstance(df, pd.DataFrame):
            if df.empty and len(df.columns) == 0:
                raise InvalidArgument("the pandas DataFrame has no columns")
            return _session(spark).createDataFrame(df)
    if module == "polars":
        import polars as pl

        if isinstance(df, pl.LazyFrame):
            df = df.collect()
        if isinstance(df, pl.DataFrame):
            return _session(spark).createDataFrame(df.to_arrow())
    raise InvalidType(
        f"expected a PySpark, pandas or Polars DataFrame, got {type(df).__module__}.{type(df).__qualname__}"
    )
