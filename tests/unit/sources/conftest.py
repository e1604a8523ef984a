"""Helpers shared by the decoder tests."""

from __future__ import annotations

import math

from pyspark.sql import DataFrame, SparkSession
from streamdq.connectors.sources import decode_jvm

from tests.conftest import require_integration


def require_jvm_decoder(spark: SparkSession) -> None:
    """Skip (fail under CI=true) when the session cannot run the JVM decoder."""
    if not decode_jvm.available(spark):
        require_integration("streamdq's jar (javac)", str(decode_jvm.unavailable_reason(spark)))


def collect_rows(df: DataFrame) -> list[dict[str, object]]:
    """The rows as dicts, NaN written "NaN" so that rows compare equal."""

    def norm(v: object) -> object:
        if isinstance(v, float) and math.isnan(v):
            return "NaN"
        return v

    return [{k: norm(v) for k, v in r.asDict(recursive=True).items()} for r in df.collect()]
