"""metric(merge(s(A), s(B))) == metric(s(A ++ B)) for EVERY registered analyzer (the examples of
``test_path_equivalence``, which fails when a registered analyzer has none), on the hostile
rows split in two. Small inputs keep the sketches exact, so sketch states must agree too.

The one analyzer that is not mergeable by design, ExactQuantile, must instead say so: a state
merged from two non-empty parts gives a Failure naming the reason, never a wrong value.
"""

from __future__ import annotations

from typing import Any

import pytest

from streamdq import analyze
from streamdq.analyzers import ExactQuantile
from tests.laws.test_path_equivalence import EXAMPLES, ROWS, SCHEMA, _same

SPLIT = 6


@pytest.fixture(scope="module")
def contexts(spark: Any) -> tuple[Any, Any, Any]:
    analyzers = [a for group in EXAMPLES.values() for a in group]
    frames = [spark.createDataFrame(rows, SCHEMA) for rows in (ROWS[:SPLIT], ROWS[SPLIT:], ROWS)]
    a, b, whole = (analyze(df, analyzers, max_groups=100) for df in frames)
    return a, b, whole


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_metric_of_merge_equals_metric_of_concatenation(contexts: Any, name: str) -> None:
    a, b, whole = contexts
    for analyzer in EXAMPLES[name]:
        expected = whole.metric(analyzer)
        if analyzer not in a.states or analyzer not in b.states:
            assert not expected.ok, (analyzer, expected)  # a precondition failed everywhere
            continue
        merged = analyzer.metric(a.states[analyzer].merge(b.states[analyzer]))
        if isinstance(analyzer, ExactQuantile):
            parts = [analyzer.metric(c.states[analyzer]) for c in (a, b)]
            if all(p.ok for p in parts):
                assert not merged.ok and "not mergeable" in (merged.failure or ""), merged
                continue
        assert merged.ok == expected.ok, (analyzer, merged, expected)
        if expected.ok:
            assert _same(merged.value, expected.value), (analyzer, merged.value, expected.value)
        else:
            assert merged.empty == expected.empty, (analyzer, merged, expected)
