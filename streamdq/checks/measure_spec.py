"""The ``measures:`` list of a check file: validated at load time, without Spark.

Format (beside ``checks:``; docs/measure-check-pass.md)::

    measures:
      - name: Null Count
        sql: select sum(cast((col1 is null) as int)) from data
        result_type: single_value          # single_value | list | map
        description: check null            # optional

Every mistake is a ``ConfigError`` naming the file, the key (``measures[1].sql``), the measure
and the problem; all measures' mistakes are reported at once. The SQL is parsed here (syntax,
one SELECT, only the table ``data``: ``streamdq.checks.measure_sql``); its columns are checked
against a schema by ``measure_column_errors`` once the schema is known (the source's DDL in
``streamdq run``'s config check, the DataFrame's schema in ``verify``).

>>> [m.name for m in measures_from_list([{"name": "n", "sql": "select count(*) from data",
...                                         "result_type": "single_value"}])]
['n']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from streamdq.checks.constraint import did_you_mean
from streamdq.checks.measure import RESULT_TYPES, Measure
from streamdq.checks.measure_sql import MeasureSqlError, parse_query, select_width, unknown_columns
from streamdq.errors import ConfigError, ConfigErrors

MEASURE_KEYS = ("name", "sql", "result_type", "description")


def measures_from_list(items: Any, *, file: str | None = None, path: str = "measures") -> list[Measure]:
    """Validate a list of measure mappings (every mistake reported at once)."""
    measures, errors = checked_measures(items, file=file, path=path)
    if errors:
        raise ConfigErrors(errors)
    return measures


def checked_measures(
    items: Any,
    columns: Sequence[str] | None = None,
    *,
    file: str | None = None,
    path: str = "measures",
) -> tuple[list[Measure], list[ConfigError]]:
    """The valid measures of ``items`` and every mistake (each keyed by its own index); with
    ``columns``, a measure reading a column not among them is a mistake too."""
    if items is None:
        return [], []
    if not isinstance(items, list):
        problem = f"got {type(items).__name__}; expected a list of measures"
        return [], [ConfigError(path, problem, file=file)]
    errors: list[ConfigError] = []
    out: list[Measure] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        try:
            m = measure_from_dict(item, file=file, path=f"{path}[{i}]")
        except ConfigError as exc:
            errors.extend(exc.errors_list())
            continue
        if m.name in seen:
            errors.append(
                ConfigError(
                    f"{path}[{i}].name",
                    f"measure {m.name!r}: name already used by {path}[{seen[m.name]}]; names must be unique",
                    file=file,
                )
            )
            continue
        seen[m.name] = i
        out.append(m)
        if columns is not None:
            errors += measure_column_errors([m], columns, file=file, path=path, first_index=i)
    return out, errors


def measure_from_dict(item: Any, *, file: str | None = None, path: str = "measures[0]") -> Measure:
    if not isinstance(item, dict):
        raise ConfigError(
            path,
            f"got {item!r}; expected a mapping with keys name, sql, result_type (and description)",
            file=file,
        )
    which = f"measure {item['name']!r}: " if isinstance(item.get("name"), str) else ""
    for key in item:
        if key not in MEASURE_KEYS:
            raise ConfigError(
                f"{path}.{key}",
                f"{which}unknown key{did_you_mean(str(key), MEASURE_KEYS)} "
                f"(expected keys: {', '.join(MEASURE_KEYS)})",
                file=file,
            )
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{path}.name", f"got {name!r}; expected a non-empty measure name", file=file)
    sql = item.get("sql")
    if not isinstance(sql, str) or not sql.strip():
        raise ConfigError(
            f"{path}.sql",
            f"measure {name!r}: got {sql!r}; expected a SQL query such as select count(*) from data",
            file=file,
        )
    result_type = item.get("result_type", "single_value")
    if isinstance(result_type, str):
        result_type = result_type.strip().lower()
    if result_type not in RESULT_TYPES:
        raise ConfigError(
            f"{path}.result_type",
            f"measure {name!r}: got {result_type!r}; expected one of {', '.join(RESULT_TYPES)}",
            file=file,
        )
    description = item.get("description", "") or ""
    if not isinstance(description, str):
        raise ConfigError(
            f"{path}.description", f"measure {name!r}: got {description!r}; expected a string", file=file
        )
    try:
        tree = parse_query(sql)
    except MeasureSqlError as exc:
        raise ConfigError(f"{path}.sql", f"measure {name!r}: {exc}", file=file) from None
    width = select_width(tree)
    if result_type == "single_value" and width is not None and width != 1:
        raise ConfigError(
            f"{path}.result_type",
            f"measure {name!r}: result_type single_value needs one selected column; the query selects {width}",
            file=file,
            fix="use result_type list or map, or select one value",
        )
    return Measure(name, sql, result_type, description)


def measure_column_errors(
    measures: Sequence[Measure],
    columns: Sequence[str],
    *,
    file: str | None = None,
    path: str = "measures",
    first_index: int = 0,
) -> list[ConfigError]:
    """One error per measure whose SQL names a column that ``columns`` lacks (nothing runs)."""
    errors: list[ConfigError] = []
    for i, m in enumerate(measures, start=first_index):
        try:
            problem = unknown_columns(parse_query(m.sql), columns)
        except MeasureSqlError as exc:
            problem = str(exc)
        if problem is not None:
            errors.append(ConfigError(f"{path}[{i}].sql", f"measure {m.name!r}: {problem}", file=file))
    return errors
