"""get_spark's settings for a robust Python worker start-up (issue 16, "Supervision")."""

from __future__ import annotations

import pytest

from streamdq.spark import LOCAL_TASK_ATTEMPTS, ROBUST_WORKER_CONF, with_task_retries


@pytest.mark.parametrize(
    "master,want",
    [
        ("local[2]", "local[2,4]"),
        ("local[*]", "local[*,4]"),
        ("local[2,8]", "local[2,8]"),  # a master that names its failures is kept
        ("local", "local"),
        ("spark://host:7077", "spark://host:7077"),
        ("k8s://https://api:6443", "k8s://https://api:6443"),
    ],
)
def test_local_masters_get_task_retries(master, want):
    assert with_task_retries(master) == want


def test_the_session_has_the_settings(spark):
    conf = spark.sparkContext.getConf()
    for key, value in ROBUST_WORKER_CONF.items():
        assert conf.get(key) == value, key
    assert spark.sparkContext.master.endswith(f",{LOCAL_TASK_ATTEMPTS}]")


def test_every_setting_exists_in_this_spark(spark):
    """Only settings Spark knows: each is a registered config entry of the running JVM."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    registered = jvm.org.apache.spark.internal.config.ConfigEntry.findEntry
    assert registered("spark.python.no.such.setting") is None
    for key in ROBUST_WORKER_CONF:
        assert registered(key) is not None, f"{key} is not a Spark setting"


def test_set_jvm_log_level(spark):
    from streamdq.spark import set_jvm_log_level

    name = "org.apache.spark.sql.execution.streaming.streamdq_test_logger"
    set_jvm_log_level(spark, name, "OFF")
    jvm = spark.sparkContext._jvm
    assert str(jvm.org.apache.logging.log4j.LogManager.getLogger(name).getLevel().toString()) == "OFF"
    set_jvm_log_level(spark, name, "no such level")  # never raises


def _get_spark_with_a_user_jar(tmp_path, before: str = "") -> dict[str, str]:
    """Run ``get_spark()`` in a subprocess (its own JVM) launched the way ``pyspark --jars
    user-udfs.jar`` launches one (PYSPARK_SUBMIT_ARGS), after the ``before`` code; its printed
    session jars (JARS), streamdq's jar (OURS) and whether the JVM decoder loads (LOADS)."""
    import os
    import subprocess
    import sys
    import zipfile

    user_jar = tmp_path / "user-udfs.jar"
    with zipfile.ZipFile(user_jar, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    code = before + (
        "from connectors.sources.decode_jvm import available\n"
        "from streamdq.jvm.jar import ensure_jar\n"
        "from streamdq.spark import get_spark, stop_spark\n"
        "spark = get_spark()\n"
        "print('JARS=' + spark.sparkContext.getConf().get('spark.jars'))\n"
        "print('OURS=' + str(ensure_jar()))\n"
        "print('LOADS=' + str(available(spark)))\n"
        "stop_spark(spark)\n"
    )
    env = {**os.environ, "PYSPARK_SUBMIT_ARGS": f"--jars {user_jar} pyspark-shell"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300, check=True
    ).stdout
    return dict(
        line.split("=", 1) for line in out.splitlines() if line.split("=")[0] in ("JARS", "OURS", "LOADS")
    )


def test_a_running_jvms_jars_stay_on_spark_jars_beside_streamdqs(tmp_path):
    """A driver JVM that runs before the session (spark-submit's, launched here the way
    ``spark-submit --jars`` does through PYSPARK_SUBMIT_ARGS): get_spark's ``spark.jars`` used to
    replace the user's jar, which then never reached the executors."""
    lines = _get_spark_with_a_user_jar(
        tmp_path, before="from pyspark import SparkContext\nSparkContext._ensure_initialized()\n"
    )
    jars = lines["JARS"].split(",")
    assert any(j.endswith("user-udfs.jar") for j in jars), jars
    if lines["OURS"] != "None":
        assert lines["OURS"] in jars


def test_jars_given_to_pyspark_stay_and_streamdqs_jar_loads(tmp_path):
    """``pyspark --jars`` (PYSPARK_SUBMIT_ARGS) when get_spark launches the JVM: spark-submit
    takes that list over the builder's ``spark.jars``, which used to leave streamdq's jar off
    the driver (the JVM decoder unavailable) and the user's jar off the session's settings."""
    lines = _get_spark_with_a_user_jar(tmp_path)
    jars = lines["JARS"].split(",")
    assert any(j.endswith("user-udfs.jar") for j in jars), jars
    if lines["OURS"] != "None":
        assert lines["OURS"] in jars
        assert lines["LOADS"] == "True"
