"""bench/streaming's per-round ratio: each round's runs are paired, not pooled."""

from __future__ import annotations

import pytest

from tests.unit.bench.bench_modules import load_bench_module

run = load_bench_module("streaming/run.py", "bench_streaming_run_under_test")


def _run(*ms: int) -> dict[str, object]:
    # the first batch of a run is its warm-up and is left out of every median
    return {"progress": [{"durationMs": {"triggerExecution": t}} for t in (5000, *ms)]}


def test_the_paired_ratio_is_the_median_of_each_rounds_ratio() -> None:
    # rounds on a machine of three speeds; streamdq is 1.1x arrow in each
    streamdq = [_run(110, 120, 100), _run(220, 220, 220), _run(330, 330, 320)]
    arrow = [_run(100, 100, 100), _run(200, 200, 200), _run(300, 300, 300)]
    assert run.paired_ratio(streamdq, arrow) == pytest.approx(1.1)


def test_one_odd_round_moves_the_pooled_ratio_not_the_paired_one() -> None:
    # round 2: streamdq's run met a fast machine, arrow's a slow one (0.37x); rounds 1 and 3
    # say 1.1x. Pooled, the fast 110 ms run sets streamdq's median and the slow 300 ms runs
    # set arrow's: 0.37. Paired, the odd round is one vote of three
    streamdq = [_run(110), _run(110), _run(330)]
    arrow = [_run(100), _run(300), _run(300)]
    assert run.paired_ratio(streamdq, arrow) == pytest.approx(1.1)
    assert run._median_ms(streamdq) / run._median_ms(arrow) == pytest.approx(110 / 300)


def test_rounds_must_pair_one_to_one() -> None:
    with pytest.raises(ValueError, match="2 runs against 3"):
        run.paired_ratio([_run(1), _run(1)], [_run(1), _run(1), _run(1)])
