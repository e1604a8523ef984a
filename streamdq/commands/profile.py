"""``streamdq profile --data PATH [--format text|json] [--null-value NA] [--sep ,] [--no-header]
[--schema DDL]``: per-column metrics in ONE fused pass (CSV options as for ``verify``).

In Python, ``profile(df)`` takes a PySpark, pandas or Polars DataFrame.

For every column: completeness, approximate distinct count and the inferred data type
distribution; numeric columns add minimum, maximum, mean, standard deviation and the
approximate quartiles; string columns add minimum and maximum length. All of these are
scan-shareable analyzers, so the whole profile is one Spark aggregation (the job count is
printed), never a loop of jobs per column. Nested columns (struct, array, map) get
completeness only. Empty input gives 0 rows and failed (empty) statistics.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.types import ArrayType, MapType, StructType

from streamdq.analyzers.base import Analyzer, is_numeric, is_string
from streamdq.analyzers.metric import Metric
from streamdq.checks.kinds import make
from streamdq.commands.verify import add_data_arguments, read_data, read_options
from streamdq.errors import ConfigError

QUARTILES = (0.25, 0.5, 0.75)


def register(sub: Any) -> None:
    p = sub.add_parser("profile", help="print per-column metrics of a table (one fused pass)")
    add_data_arguments(p)
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    p.set_defaults(func=run)


def profile_analyzers(schema: StructType) -> dict[str, list[Analyzer]]:
    """The analyzers profiling each column of ``schema`` (plus ``"*"``: the row count)."""
    out: dict[str, list[Analyzer]] = {"*": [make("Size")]}
    for field in schema.fields:
        c, t = field.name, field.dataType
        analyzers = [make("Completeness", column=c)]
        if not isinstance(t, StructType | ArrayType | MapType):
            analyzers += [make("ApproxCountDistinct", column=c), make("DataType", column=c)]
        if is_numeric(t):
            analyzers += [
                make("Minimum", column=c),
                make("Maximum", column=c),
                make("Mean", column=c),
                make("StandardDeviation", column=c),
                make("ApproxQuantiles", column=c, quantiles=QUARTILES),
            ]
        elif is_string(t):
            analyzers += [make("MinLength", column=c), make("MaxLength", column=c)]
        out[c] = analyzers
    return out


def profile(df: DataFrame | Any) -> dict[str, Any]:
    """``{"rows", "jobs", "columns": {column: {"type", metric name: value or {"failure"}}}}``.

    ``df``: a PySpark, pandas or Polars DataFrame (``streamdq.frames.to_spark``)."""
    from streamdq.engine.analysis import analyze
    from streamdq.frames import to_spark

    df = to_spark(df)
    per_column = profile_analyzers(df.schema)
    ctx = analyze(df, [a for analyzers in per_column.values() for a in analyzers])
    rows = ctx.metric(per_column["*"][0])
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    columns: dict[str, Any] = {}
    for c, analyzers in per_column.items():
        if c == "*":
            continue
        entry: dict[str, Any] = {"type": types[c]}
        for a in analyzers:
            entry[a.NAME] = _value(ctx.metric(a))
        columns[c] = entry
    return {"rows": rows.value, "jobs": ctx.jobs, "columns": columns}


def _value(m: Metric) -> Any:
    if not m.ok:
        return {"failure": m.failure}
    if m.name == "DataType" and isinstance(m.value, dict):  # keep the non-empty type counts
        return {k: v["absolute"] for k, v in m.value.get("values", {}).items() if v.get("absolute")}
    return _finite(m.value)


def _finite(v: Any) -> Any:
    """JSON-safe: non-finite floats become their repr ("nan", "inf")."""
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    return v


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, dict):
        if "failure" in v:
            return f"n/a ({v['failure']})"
        return ", ".join(f"{k}: {_fmt(x)}" for k, x in v.items())
    return str(v)


def render_text(result: dict[str, Any]) -> str:
    lines = [f"Rows: {_fmt(result['rows'])}   (Spark jobs: {result['jobs']})"]
    for c, entry in result["columns"].items():
        lines.append(f"\n{c} ({entry['type']})")
        for name, v in entry.items():
            if name != "type":
                lines.append(f"  {name:<20} {_fmt(v)}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from streamdq.spark import get_spark

    try:
        df = read_data(get_spark(), args.data, args.input_format, **read_options(args))
    except ConfigError as exc:
        print(f"streamdq profile: {exc}", file=sys.stderr)
        return 2
    result = profile(df)
    if args.format == "json":
        print(json.dumps(result, indent=2, sort_keys=False, default=str))
    else:
        print(render_text(result))
    return 0
