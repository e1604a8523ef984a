"""Payload decoding with bad-record capture (JSON, CSV, raw).

Where it runs: inside the Spark plan (``from_json``/``from_csv``, and for JSON streamdq's own
single-pass JVM function when the session has its jar, see ``decode_jvm``; no Python UDF), on any DataFrame
with a string or binary payload column, batch or streaming. Empty input gives an empty output with
the same columns.

Output contract (every decoder in ``streamdq.connectors.sources`` returns it):

* the typed columns of the schema, in schema order;
* ``_streamdq_error STRING``: NULL for a good record, else the reason(s), joined by ``"; "``:
  ``"empty payload"``, ``"undecodable JSON"``, ``"field amount: expected DOUBLE got 'abc'"``,
  ``"missing required field order_id"``, ``"required field order_id is null"``;
* ``_streamdq_raw STRING``: the raw payload (for the quarantine table), always valid UTF-8
  (invalid byte sequences shown as U+FFFD);
* ``_streamdq_invalid_utf8 BOOLEAN``: TRUE when the payload's bytes were not valid UTF-8 (the
  engine counts these rows as ``InvalidUtf8Rows``). By the ``invalid_utf8`` policy such a record
  is bad with the reason ``"invalid UTF-8"`` (``quarantine``, the default) or kept, its broken
  bytes read as U+FFFD, and only counted (``flag``);
* schema-drift facts, per record, which the engine counts (see :func:`drift_aggregations`):
  ``_streamdq_unknown_fields ARRAY<STRING>`` (top-level keys in the payload that the schema does
  not name: a *new field*), ``_streamdq_missing_fields ARRAY<STRING>`` (schema fields absent from
  the payload: a *missing field*; a key present with JSON ``null`` is not missing), and
  ``_streamdq_type_errors ARRAY<STRING>`` (schema fields whose value is present but does not
  convert to the schema type: a *type change*). The three arrays are NULL for an undecodable
  record and empty when there is nothing to report.

A payload of only whitespace (spaces, tabs, newlines) is an ``"empty payload"`` like an empty
one, in every decoder that reads structure (JSON, CSV).

A bad record never raises: the stream keeps running and the record keeps its raw payload. Typed
columns of a partly bad record keep the values that did convert (Spark's partial results); the
engine analyses only rows with ``_streamdq_error IS NULL``.

JSON rules: the payload must be a JSON object (``[1,2]``, ``"x"``, truncated text are undecodable).
Type checks are for top-level fields only (a bad value inside a nested struct becomes NULL without a
reason). JSON numbers are accepted for STRING fields (Spark renders them as text); a JSON string is
*not* accepted for a numeric field (``"12.5"`` for DOUBLE is a type error): that is exactly the
drift a producer switching to strings causes. Timestamps use Spark's JSON timestamp parsing
(ISO-8601; numbers are epoch seconds).

CSV rules: one record per payload, separator ``,`` unless given. An empty token is NULL, and so
is the null marker when one is given (``null_value``, e.g. ``NA``). Without a header the tokens
bind by position; files with a header bind by name (``decode_csv``'s ``header_col``; a file whose
header does not match the schema is quarantined whole, see :func:`csv_header_binding`). Tokens beyond the schema are reported as unknown fields
named ``_c<N>`` (Spark's naming, 0-based); a line with fewer tokens than the schema reports the
absent trailing fields as missing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, DataType, StringType, StructField, StructType

from streamdq import metadata_columns as contract
from streamdq.errors import ConfigError

# the column contract lives in streamdq.metadata_columns (imported as contract)
ERROR_COL = contract.ERROR
RAW_COL = contract.RAW
UNKNOWN_FIELDS_COL = contract.UNKNOWN_FIELDS
MISSING_FIELDS_COL = contract.MISSING_FIELDS
TYPE_ERRORS_COL = contract.TYPE_ERRORS
INVALID_UTF8_COL = contract.INVALID_UTF8
INVALID_UTF8 = "invalid UTF-8"
UTF8_POLICIES = ("quarantine", "flag")
# How decode_json reads JSON: "auto" (the single-pass JVM decoder when the session has
# streamdq's jar, else Spark's built-ins), "jvm" (that decoder, or a ConfigError), "spark".
JSON_DECODERS = ("auto", "jvm", "spark")
METADATA_PREFIX = contract.PREFIX
DRIFT_COLS = contract.DRIFT

# Longest excerpt of an offending value quoted in a reason.
MAX_QUOTED = 60


def parse_schema(schema: str | StructType, key: str = "source.schema") -> StructType:
    """The schema as a StructType; a DDL string is parsed by Spark (needs an active session).

    Raises ConfigError naming ``key`` when the DDL does not parse or is not a struct.
    """
    if isinstance(schema, StructType):
        return schema
    if not isinstance(schema, str) or not schema.strip():
        raise ConfigError(
            key, "missing or empty schema", "give a Spark DDL string like 'id STRING, ts TIMESTAMP'"
        )
    try:
        parsed = DataType.fromDDL(schema)
    except Exception as exc:  # Spark's ParseException; any failure is a config mistake
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(
            key, f"not a valid Spark DDL schema: {first}", "write 'name TYPE, name TYPE, ...'"
        ) from exc
    if not isinstance(parsed, StructType):
        raise ConfigError(key, f"schema must be a list of fields, got {parsed.simpleString()}", None)
    return parsed


def to_ddl(struct: StructType) -> str:
    """A DDL string for ``struct`` (names back-quoted), as ``from_csv`` wants it."""
    return ", ".join(f"`{f.name.replace('`', '``')}` {f.dataType.simpleString()}" for f in struct.fields)


def metadata_columns(df: DataFrame) -> list[str]:
    """Names of the ``_streamdq_*`` metadata columns of a decoded DataFrame."""
    return [c for c in df.columns if contract.is_metadata(c)]


def data_columns(df: DataFrame) -> list[str]:
    """Names of the data columns of a decoded DataFrame (everything but ``_streamdq_*``)."""
    return contract.data_columns(df.columns)


def drift_aggregations(prefix: str = "") -> list[Column]:
    """Aggregate expressions counting bad records and drift facts on a decoded DataFrame.

    Fuse them into the engine's single ``agg``. Names (with ``prefix``): ``records``,
    ``bad_records``, ``records_with_unknown_fields``, ``records_with_missing_fields``,
    ``records_with_type_errors``. On empty input every count is 0.
    """

    def count_if(cond: Column, name: str) -> Column:
        return F.coalesce(F.sum(F.when(cond, 1).otherwise(0)), F.lit(0)).cast("bigint").alias(prefix + name)

    return [
        F.count(F.lit(1)).alias(prefix + "records"),
        count_if(F.col(ERROR_COL).isNotNull(), "bad_records"),
        count_if(F.size(F.col(UNKNOWN_FIELDS_COL)) > 0, "records_with_unknown_fields"),
        count_if(F.size(F.col(MISSING_FIELDS_COL)) > 0, "records_with_missing_fields"),
        count_if(F.size(F.col(TYPE_ERRORS_COL)) > 0, "records_with_type_errors"),
    ]


def payload_type(df: DataFrame, value_col: str) -> DataType:
    """The payload column's type (STRING or BINARY); ConfigError ``source`` for any other."""
    dtype = df.schema[value_col].dataType
    if isinstance(dtype, BinaryType | StringType):
        return dtype
    raise ConfigError("source", f"payload column {value_col!r} is {dtype.simpleString()}, not string/binary")


def payload_as_string(df: DataFrame, value_col: str) -> Column:
    """The payload column as valid UTF-8 STRING.

    Binary is decoded as UTF-8; invalid byte sequences become U+FFFD (``make_valid_utf8``), so a
    payload with broken bytes can never break a later Arrow/pandas conversion (e.g. quarantine).
    """
    payload_type(df, value_col)
    return F.make_valid_utf8(F.col(value_col).cast("string"))


def payload_invalid_utf8(df: DataFrame, value_col: str) -> Column:
    """TRUE when the payload's bytes are not valid UTF-8; FALSE for valid text and for NULL."""
    return F.coalesce(~F.is_valid_utf8(F.col(value_col).cast("string")), F.lit(False))


def blank(raw: Column) -> Column:
    """TRUE for a NULL payload or one of only whitespace (an ``"empty payload"``)."""
    return raw.isNull() | raw.rlike(r"^\s*$")


def utf8_policy(policy: str, key: str = "source.invalid_utf8") -> str:
    """The validated ``invalid_utf8`` policy (``quarantine`` or ``flag``)."""
    if policy not in UTF8_POLICIES:
        raise ConfigError(key, f"unknown policy {policy!r}", f"use one of {', '.join(UTF8_POLICIES)}")
    return policy


def with_utf8_reason(error: Column, policy: str, flag: Column | None = None) -> Column:
    """``error`` with ``"invalid UTF-8"`` first when the policy quarantines such records
    (``flag``: the UTF-8 flag, by default the ``_streamdq_invalid_utf8`` column)."""
    if utf8_policy(policy) == "flag":
        return error
    invalid = F.col(INVALID_UTF8_COL) if flag is None else flag
    return join_reasons([F.when(invalid, F.lit(INVALID_UTF8)), error])


def column_named(name: str) -> Column:
    """The column called ``name``, taken as a name: dots and back quotes in it are not syntax
    (``F.col("a.b")`` would read field ``b`` of a struct ``a``)."""
    return F.col("`" + name.replace("`", "``") + "`")


def _quote(raw: Column) -> Column:
    short = F.when(
        F.length(raw) > MAX_QUOTED, F.concat(F.substring(raw, 1, MAX_QUOTED), F.lit("..."))
    ).otherwise(raw)
    return F.concat(F.lit("'"), short, F.lit("'"))


def join_reasons(reasons: Sequence[Column]) -> Column:
    """The non-NULL reasons joined by "; ", or NULL when there is none."""
    if not reasons:
        return F.lit(None).cast("string")
    joined = F.concat_ws("; ", *reasons)
    return F.when(joined == "", F.lit(None).cast("string")).otherwise(joined)


def _str_array(items: Iterable[Column]) -> Column:
    items = list(items)
    if not items:
        return F.array().cast("array<string>")
    return F.array_compact(F.array(*items))


def _check_required(schema: StructType, required: Sequence[str], key: str = "source.required") -> None:
    names = set(schema.fieldNames())
    for name in required:
        if name not in names:
            raise ConfigError(
                key,
                f"required field {name!r} is not in the schema",
                f"add it to the schema or remove it from {key}",
            )


def _field_reasons(
    field: StructField, raw_value: Column, present: Column, typed: Column, required: bool
) -> tuple[Column, Column]:
    """(reason or NULL, type-error flag) for one top-level field."""
    expected = field.dataType.simpleString().upper()
    mismatch = raw_value.isNotNull() & typed.isNull()
    type_reason = F.when(
        mismatch, F.concat(F.lit(f"field {field.name}: expected {expected} got "), _quote(raw_value))
    )
    if not required:
        return type_reason, mismatch
    missing = F.when(~present, F.lit(f"missing required field {field.name}")).when(
        raw_value.isNull(), F.lit(f"required field {field.name} is null")
    )
    return F.coalesce(type_reason, missing), mismatch


def _internal_names(struct: StructType, *roles: str) -> dict[str, str]:
    """Names for the decoder's working columns that no schema field uses (Spark resolves names
    case-insensitively, and a typed field aliased to a working column's name would shadow it)."""
    taken = {n.lower() for n in struct.fieldNames()}
    suffix = ""
    while any(f"__sdq_{r}{suffix}".lower() in taken for r in roles):
        suffix += "_"
    return {r: f"__sdq_{r}{suffix}" for r in roles}


def json_decoder(decoder: str, key: str = "source.decoder") -> str:
    """The validated JSON decoder choice (one of ``JSON_DECODERS``)."""
    if decoder not in JSON_DECODERS:
        raise ConfigError(key, f"unknown decoder {decoder!r}", f"use one of {', '.join(JSON_DECODERS)}")
    return decoder


def decode_json(
    df: DataFrame,
    schema: str | StructType,
    value_col: str = "value",
    required: Sequence[str] = (),
    keep: Sequence[tuple[str, str]] = (),
    invalid_utf8: str = "quarantine",
    decoder: str = "auto",
) -> DataFrame:
    """Decode JSON payloads in ``value_col`` into the schema's typed columns plus metadata columns.

    ``keep`` lists ``(input column, output name)`` pairs passed through unchanged (e.g. Kafka's
    offset as ``_streamdq_kafka_offset``). See the module docstring for the output contract.

    ``decoder`` (``JSON_DECODERS``): ``auto`` reads each record in ONE pass with streamdq's JVM
    decoder (``decode_jvm``) when the session has streamdq's jar, else with the built-ins below;
    ``jvm`` insists on the JVM decoder (ConfigError ``source.decoder`` naming why it is missing);
    ``spark`` always uses the built-ins. Both give the same output for every payload.

    How the built-in form works (one full parse per good record): a typed ``from_json`` whose corrupt-record column
    flags any top-level field that did not convert (Spark keeps the partial row), and
    ``json_object_keys`` for the key set (a token scan: values are skipped, not converted).
    A record is *clean* when its keys are known and nothing failed to convert; a clean record
    can have no type error, so its reasons are the required-field ones only. Every other record
    (a conversion failure, or keys ``json_object_keys`` cannot give: ``NaN``, a JSON array,
    bad syntax) takes the exact path: a lenient ``from_json`` to ``MAP<STRING,STRING>`` (raw text
    per key; NULL when undecodable) and per-field reasons computed by higher-order functions over
    the field list, so the generated code stays small whatever the schema's width. (The first
    decoder parsed every record twice and unrolled every reason per field into one generated
    method: 8x Spark's own reader at 50,000 rows; bench/streaming/decode_part.py.)
    """
    struct = parse_schema(schema)
    _check_required(struct, required)
    utf8_policy(invalid_utf8)
    json_decoder(decoder)
    payload_type(df, value_col)
    col = _internal_names(struct, "typed", "keys", "clean", "map", "tnull", "corrupt", "decoded")
    corrupt = col["corrupt"]
    if decoder != "spark":
        from streamdq.connectors.sources.decode_jvm import json_decode_function, unavailable_reason

        function = json_decode_function(df.sparkSession, struct, required, corrupt)
        if function is not None:
            return _decode_json_jvm(df, value_col, struct, function, col["decoded"], keep, invalid_utf8)
        if decoder == "jvm":
            raise ConfigError(
                "source.decoder",
                f"the JVM decoder is not available: {unavailable_reason(df.sparkSession)}",
                "install a JDK (javac) so streamdq can build its jar, or use decoder: auto",
            )
    base = df.select(
        *[column_named(src).alias(dst) for src, dst in keep],
        payload_as_string(df, value_col).alias(RAW_COL),
        payload_invalid_utf8(df, value_col).alias(INVALID_UTF8_COL),
    )
    raw_c = F.col(RAW_COL)
    typed_schema = StructType([*struct.fields, StructField(corrupt, StringType(), True)])
    typed_opts = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": corrupt}
    base = base.select(
        "*",
        F.from_json(raw_c, typed_schema, typed_opts).alias(col["typed"]),
        F.json_object_keys(raw_c).alias(col["keys"]),
    )
    typed = F.col(col["typed"])
    field_names = struct.fieldNames()
    clean = F.col(col["keys"]).isNotNull() & typed.getField(corrupt).isNull()
    # Exact path only for records that are not clean: the lenient map parse and the typed
    # fields' NULL flags (both NULL for a clean record, so they cost nothing there).
    base = base.select(
        "*",
        clean.alias(col["clean"]),
        F.when(~clean, F.from_json(raw_c, "MAP<STRING,STRING>")).alias(col["map"]),
        F.when(
            ~clean,
            F.array(*[typed.getField(n).isNull() for n in field_names])
            if field_names
            else F.array().cast("array<boolean>"),
        ).alias(col["tnull"]),
    )
    is_clean = F.col(col["clean"])
    m = F.col(col["map"])
    tnull = F.col(col["tnull"])
    names = F.array(*[F.lit(n) for n in field_names]) if field_names else F.array().cast("array<string>")
    expected = (
        F.array(*[F.lit(f.dataType.simpleString().upper()) for f in struct.fields])
        if field_names
        else F.array().cast("array<string>")
    )
    required_set = set(required)
    is_required = (
        F.array(*[F.lit(n in required_set) for n in field_names])
        if field_names
        else F.array().cast("array<boolean>")
    )

    def mismatch(n: Column, i: Column) -> Column:
        return m[n].isNotNull() & F.get(tnull, i)

    def field_reason(n: Column, i: Column) -> Column:
        v = m[n]
        type_reason = F.when(
            mismatch(n, i),
            F.concat(F.lit("field "), n, F.lit(": expected "), F.get(expected, i), F.lit(" got "), _quote(v)),
        )
        req = F.get(is_required, i)
        missing = F.when(req & ~F.map_contains_key(m, n), F.concat(F.lit("missing required field "), n)).when(
            req & v.isNull(), F.concat(F.lit("required field "), n, F.lit(" is null"))
        )
        return F.coalesce(type_reason, missing)

    exact_reasons = F.array_join(F.transform(names, field_reason), "; ")
    exact_error = F.when(exact_reasons != "", exact_reasons)
    # A clean record has no type error: a present value that is not NULL converted.
    clean_error = join_reasons(
        [
            F.when(
                ~F.array_contains(F.col(col["keys"]), F.lit(n)), F.lit(f"missing required field {n}")
            ).when(typed.getField(n).isNull(), F.lit(f"required field {n} is null"))
            for n in field_names
            if n in required_set
        ]
    )
    error = (
        F.when(is_clean, clean_error)  # a clean record is an object: not empty
        .when(blank(raw_c), F.lit("empty payload"))
        .when(m.isNull(), F.lit("undecodable JSON"))
        .otherwise(exact_error)
    )
    error = with_utf8_reason(error, invalid_utf8)
    # Top-level keys: NULL for an undecodable record.
    keys = F.when(is_clean, F.col(col["keys"])).otherwise(F.map_keys(m))
    empty_arr = F.array().cast("array<string>")
    type_errors = (
        F.when(is_clean, empty_arr)
        .when(
            m.isNotNull(),
            F.filter(F.transform(names, lambda n, i: F.when(mismatch(n, i), n)), lambda x: x.isNotNull()),
        )
        .otherwise(F.lit(None).cast("array<string>"))
    )
    # The common record has exactly the schema's keys in schema order: an array equality then
    # spares the two hash-set differences (the decoder's costliest expressions otherwise).
    exact_keys = F.coalesce(keys == names, F.lit(False))
    return base.select(
        *[typed.getField(n).alias(n) for n in field_names],
        error.alias(ERROR_COL),
        raw_c.alias(RAW_COL),
        F.when(exact_keys, empty_arr).otherwise(F.array_except(keys, names)).alias(UNKNOWN_FIELDS_COL),
        F.when(exact_keys, empty_arr).otherwise(F.array_except(names, keys)).alias(MISSING_FIELDS_COL),
        type_errors.alias(TYPE_ERRORS_COL),
        F.col(INVALID_UTF8_COL),
        *[F.col(dst) for _, dst in keep],
    )


def _decode_json_jvm(
    df: DataFrame,
    value_col: str,
    struct: StructType,
    function: str,
    decoded: str,
    keep: Sequence[tuple[str, str]],
    invalid_utf8: str,
) -> DataFrame:
    """decode_json's output through the JVM decoder ``function`` (see ``decode_jvm``): one
    expression per row reads the payload column as it is (STRING or BINARY) and gives every
    column, the raw payload made valid UTF-8 and its UTF-8 flag included (one pass over the
    bytes instead of ``make_valid_utf8`` and ``is_valid_utf8``).

    Built on the JVM in one gateway call (``decode_jvm.frame``: two projections of Column
    objects), rather than one Column object per field from Python (some 800 gateway calls for a
    12-field schema, ~0.1 s per frame) or two ``selectExpr`` calls (~33 gateway calls, py4j
    converting their lists element by element, and SQL text parsed per frame).
    """
    from streamdq.connectors.sources.decode_jvm import frame

    spec = {
        "function": function,
        "value": value_col,
        "decoded": decoded,
        "fields": struct.fieldNames(),
        "keep": [[src, dst] for src, dst in keep],
        # with_utf8_reason's rule: the quarantine policy puts the UTF-8 reason first
        "reason": INVALID_UTF8 if utf8_policy(invalid_utf8) == "quarantine" else None,
        "cols": {
            "error": ERROR_COL,
            "raw": RAW_COL,
            "unknown": UNKNOWN_FIELDS_COL,
            "missing": MISSING_FIELDS_COL,
            "type_errors": TYPE_ERRORS_COL,
            "invalid_utf8": INVALID_UTF8_COL,
        },
    }
    return frame(df, spec)


def csv_options(
    sep: str = ",", quote: str = '"', escape: str = "\\", null_value: str | None = None
) -> dict[str, str]:
    """The ``from_csv`` options streamdq uses (typed parse); ``null_value`` is the null marker
    (e.g. ``NA``), read as NULL in addition to the empty token."""
    opts = {"sep": sep, "quote": quote, "escape": escape, "mode": "PERMISSIVE"}
    if null_value is not None:
        opts["nullValue"] = null_value
    return opts


def csv_header_binding(
    header: Column, struct: StructType, sep: str = ",", source: Column | None = None
) -> tuple[Column, Column, Column, Column, Column]:
    """How a file's header line binds to ``struct``:
    ``(in_order, reason, positions, missing, unknown)``.

    The header binds when it names every schema field exactly once and nothing else, in any
    order (names compared trimmed and case-insensitively, as Spark resolves columns). ``in_order``
    is true when the header lists the fields in schema order (the line is then parsed as is);
    ``reason`` is NULL for a binding header, else ``"file <source>: header does not match the
    schema (missing column(s) a, b; unknown column(s) c)"``; ``positions`` is the 0-based token
    index of each schema field in the file's lines (NULL entries when the header does not bind);
    ``missing`` / ``unknown`` are the schema fields the header lacks and the header's names the
    schema lacks (arrays, lower case: the drift facts of every line of a file that does not bind).
    """
    n = len(struct.fields)
    width = n + 16  # header tokens read beyond the schema (unknown columns named in the reason)
    ddl = ", ".join(f"`_h{i}` STRING" for i in range(width))
    parsed = F.from_csv(header, F.lit(ddl), csv_options(sep))
    names_raw = F.array(*[F.lower(F.trim(parsed.getField(f"_h{i}"))) for i in range(width)])
    count = F.size(F.split(F.regexp_replace(header, r'"(?:[^"\\]|\\.)*"', ""), re.escape(sep), -1))
    names = F.slice(names_raw, 1, F.least(count, F.lit(width)))
    schema_names = F.array(*[F.lit(f.name.lower()) for f in struct.fields])
    binds = (count == n) & (
        F.array_sort(F.coalesce(names, F.array().cast("array<string>"))) == F.array_sort(schema_names)
    )
    in_order = binds & (names == schema_names)
    missing_arr = F.array_except(schema_names, F.array_compact(names))
    unknown_arr = F.array_except(F.array_compact(names), schema_names)
    missing = F.array_join(missing_arr, ", ")
    unknown = F.array_join(unknown_arr, ", ")
    dupes = F.size(F.array_distinct(names)) < F.size(names)
    where = F.concat(F.lit("file "), source, F.lit(": ")) if source is not None else F.lit("")
    detail = F.concat_ws(
        "; ",
        F.when(missing != "", F.concat(F.lit("missing column(s) "), missing)),
        F.when(unknown != "", F.concat(F.lit("unknown column(s) "), unknown)),
        F.when(dupes, F.lit("a column named twice")),
        F.when(count > width, F.lit(f"more than {width} columns")),
    )
    reason = F.when(
        ~F.coalesce(binds, F.lit(False)),
        F.concat(where, F.lit("header does not match the schema ("), detail, F.lit(")")),
    )
    positions = F.array(
        *[F.when(binds, F.array_position(names, F.lit(f.name.lower())) - 1) for f in struct.fields]
    )
    return F.coalesce(in_order, F.lit(False)), reason, positions, missing_arr, unknown_arr


BINDING_FIELDS = ("in_order", "reason", "positions", "missing", "unknown")


def csv_header_binding_struct(
    header: Column, struct: StructType, sep: str = ",", source: Column | None = None
) -> Column:
    """:func:`csv_header_binding` as one struct column (fields ``BINDING_FIELDS``): compute it
    once per file, before the file is split into lines, and pass it as ``decode_csv``'s
    ``binding_col`` (the header is then parsed once per file, not once per line)."""
    parts = csv_header_binding(header, struct, sep, source)
    return F.struct(*[c.alias(k) for c, k in zip(parts, BINDING_FIELDS, strict=True)])


def decode_csv(
    df: DataFrame,
    schema: str | StructType,
    value_col: str = "value",
    required: Sequence[str] = (),
    keep: Sequence[tuple[str, str]] = (),
    sep: str = ",",
    header: bool = False,
    null_value: str | None = None,
    header_col: str | None = None,
    is_header_col: str | None = None,
    source_col: str | None = None,
    binding_col: str | None = None,
    invalid_utf8: str = "quarantine",
) -> DataFrame:
    """Decode one CSV line per payload into the schema's typed columns plus metadata columns.

    With ``header=True`` a line whose tokens equal the schema's field names is dropped (a file's
    header line). ``null_value`` is read as NULL (e.g. ``NA``) besides the empty token.

    Binding by name (files with a header line): ``header_col`` names an input column holding the
    header line of the record's file, ``is_header_col`` a boolean input column marking the header
    line itself, ``source_col`` the column naming the file (quoted in reasons). Each line's tokens
    are then read by the header's column names (see :func:`csv_header_binding`): swapped columns
    read correctly. The header line is dropped when it binds; when it does not, every line of
    that file (header included) is bad with the header's reason, so the file is quarantined whole.
    ``binding_col`` (instead of ``header_col``): an input column made by
    :func:`csv_header_binding_struct` once per file.
    See the module docstring for the output contract and the CSV rules.
    """
    struct = parse_schema(schema)
    _check_required(struct, required)
    n = len(struct.fields)
    raw = payload_as_string(df, value_col)
    extra_in = [c for c in (header_col, is_header_col, source_col, binding_col) if c is not None]
    by_name = header_col is not None or binding_col is not None
    utf8_policy(invalid_utf8)
    base = df.select(
        *[column_named(src).alias(dst) for src, dst in keep],
        *[F.col(c).alias(f"__sdq_in_{c}") for c in extra_in],
        raw.alias(RAW_COL),
        payload_invalid_utf8(df, value_col).alias(INVALID_UTF8_COL),
    )
    raw_c = F.col(RAW_COL)
    opts = csv_options(sep, null_value=null_value)
    tokens_ddl = ", ".join(f"`_t{i}` STRING" for i in range(n))
    # Spark's CSV parser makes an empty token and an absent one both NULL, so count the tokens
    # separately: drop quoted sections, then split on the separator.
    unquoted = F.regexp_replace(raw_c, r'"(?:[^"\\]|\\.)*"', "")
    if not by_name:
        base = base.select(
            "*",
            F.from_csv(raw_c, F.lit(tokens_ddl), opts).alias("__sdq_tok"),
            F.from_csv(raw_c, F.lit(to_ddl(struct)), opts).alias("__sdq_typed"),
            F.size(F.split(unquoted, re.escape(sep), -1)).alias("__sdq_ntok"),
        )
        file_reason: Column | None = None
    else:
        source = F.col(f"__sdq_in_{source_col}") if source_col is not None else None
        if binding_col is not None:
            b = F.col(f"__sdq_in_{binding_col}")
            in_order, reason_h, positions, h_missing, h_unknown = (b.getField(k) for k in BINDING_FIELDS)
        else:
            in_order, reason_h, positions, h_missing, h_unknown = csv_header_binding(
                F.col(f"__sdq_in_{header_col}"), struct, sep, source
            )
        base = base.select(
            "*",
            in_order.alias("__sdq_in_order"),
            reason_h.alias("__sdq_hreason"),
            positions.alias("__sdq_pos"),
            F.when(reason_h.isNotNull(), h_missing).alias("__sdq_hmissing"),
            F.when(reason_h.isNotNull(), h_unknown).alias("__sdq_hunknown"),
        )
        if is_header_col is not None:
            is_hdr = F.coalesce(F.col(f"__sdq_in_{is_header_col}"), F.lit(False))
            base = base.where(~is_hdr | F.col("__sdq_hreason").isNotNull())
        # Tokens by position in the file (as many as the schema), then re-ordered by the header.
        file_tok = F.from_csv(raw_c, F.lit(tokens_ddl), opts)
        base = base.select("*", F.array(*[file_tok.getField(f"_t{i}") for i in range(n)]).alias("__sdq_ftok"))
        pos = F.col("__sdq_pos")
        tok_struct = F.struct(
            *[F.get(F.col("__sdq_ftok"), F.get(pos, F.lit(i))).alias(f"_t{i}") for i in range(n)]
        )
        # Out of schema order: the tokens re-joined in schema order (to_csv quotes as needed)
        # and parsed typed like any line; in order (the common case) the line is parsed as is.
        ordered = F.when(F.col("__sdq_in_order"), raw_c).otherwise(F.to_csv(tok_struct, {"sep": sep}))
        ntok_file = F.size(F.split(unquoted, re.escape(sep), -1))
        base = base.select(
            "*",
            F.when(F.col("__sdq_in_order"), file_tok).otherwise(tok_struct).alias("__sdq_tok"),
            F.from_csv(ordered, F.lit(to_ddl(struct)), opts).alias("__sdq_typed"),
            ntok_file.alias("__sdq_ntok"),
        )
        file_reason = F.col("__sdq_hreason")
    tok = F.col("__sdq_tok")
    ntok = F.col("__sdq_ntok")
    if header:
        is_header = F.lit(True)
        for i, name in enumerate(struct.fieldNames()):
            is_header = is_header & (F.trim(tok.getField(f"_t{i}")) == F.lit(name))
        base = base.where(raw_c.isNull() | ~F.coalesce(is_header, F.lit(False)))
    reasons: list[Column] = []
    type_flags: list[Column] = []
    missing_items: list[Column] = []
    required_set = set(required)
    for i, field in enumerate(struct.fields):
        raw_value = tok.getField(f"_t{i}")
        # the field's token position in the line: i, or where the file's header put it
        at = F.lit(i) if not by_name else F.coalesce(F.get(F.col("__sdq_pos"), F.lit(i)), F.lit(i))
        present = ntok > at
        typed = F.col("__sdq_typed").getField(field.name)
        reason, flag = _field_reasons(field, raw_value, present, typed, field.name in required_set)
        reasons.append(reason)
        type_flags.append(F.when(flag, F.lit(field.name)))
        missing_items.append(F.when(~present, F.lit(field.name)))
    error = F.when(blank(raw_c), F.lit("empty payload")).otherwise(join_reasons(reasons))
    if file_reason is not None:
        error = F.coalesce(file_reason, error)
    error = with_utf8_reason(error, invalid_utf8)
    ok = ~blank(raw_c)
    null_arr = F.lit(None).cast("array<string>")
    unknown = (
        F.when(
            ok & (ntok > n),
            F.transform(F.sequence(F.lit(n), ntok - 1), lambda i: F.concat(F.lit("_c"), i.cast("string"))),
        )
        .when(ok, F.array().cast("array<string>"))
        .otherwise(null_arr)
    )
    missing = F.when(ok, _str_array(missing_items)).otherwise(null_arr)
    if file_reason is not None:  # a file whose header does not bind: the header's drift facts
        unknown = F.when(file_reason.isNotNull(), F.col("__sdq_hunknown")).otherwise(unknown)
        missing = F.when(file_reason.isNotNull(), F.col("__sdq_hmissing")).otherwise(missing)
    type_errors = F.when(ok, _str_array(type_flags)).otherwise(null_arr)
    return base.select(
        *[F.col("__sdq_typed").getField(f.name).alias(f.name) for f in struct.fields],
        error.alias(ERROR_COL),
        raw_c.alias(RAW_COL),
        unknown.alias(UNKNOWN_FIELDS_COL),
        missing.alias(MISSING_FIELDS_COL),
        type_errors.alias(TYPE_ERRORS_COL),
        F.col(INVALID_UTF8_COL),
        *[F.col(dst) for _, dst in keep],
    )


def decode_raw(
    df: DataFrame,
    value_col: str = "value",
    keep: Sequence[tuple[str, str]] = (),
    invalid_utf8: str = "quarantine",
) -> DataFrame:
    """No decoding: one ``value STRING`` column; only a NULL payload is bad (``"empty payload"``),
    and, by the ``invalid_utf8`` policy, one whose bytes are not valid UTF-8."""
    utf8_policy(invalid_utf8)
    raw = payload_as_string(df, value_col)
    base = df.select(
        *[column_named(src).alias(dst) for src, dst in keep],
        raw.alias(RAW_COL),
        payload_invalid_utf8(df, value_col).alias(INVALID_UTF8_COL),
    )
    raw_c = F.col(RAW_COL)
    error = with_utf8_reason(F.when(raw_c.isNull(), F.lit("empty payload")), invalid_utf8)
    return base.select(
        raw_c.alias("value"),
        error.alias(ERROR_COL),
        raw_c.alias(RAW_COL),
        *no_drift_columns(),
        F.col(INVALID_UTF8_COL),
        *[F.col(dst) for _, dst in keep],
    )


def no_drift_columns() -> list[Column]:
    """The three drift columns, empty: for decoders whose format has no notion of drift."""
    empty = F.array().cast("array<string>")
    return [empty.alias(UNKNOWN_FIELDS_COL), empty.alias(MISSING_FIELDS_COL), empty.alias(TYPE_ERRORS_COL)]
