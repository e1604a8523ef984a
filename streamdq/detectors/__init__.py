"""Online anomaly detectors on metric series (DESIGN.md section 3, "Detector").

Every detector is a frozen config dataclass with explicit JSON state: ``initial_state()``,
``update(state, point) -> (state, verdict)`` and Deequ's batch form ``detect(series, start, end)``.
Build one from YAML/JSON with ``detector_from_spec({"type": ..., ...})``. docs/detectors.md has the
catalogue. Importing registers nothing: ``register_builtins()`` (``streamdq.detectors.register``) adds
the built-in types, and the look-ups re-exported here call it first.

>>> detector_from_spec({"type": "simple_threshold", "upper_bound": 1.0}).upper_bound
1.0
"""

from streamdq.detectors.absolute_change import AbsoluteChange
from streamdq.detectors.base import (
    MAX_DOUBLE,
    MIN_DOUBLE,
    Detector,
    DetectorState,
    Point,
    Verdict,
    dump_state,
    load_state,
    unregister_detector,
)
from streamdq.detectors.batch_normal import BatchNormal
from streamdq.detectors.evaluator import AnomalyEvaluator
from streamdq.detectors.holt_winters import HoltWinters
from streamdq.detectors.online_normal import OnlineNormal
from streamdq.detectors.register import (
    detector_from_spec,
    detector_types,
    register_builtins,
    register_detector,
    registered_detectors,
)
from streamdq.detectors.relative_rate_of_change import RelativeRateOfChange
from streamdq.detectors.river_adwin import Adwin
from streamdq.detectors.river_page_hinkley import PageHinkley
from streamdq.detectors.river_predictive import RiverPredictive
from streamdq.detectors.seasonal_buckets import SeasonalBuckets
from streamdq.detectors.simple_threshold import SimpleThreshold

__all__ = [
    "MAX_DOUBLE",
    "MIN_DOUBLE",
    "AbsoluteChange",
    "Adwin",
    "AnomalyEvaluator",
    "BatchNormal",
    "Detector",
    "DetectorState",
    "HoltWinters",
    "OnlineNormal",
    "PageHinkley",
    "Point",
    "RelativeRateOfChange",
    "RiverPredictive",
    "SeasonalBuckets",
    "SimpleThreshold",
    "Verdict",
    "detector_from_spec",
    "detector_types",
    "dump_state",
    "load_state",
    "register_builtins",
    "register_detector",
    "registered_detectors",
    "unregister_detector",
]
