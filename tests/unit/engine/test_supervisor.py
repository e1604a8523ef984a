"""The supervisor's decisions without Spark: classification, backoff, budget, poison batches.

A scripted runner stands in for ``StreamRunner`` (the supervisor's only collaborator); each
start plays the next scripted run: a failure (with the batch whose handler raised) or a run
until stopped. The real query under the supervisor is covered by
tests/integration/test_chaos.py.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import pytest
from streamdq.connectors.sinks.prometheus_supervisor import SupervisorCollector

from streamdq.engine.config import SupervisionConfig, load_run_config, supervision_config
from streamdq.engine.supervisor import (
    RestartBudget,
    Supervisor,
    backoff_delay,
    batch_offsets,
    classify,
)
from streamdq.errors import ConfigError
from streamdq.supervision import SupervisorStatus

WORKER = (
    "org.apache.spark.SparkException: Python worker failed to connect back.\n"
    "Caused by: java.net.SocketTimeoutException: Timed out while waiting for the Python worker to connect back"
)
KILLED = "org.apache.spark.SparkException: Python worker exited unexpectedly (crashed)"
BROKER = "RuntimeError: kafka source: no progress reading orders-0 [10, 20) for 300s (stuck at offset 12)"
PY4J = "py4j.protocol.Py4JNetworkError: Answer from Java side is empty"
POISON = (
    "[FOREACH_BATCH_USER_FUNCTION_ERROR] An error occurred in the user provided function.\n"
    'Traceback (most recent call last):\n  File "x.py", line 3, in f\n'
    "OverflowError: date value out of range"
)
CONFIG = "pyspark.errors.exceptions.captured.AnalysisException: [UNRESOLVED_COLUMN.WITH_SUGGESTION] `amout`"


@pytest.mark.parametrize(
    "text,kind",
    [
        (WORKER, "worker"),
        (KILLED, "worker_killed"),
        (BROKER, "broker"),
        (PY4J, "network"),
        (POISON, "batch"),
        (CONFIG, "config"),
        ("streamdq.errors.ConfigError: source.topic: is required", "config"),
    ],
)
def test_classify(text, kind):
    failure = classify(text, batch_id=4)
    assert failure.kind == kind
    assert failure.batch_id == 4
    assert failure.transient is (kind in ("worker", "worker_killed", "broker", "network"))


def test_classify_names_the_telling_line_and_the_users_stop():
    assert classify(POISON).message == "OverflowError: date value out of range"
    assert classify(ConnectionResetError("peer")).kind == "network"
    assert classify(RuntimeError(KILLED)).kind == "worker_killed"
    assert classify(RuntimeError("anything"), stopping=True).kind == "interrupted"
    assert classify(KeyboardInterrupt()).kind == "interrupted"


def test_the_handlers_own_error_names_a_batch_failure():
    from streamdq.engine.faults import InjectedFailure

    query_error = RuntimeError("[FOREACH_BATCH_USER_FUNCTION_ERROR] An error occurred\n\tat org.apache.X")
    failure = classify(query_error, batch_id=3, cause=InjectedFailure("injected failure: batch 3"))
    assert (failure.kind, failure.batch_id) == ("batch", 3)
    assert failure.message == "InjectedFailure: injected failure: batch 3"
    # a transient cause inside the handler stays transient
    assert classify(query_error, batch_id=3, cause=RuntimeError(KILLED)).kind == "worker_killed"


def test_backoff_doubles_with_jitter_up_to_the_cap():
    rng = random.Random(3)
    for attempt, top in ((1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (8, 10.0)):
        delays = [backoff_delay(attempt, 1.0, 10.0, rng) for _ in range(200)]
        assert min(delays) >= top / 2 and max(delays) <= top
        assert max(delays) - min(delays) > top / 10  # jittered, not a fixed wait


def test_restart_budget_is_a_sliding_window():
    budget = RestartBudget(2, window=10.0)
    assert budget.allows(0.0)
    budget.spend(0.0)
    budget.spend(1.0)
    assert not budget.allows(5.0)
    assert budget.allows(10.5)  # the first restart left the window


# -- a scripted runner -------------------------------------------------------------------
@dataclass
class _Config:
    dataset: str = "orders"
    checkpoint: str = "/nonexistent"
    supervision: SupervisionConfig = field(default_factory=SupervisionConfig)


class _Query:
    def __init__(self, run: Any, clock: _Clock) -> None:
        self.run = run  # ("fail", text, batch_id, batches_done) or ("run",)
        self.clock = clock
        self.isActive = True
        self.stopped = False

    def awaitTermination(self, timeout: float) -> bool:
        self.clock.now += timeout
        if self.run[0] == "fail":
            self.isActive = False
            raise RuntimeError(self.run[1])
        if self.run[0] in ("finish", "tail_fails"):
            self.isActive = False
            return True
        return False

    def exception(self) -> Any:
        return RuntimeError(self.run[1]) if self.run[0] == "fail" else None

    def stop(self) -> None:
        self.stopped = True
        self.isActive = False


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


class _Runner:
    def __init__(self, runs: list[Any], supervision: SupervisionConfig) -> None:
        self.config = _Config(supervision=supervision)
        self.runs = list(runs)
        self.clock = _Clock()
        self.poison: dict[int, str] = {}
        self.statuses: list[SupervisorStatus] = []
        self.starts = 0
        self.query: _Query | None = None
        self.poison_at_start: list[dict[int, str]] = []

    def start(self) -> _Query:
        self.starts += 1
        self.poison_at_start.append(dict(self.poison))
        run = self.runs.pop(0)
        if run[0] == "start_fails":
            raise RuntimeError(run[1])
        self.query = _Query(run, self.clock)
        return self.query

    @property
    def batches_completed(self) -> int:
        return self.query.run[3] if self.query and self.query.run[0] == "fail" else 0

    @property
    def failed_batch(self) -> tuple[int, BaseException] | None:
        if self.query and self.query.run[0] in ("fail", "tail_fails") and self.query.run[2] is not None:
            return (self.query.run[2], RuntimeError(self.query.run[1]))
        return None

    @property
    def tail_failure(self) -> BaseException | None:
        if self.query and self.query.run[0] == "tail_fails":
            return RuntimeError(self.query.run[1])
        return None

    def mark_poison(self, batch_id: int, error: str) -> None:
        self.poison[batch_id] = error

    def publish_status(self, status: SupervisorStatus) -> None:
        self.statuses.append(status)

    def stop_query(self) -> None:
        if self.query is not None:
            self.query.stop()


def _supervise(runs, stop_after: float = 1e9, **supervision: Any):
    cfg = SupervisionConfig(**{"backoff_initial": 1.0, "backoff_max": 8.0, **supervision})
    runner = _Runner(runs, cfg)
    lines: list[str] = []
    sup = Supervisor(
        runner,  # type: ignore[arg-type]
        say=lines.append,
        clock=runner.clock,
        sleep=runner.clock.sleep,
        rng=random.Random(1),
    )
    outcome = sup.run(lambda: runner.clock.now >= stop_after)
    return outcome, runner, lines


def test_transient_failures_are_restarted_with_growing_backoff():
    runs = [("fail", WORKER, None, 0), ("start_fails", PY4J), ("fail", BROKER, 7, 0), ("run",)]
    outcome, runner, lines = _supervise(runs, stop_after=100)
    assert outcome.exit_code == 0 and outcome.state == "stopped"
    assert runner.starts == 4
    assert outcome.restarts == 3
    waits = [float(ln.rsplit(" in ", 1)[1].split()[0]) for ln in lines if "restart" in ln]
    assert len(waits) == 3
    assert 0.5 <= waits[0] <= 1.0 and 1.0 <= waits[1] <= 2.0 and 2.0 <= waits[2] <= 4.0
    assert any("the query failed (worker)" in ln for ln in lines)
    final = runner.statuses[-1]
    assert final.state == "stopped"
    assert dict(final.restarts) == {"worker": 1, "network": 1, "broker": 1}
    assert final.last_failure == "broker"
    states = [s.state for s in runner.statuses]
    assert states[:3] == ["starting", "running", "backoff"]


def test_progress_resets_the_backoff():
    runs = [("fail", WORKER, None, 0), ("fail", WORKER, None, 5), ("run",)]
    _, _, lines = _supervise(runs, stop_after=60)
    waits = [float(ln.rsplit(" in ", 1)[1].split()[0]) for ln in lines if "restart" in ln]
    assert waits[1] <= 1.0  # batches completed before the second failure: back to backoff_initial


def test_config_errors_and_the_users_stop_are_never_retried():
    outcome, runner, _ = _supervise([("fail", CONFIG, 0, 0), ("run",)])
    assert outcome.exit_code == 1 and "not retried" in (outcome.message or "")
    assert runner.starts == 1
    assert runner.statuses[-1].state == "failed"
    outcome, runner, _ = _supervise([("run",)], stop_after=5)
    assert outcome.exit_code == 0 and runner.starts == 1 and runner.query is not None and runner.query.stopped


def test_the_budget_ends_a_crash_loop():
    runs = [("fail", WORKER, None, 0)] * 10
    outcome, runner, _ = _supervise(runs, max_restarts=3, window=600.0)
    assert outcome.exit_code == 1
    assert runner.starts == 4  # the first start and three restarts
    assert "gave up after 3 restarts" in (outcome.message or "")


def test_supervision_off_fails_at_the_first_failure():
    outcome, runner, _ = _supervise([("fail", WORKER, None, 0), ("run",)], enabled=False)
    assert outcome.exit_code == 1 and runner.starts == 1


def test_a_poison_batch_is_quarantined_and_the_stream_moves_on():
    runs = [("fail", POISON, 12, 0)] * 3 + [("run",)]
    outcome, runner, lines = _supervise(runs, stop_after=100, poison_after=3)
    assert outcome.exit_code == 0
    assert runner.poison == {12: "OverflowError: date value out of range"}
    assert runner.poison_at_start[-1] == {12: "OverflowError: date value out of range"}
    assert runner.poison_at_start[2] == {}  # only after the third failure of batch 12
    assert dict(runner.statuses[-1].poison_batches) == {"quarantine": 1}
    assert any("batch 12" in ln and "poison batch" in ln for ln in lines)


def test_a_pipelined_tail_that_failed_after_the_last_batch_is_a_failure_of_that_batch():
    # an available_now query ends cleanly, but the last batch's commit (run after its
    # foreachBatch returned) failed: not a finished run, a batch failure to retry and poison
    runs = [("tail_fails", POISON, 7, 0)] * 2 + [("finish",)]
    outcome, runner, lines = _supervise(runs, stop_after=100, poison_after=2)
    assert outcome.exit_code == 0 and runner.starts == 3
    assert runner.poison == {7: "OverflowError: date value out of range"}
    assert any("the query failed in batch 7" in ln for ln in lines)
    outcome, runner, _ = _supervise([("finish",)])
    assert outcome.exit_code == 0 and runner.starts == 1


def test_transient_failures_do_not_make_a_batch_poison():
    runs = [("fail", BROKER, 12, 0)] * 4 + [("run",)]
    outcome, runner, _ = _supervise(runs, stop_after=200, poison_after=2)
    assert outcome.exit_code == 0 and runner.poison == {}


def test_a_poison_batch_stops_by_policy_naming_its_offsets(tmp_path):
    offsets = tmp_path / "offsets"
    offsets.mkdir()
    (offsets / "12").write_text('v1\n{"batchWatermarkMs":0}\n{"orders":{"0":40,"1":38}}\n')
    cfg = SupervisionConfig(poison="stop", poison_after=2, backoff_initial=0.1, backoff_max=0.1)
    runner = _Runner([("fail", POISON, 12, 0)] * 3, cfg)
    runner.config.checkpoint = str(tmp_path)
    sup = Supervisor(runner, say=lambda _: None, clock=runner.clock, sleep=runner.clock.sleep)  # type: ignore[arg-type]
    outcome = sup.run()
    assert outcome.exit_code == 1
    assert runner.starts == 2
    msg = outcome.message or ""
    assert "poison batch 12 (offsets to [" in msg and '{"0": 40, "1": 38}' in msg and "OverflowError" in msg
    assert dict(runner.statuses[-1].poison_batches) == {"stop": 1}


def test_batch_offsets_reads_the_checkpoint(tmp_path):
    (tmp_path / "offsets").mkdir()
    (tmp_path / "offsets" / "2").write_text('v1\n{"batchWatermarkMs":0}\n{"t":{"0":3}}\n')
    (tmp_path / "offsets" / "3").write_text('v1\n{"batchWatermarkMs":0}\n{"t":{"0":5}}\n')
    assert batch_offsets(str(tmp_path), 3) == 'from [{"t": {"0": 3}}] to [{"t": {"0": 5}}]'
    assert batch_offsets(str(tmp_path), 2) == 'to [{"t": {"0": 3}}]'
    assert batch_offsets(str(tmp_path), 4) is None


# -- config and the Prometheus series ------------------------------------------------------
def test_supervision_config_keys(tmp_path):
    cfg = supervision_config({"max_restarts": 3, "backoff_initial": "2s", "backoff_max": "1 minute"})
    assert (cfg.max_restarts, cfg.backoff_initial, cfg.backoff_max, cfg.poison) == (
        3,
        2.0,
        60.0,
        "quarantine",
    )
    assert supervision_config(False).enabled is False
    for bad, key in (
        ({"poison": "drop"}, "supervision.poison"),
        ({"backoff_initial": "5s", "backoff_max": "1s"}, "supervision.backoff_max"),
        ({"max_restarts": -1}, "supervision.max_restarts"),
        ({"poison_after": 0}, "supervision.poison_after"),
        ({"retries": 3}, "supervision.retries"),
        ("often", "supervision"),
    ):
        with pytest.raises(ConfigError) as err:
            supervision_config(bad)
        assert err.value.key == key
    path = tmp_path / "run.yaml"
    path.write_text(
        "dataset: d\nsource: {type: generator}\ncheckpoint: ./chk\nsupervision: {max_restarts: 2, poison: stop}\n"
    )
    loaded = load_run_config(str(path))
    assert loaded.supervision.max_restarts == 2 and loaded.supervision.poison == "stop"
    path.write_text("dataset: d\nsource: {type: generator}\ncheckpoint: ./chk\nsupervision: {poison: drop}\n")
    with pytest.raises(ConfigError) as err:
        load_run_config(str(path))
    assert "supervision.poison" in str(err.value) and str(path) in str(err.value)


def test_supervisor_series():
    from prometheus_client import CollectorRegistry, generate_latest

    collector = SupervisorCollector()
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    collector.update(
        SupervisorStatus(
            dataset="orders",
            state="backoff",
            restarts=(("broker", 2), ("worker", 1)),
            last_failure="broker",
            last_failure_time=1700000000.0,
            poison_batches=(("quarantine", 1),),
        )
    )
    text = generate_latest(registry).decode()
    assert 'streamdq_supervisor_state{dataset="orders",state="backoff"} 1.0' in text
    assert 'streamdq_supervisor_state{dataset="orders",state="running"} 0.0' in text
    assert 'streamdq_supervisor_restarts_total{dataset="orders",reason="broker"} 2.0' in text
    assert 'streamdq_supervisor_restarts_total{dataset="orders",reason="worker_killed"} 0.0' in text
    assert (
        'streamdq_supervisor_last_failure_timestamp_seconds{dataset="orders",reason="broker"} 1.7e+09' in text
    )
    assert 'streamdq_supervisor_poison_batches_total{action="quarantine",dataset="orders"} 1.0' in text
