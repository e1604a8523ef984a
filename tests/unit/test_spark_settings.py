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
    from streamdq.jvm.jar import ensure_jar

    jar = ensure_jar()
    if jar is not None:  # get_spark put streamdq's jar on spark.jars (with_submitted_jars)
        assert str(jar) in conf.get("spark.jars", "").split(",")


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


def test_a_submitted_jar_stays_on_spark_jars_beside_streamdqs(tmp_path):
    """``spark-submit --jars`` (here through PYSPARK_SUBMIT_ARGS, as ``pyspark`` passes it): a
    builder's ``spark.jars`` would replace the user's jar; the JVM gateway's settings keep it.
    A subprocess: it starts its own JVM gateway (no SparkContext)."""
    import os
    import subprocess
    import sys
    import zipfile

    user_jar = tmp_path / "user-udfs.jar"
    with zipfile.ZipFile(user_jar, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    code = (
        "from streamdq.spark import with_submitted_jars\n"
        "print('JARS=' + with_submitted_jars('/x/streamdq.jar', {'spark.driver.memory': '1g'}))\n"
    )
    env = {**os.environ, "PYSPARK_SUBMIT_ARGS": f"--jars {user_jar} pyspark-shell"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=180, check=True
    ).stdout
    jars = (
        next(line for line in out.splitlines() if line.startswith("JARS=")).removeprefix("JARS=").split(",")
    )
    assert jars[-1] == "/x/streamdq.jar"
    assert any(j.endswith("user-udfs.jar") for j in jars[:-1]), jars
