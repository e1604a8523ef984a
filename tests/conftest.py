"""Shared fixtures: ONE SparkSession for the whole test session (local[2], small partitions)."""

from __future__ import annotations

import os
import sys

import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


@pytest.fixture(scope="session")
def spark():
    from streamdq.spark import get_spark

    session = get_spark(shuffle_partitions=2)
    yield session
    session.stop()


def require_integration(what: str, reason: str) -> None:
    """Skip a test whose integration dependency is missing, but fail under CI=true."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"integration dependency missing under CI: {what}: {reason}")
    pytest.skip(f"{what}: {reason}")
