"""get_spark's pre-warm: a background job starts Python workers and imports modules in them."""

from __future__ import annotations

import pytest

from streamdq.spark import PREWARM_JOB_GROUP, _prewarm_wanted, prewarm_python_workers


def test_prewarm_runs_one_job_in_its_group_and_never_raises(spark):
    thread = prewarm_python_workers(spark, modules=["json", "no_such_module_for_streamdq"], tasks=2)
    thread.join(timeout=600)
    assert not thread.is_alive()
    tracker = spark.sparkContext.statusTracker()
    jobs = tracker.getJobIdsForGroup(PREWARM_JOB_GROUP)
    assert jobs, "the pre-warm job did not run"
    info = tracker.getJobInfo(max(jobs))
    assert info is not None and info.status == "SUCCEEDED"
    # the caller's thread is not left in the pre-warm's job group
    spark.range(1).count()
    assert len(tracker.getJobIdsForGroup(PREWARM_JOB_GROUP)) == len(jobs)


@pytest.mark.parametrize(
    "arg,env,want",
    [(True, None, True), (False, "1", False), (None, "1", True), (None, "0", False), (None, None, False)],
)
def test_prewarm_switch(monkeypatch, arg, env, want):
    if env is None:
        monkeypatch.delenv("STREAMDQ_PREWARM", raising=False)
    else:
        monkeypatch.setenv("STREAMDQ_PREWARM", env)
    assert _prewarm_wanted(arg) is want
