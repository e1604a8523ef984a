"""spark-submit entry point: ``spark-submit ... streamdq_main.py /etc/streamdq/run.yaml``.

Builds the SparkSession from spark-submit's own configuration (master, packages, executor
settings are NOT overridden) plus the settings streamdq's metric semantics rely on, then runs
``streamdq run <config>`` in this driver (``streamdq.spark.get_spark`` reuses the active
session). Extra arguments are passed to ``streamdq run`` (e.g. ``--duration 600``).
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    from pyspark.sql import SparkSession

    from streamdq.cli import main as cli_main
    from streamdq.spark import STREAMDQ_CONF

    builder = SparkSession.builder.appName("streamdq")
    for key, value in STREAMDQ_CONF.items():
        if key != "spark.ui.enabled":  # keep the Spark UI on a cluster
            builder = builder.config(key, value)
    builder.getOrCreate()
    return int(cli_main(["run", *argv]) or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
