"""The Arrow path's one job reuses the JVM Seq of its columns across microbatches of one
schema (arrow_path._select): PySpark would build it anew per call, a py4j round trip per
column. The reuse must not change a result."""

from __future__ import annotations

from typing import Any

from pyspark.sql import functions as F

from streamdq.analyzers import Completeness, Maximum, Size
from streamdq.engine.plan import AnalysisPlan


def _run(plan: AnalysisPlan, df: Any, segment: list[Any]) -> dict[Any, list[float]]:
    out = plan.run_segmented(df, segment, path="arrow")
    assert out.path == "arrow"
    return {key: [a.metric(st).value for a, st in row.states.items()] for key, row in out.segments.items()}


def test_the_column_seq_is_built_once_per_layout_and_results_are_unchanged(spark):
    plan = AnalysisPlan([Size(), Completeness("s"), Maximum("x")])
    segment = [F.col("g")]
    first = spark.createDataFrame([(1, "a", 1.0), (1, None, 5.0), (2, "c", 3.0)], "g INT, s STRING, x DOUBLE")
    assert _run(plan, first, segment) == {(1,): [2.0, 0.5, 5.0], (2,): [1.0, 1.0, 3.0]}
    (program,) = plan._programs.values()
    (layout,) = program.layouts.values()
    seq = layout.java_columns
    assert seq is not None
    second = spark.createDataFrame([(2, None, -1.0), (3, "d", None)], "g INT, s STRING, x DOUBLE")
    assert _run(plan, second, segment) == {(2,): [1.0, 0.0, -1.0], (3,): [1.0, 1.0, None]}
    assert layout.java_columns is seq  # the same JVM Seq, not rebuilt
    assert len(program.layouts) == 1


def _stream_batches(
    spark: Any, tmp_path: Any, plan: AnalysisPlan
) -> list[tuple[dict[Any, list[float]], Any]]:
    """Three microbatches of a real file-source query through ``plan``'s Arrow path: each
    batch's states and the plan its layout reused."""
    inbox = tmp_path / "in"
    inbox.mkdir()
    batches = [[(1, "a", 1.0), (1, None, 5.0)], [(2, "b", -1.0)], [(2, None, 7.0), (3, "c", 2.0)]]
    for i, rows in enumerate(batches):
        lines = [
            f'{{"g": {g}, "s": {"null" if s is None else repr(s).replace(chr(39), chr(34))}, "x": {x}}}'
            for g, s, x in rows
        ]
        (inbox / f"{i:03d}.json").write_text("\n".join(lines) + "\n")
    segment = [F.col("g")]
    seen: list[tuple[dict[Any, list[float]], Any]] = []

    def consume(df: Any, batch_id: int) -> None:
        result = _run(plan, df, segment)
        (program,) = plan._programs.values()
        (layout,) = program.layouts.values()
        seen.append((result, layout.analyzed[0]))

    query = (
        spark.readStream.schema("g INT, s STRING, x DOUBLE")
        .option("maxFilesPerTrigger", 1)
        .json(str(inbox))
        .writeStream.foreachBatch(consume)
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert query.exception() is None
    return seen


def test_a_streaming_query_reuses_the_optimised_projection_across_microbatches(spark, tmp_path):
    """Microbatches of one query are plans over the same attributes: the projection analysed
    and optimised for the first is put over the next ones' plans, and each gives its own
    rows' states."""
    seen = _stream_batches(spark, tmp_path, AnalysisPlan([Size(), Completeness("s"), Maximum("x")]))
    expected = [
        {(1,): [2.0, 0.5, 5.0]},
        {(2,): [1.0, 1.0, -1.0]},
        {(2,): [1.0, 0.0, 7.0], (3,): [1.0, 1.0, 2.0]},
    ]
    assert sorted(map(repr, (r for r, _ in seen))) == sorted(map(repr, expected))  # file order may vary
    first = seen[0][1]
    assert all(plan_ is first for _, plan_ in seen)  # optimised once, put over each batch's plan
    assert "(true and " not in first.toString().lower()  # the optimiser's form: (true AND x) is x


def test_a_projection_that_reads_the_clock_is_optimised_for_every_batch(spark, tmp_path):
    """The optimiser folds current_timestamp() into the batch's literal: such a projection
    reuses its analysed form only, so that every batch is optimised with its own time."""
    where = "x < unix_micros(current_timestamp())"
    seen = _stream_batches(spark, tmp_path, AnalysisPlan([Size(where=where), Completeness("s", where=where)]))
    expected = [{(1,): [2.0, 0.5]}, {(2,): [1.0, 1.0]}, {(2,): [1.0, 0.0], (3,): [1.0, 1.0]}]
    assert sorted(map(repr, (r for r, _ in seen))) == sorted(map(repr, expected))
    first = seen[0][1]
    assert all(plan_ is first for _, plan_ in seen)
    assert "current_timestamp()" in first.toString()  # not folded into the first batch's time


def test_the_kept_arrow_schema_collect_equals_to_arrow(spark):
    """A reused layout collects its job's Arrow stream itself (arrow_path._collect, with the
    schema toArrow gave its first batch): the same table as toArrow, timestamps, arrays and an
    empty result included."""
    from streamdq.engine.arrow_path import _collect

    df = spark.sql(
        "SELECT * FROM VALUES (1, 'a', TIMESTAMP'2026-11-27 05:00:00', array('x', 'y'), 1.5),"
        " (2, NULL, NULL, array(), NULL) AS t(i, s, ts, arr, d)"
    )
    expected = df.toArrow()
    assert _collect(df, expected.schema).equals(expected)
    empty = df.where("i > 5")
    got = _collect(empty, expected.schema)
    assert got.num_rows == 0 and got.schema.equals(empty.toArrow().schema)


def test_a_streaming_query_keeps_the_layouts_arrow_schema(spark, tmp_path):
    plan = AnalysisPlan([Size(), Completeness("s"), Maximum("x")])
    seen = _stream_batches(spark, tmp_path, plan)
    assert len(seen) == 3
    (program,) = plan._programs.values()
    (layout,) = program.layouts.values()
    assert layout.arrow_schema is not None
    assert len(layout.arrow_schema) == len(layout.projection.columns)  # the one job's columns


def _optimised_per_batch(spark: Any, tmp_path: Any, monkeypatch: Any, plan: AnalysisPlan) -> list[bool]:
    """Whether Spark's optimiser ran for each reused batch's one job."""
    ran: list[bool] = []
    # the job has planned (and optimised, or not) its query once collected
    _after_collect(
        monkeypatch,
        lambda df: ran.append(bool(df._jdf.queryExecution().tracker().phases().contains("optimization"))),
    )
    assert len(_stream_batches(spark, tmp_path, plan)) == 3
    return ran


def _after_collect(monkeypatch: Any, record: Any) -> None:
    """Call ``record(df)`` after each reused batch's one job has collected ``df``."""
    from streamdq.engine import arrow_path

    collect = arrow_path._collect

    def spy(df: Any, schema: Any) -> Any:
        table = collect(df, schema)
        record(df)
        return table

    monkeypatch.setattr(arrow_path, "_collect", spy)


def _stage_name(df: Any) -> str:
    """The class of the top node of ``df``'s executed plan (its codegen stage)."""
    return str(df._jdf.queryExecution().executedPlan().getClass().getSimpleName())


def test_with_streamdqs_jar_a_reused_microbatch_skips_the_optimiser(spark, tmp_path, monkeypatch):
    """io.streamdq.ReusedPlan: the kept optimised projection over a foreachBatch LogicalRDD is
    the query's optimised plan; Spark's optimiser does not run again (results as before)."""
    from streamdq.engine.arrow_path import _reused_plan
    from tests.unit.sources.conftest import require_jvm_decoder

    require_jvm_decoder(spark)
    assert _reused_plan(spark._jvm) is not None
    ran = _optimised_per_batch(spark, tmp_path, monkeypatch, AnalysisPlan([Size(), Maximum("x")]))
    assert ran == [False, False]  # the two reused batches (the first selects as usual)


def test_a_reused_projection_that_reads_the_clock_is_still_optimised(spark, tmp_path, monkeypatch):
    where = "x < unix_micros(current_timestamp())"
    ran = _optimised_per_batch(spark, tmp_path, monkeypatch, AnalysisPlan([Size(where=where)]))
    assert ran == [True, True]


def test_without_the_jar_the_reuse_goes_through_py4j_and_is_optimised(spark, tmp_path, monkeypatch):
    from streamdq.engine import arrow_path

    monkeypatch.setattr(arrow_path, "_reused_plan", lambda jvm: None)
    ran = _optimised_per_batch(spark, tmp_path, monkeypatch, AnalysisPlan([Size(), Maximum("x")]))
    assert ran == [True, True]  # reused (analysed once), optimised by Spark each batch


def test_with_streamdqs_jar_reused_microbatches_run_the_kept_generated_source(spark, tmp_path, monkeypatch):
    """io.streamdq.ReusedPlan keeps the Java source Spark generated for the projection's
    codegen stage: the reused batches run it (a ``KeptCodegen`` stage; the source is generated
    once), and each batch still gets its own rows' states, a regular expression included."""
    from streamdq.analyzers import PatternMatch
    from tests.unit.sources.conftest import require_jvm_decoder

    require_jvm_decoder(spark)
    jvm = spark._jvm
    stages: list[str] = []
    kept: list[int] = []

    def record(df: Any) -> None:
        stages.append(_stage_name(df))
        (program,) = plan._programs.values()
        (layout,) = program.layouts.values()
        kept.append(jvm.System.identityHashCode(layout.codegen.get()[3]))

    _after_collect(monkeypatch, record)
    analyzers = [Size(), Completeness("s"), Maximum("x"), PatternMatch("s", "^[ab]$")]
    plan = AnalysisPlan(analyzers)
    seen = _stream_batches(spark, tmp_path, plan)
    assert stages == ["KeptCodegen", "KeptCodegen"]  # the two reused batches (the first selects as usual)
    assert kept[0] == kept[1]  # one generated source, kept
    schema = "g INT, s STRING, x DOUBLE"
    batches = [[(1, "a", 1.0), (1, None, 5.0)], [(2, "b", -1.0)], [(2, None, 7.0), (3, "c", 2.0)]]
    expected = [
        _run(AnalysisPlan(analyzers), spark.createDataFrame(rows, schema), [F.col("g")]) for rows in batches
    ]
    assert sorted(map(repr, (r for r, _ in seen))) == sorted(map(repr, expected))


def test_a_projection_with_a_subquery_generates_its_source_for_every_batch(spark, tmp_path, monkeypatch):
    """A scalar subquery's result is a literal of the generated source: such a stage is never
    run from a kept source (each batch's subquery result is its own)."""
    from tests.unit.sources.conftest import require_jvm_decoder

    require_jvm_decoder(spark)
    stages: list[str] = []
    _after_collect(monkeypatch, lambda df: stages.append(_stage_name(df)))
    where = "x > (SELECT max(id) - 5 FROM range(3))"  # x > -3
    # adaptive execution wraps a plan with a subquery (no codegen stage on top): off, the stage
    # is the projection's own
    adaptive = spark.conf.get("spark.sql.adaptive.enabled")
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        seen = _stream_batches(spark, tmp_path, AnalysisPlan([Size(where=where)]))
    finally:
        spark.conf.set("spark.sql.adaptive.enabled", adaptive)
    assert stages == ["WholeStageCodegenExec", "WholeStageCodegenExec"]
    expected = [{(1,): [2.0]}, {(2,): [1.0]}, {(2,): [1.0], (3,): [1.0]}]
    assert sorted(map(repr, (r for r, _ in seen))) == sorted(map(repr, expected))
