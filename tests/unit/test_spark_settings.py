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
