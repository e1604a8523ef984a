"""The ``streamdq_generator`` Spark source through read_source: deterministic batches by offset,
decoded rows, incidents visible as drift facts, and continuation after a restart from the checkpoint."""

from __future__ import annotations

from streamdq.connectors.sources import ERROR_COL, UNKNOWN_FIELDS_COL, read_source
from streamdq.connectors.sources.generator import GeneratorConfig, Incident, generate, parse_start_ms

START = "2026-11-22T00:00:00Z"
SPEC = {
    "type": "generator",
    "seed": 11,
    "rows_per_second": 100,
    "start": START,
    "rows_per_batch": 150,
    "max_rows": 450,
    "incidents": [{"kind": "schema_drift", "drift": "new_field", "at": 2, "duration": 1}],
}


def _run(spark, spec, checkpoint):
    batches: dict[int, list] = {}

    def handler(df, batch_id):
        batches[batch_id] = sorted(df.collect(), key=lambda r: r["_streamdq_offset"])

    q = (
        read_source(spark, spec)
        .writeStream.foreachBatch(handler)
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="0 seconds")
        .start()
    )
    try:
        q.processAllAvailable()
    finally:
        q.stop()
    return batches


def test_deterministic_decoded_batches_and_restart_from_checkpoint(spark, tmp_path):
    # Two queries on one checkpoint (Python data sources are slow to start on a busy machine):
    # the first may read 300 indices, the restarted one continues up to 450.
    chk = tmp_path / "chk"
    first = _run(spark, {**SPEC, "max_rows": 300}, chk)
    second = _run(spark, SPEC, chk)
    sizes = [len(b[k]) for b in (first, second) for k in sorted(b) if b[k]]
    assert sizes == [150, 150, 150]
    rows = [r for b in (first, second) for k in sorted(b) for r in b[k]]
    assert [r["_streamdq_offset"] for r in rows] == list(range(450))  # each index once, in order
    cfg = GeneratorConfig(
        seed=11,
        rows_per_second=100,
        start_ms=parse_start_ms(START),
        incidents=(Incident(kind="schema_drift", start=2, duration=1, drift="new_field"),),
    )
    expected = [rec for _, rec in generate(cfg, 0, 450)]
    assert [r["order_id"] for r in rows] == [e["order_id"] for e in expected]
    assert [r["amount"] for r in rows] == [e["amount"] for e in expected]
    assert [r["ts"].isoformat(timespec="milliseconds") + "Z" for r in rows] == [e["ts"] for e in expected]
    assert all(r[ERROR_COL] is None for r in rows)
    drifted = [r["_streamdq_offset"] for r in rows if r[UNKNOWN_FIELDS_COL]]
    assert drifted == list(range(200, 300))  # seconds 2..3 at 100 rows/s
