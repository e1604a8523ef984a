"""BatchJudge: checks and detectors judging the metrics of one scope of one microbatch.

Runs on the driver inside the foreachBatch handler; pure Python, no Spark. Each call judges
the constraints of one scope (batch, a closed window, or total) and returns the check results
and the anomalies its ``has_no_anomalies`` detectors flagged. Detector states live in one
``AnomalyEvaluator`` per query; the handler persists ``dump_states()`` with every batch commit
and restores them with ``load_states()`` after a restart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.metric import Metric
from streamdq.checks.pass_policy import PassPolicy
from streamdq.checks.result_document import build_document, check_outcomes
from streamdq.engine.measures import window_label
from streamdq.measure_result import MeasureResult
from streamdq.report import Anomaly, CheckResult, Window
from streamdq.result_document import MeasureCheckPass


class BatchJudge:
    """What judges metrics: checks (with scopes) and the detectors of ``has_no_anomalies``.

    Pure Python, no Spark. Detector states live in ``evaluator`` (one per query), are
    persisted with every batch commit and restored on restart; a replayed point leaves them
    unchanged (detectors are replay-safe on ``seq``).
    """

    def __init__(
        self,
        checks: Sequence[Any],
        dataset: str = "",
        evaluator: Any = None,
        *,
        pass_policy: PassPolicy | None = None,
        history: Any = None,
        measure_names: Sequence[str] = (),
    ) -> None:
        self.checks = list(checks)
        self.dataset = dataset
        self.pass_policy = pass_policy or PassPolicy()
        # ExpressionHistory (expression_history.py): what expressions' previous_values read
        self.history = history
        self.measure_names = tuple(measure_names)  # declared measures (some exist per batch only)
        if evaluator is None:
            from streamdq.detectors.evaluator import AnomalyEvaluator

            evaluator = AnomalyEvaluator()
        self.evaluator = evaluator

    def analyzers(self) -> list[Analyzer]:
        out: list[Analyzer] = []
        for check in self.checks:
            out.extend(check.required_analyzers())
        return list(dict.fromkeys(out))

    def evaluate(
        self,
        metrics: Mapping[Analyzer, Metric],
        scope: str,
        window: Window | None = None,
        *,
        seq: int = 0,
        time: datetime | None = None,
        measures: Sequence[MeasureResult] = (),
    ) -> tuple[list[CheckResult], list[Anomaly]]:
        """Check results at ``scope`` and the anomalies the detectors flagged for this point.

        ``seq`` is the point's position in its series (batch id for batch/total scope, window
        index for windows); ``time`` its timestamp (seasonal detectors use it). ``measures``:
        the SQL measures of this scope (and window), which expressions read, with the history
        their ``previous_values`` name (read from the store now, before this batch commits).
        """
        context = {
            "seq": seq,
            "time": time if time is not None else float(seq),
            "dataset": self.dataset,
            "anomaly_evaluator": self.evaluator,
            "measures": {m.name: m for m in measures},
            "declared_measures": self.measure_names,
            "history": self.history.prefetch(scope) if self.history else {},
        }
        results: list[CheckResult] = []
        anomalies: list[Anomaly] = []
        for check in self.checks:
            result = check.evaluate(metrics, scope=scope, window=window, context=context)
            if result is not None and result.constraint_results:
                results.append(result)
                anomalies.extend(self._anomalies(check, result, scope, window))
        if self.history:
            self.history.record(scope, measures, metrics)  # the next judgement's history
        return results, anomalies

    def document(
        self,
        scope: str,
        results: Sequence[CheckResult],
        measures: Sequence[MeasureResult] = (),
        window: Window | None = None,
    ) -> MeasureCheckPass | None:
        """The measure/check/pass document of one judgement (None when it judged no check and
        no measure): ``pass`` by the dataset's pass policy over the checks judged here."""
        outcomes = check_outcomes(self.checks, results)
        if not outcomes and not measures:
            return None
        label = window_label(window.start, window.end) if window is not None else None
        return build_document(self.checks, results, measures, self.pass_policy, scope=scope, window=label)

    def _anomalies(self, check: Any, result: CheckResult, scope: str, window: Window | None) -> list[Anomaly]:
        """The anomalies in the verdicts the detectors returned with ``has_no_anomalies`` results."""
        anomaly_constraints = {
            c.constraint_id(check.description): c
            for c in check.constraints_at(scope)
            if c.kind == "has_no_anomalies"
        }
        out = []
        for r in result.constraint_results:
            c = anomaly_constraints.get(r.constraint_id)
            verdict, metric = r.verdict, r.metric
            if (
                c is None
                or verdict is None
                or not verdict.anomalous
                or metric is None
                or metric.scalar is None
            ):
                continue
            out.append(
                Anomaly(
                    detector=str(c.params["detector"].get("type", "detector")),
                    metric=metric,
                    scope=scope,
                    value=metric.scalar,
                    lower=_finite(verdict.lower),
                    upper=_finite(verdict.upper),
                    score=_finite(verdict.score),
                    window=window,
                    constraint_id=c.constraint_id(check.description),
                    message=verdict.message,
                )
            )
        return out

    def dump_states(self) -> dict[str, bytes]:
        return dict(self.evaluator.dump())

    def load_states(self, blobs: Mapping[str, bytes]) -> None:
        from streamdq.detectors.evaluator import AnomalyEvaluator

        self.evaluator.states = AnomalyEvaluator.load(blobs).states


def _finite(value: float | None) -> float | None:
    if value is None or value != value or value in (float("inf"), float("-inf")):
        return None
    return float(value)
