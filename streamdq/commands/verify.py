"""``streamdq verify --data PATH --checks checks.yaml [--format text|json] [--input-format ...]``.

Reads a Parquet, CSV (with header) or JSON (JSON Lines, or one JSON array) file or
directory, runs every check of the checks file with ONE fused analysis and prints the
report. Exit codes: 0 when every check succeeded or only warning-level checks failed,
1 when an error-level check failed, 2 on bad usage or configuration (the message names
the file and the key).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from streamdq.errors import ConfigError

INPUT_FORMATS = ("parquet", "csv", "json")
_EXTENSIONS = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".json": "json",
    ".jsonl": "json",
    ".ndjson": "json",
}


def register(sub: Any) -> None:
    p = sub.add_parser("verify", help="verify a table (Parquet, CSV, JSON) against a checks file")
    add_data_arguments(p)
    p.add_argument("--checks", required=True, help="checks file (YAML or JSON, see docs/checks.md)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="report format")
    p.set_defaults(func=run)


def add_data_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", required=True, help="a Parquet, CSV (with header) or JSON file or directory")
    p.add_argument(
        "--input-format",
        choices=INPUT_FORMATS,
        default=None,
        help="format of --data (default: from its extension)",
    )


def detect_format(path: Path, given: str | None) -> str:
    """The input format: ``given``, else the extension of ``path`` (or of the files in it)."""
    if given is not None:
        return given
    candidates = [path]
    if path.is_dir():
        candidates = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith((".", "_")))
    for p in candidates:
        for suffix in reversed(p.suffixes):
            fmt = _EXTENSIONS.get(suffix.lower())
            if fmt:
                return fmt
    raise ConfigError(
        f"cannot tell the format of {str(path)!r} from its extension",
        path="--data",
        fix="pass --input-format parquet|csv|json",
    )


def read_data(spark: Any, data: str, input_format: str | None = None) -> Any:
    """A DataFrame over ``data``; a ``ConfigError`` (naming the file) when it cannot be read."""
    path = Path(data)
    if not path.exists():
        raise ConfigError(f"{data}: no such file or directory", path="--data")
    fmt = detect_format(path, input_format)
    try:
        if fmt == "parquet":
            return spark.read.parquet(str(path))
        if fmt == "csv":
            return spark.read.csv(str(path), header=True, inferSchema=True)
        df = spark.read.json(str(path))
        if df.columns == ["_corrupt_record"]:  # one JSON document (e.g. an array), not JSON Lines
            df = spark.read.json(str(path), multiLine=True)
        return df
    except Exception as exc:  # Spark raises AnalysisException & co for unreadable input
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"{data}: cannot read as {fmt}: {first}", path="--data") from None


def run(args: argparse.Namespace) -> int:
    from streamdq.checks.spec import load_suite
    from streamdq.checks.verification import verify
    from streamdq.report import ERROR
    from streamdq.spark import get_spark

    try:
        suite = load_suite(args.checks)
        df = read_data(get_spark(), args.data, args.input_format)
    except ConfigError as exc:
        print(f"streamdq verify: {exc}", file=sys.stderr)
        return 2
    result = verify(df, suite.checks)
    if args.format == "json":
        print(result.to_json(indent=2))
    else:
        if suite.dataset:
            print(f"Dataset: {suite.dataset} ({args.data})")
        print(result.render_text())
    return 1 if result.status == ERROR else 0
