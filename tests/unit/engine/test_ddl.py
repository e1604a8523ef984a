"""The pure-Python DDL parser (connectors/sources/ddl.py) agrees with Spark's own parser.

Valid schemas give the very StructType ``DataType.fromDDL`` gives; schemas Spark rejects are
rejected with a ConfigError naming the key, the field and the position. The parser itself
needs no JVM (checked in a fresh interpreter).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from pyspark.sql.types import DataType
from streamdq.connectors.sources.ddl import parse_ddl

from streamdq.errors import ConfigError

VALID = [
    "id STRING, ts TIMESTAMP, amount DOUBLE",
    "a INT",
    "a int not null, b string comment 'the b'",
    "a: byte, b: decimal(  16 , 8   )",
    "a TINYINT, b SMALLINT, c INTEGER, d BIGINT, e LONG, f SHORT, g FLOAT, h REAL, i BOOLEAN",
    "a DATE, b TIMESTAMP_NTZ, c TIMESTAMP_LTZ, d BINARY",
    "a DECIMAL, b DECIMAL(5), c DEC(7,3), d NUMERIC(38, 0)",
    "a CHAR(5), b VARCHAR(50), c CHARACTER(3)",
    "tags ARRAY<STRING>, m MAP<STRING, DOUBLE>, nested ARRAY<MAP<STRING,ARRAY<INT>>>",
    "s STRUCT<a: INT, b STRING NOT NULL, c: STRUCT<d: DOUBLE>>",
    "s struct<a:int COMMENT 'x', b:array<struct<c:string>>>",
    "`a b` STRING, `weird``name` INT, `ünï` DOUBLE",
    "order STRING, date DATE, timestamp TIMESTAMP, comment STRING, `not` INT",
    "struct<a: int, b: string>",
    "i1 INTERVAL YEAR, i2 INTERVAL YEAR TO MONTH, i3 INTERVAL DAY TO SECOND, i4 INTERVAL HOUR",
    "i5 INTERVAL MINUTE TO SECOND, i6 INTERVAL DAY TO HOUR",
    "v VARIANT, n VOID",
    "  id   STRING ,ts   TIMESTAMP  ",
    "_a1 INT, 1abc STRING",
    "s STRING COLLATE UTF8_LCASE",
    "t TIME, t3 TIME(3)",
]

INVALID = [
    "id STRNG",
    "id STRING,",
    "id",
    "id ARRAY<INT",
    "id MAP<INT>",
    "m MAP<STRING, INT>>",
    "a INT b INT",
    "a DECIMAL(50, 2)",
    "a DECIMAL(5, 7)",
    "a CHAR",
    "a INT NOT",
    "a INTERVAL MONTH TO YEAR",
    "a INTERVAL WEEK",
    "a INT COMMENT",
    "a INT, , b INT",
    "a INT; b INT",
    "a FOO<INT>",
]


def _spark_parse(spark, text: str) -> DataType | None:
    try:
        return DataType.fromDDL(text)
    except Exception:
        return None


@pytest.mark.parametrize("text", VALID)
def test_valid_schemas_parse_as_spark_parses_them(spark, text):
    expected = _spark_parse(spark, text)
    assert expected is not None, f"Spark rejects {text!r}: fix the test case"
    assert parse_ddl(text) == expected


@pytest.mark.parametrize("text", INVALID)
def test_invalid_schemas_are_rejected_like_spark_rejects_them(spark, text):
    assert _spark_parse(spark, text) is None, f"Spark accepts {text!r}: fix the test case"
    with pytest.raises(ConfigError) as info:
        parse_ddl(text, "source.schema")
    assert info.value.key == "source.schema"
    assert "not a valid Spark DDL schema" in info.value.problem or "schema" in info.value.problem


# odd corners: each must be accepted with Spark's very type, or rejected, as Spark does
CORNERS = [
    "a geometry(4326), b geography(4326)",
    "a GEOMETRY",
    "a INTERVAL",
    "a interval year to year",
    "a interval second to second",
    "a STRING COLLATE UNICODE_CI",
    "a string collate utf8_lcase",
    "a int default 0",
    "a int -- a comment",
    "a /* a comment */ INT, b STRING",
    "a `int`",
    "a array<int> not null",
    "a struct<>",
    "a decimal(38)",
    "a char(0)",
    "A INT, a INT",
    "a time(9)",
    'a BIGINT COMMENT "dq"',
    "a int comment 'it\\'s'",
    "a int not null not null",
    "`` INT",
    "a.b INT",
    "a-b INT",
    "a ARRAY<INT NOT NULL>",
    "a INT, struct<b:int>",
    "a double precision",
    "a json",
    "a varchar",
    "a character varying(10)",
    "a long long",
]


@pytest.mark.parametrize("text", CORNERS)
def test_corner_cases_agree_with_spark(spark, text):
    expected = _spark_parse(spark, text)
    try:
        mine = parse_ddl(text)
    except ConfigError:
        mine = None
    assert mine == expected


def test_unknown_type_names_the_field_and_suggests_the_type():
    with pytest.raises(ConfigError) as info:
        parse_ddl("id STRING, amount DOUBEL, ts TIMESTAMP", "source.schema")
    line = info.value.with_file("run.yaml").line()
    assert line.startswith("run.yaml: source.schema: not a valid Spark DDL schema: field 'amount'")
    assert "unknown type 'DOUBEL'" in line and "did you mean DOUBLE?" in line
    assert "character 19" in line and "fix: use a Spark SQL type" in line


def test_empty_schema_is_an_error():
    with pytest.raises(ConfigError, match="empty schema"):
        parse_ddl("  ")


def test_parser_starts_no_jvm():
    code = (
        "from streamdq.connectors.sources.ddl import parse_ddl\n"
        "from pyspark import SparkContext\n"
        "s = parse_ddl('a INT, b ARRAY<STRING>, ts TIMESTAMP')\n"
        "assert s.fieldNames() == ['a', 'b', 'ts'], s\n"
        "assert SparkContext._gateway is None and SparkContext._active_spark_context is None\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
