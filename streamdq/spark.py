"""A local SparkSession configured the way streamdq expects.

``get_spark()`` returns the active session if there is one, else builds a local one with:
ANSI mode off (so ``CAST('abc' AS DOUBLE)`` is NULL, as the Deequ semantics assume), UTC
session time zone, few shuffle partitions (the aggregated states are tiny), Arrow enabled,
and the executors' Python set to this interpreter (``PYSPARK_PYTHON``).
"""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession

STREAMDQ_CONF = {
    "spark.sql.ansi.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
}


def _submitted_with_master() -> bool:
    """True under spark-submit (or any launcher) that already chose ``spark.master``."""
    if not os.environ.get("PYSPARK_GATEWAY_PORT"):
        return False
    from pyspark import SparkConf

    return SparkConf().contains("spark.master")


def get_spark(
    master: str | None = None, app_name: str = "streamdq", shuffle_partitions: int = 4
) -> SparkSession:
    """The active SparkSession, or a new one configured for streamdq.

    The master is ``master``, else ``$STREAMDQ_MASTER``, else the one spark-submit chose,
    else ``local[2]``."""
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name).master(
        master or os.environ.get("STREAMDQ_MASTER", "local[2]")
    )
    for k, v in STREAMDQ_CONF.items():
        builder = builder.config(k, v)
    builder = builder.config("spark.sql.shuffle.partitions", str(shuffle_partitions))
    builder = builder.config("spark.driver.memory", os.environ.get("STREAMDQ_DRIVER_MEMORY", "2g"))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("STREAMDQ_SPARK_LOG_LEVEL", "ERROR"))
    return spark
