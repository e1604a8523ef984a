"""Contract kit: the laws every state, aggregation, detector, constraint kind, sink and store keeps.

* ``check_aggregation(cls)``: an ``Aggregation`` subclass, driven by its
  ``_unit_test_params()`` (river's ``check_estimator`` style): merge laws, metric
  homomorphism (exact) or error bounds (approximate), serialization round trips.
* ``check_state(cls, states)``: any ``State`` class on sample states: identity, commutativity,
  associativity, tag + version + stable bytes.
* ``check_detector(cls)``: a detector class, from its ``_unit_test_params()``: spec round trip,
  purity, replay safety from restored bytes, warm-up, missing and non-finite values, empty series
  (``detector_checks``).
* ``check_constraint_kind(name, cases)``: a registered constraint kind on ``KindCase`` values:
  YAML/JSON/flat/check-file round trips with a stable id, evaluation without error
  (``constraint_checks``).
* ``streamdq.testing.store_checks.check_store(cls)``: a ``StateStore`` class from its
  ``_unit_test_params(root)``: commit then restore, exactly once per batch id, ordering (not
  imported here: it loads the Delta store).
* ``streamdq.testing.sink_checks.check_sink(cls, targets)``: a sink class from its
  ``_unit_test_params(targets)``: table-driven config laws (the ``ConfigError`` key is the bad
  key's path), an empty alert list delivers no alert, a replayed batch is not delivered again.

Every ``_unit_test_params`` must be defined by the class itself (an inherited one does not count),
and the suites find the classes through the registries or by walking the packages
(``laws.classes_in``): a new class cannot skip its laws.

Users run it in their own tests (``from streamdq.testing import check_aggregation``); the suite
runs it on every registered aggregation and state (tests/laws/test_contract_kit.py), detector,
constraint kind, store and sink (tests/laws/test_*_conformance.py). No Spark.
"""

from streamdq.testing.aggregations import batches, check_aggregation
from streamdq.testing.constraint_checks import KindCase, check_constraint_kind
from streamdq.testing.detector_checks import check_detector
from streamdq.testing.laws import ContractReport, ContractViolation
from streamdq.testing.states import check_state

__all__ = [
    "ContractReport",
    "ContractViolation",
    "KindCase",
    "batches",
    "check_aggregation",
    "check_constraint_kind",
    "check_detector",
    "check_state",
]
