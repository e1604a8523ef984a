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


@pytest.mark.parametrize(
    "env,want", [("1", True), ("on", True), ("0", False), ("off", False), (None, None), ("", None)]
)
def test_prewarm_setting_reads_the_environment(monkeypatch, env, want):
    from streamdq.spark import prewarm_setting

    if env is None:
        monkeypatch.delenv("STREAMDQ_PREWARM", raising=False)
    else:
        monkeypatch.setenv("STREAMDQ_PREWARM", env)
    assert prewarm_setting() is want


@pytest.mark.parametrize(
    "source,env,modules",
    [
        ({"type": "generator", "max_rows": 10}, None, ("streamdq.connectors.sources.generator_source",)),
        ({"type": "generator", "max_rows": 10}, "0", None),
        ({"type": "files", "path": "IN", "format": "json", "schema": "a INT"}, None, None),
    ],
    ids=["generator-auto", "generator-off", "files"],
)
def test_the_engine_prewarms_for_a_source_read_in_python_workers(
    spark, tmp_path, monkeypatch, source, env, modules
):
    """StreamRunner.start starts the pre-warm (once per runner) for a Python data source when
    STREAMDQ_PREWARM is unset; a JVM-read source or STREAMDQ_PREWARM=0 starts none."""
    from streamdq.engine import streaming

    if env is None:
        monkeypatch.delenv("STREAMDQ_PREWARM", raising=False)
    else:
        monkeypatch.setenv("STREAMDQ_PREWARM", env)
    started: list[tuple[str, ...]] = []
    real = streaming.prewarm_python_workers

    def record(session, mods):  # the real pre-warm, recorded
        started.append(tuple(mods))
        return real(session, mods)

    monkeypatch.setattr(streaming, "prewarm_python_workers", record)
    (tmp_path / "IN").mkdir()
    source = {k: (str(tmp_path / v) if k == "path" else v) for k, v in source.items()}
    runner = streaming.stream(
        spark,
        {
            "dataset": "d",
            "source": source,
            "trigger": "available_now" if source["type"] == "files" else "1 second",
            "checkpoint": str(tmp_path / "chk"),
            "state": {"path": str(tmp_path / "state")},
            "checks": [
                {"description": "c", "level": "error", "constraints": [{"has_size": {"assertion": ">= 0"}}]}
            ],
            "sinks": [],
        },
        supervision=False,
    )
    try:
        runner.start()
        runner.stop_query()
        runner.start()  # a restart: no second pre-warm
    finally:
        runner.stop()
    assert started == ([modules] if modules else [])
