"""Helpers for analyzer unit tests: run analyzers through the real engine on tiny frames."""

from __future__ import annotations

import math
from typing import Any

from streamdq import analyze
from streamdq.analyzers import Analyzer, Metric


def metric_of(df: Any, analyzer: Analyzer) -> Metric:
    """The metric of one analyzer over ``df`` (one fused pass)."""
    return analyze(df, [analyzer]).metric(analyzer)


def metrics_of(df: Any, *analyzers: Analyzer) -> list[Metric]:
    ctx = analyze(df, list(analyzers))
    return [ctx.metric(a) for a in analyzers]


def value_of(df: Any, analyzer: Analyzer) -> Any:
    """The successful value of ``analyzer`` over ``df`` (fails the test on a failed metric)."""
    m = metric_of(df, analyzer)
    assert m.ok, f"{analyzer} failed: {m.failure}"
    return m.value


def assert_failed(m: Metric, *, contains: str = "", empty: bool | None = None) -> None:
    assert not m.ok, f"expected a failure, got value {m.value!r}"
    assert m.value is None
    assert contains.lower() in (m.failure or "").lower(), m.failure
    if empty is not None:
        assert m.empty is empty, (m.empty, m.failure)


def is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)
