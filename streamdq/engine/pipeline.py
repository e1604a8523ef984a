"""The pipelined tail: one microbatch's judge, commit and emit run while Spark plans the next.

Runs on the driver, beside Spark's stream thread. ``BatchHandler`` (``pipelined=True``, set by
the runner from ``state.pipelined_commit: true``; off by default) computes a microbatch's
states inside ``foreachBatch`` (that needs the batch's frame), hands the rest (measure, judge,
alert policy, commit, emit) to this pipeline, and returns, so that Spark writes its commit log
and plans the next trigger while the tail runs.

Contract:

* One tail at a time, in batch order: ``submit`` takes a batch's tail only once the one before
  has finished (the handler waits with ``wait`` before it computes the next batch, because the
  next batch's compute moves the running states the tail reads).
* A tail that raised is not lost: the next ``wait`` (the next batch, the runner's stop) raises
  :class:`PipelinedBatchFailed` naming the batch, with the tail's error as its ``__cause__``. The
  batch is then not in the state store while Spark's commit log may already hold it: the runner
  rewinds the checkpoint to the store before the query starts again (``checkpoint_log.rewind``),
  so that Spark runs it again with the same offsets. Exactly-once holds across crashes that way.
* Nothing submitted: ``wait`` returns at once. ``pending`` is the batch id of the tail not yet
  waited for (None when there is none).

>>> pipe = TailPipeline()
>>> pipe.submit(7, lambda: 42)
>>> pipe.pending
7
>>> pipe.wait()
42
>>> pipe.pending is None
True
>>> def broken() -> None:
...     raise OSError("disk full")
>>> pipe.submit(8, broken)
>>> try:
...     pipe.wait()
... except PipelinedBatchFailed as exc:
...     print(exc.batch_id, repr(exc.__cause__))
8 OSError('disk full')
>>> pipe.close()
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from streamdq.errors import StreamdqError


class PipelinedBatchFailed(StreamdqError, RuntimeError):
    """The pipelined tail (judge, commit, emit) of batch ``batch_id`` raised; the error is the
    ``__cause__``. The batch is not committed to the state store."""

    def __init__(self, batch_id: int, cause: BaseException) -> None:
        super().__init__(f"batch {batch_id}: its commit failed after foreachBatch returned: {cause!r}")
        self.batch_id = batch_id
        self.cause = cause


class TailPipeline:
    """At most one batch's tail in flight, on one thread (``streamdq-tail``)."""

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._pending: tuple[int, Future[Any]] | None = None

    @property
    def pending(self) -> int | None:
        """The batch id of the tail submitted and not yet waited for."""
        return self._pending[0] if self._pending is not None else None

    def submit(self, batch_id: int, tail: Callable[[], Any]) -> None:
        """Run ``tail()`` for ``batch_id`` in the background; the previous tail must have been
        waited for (``wait``)."""
        if self._pending is not None:
            raise RuntimeError(f"batch {batch_id}: the tail of batch {self._pending[0]} was not waited for")
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="streamdq-tail")
        self._pending = (batch_id, self._pool.submit(tail))

    def wait(self, timeout: float | None = None) -> Any:
        """Wait for the pending tail; its result (None when nothing is pending).

        Raises ``PipelinedBatchFailed`` if the tail raised, and ``TimeoutError`` (the tail
        still pending) if it did not finish within ``timeout`` seconds."""
        pending = self._pending
        if pending is None:
            return None
        batch_id, future = pending
        try:
            result = future.result(timeout)
        except TimeoutError:
            raise
        except BaseException as exc:
            self._pending = None
            raise PipelinedBatchFailed(batch_id, exc) from exc
        self._pending = None
        return result

    def close(self) -> None:
        """Stop the tail thread (after the pending tail, if any, has run)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
