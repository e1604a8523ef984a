"""YAML/JSON check files: load with validation, dump, round-trip (``load(dump(c)) == c``).

Format (docs/checks.md has a full example)::

    dataset: orders                 # optional
    checks:
      - description: orders are sane
        level: error                # error | warning (default error)
        constraints:
          - is_complete: {column: id}
          - is_unique: id           # shorthand: a scalar is the kind's first parameter
          - has_completeness: {column: email, assertion: ">= 0.9", where: "country = 'DE'",
                               hint: "emails are optional abroad", scope: batch}

Every mistake raises ``streamdq.errors.ConfigError`` at load time naming the file, the path
inside it (``checks[0].constraints[2].has_completeness.assertion``) and what is expected;
an unknown constraint suggests the closest known name. JSON files use the same structure
(YAML is a superset of JSON, so one parser reads both). ``checks_from_list`` reports the
mistakes of every check and constraint at once (one ``ConfigErrors``).

``check_columns(checks)`` lists every column the checks read, each with the path of the key
that names it, so that a run config can be checked against its source's schema before Spark
starts (a check on a column that does not exist fails at start, not at every window).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from streamdq.checks.check import Check, Level
from streamdq.checks.constraint import COMMON_KEYS, Constraint, constraint_kind, did_you_mean
from streamdq.checks.judgement_spec import validate_judgement
from streamdq.checks.measure import Measure
from streamdq.checks.measure_spec import measures_from_list
from streamdq.checks.pass_policy import PassPolicy
from streamdq.errors import ConfigError, ConfigErrors, ErrorCollector, InvalidArgument, UnknownName

TOP_KEYS = ("dataset", "checks", "measures", "pass")
CHECK_KEYS = ("description", "level", "constraints", "row_level")


@dataclass(frozen=True)
class CheckSuite:
    """The content of a checks file: an optional dataset name, the checks and the SQL measures
    (``measures:``, streamdq.checks.measure_spec)."""

    dataset: str | None
    checks: tuple[Check, ...]
    measures: tuple[Measure, ...] = ()
    pass_policy: PassPolicy | None = None
    """``pass:`` (streamdq.checks.pass_policy): when the file's judgement counts as passed;
    None when not written (the document then uses ``always``, the seed's default)."""


# -- loading ------------------------------------------------------------------------------


def load_suite(path: str | Path) -> CheckSuite:
    """Read and validate a YAML or JSON checks file."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError("", f"cannot read the checks file: {exc.strerror or exc}", file=file) from None
    return loads_suite(text, file=file)


def load_checks(path: str | Path) -> list[Check]:
    """The checks of a YAML or JSON checks file (see ``load_suite``)."""
    return list(load_suite(path).checks)


def loads_suite(text: str, *, file: str = "<string>") -> CheckSuite:
    """Parse checks from YAML/JSON text; ``file`` names the source in error messages.

    A ``file`` ending in ``.json`` (or text starting with ``{``) is parsed as strict JSON
    (exact JSON error positions; YAML 1.1 would read ``1e-3`` as a string); anything else
    as YAML."""
    if file.endswith(".json") or text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                "", f"line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}", file=file
            ) from None
        return suite_from_dict(data, file=file)
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "?"
        hint = ' (quote assertions that start with ">" or "<", e.g. ">= 0.95")'
        raise ConfigError("", f"{where}: invalid YAML: {exc.problem}{hint}", file=file) from None
    except yaml.YAMLError as exc:
        raise ConfigError("", f"invalid YAML: {exc}", file=file) from None
    try:
        return suite_from_dict(data, file=file)
    except ConfigError as exc:
        raise ConfigErrors(with_line(text, e, file) for e in exc.errors_list()) from None


def with_line(text: str, error: ConfigError, file: str | None = None) -> ConfigError:
    """``error`` with the line of its key in ``text`` appended to the problem (when found)."""
    line = line_of(text, error.key)
    if line is None:
        return error
    return ConfigError(error.key, f"{error.problem} (line {line})", error.fix, file or error.file)


def line_of(text: str, path: str) -> int | None:
    """The 1-based line of the YAML node at ``path`` (``checks[0].constraints[2].x``), or of
    its nearest existing parent; None when the text does not compose or ``path`` is empty."""
    if not path:
        return None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    lines: dict[str, int] = {}

    def walk(node: yaml.Node, here: str) -> None:
        if here:
            lines.setdefault(here, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                name = str(key.value)
                lines.setdefault(f"{here}.{name}" if here else name, key.start_mark.line + 1)
                walk(value, f"{here}.{name}" if here else name)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                walk(item, f"{here}[{i}]")

    if root is not None:
        walk(root, "")
    while path:
        if path in lines:
            return lines[path]
        cut = max(path.rfind("."), path.rfind("["))
        path = path[:cut] if cut > 0 else ""
    return None


def suite_from_dict(data: Any, *, file: str | None = None) -> CheckSuite:
    """Validate an already-parsed document (``{dataset, checks}``)."""
    if not isinstance(data, Mapping):
        raise ConfigError(
            "",
            f"got {type(data).__name__}; expected a mapping with keys 'dataset' (optional) and 'checks'",
            file=file,
        )
    for key in data:
        if key not in TOP_KEYS:
            raise ConfigError(
                str(key),
                f"unknown key{did_you_mean(str(key), TOP_KEYS)} (expected keys: {', '.join(TOP_KEYS)})",
                file=file,
            )
    dataset = data.get("dataset")
    if dataset is not None and not isinstance(dataset, str):
        raise ConfigError("dataset", f"got {dataset!r}; expected a dataset name (string)", file=file)
    if "checks" not in data:
        raise ConfigError(
            "checks",
            "missing required key: expected a list of checks",
            "add a checks: list (see docs/checks.md)",
            file=file,
        )
    errs = ErrorCollector()
    no_checks: list[Check] = []
    no_measures: list[Measure] = []
    checks = errs.get(checks_from_list, data["checks"], file=file, path="checks", default=no_checks)
    measures = errs.get(
        measures_from_list, data.get("measures"), file=file, path="measures", default=no_measures
    )
    errs.raise_if_any()
    policy = validate_judgement(checks, [m.name for m in measures], data.get("pass"), file=file)
    return CheckSuite(dataset, tuple(checks), tuple(measures), policy)


def checks_from_spec(data: Any, *, file: str | None = None) -> list[Check]:
    """The checks of an already-parsed document ``{dataset?, checks: [...]}`` (validated)."""
    return list(suite_from_dict(data, file=file).checks)


def checks_from_list(items: Any, *, file: str | None = None, path: str = "checks") -> list[Check]:
    """Validate a list of check mappings (usable for checks embedded in a larger config)."""
    if not isinstance(items, list):
        raise ConfigError(path, f"got {type(items).__name__}; expected a list of checks", file=file)
    errs = ErrorCollector()
    checks = [
        errs.get(check_from_dict, item, file=file, path=f"{path}[{i}]", default=None)
        for i, item in enumerate(items)
    ]
    errs.raise_if_any()
    return [c for c in checks if c is not None]


def check_from_dict(item: Any, *, file: str | None = None, path: str = "checks[0]") -> Check:
    if not isinstance(item, Mapping):
        raise ConfigError(
            path, f"got {item!r}; expected a mapping with keys description, level, constraints", file=file
        )
    for key in item:
        if key not in CHECK_KEYS:
            raise ConfigError(
                f"{path}.{key}",
                f"unknown key{did_you_mean(str(key), CHECK_KEYS)} (expected keys: {', '.join(CHECK_KEYS)})",
                file=file,
            )
    description = item.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ConfigError(
            f"{path}.description",
            f"got {description!r}; expected a non-empty description (string)",
            file=file,
        )
    try:
        level = Level.parse(item.get("level", "error"))
    except ConfigError as exc:
        raise ConfigError(f"{path}.level", exc.problem, exc.fix, file) from None
    raw = item.get("constraints")
    if not isinstance(raw, list) or not raw:
        raise ConfigError(
            f"{path}.constraints",
            f"got {raw!r}; expected a non-empty list of constraints such as - is_complete: {{column: id}}",
            file=file,
        )
    errs = ErrorCollector()
    constraints = [
        errs.get(constraint_from_dict, c, file=file, path=f"{path}.constraints[{j}]", default=None)
        for j, c in enumerate(raw)
    ]
    errs.raise_if_any()
    row_level = item.get("row_level")
    try:
        return Check(level, description, tuple(c for c in constraints if c is not None), row_level=row_level)
    except ConfigError as exc:
        raise ConfigError(f"{path}.{exc.key}", exc.problem, exc.fix, file) from None


def constraint_from_dict(entry: Any, *, file: str | None = None, path: str = "constraint") -> Constraint:
    """``{kind: {params..., assertion, where, hint, scope}}`` or ``{kind: <first parameter>}``
    (or, flat, ``{kind: <kind>, params..., assertion, ...}``)."""
    if isinstance(entry, Mapping) and isinstance(entry.get("kind"), str) and len(entry) > 1:
        entry = {entry["kind"]: {k: v for k, v in entry.items() if k != "kind"}}
    if not isinstance(entry, Mapping) or len(entry) != 1:
        raise ConfigError(
            path,
            f"got {entry!r}; expected a mapping with exactly one constraint name, "
            "e.g. - is_complete: {column: id}",
            file=file,
        )
    ((kind, body),) = entry.items()
    kind = str(kind)
    try:
        definition = constraint_kind(kind)
    except UnknownName as exc:  # the did-you-mean, without the list of every kind
        raise ConfigError(path, exc.problem, file=file) from None
    sub = f"{path}.{kind}"
    if body is None:
        body = {}
    elif not isinstance(body, Mapping):
        if not definition.params:
            raise ConfigError(
                sub, f'got {body!r}; expected a mapping such as {{assertion: "> 0"}}', file=file
            )
        body = {definition.params[0].name: body}
    params = {k: v for k, v in body.items() if k not in COMMON_KEYS}
    return Constraint.create(
        kind,
        {str(k): v for k, v in params.items()},
        assertion=body.get("assertion"),
        where=body.get("where"),
        hint=body.get("hint"),
        scope=body.get("scope", "batch"),
        path=sub,
        file=file,
    )


# -- columns ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ColumnUse:
    """A column a check reads, and the key that names it (``checks[0].constraints[1].is_complete.column``)."""

    path: str
    column: str


def check_columns(checks: Sequence[Check], path: str = "checks") -> list[ColumnUse]:
    """Every input column of ``checks``, in order, each with the path of the key that names it.

    Columns come from the kinds' ``column``/``columns`` parameters and, for kinds whose
    analyzer reads others (``has_no_anomalies``'s metric), from the analyzer's
    ``input_columns()``. Columns named only inside SQL (``where``, ``satisfies``'s predicate
    without ``columns``) are not listed: Spark checks those when the query runs.
    """
    uses: list[ColumnUse] = []
    for i, check in enumerate(checks):
        for j, c in enumerate(check.constraints):
            here = f"{path}[{i}].constraints[{j}].{c.kind}"
            seen: set[str] = set()
            for p in c.definition.params:
                value = c.params.get(p.name)
                if p.type == "column" and isinstance(value, str):
                    uses.append(ColumnUse(f"{here}.{p.name}", value))
                    seen.add(value)
                elif p.type == "columns" and isinstance(value, list):
                    for k, name in enumerate(value):
                        uses.append(ColumnUse(f"{here}.{p.name}[{k}]", str(name)))
                        seen.add(str(name))
            try:
                extra = [name for name in c.analyzer.input_columns() if name not in seen]
            except Exception:  # an analyzer that cannot say: its columns are checked at run time
                extra = []
            where = f"{here}.metric" if "metric" in c.params else here
            uses.extend(ColumnUse(where, name) for name in extra)
    return uses


# -- dumping ------------------------------------------------------------------------------


def constraint_to_dict(c: Constraint, *, path: str = "constraint") -> dict[str, Any]:
    body: dict[str, Any] = c.params.to_dict()
    if c.assertion is not None and c.assertion != c.definition.default_assertion:
        try:
            body["assertion"] = c.assertion.to_spec()
        except ConfigError as exc:
            raise ConfigError(f"{path}.{c.kind}.assertion", exc.problem, exc.fix) from None
    if c.where is not None:
        body["where"] = c.where
    if c.hint is not None:
        body["hint"] = c.hint
    if c.scope != "batch":
        body["scope"] = c.scope
    return {c.kind: body}


def suite_to_dict(checks: Iterable[Check], dataset: str | None = None) -> dict[str, Any]:
    """Plain data for ``checks`` (raises ``ConfigError`` for a Python-callable assertion)."""
    out: dict[str, Any] = {}
    if dataset is not None:
        out["dataset"] = dataset
    out["checks"] = [
        {
            "description": check.description,
            "level": check.level.value.lower(),
            "constraints": [
                constraint_to_dict(c, path=f"checks[{i}].constraints[{j}]")
                for j, c in enumerate(check.constraints)
            ],
            **({"row_level": check.row_level} if check.row_level else {}),
        }
        for i, check in enumerate(checks)
    ]
    return out


def dump_checks(checks: Sequence[Check], dataset: str | None = None, *, fmt: str = "yaml") -> str:
    """YAML (default) or JSON text that ``loads_suite`` reads back into equal checks."""
    data = suite_to_dict(checks, dataset)
    if fmt == "json":
        return json.dumps(data, indent=2, allow_nan=False) + "\n"
    if fmt != "yaml":
        raise InvalidArgument(f"fmt: got {fmt!r}; expected 'yaml' or 'json'")
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True)


def save_checks(path: str | Path, checks: Sequence[Check], dataset: str | None = None) -> None:
    """Write ``checks`` to ``path`` (JSON when it ends in .json, else YAML)."""
    fmt = "json" if str(path).endswith(".json") else "yaml"
    Path(path).write_text(dump_checks(checks, dataset, fmt=fmt), encoding="utf-8")
