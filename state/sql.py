"""SQL literals for delta-rs predicates (merge conditions, file pruning). Driver side only."""

from __future__ import annotations

from datetime import UTC, date, datetime

from streamdq.errors import InvalidArgument, InvalidType


def lit(value: object) -> str:
    """A SQL literal: strings quoted with '' escaping, timestamps as UTC ISO-8601 casts."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise InvalidArgument(f"timestamp {value} must be timezone-aware (UTC)")
        text = value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return f"CAST('{text}' AS TIMESTAMP)"
    if isinstance(value, date):
        return f"CAST('{value.isoformat()}' AS DATE)"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    raise InvalidType(f"no SQL literal for {type(value).__name__}")


def conj(*terms: str | None) -> str:
    return " AND ".join(f"({t})" for t in terms if t)
