"""A directory of files read in NAME order: Python Data Source ``streamdq_files`` (``source.order: name``).

Why: Spark's file stream source orders new files by modification time only (``latestFirst``
reverses it; there is no name order). Files copied at once (a backfill) get the same mtime, so
with ``maxFilesPerTrigger`` a later day can be read before an earlier one and the earlier day is
then late against the watermark. File names that carry the date (``2013-01-01.csv``,
``day=2013-01-02/part-0.csv``) sort in event-time order, so reading in name order keeps a backlog
from being late against itself.

Where it runs: the listing (``os.scandir`` of a LOCAL directory, recursively, hidden and ``_``
files skipped as Spark does) runs on the driver at each trigger; ``read`` runs in a Python worker
and yields one row per file: ``file STRING`` (``file:/abs/path``, as Spark's
``_metadata.file_path``) and ``value STRING`` (the whole text, UTF-8; broken bytes become U+FFFD).
The files source splits it into lines in Spark (``files.file_lines``). One row per file, not per
line: no Python loop over records.

Offsets are ``{"upto": <relative path of the last file read>, "files": [<relative paths read in
this batch>]}``, so a replayed batch reads exactly the files it read before. A batch takes the
files whose relative path sorts after ``upto`` (at most ``max_files_per_trigger`` of them, default
all). A file that appears later with a name sorting before ``upto`` is not read (Spark's own source
has the mirror rule, ``maxFileAge``); the driver logs a warning naming it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxFiles,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

SOURCE_NAME = "streamdq_files"
SOURCE_SCHEMA = "file STRING, value STRING"
LOG = logging.getLogger(__name__)


def list_files(root: str | Path) -> list[str]:
    """Relative paths (``/``-separated) of the data files under ``root``, in name order.

    Skips hidden files and directories and those starting with ``_`` (``_SUCCESS``, ``_temporary``),
    as Spark's file index does.
    """
    base = Path(root)
    out: list[str] = []

    def walk(d: Path, rel: str) -> None:
        with os.scandir(d) as entries:
            for e in entries:
                if e.name.startswith((".", "_")):
                    continue
                r = f"{rel}{e.name}"
                if e.is_dir(follow_symlinks=True):
                    walk(Path(e.path), r + "/")
                elif e.is_file(follow_symlinks=True):
                    out.append(r)

    if base.is_dir():
        walk(base, "")
    return sorted(out)


class FilePartition(InputPartition):
    """One file: its absolute path."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


class OrderedFilesStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Stream reader over a local directory in name order; see the module docstring.

    ``Trigger.AvailableNow``: the files listed when the query starts are the target; files that
    appear later are left for the next run."""

    def __init__(self, options: dict[str, str]) -> None:
        self.root = str(options["path"])
        if self.root.startswith("file://"):
            self.root = self.root[len("file://") :]
        mf = options.get("max_files_per_trigger")
        self.max_files = int(mf) if mf not in (None, "", "None") else None
        self._warned: set[str] = set()
        self._target: str | None = None

    def prepareForTriggerAvailableNow(self) -> None:
        listed = list_files(self.root)
        self._target = listed[-1] if listed else ""

    def initialOffset(self) -> dict:
        return {"upto": "", "files": []}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxFiles(self.max_files) if self.max_files else ReadAllAvailable()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        upto = str(start.get("upto", ""))
        listed = list_files(self.root)
        new = [f for f in listed if f > upto and (self._target is None or f <= self._target)]
        for f in listed:
            if f <= upto and f not in start.get("files", []) and f not in self._warned and upto:
                self._warned.add(f)
        if isinstance(limit, ReadMaxFiles):
            new = new[: limit.max_files]
        if not new:
            return start
        return {"upto": new[-1], "files": new}

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        if end.get("upto") == start.get("upto"):
            return []
        return [FilePartition(os.path.join(self.root, f)) for f in end.get("files", [])]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, FilePartition)
        path = Path(partition.path)
        text = path.read_bytes().decode("utf-8", errors="replace")
        yield ("file:" + str(path.absolute()), text)

    def commit(self, end: dict) -> None:
        for f in sorted(self._warned):
            LOG.warning(
                "source.order=name: file %s sorts before %s, which was already read; it is not read",
                f,
                end.get("upto"),
            )
        self._warned.clear()


class OrderedFilesDataSource(DataSource):
    """PySpark data source ``streamdq_files`` (streaming read only)."""

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> str:
        return SOURCE_SCHEMA

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return OrderedFilesStreamReader(dict(self.options))


def register_files_source(spark: SparkSession) -> None:
    """Register ``streamdq_files`` with the session (idempotent)."""
    spark.dataSource.register(OrderedFilesDataSource)
