"""A local SparkSession configured the way streamdq expects.

``get_spark()`` returns the active session if there is one, else builds a local one with:
ANSI mode off (so ``CAST('abc' AS DOUBLE)`` is NULL, as the Deequ semantics assume), UTC
session time zone, few shuffle partitions (the aggregated states are tiny), Arrow enabled,
and the executors' Python set to this interpreter (``PYSPARK_PYTHON``). streamdq's own jar
(``streamdq.jvm``: the single-pass JSON decoder) is put on ``spark.jars`` when this machine can
build it (a JDK's ``javac``); without it the decoders use Spark's built-ins.

Start-up (docs/streaming.md, "Start-up"): the first task that needs a Python worker (a Python
data source such as the generator or the Python Kafka source, a ``mapInArrow``) pays for the
Python daemon and the workers' imports. ``prewarm_python_workers`` runs that cost in a
background job while the driver does its own start-up work; ``get_spark(prewarm=True)`` (or
``STREAMDQ_PREWARM=1``) starts it with a new session; unset, the streaming engine starts it when
its source reads in Python workers (``STREAMDQ_PREWARM=0`` never does).

Robust worker start-up (docs/streaming.md, "Supervision"): Spark 4's wait for a Python worker
to connect back is fixed (10 s for the plain workers that Python data sources use on the
driver, 60 s through the daemon; no setting changes it), so what Spark does offer is set:
``ROBUST_WORKER_CONF`` (a longer authentication handshake once the worker is connected, the
Python fault handler so a crashed worker's traceback is in the error) and task retries for a
local master (``local[2]`` becomes ``local[2,4]``: a task whose worker died or timed out is
retried by Spark instead of failing the query). What still fails the query is restarted by
the supervisor (``streamdq.engine.supervisor``).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import shlex
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from pyspark import InheritableThread
from pyspark.sql import SparkSession

STREAMDQ_CONF = {
    "spark.sql.ansi.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
}


# settings Spark (4.1+) offers for a robust Python worker start-up (set on a new session)
ROBUST_WORKER_CONF = {
    # the worker's authentication handshake after it connected back (default 15s): under load
    # a freshly forked worker can take longer than that to answer
    "spark.python.authenticate.socketTimeout": "120s",
    # a worker that crashes or is killed leaves its Python traceback in the task's error
    "spark.python.worker.faulthandler.enabled": "true",
}
LOCAL_TASK_ATTEMPTS = 4
_LOCAL_MASTER = re.compile(r"^local\[(\d+|\*)\]$")


def with_task_retries(master: str, attempts: int = LOCAL_TASK_ATTEMPTS) -> str:
    """``local[N]`` as ``local[N,attempts]``: local mode otherwise runs every task once (a
    cluster master, or a local master that names its failures, is returned unchanged)."""
    m = _LOCAL_MASTER.match(master.strip())
    if m is None or attempts <= 1:
        return master
    return f"local[{m.group(1)},{attempts}]"


def _submitted_with_master() -> bool:
    """True under spark-submit (or any launcher) that already chose ``spark.master``."""
    if not os.environ.get("PYSPARK_GATEWAY_PORT"):
        return False
    from pyspark import SparkConf

    return SparkConf().contains("spark.master")


PREWARM_JOB_GROUP = "streamdq-prewarm"


def _warm(modules: Sequence[str]) -> Any:
    def warm(batches: Iterator[Any]) -> Iterator[Any]:
        for name in modules:
            # a module the worker cannot import is the real task's problem, not the pre-warm's
            with contextlib.suppress(Exception):
                importlib.import_module(name)
        yield from batches

    return warm


def prewarm_python_workers(
    spark: SparkSession, modules: Sequence[str] = (), tasks: int | None = None
) -> threading.Thread:
    """Start Python workers (and import ``modules`` in them) in a background job; returns its thread.

    One ``mapInArrow`` task per core (``tasks``, default ``defaultParallelism``) over one row
    each: the daemon starts, each task's worker imports ``modules``, and the workers stay alive
    for reuse (``spark.python.worker.reuse``, Spark's default). Never raises: a failed
    pre-warm leaves the cost to the first real task, as without it."""
    n = tasks or max(int(spark.sparkContext.defaultParallelism), 1)
    warm = _warm(tuple(modules))

    def run() -> None:
        try:
            spark.sparkContext.setJobGroup(PREWARM_JOB_GROUP, "streamdq: pre-warm Python workers")
            spark.range(n, numPartitions=n).mapInArrow(warm, "id BIGINT").collect()
        except Exception:
            pass

    # InheritableThread: the job group stays on this thread's JVM thread (pinned thread mode).
    thread = InheritableThread(target=run, name="streamdq-prewarm", daemon=True)
    thread.start()
    return thread


def prewarm_setting() -> bool | None:
    """``$STREAMDQ_PREWARM``: True (``1``, ``true``, ``yes``: every new session pre-warms),
    False (``0``, ``false``, ``no``, ``off``: never), None when unset (``auto``: the engine
    pre-warms when its source reads in Python workers, ``StreamRunner.start``)."""
    value = os.environ.get("STREAMDQ_PREWARM", "").strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    return None


def _prewarm_wanted(prewarm: bool | None) -> bool:
    if prewarm is not None:
        return prewarm
    return prewarm_setting() is True


def get_spark(
    master: str | None = None,
    app_name: str = "streamdq",
    shuffle_partitions: int = 4,
    prewarm: bool | None = None,
    prewarm_modules: Sequence[str] = (),
) -> SparkSession:
    """The active SparkSession, or a new one configured for streamdq.

    The master is ``master``, else ``$STREAMDQ_MASTER``, else the one spark-submit chose,
    else ``local[2]`` (a local master with task retries, see ``with_task_retries``), with
    ``ROBUST_WORKER_CONF``. With ``prewarm`` (default: ``$STREAMDQ_PREWARM``) a new session starts
    :func:`prewarm_python_workers` (importing ``prewarm_modules``) in the background."""
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name).master(
        with_task_retries(master or os.environ.get("STREAMDQ_MASTER", "local[2]"))
    )
    for k, v in {**ROBUST_WORKER_CONF, **STREAMDQ_CONF}.items():
        builder = builder.config(k, v)
    builder = builder.config("spark.sql.shuffle.partitions", str(shuffle_partitions))
    builder = builder.config("spark.driver.memory", os.environ.get("STREAMDQ_DRIVER_MEMORY", "2g"))
    jar = _streamdq_jar()
    if jar is not None:
        submitted = _running_jvm_jars() if _jvm_running() else _jars_in_submit_args(jar)
        builder = builder.config("spark.jars", merge_jars(submitted, jar))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("STREAMDQ_SPARK_LOG_LEVEL", "ERROR"))
    if _prewarm_wanted(prewarm):
        prewarm_python_workers(spark, prewarm_modules)
    return spark


def merge_jars(submitted: str, jar: str) -> str:
    """``spark.jars`` holding the ``submitted`` jars and then ``jar``, each once.

    >>> merge_jars("/opt/a.jar, /opt/b.jar", "/x/streamdq.jar")
    '/opt/a.jar,/opt/b.jar,/x/streamdq.jar'
    >>> merge_jars("/x/streamdq.jar", "/x/streamdq.jar")
    '/x/streamdq.jar'
    >>> merge_jars("", "/x/streamdq.jar")
    '/x/streamdq.jar'
    """
    jars = [j.strip() for j in submitted.split(",") if j.strip()]
    return ",".join(jars if jar in jars else [*jars, jar])


def _jvm_running() -> bool:
    """Whether the driver JVM runs already: launched by ``spark-submit`` (``PYSPARK_GATEWAY_PORT``)
    or by an earlier session of this process."""
    from pyspark import SparkContext

    return SparkContext._jvm is not None or "PYSPARK_GATEWAY_PORT" in os.environ


def _running_jvm_jars() -> str:
    """``spark.jars`` of the running driver JVM (``_jvm_running``). A new session's
    ``spark.jars`` replaces that JVM's, which would drop the user's ``--jars`` from the
    executors. streamdq's jar, added then, reaches the executors but not the running driver's
    class path: the built-in decoders run (docs/sources.md)."""
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()  # connects to spark-submit's JVM, as the session would
    return SparkConf(_jvm=SparkContext._jvm).get("spark.jars", "") or ""


def _jars_in_submit_args(jar: str) -> str:
    """The ``--jars`` of ``PYSPARK_SUBMIT_ARGS`` (how ``pyspark --jars`` passes them) when this
    process launches its own JVM, with ``jar`` added to them there ("" without any).

    spark-submit takes a ``--jars`` list over the ``spark.jars`` the session's builder passes
    as ``--conf``: without ``jar`` in that list the driver could not load streamdq's classes,
    and the user's jars would be dropped from the session's ``spark.jars``."""
    args = shlex.split(os.environ.get("PYSPARK_SUBMIT_ARGS", ""))
    submitted = ""
    for i, arg in enumerate(args):
        if arg == "--jars" and i + 1 < len(args):
            submitted = args[i + 1]
            args[i + 1] = merge_jars(submitted, jar)
        elif arg.startswith("--jars="):
            submitted = arg.removeprefix("--jars=")
            args[i] = "--jars=" + merge_jars(submitted, jar)
    if submitted:
        os.environ["PYSPARK_SUBMIT_ARGS"] = shlex.join(args)
    return submitted


def _streamdq_jar() -> str | None:
    """The path of streamdq's jar (``streamdq.jvm.jar``, built on first use), or None."""
    from streamdq.jvm.jar import ensure_jar

    jar = ensure_jar()
    return None if jar is None else str(jar)


def set_jvm_log_level(spark: SparkSession, logger: str, level: str) -> None:
    """Set one JVM (log4j2) logger's level, e.g. ``("org.apache.spark.sql.execution.streaming",
    "OFF")``; never raises (a JVM without log4j2 keeps its levels)."""
    jvm = spark.sparkContext._jvm
    with contextlib.suppress(Exception):
        assert jvm is not None
        log4j = jvm.org.apache.logging.log4j
        log4j.core.config.Configurator.setLevel(logger, log4j.Level.getLevel(level.upper()))


def stop_spark(spark: SparkSession) -> None:
    """Stop the session (and its SparkContext) in this process, after its queries stopped.

    A process that exits with its SparkContext still running leaves the stop to the JVM's
    shutdown hook, which races Spark's own daemon threads (listener bus, context cleaner,
    Python worker monitors) and prints their interrupted stack traces after a normal stop.
    Never raises."""
    for query in list(spark.streams.active) if _alive(spark) else []:
        with contextlib.suppress(Exception):
            query.stop()
    with contextlib.suppress(Exception):
        spark.stop()


def _alive(spark: SparkSession) -> bool:
    try:
        return spark.sparkContext._jsc is not None
    except Exception:
        return False
