"""Spark's checkpoint logs, read and rewound to the state store (the pipelined commit's recovery).

Runs on the driver, before a query starts from its checkpoint (``StreamRunner.start``).

Spark keeps two logs in a streaming query's checkpoint: ``offsets/<id>`` (written when batch
``id`` is planned: its end offsets) and ``commits/<id>`` (written when its ``foreachBatch``
returned). On a start, Spark reruns the newest planned batch if it has no commit entry, and
otherwise plans the next one.

With the pipelined commit (``pipeline.py``) ``foreachBatch`` returns before the batch is in
the state store, so a crash can leave Spark's commit log one batch ahead of the store. Spark
would then move on and the batch would never be stored. :func:`rewind` puts the logs back:
it deletes the commit entries of the batches the store lacks, and the offsets entries after
the first of them, so that Spark runs that batch again, with its own offsets (the same rows).
Batches the store has are never rewound; a store with no batch at all rewinds nothing (a new
store on an old checkpoint starts where the checkpoint is, as before).

Only a checkpoint on the local file system is read (a path, or a ``file:`` URI): the runner
turns the pipelined commit off for any other checkpoint.

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> for folder, ids in (("offsets", range(4)), ("commits", range(3))):
...     (root / folder).mkdir()
...     for i in ids:
...         _ = (root / folder / str(i)).write_text("v1")
>>> committed_batch(str(root))
2
>>> rewind(str(root), store_last=1)      # the store lacks batch 2: Spark runs it again
2
>>> sorted(p.name for p in (root / "commits").iterdir()), sorted(p.name for p in (root / "offsets").iterdir())
(['0', '1'], ['0', '1', '2'])
>>> rewind(str(root), store_last=1) is None   # nothing left to rewind
True
"""

from __future__ import annotations

import contextlib
import json
import logging
from pathlib import Path

log = logging.getLogger(__name__)


def local_path(checkpoint: str) -> Path | None:
    """The checkpoint's local path, or None for a checkpoint on another file system."""
    if checkpoint.startswith("file://"):
        return Path(checkpoint[len("file://") :])
    if checkpoint.startswith("file:"):
        return Path(checkpoint[len("file:") :])
    if "://" in checkpoint:
        return None
    return Path(checkpoint)


def checkpoint_query_id(checkpoint: str) -> str | None:
    """The query id Spark recorded in ``<checkpoint>/metadata`` (None before the first start, or
    for a checkpoint that is not local)."""
    root = local_path(checkpoint)
    if root is None:
        return None
    try:
        return str(json.loads((root / "metadata").read_text().splitlines()[0])["id"])
    except (OSError, ValueError, KeyError, IndexError):
        return None


def _batch_ids(folder: Path) -> list[int]:
    """The batch ids logged in ``folder`` (its files named by a number), ascending."""
    try:
        names = [p.name for p in folder.iterdir()]
    except OSError:
        return []
    return sorted(int(n) for n in names if n.isdigit())


def committed_batch(checkpoint: str) -> int | None:
    """The newest batch in Spark's commit log (None: none, or not a local checkpoint)."""
    root = local_path(checkpoint)
    if root is None:
        return None
    ids = _batch_ids(root / "commits")
    return ids[-1] if ids else None


def _remove(folder: Path, batch_id: int) -> None:
    """Delete a log entry and the checksum Hadoop's local file system keeps beside it."""
    for name in (str(batch_id), f".{batch_id}.crc"):
        with contextlib.suppress(FileNotFoundError):
            (folder / name).unlink()


def rewind(checkpoint: str, store_last: int | None) -> int | None:
    """Rewind Spark's logs to ``store_last``, the state store's last committed batch of the
    query: the batch Spark will run again (``store_last + 1``), or None if nothing was rewound
    (the logs are not ahead of the store, the store holds no batch, or the checkpoint is not
    local).

    Deletes the commit entries after ``store_last`` and the offsets entries after
    ``store_last + 1``. Each half alone leaves a log Spark would read wrongly (a batch skipped,
    or run with the wrong start), so the rule is applied whole on every start: a rewind cut
    short by a crash is finished by the next one."""
    root = local_path(checkpoint)
    if root is None or store_last is None:
        return None
    commits, offsets = root / "commits", root / "offsets"
    rerun = store_last + 1
    ahead = [b for b in _batch_ids(commits) if b > store_last]
    planned = _batch_ids(offsets)
    stale = [b for b in planned if b > rerun]
    if not ahead and not stale:
        return None
    if rerun not in planned:
        log.warning(
            "checkpoint %s: Spark's logs are ahead of the state store (batch %s) but batch %s's "
            "offsets entry is gone; nothing is rewound",
            checkpoint,
            store_last,
            rerun,
        )
        return None
    for batch_id in reversed(stale):
        _remove(offsets, batch_id)
    for batch_id in reversed(ahead):
        _remove(commits, batch_id)
    log.warning(
        "checkpoint %s: batch %s was in Spark's logs but not in the state store (its commit was "
        "cut short); Spark runs it again with the same offsets",
        checkpoint,
        rerun,
    )
    return rerun
