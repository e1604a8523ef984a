"""SQL measure values as Prometheus samples: ``measure_samples(result)`` -> ``{key: float}``.

Used by the Prometheus sink (``prometheus.py``) for ``streamdq_measure{dataset,scope,measure,key}``;
runs on the driver, pure (no I/O). A ``single_value`` measure is one sample with key ``""`` (no
``key`` label in Prometheus); a ``list`` measure one per element, keyed by its index (``"0"``,
``"1"``, ...); a ``map`` measure one per key. Only numbers are samples: ints, floats and
decimals as floats, booleans as 1/0; a NULL, a string, a nested list or map, NaN or an infinity
is skipped. At most ``MAX_KEYS`` elements or keys of one measure are exported (the first in the
query's column order): the series count stays bounded by the configuration. A failed measure
(``failure`` set) has no sample.

>>> from streamdq.measure_result import MeasureResult
>>> measure_samples(MeasureResult("Null Count", "single_value", 100))
{'': 100.0}
>>> measure_samples(MeasureResult("counts", "map", {"c": 100, "cd": 10, "who": "x"}))
{'c': 100.0, 'cd': 10.0}
>>> measure_samples(MeasureResult("pair", "list", (100, None)))
{'0': 100.0}
>>> measure_samples(MeasureResult("bad", "single_value", None, failure="returned 2 rows"))
{}
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Mapping
from typing import Any

from streamdq.measure_result import MeasureResult

MAX_KEYS = 100
"""Elements of a list measure / keys of a map measure exported per measure and scope."""


def number(value: Any) -> float | None:
    """``value`` as a finite float (booleans 1/0), or None when it is not a finite number."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if not isinstance(value, int | float | decimal.Decimal):
        return None
    out = float(value)
    return out if math.isfinite(out) else None


def measure_samples(result: MeasureResult) -> dict[str, float]:
    """The numeric samples of one measure result, by ``key`` label (see the module docstring)."""
    if result.failure is not None:
        return {}
    value = result.value
    items: list[tuple[str, Any]]
    if isinstance(value, Mapping):
        items = [(str(k), v) for k, v in value.items()]
    elif isinstance(value, list | tuple):
        items = [(str(i), v) for i, v in enumerate(value)]
    else:
        items = [("", value)]
    out: dict[str, float] = {}
    for key, item in items[:MAX_KEYS]:
        sample = number(item)
        if sample is not None:
            out[key] = sample
    return out
