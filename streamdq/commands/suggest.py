"""``streamdq suggest --data PATH [--format yaml|json|text] [--sample-fraction f] [--seed n]
[--out checks.yaml] [--dataset NAME] [--level error|warning] [--input-format ...]
[--null-value NA] [--sep ,] [--no-header] [--schema DDL]`` (CSV options as for ``verify``).

In Python, ``suggest(df)`` takes a PySpark, pandas or Polars DataFrame and returns the suggestions.

Profiles the table with the engine (one fused pass plus one grouped pass per
low-cardinality String/Integral column, see ``streamdq.autovalidate.suggest``), applies
Deequ's suggestion rules and writes a ready checks file: YAML (default; every constraint
is preceded by a comment naming its rule and the profile numbers behind it), JSON (the
same checks, no comments) or text (a readable list with the builder calls, not a checks
file). The output goes to ``--out`` or stdout; a one-line summary goes to stderr.

The checks file loads with ``streamdq verify --checks`` / ``streamdq.load_checks``.
Exit codes: 0 on success, 2 on bad usage (missing or unreadable ``--data``, a
``--sample-fraction`` outside (0, 1], an ``--out`` that cannot be written); the message
names the argument.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from streamdq.commands.verify import add_data_arguments, read_data, read_options
from streamdq.errors import ConfigError

FORMATS = ("yaml", "json", "text")


def register(sub: Any) -> None:
    p = sub.add_parser("suggest", help="suggest a checks file from a profile of a table (Deequ's rules)")
    add_data_arguments(p)
    p.add_argument(
        "--format", choices=FORMATS, default="yaml", help="output: checks YAML (default), JSON, or text"
    )
    p.add_argument(
        "--sample-fraction",
        type=float,
        default=None,
        help="profile a random sample of this fraction of the rows, 0 < f <= 1 (default: all rows)",
    )
    p.add_argument("--seed", type=int, default=None, help="seed of the sample (default: random)")
    p.add_argument("--out", default=None, help="write the checks file here (default: stdout)")
    p.add_argument("--dataset", default=None, help="dataset name written to the checks file (default: none)")
    p.add_argument(
        "--level", choices=("error", "warning"), default="error", help="level of the suggested checks"
    )
    p.set_defaults(func=run)


def _fraction(value: float | None) -> float | None:
    if value is not None and not 0 < value <= 1:
        raise ConfigError("--sample-fraction", f"got {value!r}; expected a number in (0, 1]")
    return value


def _out_path(out: str | None) -> Path | None:
    if out is None:
        return None
    path = Path(out)
    if path.is_dir():
        raise ConfigError("--out", f"{out} is a directory; expected a file name")
    if not path.parent.is_dir():
        raise ConfigError("--out", f"{out}: directory {str(path.parent)!r} does not exist")
    return path


def suggest(df: Any, *, sample_fraction: float | None = None, seed: int | None = None) -> list[Any]:
    """Suggested constraints for ``df`` (a PySpark, pandas or Polars DataFrame): Deequ's rules
    over one profile (``streamdq.autovalidate.suggest``); render them with its ``render_yaml``."""
    from streamdq.autovalidate.suggest import sample, suggest_from_profile
    from streamdq.commands.table_profile import profile_table
    from streamdq.frames import to_spark

    profile = profile_table(sample(to_spark(df), _fraction(sample_fraction), seed))
    return list(suggest_from_profile(profile))


def run(args: argparse.Namespace) -> int:
    from streamdq.autovalidate.suggest import (
        render_json,
        render_text,
        render_yaml,
        sample,
        suggest_from_profile,
    )
    from streamdq.commands.table_profile import profile_table
    from streamdq.spark import get_spark

    try:
        fraction = _fraction(args.sample_fraction)
        out = _out_path(args.out)
        df = read_data(get_spark(), args.data, args.input_format, **read_options(args))
    except ConfigError as exc:
        print(f"streamdq suggest: {exc}", file=sys.stderr)
        return 2
    profile = profile_table(sample(df, fraction, args.seed))
    suggestions = suggest_from_profile(profile)
    sampled = f", a {fraction:g} sample" if fraction is not None and fraction < 1 else ""
    summary = (
        f"{len(suggestions)} suggestions for {len({s.column for s in suggestions})} of "
        f"{len(profile.columns)} columns from {profile.rows} rows{sampled} (Spark jobs: {profile.jobs})"
    )
    if args.format == "yaml":
        header = [
            f"Suggested by `streamdq suggest` from {args.data}: {summary}.",
            "Review before use: the rules describe the profiled data, not necessarily future data.",
        ]
        text = render_yaml(suggestions, args.dataset, level=args.level, header=header)
    elif args.format == "json":
        text = render_json(suggestions, args.dataset, level=args.level)
    else:
        text = render_text(suggestions)
    if out is None:
        sys.stdout.write(text)
    else:
        try:
            out.write_text(text, encoding="utf-8")
        except OSError as exc:
            print(f"streamdq suggest: --out: {out}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    print(f"streamdq suggest: {summary}" + (f"; wrote {out}" if out else ""), file=sys.stderr)
    return 0
