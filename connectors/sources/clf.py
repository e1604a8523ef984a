"""Access-log lines (Common Log Format and Combined Log Format) parsed into typed columns.

Where it runs: inside the Spark plan (``rlike`` + ``regexp_extract`` + ``to_timestamp``; no Python
UDF), on any DataFrame with a string line column, batch or streaming. Empty input gives an empty
output with the same columns.

Formats (Apache ``mod_log_config``)::

    Common:   %h %l %u %t "%r" %>s %b
              127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /a.gif HTTP/1.0" 200 2326
    Combined: Common + ' "%{Referer}i" "%{User-agent}i"'

Output columns: ``host STRING, ident STRING, user STRING, timestamp TIMESTAMP, method STRING,
path STRING, protocol STRING, status INT, bytes BIGINT, referrer STRING, user_agent STRING`` and the
metadata columns of :mod:`streamdq.connectors.sources.decode` (the drift arrays are always empty,
except ``_streamdq_type_errors = ["timestamp"]`` for an unparseable timestamp).

Conventions:

* ``-`` in host, ident, user, referrer and user agent means "not available" and becomes NULL.
* ``bytes``: ``-`` becomes **0** (Apache writes ``-`` for %b when no body was sent; ``%B`` writes 0).
* a request line that is not ``METHOD PATH PROTOCOL`` (e.g. ``"-"`` or garbage sent to the port)
  keeps the line valid with method/path/protocol NULL: servers do log such requests.
* ``referrer`` and ``user_agent`` are NULL for Common-format lines.
* a line that matches neither format: ``_streamdq_error = "unparseable log line"``; a line whose
  timestamp does not parse: ``"unparseable timestamp '<text>'"``. Typed columns are NULL then.
* a line whose bytes are not valid UTF-8 is parsed from its repaired text (broken sequences
  become U+FFFD) and flagged in ``_streamdq_invalid_utf8`` (counted as ``InvalidUtf8Rows``); by
  the ``invalid_utf8`` policy it is bad with the reason ``"invalid UTF-8"`` first
  (``quarantine``, the default) or kept (``flag``), as in the JSON, CSV and raw decoders.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from streamdq.connectors.sources.decode import (
    ERROR_COL,
    INVALID_UTF8_COL,
    RAW_COL,
    TYPE_ERRORS_COL,
    column_named,
    no_drift_columns,
    payload_as_string,
    payload_invalid_utf8,
    utf8_policy,
    with_utf8_reason,
)

# One regex for both formats; the referrer/user-agent tail is optional.
CLF_REGEX = (
    r"^(\S+) (\S+) (\S+) \[([^\]]+)\] "
    r'"((?:[^"\\]|\\.)*)" '
    r"(\d{3}) (\d+|-)"
    r'( "((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)")?'
    r"\s*$"
)
TIMESTAMP_FORMAT = "dd/MMM/yyyy:HH:mm:ss Z"
CLF_COLUMNS = (
    "host",
    "ident",
    "user",
    "timestamp",
    "method",
    "path",
    "protocol",
    "status",
    "bytes",
    "referrer",
    "user_agent",
)
CLF_SCHEMA_DDL = (
    "host STRING, ident STRING, user STRING, timestamp TIMESTAMP, method STRING, path STRING, "
    "protocol STRING, status INT, bytes BIGINT, referrer STRING, user_agent STRING"
)
# regexp_extract group numbers
_G = {
    "host": 1,
    "ident": 2,
    "user": 3,
    "time": 4,
    "request": 5,
    "status": 6,
    "bytes": 7,
    "tail": 8,
    "referrer": 9,
    "user_agent": 10,
}
REQUEST_REGEX = r"^(\S+) (\S+) (\S+)$"


def parse_clf(
    df: DataFrame,
    value_col: str = "value",
    keep: list[tuple[str, str]] | None = None,
    invalid_utf8: str = "quarantine",
) -> DataFrame:
    """Parse Common/Combined log lines in ``value_col``; see the module docstring for the contract.

    ``keep`` lists ``(input column, output name)`` pairs passed through unchanged.
    ``invalid_utf8``: ``quarantine`` or ``flag`` (see the module docstring).
    """
    keep = keep or []
    utf8_policy(invalid_utf8)
    raw = payload_as_string(df, value_col)
    base = df.select(
        *[column_named(src).alias(dst) for src, dst in keep],
        raw.alias(RAW_COL),
        payload_invalid_utf8(df, value_col).alias(INVALID_UTF8_COL),
    )
    line = F.col(RAW_COL)
    matches = F.coalesce(line.rlike(CLF_REGEX), F.lit(False))

    def group(name: str) -> Column:
        return F.regexp_extract(line, CLF_REGEX, _G[name])

    def dash_null(c: Column) -> Column:
        return F.when((c == "") | (c == "-"), F.lit(None).cast("string")).otherwise(c)

    def empty_null(c: Column) -> Column:
        return F.when(c == "", F.lit(None).cast("string")).otherwise(c)

    time_text = group("time")
    ts = F.try_to_timestamp(time_text, F.lit(TIMESTAMP_FORMAT))  # NULL, never an error, even under ANSI
    combined = group("tail") != ""  # only Combined lines have the tail
    parsed = base.select(
        "*",
        matches.alias("__sdq_ok"),
        dash_null(group("host")).alias("host"),
        dash_null(group("ident")).alias("ident"),
        dash_null(group("user")).alias("user"),
        ts.alias("timestamp"),
        empty_null(F.regexp_extract(group("request"), REQUEST_REGEX, 1)).alias("method"),
        empty_null(F.regexp_extract(group("request"), REQUEST_REGEX, 2)).alias("path"),
        empty_null(F.regexp_extract(group("request"), REQUEST_REGEX, 3)).alias("protocol"),
        group("status").cast("int").alias("status"),
        F.when(group("bytes") == "-", F.lit(0).cast("bigint"))
        .otherwise(group("bytes").try_cast("bigint"))
        .alias("bytes"),
        F.when(combined, dash_null(group("referrer"))).alias("referrer"),
        F.when(combined, dash_null(group("user_agent"))).alias("user_agent"),
        time_text.alias("__sdq_time"),
    )
    ok = F.col("__sdq_ok")
    ts_bad = ok & F.col("timestamp").isNull()
    error = (
        F.when(line.isNull() | (F.trim(line) == ""), F.lit("empty payload"))
        .when(~ok, F.lit("unparseable log line"))
        .when(ts_bad, F.concat(F.lit("unparseable timestamp '"), F.col("__sdq_time"), F.lit("'")))
    )
    error = with_utf8_reason(error, invalid_utf8)
    typed = [F.when(ok, F.col(c)).alias(c) for c in CLF_COLUMNS]
    drift = no_drift_columns()
    drift[2] = (
        F.when(ts_bad, F.array(F.lit("timestamp")))
        .otherwise(F.array().cast("array<string>"))
        .alias(TYPE_ERRORS_COL)
    )
    return parsed.select(
        *typed,
        error.alias(ERROR_COL),
        line.alias(RAW_COL),
        *drift,
        F.col(INVALID_UTF8_COL),
        *[F.col(dst) for _, dst in keep],
    )
