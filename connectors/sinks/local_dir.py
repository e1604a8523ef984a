"""Local directories for the files a job keeps on the driver (sink outboxes), next to object stores.

The state tables (delta-rs) and Spark's checkpoint accept object-store URIs (``s3://``,
``s3a://``, ``gs://``, ``abfss://`` ...). The sinks' own files cannot live there: the Kafka
alert outbox is a SQLite file and the JSON-lines sink appends to a local file. Handing such
a URI to ``pathlib`` silently makes a local folder named ``s3a:/bucket/...`` in the working
directory, so every such path goes through this module:

* ``is_uri(path)``: True for ``scheme://...`` (a ``file://`` URI included) and the
  ``scheme:/...`` that ``pathlib`` makes of it.
* ``local_path(path)``: a local path as is, a ``file://`` URI as its path, and for any other
  scheme None.
* ``local_state_dir(state_path, checkpoint, dataset)``: the driver-local directory for the
  job's own files. In order: ``$STREAMDQ_LOCAL_DIR`` if set; the state path if it is local;
  ``<checkpoint>/streamdq`` if the checkpoint is local; else
  ``~/.streamdq/<dataset>-<8 hex digits of the checkpoint URI>`` (stable per checkpoint, so a
  restarted driver on the same host or volume finds its outbox). On Kubernetes mount a volume
  and point ``STREAMDQ_LOCAL_DIR`` at it (docs/deploy.md).
* ``require_local(path, what)``: the local form of ``path`` or a ``ValueError`` naming it.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

from streamdq.errors import InvalidArgument

ENV = "STREAMDQ_LOCAL_DIR"
# ``scheme:/`` too: ``pathlib`` folds ``s3a://b/x`` into ``s3a:/b/x``, still not a local path
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:/")


def is_uri(path: str | os.PathLike[str]) -> bool:
    """True for ``scheme://...`` (``file://`` included) and its ``pathlib``-folded ``scheme:/...``."""
    return bool(_SCHEME.match(os.fspath(path)))


def local_path(path: str | os.PathLike[str]) -> str | None:
    """The local filesystem path of ``path``; None for an object-store (non-``file``) URI."""
    text = os.fspath(path)
    if not is_uri(text):
        return text
    parsed = urlparse(text)
    if parsed.scheme.lower() == "file" and parsed.netloc in ("", "localhost"):
        return unquote(parsed.path)
    return None


def require_local(path: str | os.PathLike[str], what: str) -> str:
    """``path`` as a local path, or ValueError: ``what`` cannot be written to an object store."""
    local = local_path(path)
    if local is None:
        raise InvalidArgument(
            f"{what}: {os.fspath(path)!r} is an object-store URI; this file is written on the driver's "
            f"local disk: give a local path (or set {ENV})"
        )
    return local


def local_state_dir(state_path: str | None, checkpoint: str, dataset: str) -> str:
    """The driver-local directory for the job's own files (see the module docstring)."""
    env = os.environ.get(ENV)
    if env:
        return require_local(env, ENV)
    if state_path:
        local = local_path(state_path)
        if local is not None:
            return local
    local_checkpoint = local_path(checkpoint)
    if local_checkpoint is not None:
        return str(Path(local_checkpoint) / "streamdq")
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", dataset) or "streamdq"
    digest = hashlib.sha256(checkpoint.encode()).hexdigest()[:8]
    return str(Path.home() / ".streamdq" / f"{safe}-{digest}")
