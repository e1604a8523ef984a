"""count_jobs counts the block's jobs without taking them out of the caller's job group."""

from __future__ import annotations

from typing import Any

from streamdq.engine.plan import count_jobs


def test_count_jobs_counts_the_block_and_keeps_the_callers_job_group(spark: Any) -> None:
    sc = spark.sparkContext
    sc.setJobGroup("caller-group", "the user's own jobs", interruptOnCancel=False)
    try:
        before = set(sc.statusTracker().getJobIdsForGroup("caller-group"))
        df = spark.range(10)
        with count_jobs(spark) as jobs:
            df.collect()
        assert jobs[0] == 1
        new = set(sc.statusTracker().getJobIdsForGroup("caller-group")) - before
        assert len(new) == 1  # the block's job stayed in the caller's group
        assert sc.getLocalProperty("spark.jobGroup.id") == "caller-group"
        with count_jobs(spark) as none:
            pass
        assert none[0] == 0
        assert not [t for t in sc.getJobTags() if t.startswith("streamdq-")]  # the tag is gone
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        sc.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]
