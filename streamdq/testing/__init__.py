"""Contract kit: the laws every state and aggregation class must keep, runnable on any class.

* ``check_aggregation(cls)``: an ``Aggregation`` subclass, driven by its
  ``_unit_test_params()`` (river's ``check_estimator`` style): merge laws, metric
  homomorphism (exact) or error bounds (approximate), serialization round trips.
* ``check_state(cls, states)``: any ``State`` class on sample states: identity, commutativity,
  associativity, tag + version + stable bytes.
* ``check_detector(cls)``: a detector class, from its ``_unit_test_params()``: spec round trip,
  purity, replay safety from restored bytes, warm-up, missing and non-finite values, empty series
  (``detector_checks``).

Users run it in their own tests (``from streamdq.testing import check_aggregation``); the suite
runs it on every registered aggregation and state (tests/laws/test_contract_kit.py). Pure Python
and pyarrow: no Spark.
"""

from streamdq.testing.aggregations import batches, check_aggregation
from streamdq.testing.detector_checks import check_detector
from streamdq.testing.laws import ContractReport, ContractViolation
from streamdq.testing.states import check_state

__all__ = [
    "ContractReport",
    "ContractViolation",
    "batches",
    "check_aggregation",
    "check_detector",
    "check_state",
]
