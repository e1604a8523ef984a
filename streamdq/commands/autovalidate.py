"""``streamdq autovalidate``: programs learned from history (Auto-Validate-by-History).

* ``streamdq autovalidate show --state PATH --dataset D [--column C] [--format text|yaml|json]``
  prints the programs the streaming job learned (``auto_validate:`` in the run config);
  they live in the state store with the job's other detector states, as of the last
  committed batch.
* ``streamdq autovalidate learn --data PATH --batch-by COLUMN --column C [--column ...]
  [--fpr 0.001] [--seed N] [--out FILE]`` learns programs offline from a table whose
  ``--batch-by`` column orders its batches (e.g. a date), using every batch but the last
  ``--holdout`` ones as history (all batches profiled in one engine run segmented by
  ``--batch-by``), and prints them (``--out`` writes the YAML review
  documents, one per column, separated by ``---``). With ``--holdout N`` it judges the
  last N batches and prints their violations. With ``--holidays US-NY`` (a country, optionally
  ``-SUBDIV``; the ``--batch-by`` values must be dates or timestamps) the batches that fall on a
  day off are flagged as ``auto_validate.holidays`` does in the streaming job: their volume is
  not judged, and volume bounds are learned without them. With ``--unit-batches N`` the unit
  learned from and judged is N consecutive batches together (``auto_validate.unit_windows``),
  counted back from the newest batch; the oldest batches that fill no unit are left out (a note
  says so), ``--holdout`` counts units, and a unit is a day off when any of its batches is.
* ``streamdq autovalidate holidays (--holidays CALENDAR | --config RUN.yaml) [--from DATE]
  [--to DATE]`` lists the days a calendar marks off (default: this year), each with the day
  off it belongs to (``Lincoln's Birthday - 1 day``): the days on which the volume is not
  judged. A subdivision's calendar holds its own observances (``US-NY``: Lincoln's Birthday,
  Susan B. Anthony Day), which may not move a feed's volume; check the list before trusting it.

Exit codes: 0 ok (``learn`` with holdout: 0 also when violations are found; they are
printed), 2 bad arguments, unreadable data or no stored program.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from streamdq.commands.query import storage_option
from streamdq.errors import ConfigError

STORE_KEY = "monitor:auto_validate"


def register(sub: Any) -> None:
    av = sub.add_parser("autovalidate", help="programs learned from history (show stored, learn offline)")
    avsub = av.add_subparsers(dest="autovalidate_command", required=True)
    show = avsub.add_parser("show", help="print the programs the streaming job learned")
    show.add_argument("--state", required=True, help="state root (directory or URI) of the Delta tables")
    show.add_argument("--dataset", required=True)
    show.add_argument("--column", action="append", default=[], help="only this column (repeatable)")
    show.add_argument("--format", choices=("text", "yaml", "json"), default="text")
    show.add_argument(
        "--storage-option", type=storage_option, action="append", default=[], metavar="KEY=VALUE"
    )
    show.set_defaults(func=run_show)
    learn = avsub.add_parser("learn", help="learn programs offline from a table of batches")
    from streamdq.commands.verify import add_data_arguments

    add_data_arguments(learn)
    learn.add_argument(
        "--batch-by", required=True, help="column whose values order the batches (e.g. a date)"
    )
    learn.add_argument("--column", action="append", required=True, help="column to learn (repeatable)")
    learn.add_argument("--fpr", type=float, default=0.001, help="target false-positive rate (default 0.001)")
    learn.add_argument("--seed", type=int, default=0)
    learn.add_argument(
        "--holdout", type=int, default=0, help="judge the last N batches instead of learning them"
    )
    learn.add_argument(
        "--holidays",
        help="days off, as auto_validate.holidays in YAML: COUNTRY[-SUBDIV] (e.g. US-NY) or a mapping "
        "such as '{country: US, days_after: 1}'; volume is not judged on them",
    )
    learn.add_argument(
        "--unit-batches",
        type=int,
        default=1,
        help="learn from and judge units of N consecutive batches (small batches; default 1)",
    )
    learn.add_argument("--dataset", default="dataset")
    learn.add_argument("--out", help="write the programs' YAML review documents here")
    learn.set_defaults(func=run_learn)
    days = avsub.add_parser("holidays", help="list the days off a holiday calendar marks")
    where = days.add_mutually_exclusive_group(required=True)
    where.add_argument("--holidays", help="a calendar as auto_validate.holidays in YAML (e.g. US-NY)")
    where.add_argument("--config", help="a run config whose auto_validate.holidays to list")
    days.add_argument("--from", dest="start", help="first day, YYYY-MM-DD (default: January 1 of this year)")
    days.add_argument("--to", dest="end", help="last day, YYYY-MM-DD (default: December 31 of --from's year)")
    days.set_defaults(func=run_holidays)


UNIT_COLUMN = "__streamdq_unit"


def _with_units(df: Any, batch_by: str, units: list[list[Any]]) -> tuple[Any, Any]:
    """``df`` with ``UNIT_COLUMN``: the index of the unit its ``batch_by`` value belongs to (a
    broadcast join with the batch -> unit table, NULL-safe), and that column."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType, StructField, StructType

    from streamdq.analyzers.base import col

    field = df.schema[batch_by]
    schema = StructType(
        [StructField("__streamdq_batch", field.dataType), StructField(UNIT_COLUMN, IntegerType())]
    )
    table = df.sparkSession.createDataFrame([(b, u) for u, unit in enumerate(units) for b in unit], schema)
    joined = df.join(F.broadcast(table), col(batch_by).eqNullSafe(table["__streamdq_batch"]), "inner")
    return joined.drop("__streamdq_batch"), F.col(UNIT_COLUMN)


def stored_programs(state: str, dataset: str, storage_options: dict[str, str] | None = None) -> list[Any]:
    """The programs of ``dataset`` in the state store (empty when none was learned yet)."""
    from streamdq.autovalidate.avh.program import Program
    from streamdq.state.delta_store import DeltaStateStore

    store = DeltaStateStore(state, storage_options=storage_options or None)
    record = store.load_detector_states(dataset).get(STORE_KEY)
    if record is None:
        return []
    doc = json.loads(record.state)
    return [Program.from_dict(p) for _, p in sorted(doc.get("programs", {}).items())]


def run_show(args: argparse.Namespace) -> int:
    try:
        programs = stored_programs(args.state, args.dataset, dict(args.storage_option))
    except Exception as exc:
        print(f"streamdq autovalidate show: cannot read the state store {args.state}: {exc}", file=sys.stderr)
        return 2
    if args.column:
        programs = [p for p in programs if p.column in args.column]
    if not programs:
        print(
            f"streamdq autovalidate show: no learned program for dataset {args.dataset!r} in {args.state} "
            "(is auto_validate: configured, and have enough windows closed?)",
            file=sys.stderr,
        )
        return 2
    print(_render(programs, args.format, args.dataset))
    return 0


def _render(programs: list[Any], fmt: str, dataset: str) -> str:
    if fmt == "json":
        return json.dumps([p.to_dict() for p in programs], indent=2)
    if fmt == "yaml":
        return "---\n".join(p.to_yaml(dataset) for p in programs)
    return "\n\n".join(p.show() for p in programs)


def run_holidays(args: argparse.Namespace) -> int:
    """Print each day off between ``--from`` and ``--to`` with its reason, then their count."""
    import datetime as dt

    import yaml

    from streamdq.autovalidate.avh.calendar import calendar_from_config

    try:
        start = dt.date.fromisoformat(args.start) if args.start else dt.date(dt.date.today().year, 1, 1)
        end = dt.date.fromisoformat(args.end) if args.end else dt.date(start.year, 12, 31)
    except ValueError as exc:
        print(f"streamdq autovalidate holidays: --from/--to: {exc}", file=sys.stderr)
        return 2
    if end < start:
        print(f"streamdq autovalidate holidays: --to {end} is before --from {start}", file=sys.stderr)
        return 2
    try:
        if args.config:
            from streamdq.engine.config import load_run_config

            raw = (load_run_config(args.config).auto_validate or {}).get("holidays")
            if raw is None:
                print(
                    f"streamdq autovalidate holidays: {args.config} sets no auto_validate.holidays",
                    file=sys.stderr,
                )
                return 2
            calendar = calendar_from_config(raw, f"{args.config}: auto_validate.holidays")
        else:
            calendar = calendar_from_config(yaml.safe_load(args.holidays), "--holidays")
    except (ConfigError, yaml.YAMLError) as exc:
        print(f"streamdq autovalidate holidays: {exc}", file=sys.stderr)
        return 2
    off = 0
    day = start
    while day <= end:
        why = calendar.holiday(day)
        if why is not None:
            off += 1
            print(f"{day} {day:%a}  {why}")
        day += dt.timedelta(days=1)
    print(
        f"{off} day(s) off from {start} to {end}: their volume is not judged, nor a later batch's "
        "whose difference reads one (docs/autovalidate.md, Holidays)"
    )
    return 0


def run_learn(args: argparse.Namespace) -> int:
    from pyspark.sql import functions as F

    from streamdq.analyzers.base import col
    from streamdq.autovalidate.avh.learner import learn_from_profiles
    from streamdq.autovalidate.avh.profiling import corrupted_frames, kind_of
    from streamdq.commands.verify import read_data
    from streamdq.learning import profile_frames, profile_segments
    from streamdq.spark import get_spark

    if not 0 < args.fpr < 1:
        print(f"streamdq autovalidate learn: --fpr must be in (0, 1), got {args.fpr}", file=sys.stderr)
        return 2
    if args.unit_batches < 1:
        print(
            f"streamdq autovalidate learn: --unit-batches must be at least 1, got {args.unit_batches}",
            file=sys.stderr,
        )
        return 2
    try:
        df = read_data(get_spark(), args.data, args.input_format)
    except ConfigError as exc:
        print(f"streamdq autovalidate learn: {exc}", file=sys.stderr)
        return 2
    missing = [c for c in [args.batch_by, *args.column] if c not in df.columns]
    if missing:
        print(
            f"streamdq autovalidate learn: {args.data} has no column {missing[0]!r} "
            f"(columns: {', '.join(df.columns)})",
            file=sys.stderr,
        )
        return 2
    batches = [r[0] for r in df.select(col(args.batch_by)).distinct().orderBy(col(args.batch_by)).collect()]
    # the batches of each unit, counted back from the newest; the oldest that fill no unit are left out
    width = args.unit_batches
    left_out = len(batches) % width
    units = [batches[i : i + width] for i in range(left_out, len(batches), width)]
    n_history = len(units) - max(args.holdout, 0)
    if n_history <= 0:
        print(
            f"streamdq autovalidate learn: no batch left to learn from ({len(batches)} batches"
            + (f", {len(units)} units of {width}" if width > 1 else "")
            + ")",
            file=sys.stderr,
        )
        return 2
    if width > 1 and left_out:
        print(
            f"note: the oldest {left_out} batch(es) of {args.batch_by} fill no unit of {width} and are "
            f"left out ({', '.join(str(b) for b in batches[:left_out])})"
        )
    keys = [unit[0] for unit in units]  # a unit is named by its first batch
    flags: tuple[bool, ...] = ()
    if args.holidays:
        import yaml

        from streamdq.autovalidate.avh.calendar import calendar_from_config

        try:
            off = calendar_from_config(yaml.safe_load(args.holidays), "--holidays").flags(batches)
            by_batch = dict(zip(batches, off, strict=True))
            flags = tuple(any(by_batch[b] for b in unit) for unit in units)  # off when any batch is
        except (ConfigError, yaml.YAMLError) as exc:
            print(f"streamdq autovalidate learn: {exc}", file=sys.stderr)
            return 2
        except (TypeError, ValueError):
            print(
                f"streamdq autovalidate learn: --holidays needs --batch-by values that are dates "
                f"or timestamps; {args.batch_by!r} has {batches[0]!r}",
                file=sys.stderr,
            )
            return 2
    segment, segments = col(args.batch_by), keys
    if width > 1:  # each row's unit: the index of its batch's unit (rows left out get none)
        df, segment = _with_units(df, args.batch_by, units)
        segments = list(range(len(units)))
    # the newest history unit, collected once: every column's corruptions start from it
    newest = (
        df.filter(segment.eqNullSafe(F.lit(segments[n_history - 1])))
        .select(*[c for c in df.columns if c != UNIT_COLUMN])
        .toPandas()
    )
    programs = []
    for column in args.column:
        kind = kind_of(df, column)
        # every unit's profile in one engine run over the table, segmented by --batch-by (or unit)
        profiles = profile_segments(df, segment, segments, column, kind)
        corrupted = corrupted_frames(newest, column, kind, args.seed)
        bad = profile_frames(list(corrupted.values()), column, kind)
        program = learn_from_profiles(
            profiles[:n_history],
            dict(zip(corrupted, bad, strict=True)),
            fpr=args.fpr,
            holidays=flags[:n_history],
        )
        programs.append(program)
        print(program.show())
        for i, (key, profile) in enumerate(zip(keys[n_history:], profiles[n_history:], strict=True)):
            holiday = bool(flags) and flags[n_history + i]
            muted = program.muted(holiday=holiday)
            violations = program.judge_profile(profile, holiday=holiday)
            program = program.advance(profile, holiday=holiday)
            verdict = "passes" if not violations else f"{len(violations)} violation(s)"
            if muted:
                verdict += f" (day off: {', '.join(c.transformed_name() for c in muted)} not judged)"
            name = f"{key}..{units[n_history + i][-1]}" if width > 1 else key
            print(f"  {'unit' if width > 1 else 'batch'} {args.batch_by}={name}: {verdict}")
            for v in violations:
                print(f"    {v.message}")
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(_render(programs, "yaml", args.dataset) + "\n")
        print(f"wrote {args.out}")
    return 0
