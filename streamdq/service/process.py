"""``streamdq serve`` as a child process (``make demo`` starts the console beside the job).

``start_console(state)`` runs ``python -m streamdq.cli serve --state STATE --port 0`` (loopback,
a free port), waits for the URL it prints and returns a ``ConsoleProcess``; ``stop()`` ends it.
It returns None, saying why on stderr, when the server does not come up (e.g. the ``serve``
extra is not installed): the demo goes on without its console.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ConsoleProcess:
    url: str
    process: subprocess.Popen[str]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()


def start_console(state: Path | str, timeout: float = 60.0) -> ConsoleProcess | None:
    cmd = [sys.executable, "-m", "streamdq.cli", "serve", "--state", str(state), "--port", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    found: dict[str, str] = {}
    seen: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:  # keeps draining the pipe after the URL, so the child never blocks
            if not ready.is_set():
                seen.append(line)
                m = re.search(r"console at (http://\S+/)", line)
                if m:
                    found["url"] = m.group(1)
                    ready.set()
        ready.set()

    threading.Thread(target=read, name="streamdq-console", daemon=True).start()
    ready.wait(timeout)
    if "url" not in found:
        if proc.poll() is None:
            proc.kill()
        print(f"streamdq: the web console did not start: {''.join(seen).strip()}", file=sys.stderr)
        return None
    return ConsoleProcess(found["url"], proc)
