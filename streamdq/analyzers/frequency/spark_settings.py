"""A grouping query as ONE Spark job on a shuffle size of streamdq's choosing.

``one_job(spark, partitions)`` sets, for the duration of an action, the two session
settings a grouping query's plan depends on, and restores them afterwards:

* ``spark.sql.adaptive.enabled=false``: adaptive execution would submit every shuffle
  stage of the bounded query's union as a job of its own (4 instead of 1; the exchange is
  reused either way);
* ``spark.sql.shuffle.partitions=partitions``: the session's value (200 by default) would
  size the grouping stage: 200 TakeOrderedAndProject queues of up to ``max_groups + 3``
  rows each, all merged by one task.

Both are read when the query is planned, i.e. at the action. They are **session-wide**:
another thread running a query on the same session meanwhile runs it with them too.
Runs on the driver.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def one_job(spark: Any, partitions: int) -> Iterator[None]:
    """Within the block, actions on ``spark`` plan without AQE on ``partitions`` shuffle partitions."""
    settings = {"spark.sql.adaptive.enabled": "false", "spark.sql.shuffle.partitions": str(partitions)}
    previous = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
