"""Spark's schema DDL parsed in pure Python: no SparkSession, no JVM.

``parse_ddl(text, key)`` returns the ``StructType`` Spark's ``DataType.fromDDL`` returns for a
source schema such as ``"id STRING, ts TIMESTAMP NOT NULL, tags ARRAY<STRING>, m MAP<STRING,
DOUBLE>, s STRUCT<a: INT, b: DECIMAL(10,2)> COMMENT 'x'"``, or raises
``streamdq.errors.ConfigError(key, problem, fix)`` naming the field and the position.

Why our own parser: pyspark's ``DataType.fromDDL`` and ``_parse_datatype_string`` hand the
string to the JVM (``SparkContext._parse_ddl`` -> ``PythonSQLUtils.parseDataType``), so they
need a running Spark; only the JSON form (``StructType.fromJson``) is pure Python. The run
config is checked before Spark starts (``streamdq run --check-config``), so the DDL grammar
Spark accepts for a schema is implemented here:

* a field list ``name type [NOT NULL] [COMMENT 'text']`` separated by commas (``name: type``
  is accepted too, as in Spark's legacy form), or one ``STRUCT<...>``;
* names: letters, digits and ``_``, or back-quoted (```a b```, a back-quote doubled inside);
* types, case-insensitive: boolean, tinyint/byte, smallint/short, int/integer, bigint/long,
  float/real, double, date, timestamp (the session default, local time zone),
  timestamp_ltz, timestamp_ntz, time[(p)], string [COLLATE name], char(n)/character(n),
  varchar(n), binary, decimal/dec/numeric[(p[, s])], void, variant, geometry(srid),
  geography(srid), ``INTERVAL`` and ``INTERVAL <field> [TO <field>]``, ``ARRAY<t>``,
  ``MAP<k, v>``, ``STRUCT<name[:] t [NOT NULL] [COMMENT 's'], ...>``; SQL comments
  (``-- ...``, ``/* ... */``) are skipped.

A test compares it with Spark's own parser on valid and invalid schemas
(tests/unit/engine/test_ddl.py); ``read_source`` still parses with Spark at start, so a
schema this parser accepts and Spark rejects fails there with a ConfigError too.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    CalendarIntervalType,
    CharType,
    DataType,
    DateType,
    DayTimeIntervalType,
    DecimalType,
    DoubleType,
    FloatType,
    GeographyType,
    GeometryType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
    TimeType,
    VarcharType,
    VariantType,
    YearMonthIntervalType,
)

from streamdq.errors import ConfigError

SIMPLE_TYPES: dict[str, DataType] = {
    "boolean": BooleanType(),
    "tinyint": ByteType(),
    "byte": ByteType(),
    "smallint": ShortType(),
    "short": ShortType(),
    "int": IntegerType(),
    "integer": IntegerType(),
    "bigint": LongType(),
    "long": LongType(),
    "float": FloatType(),
    "real": FloatType(),
    "double": DoubleType(),
    "date": DateType(),
    "timestamp": TimestampType(),
    "timestamp_ltz": TimestampType(),
    "timestamp_ntz": TimestampNTZType(),
    "binary": BinaryType(),
    "void": NullType(),
    "variant": VariantType(),
}
PARAMETRIC = (
    "decimal",
    "dec",
    "numeric",
    "char",
    "character",
    "varchar",
    "string",
    "time",
    "geometry",
    "geography",
)
COMPLEX = ("array", "map", "struct", "interval")
TYPE_NAMES = tuple(sorted({*SIMPLE_TYPES, *PARAMETRIC, *COMPLEX}))
YEAR_MONTH = ("year", "month")
DAY_TIME = ("day", "hour", "minute", "second")

_TOKEN = re.compile(
    r"""(?:\s|--[^\n]*|/\*.*?\*/)*(?:
      (?P<quoted>`(?:[^`]|``)*`)
    | (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
    | (?P<word>[^\W]\w*)
    | (?P<punct><>|[<>(),:])
    )""",
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class _Tok:
    kind: str  # quoted | string | word | punct | end
    text: str
    pos: int

    def word(self) -> str:
        return self.text.lower() if self.kind == "word" else ""


def _tokens(text: str, key: str) -> list[_Tok]:
    out: list[_Tok] = []
    pos = 0
    while pos < len(text):
        if re.fullmatch(r"(?:\s|--[^\n]*|/\*.*?\*/)*", text[pos:], re.DOTALL):
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.lastgroup is None:
            start = len(text[pos:]) - len(text[pos:].lstrip()) + pos
            raise ConfigError(
                key,
                f"not a valid Spark DDL schema: unexpected {text[start]!r} at character {start + 1}",
                "write 'name TYPE, name TYPE, ...'; quote odd names with back-quotes: `my name` STRING",
            )
        out.append(_Tok(m.lastgroup, m.group(m.lastgroup), m.start(m.lastgroup)))
        pos = m.end()
    out.append(_Tok("end", "", len(text)))
    return out


class _Parser:
    def __init__(self, text: str, key: str) -> None:
        self.text = text
        self.key = key
        self.toks = _tokens(text, key)
        self.i = 0
        self.field = ""

    # -- tokens -------------------------------------------------------------------------
    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def next(self) -> _Tok:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def fail(self, problem: str, fix: str | None = None, hint: str = "") -> ConfigError:
        tok = self.tok
        where = "at the end" if tok.kind == "end" else f"at character {tok.pos + 1}"
        if not problem.startswith("unknown type") and tok.kind != "end":
            where = f"at {tok.text!r} ({where[3:]})"
        field = f"field {self.field!r}: " if self.field else ""
        return ConfigError(
            self.key,
            f"not a valid Spark DDL schema: {field}{problem} {where}{hint}",
            fix or "write 'name TYPE, name TYPE, ...', e.g. 'id STRING, ts TIMESTAMP, amount DOUBLE'",
        )

    def accept(self, text: str) -> bool:
        tok = self.tok
        if (tok.kind == "punct" and tok.text == text) or tok.word() == text:
            self.i += 1
            return True
        return False

    def expect(self, text: str, what: str | None = None) -> None:
        if not self.accept(text):
            raise self.fail(f"expected {what or repr(text)}")

    def integer(self) -> int:
        tok = self.tok
        if tok.kind != "word" or not tok.text.isdigit():
            raise self.fail("expected an integer")
        self.i += 1
        return int(tok.text)

    # -- grammar ------------------------------------------------------------------------
    def schema(self) -> StructType:
        if self.tok.word() == "struct" and self.toks[self.i + 1].text in ("<", "<>"):
            parsed = self.data_type()
            assert isinstance(parsed, StructType)
        else:
            parsed = StructType(self.fields(top=True))
        if self.tok.kind != "end":
            raise self.fail("expected ',' or the end of the schema")
        return parsed

    def fields(self, *, top: bool) -> list[StructField]:
        fields = [self.one_field()]
        while self.accept(","):
            fields.append(self.one_field())
        if top:
            self.field = ""
        return fields

    def name(self) -> str:
        tok = self.tok
        if tok.kind == "quoted":
            self.i += 1
            return tok.text[1:-1].replace("``", "`")
        if tok.kind == "word":
            self.i += 1
            return tok.text
        raise self.fail("expected a field name")

    def one_field(self) -> StructField:
        self.field = ""
        name = self.name()
        self.field = name
        self.accept(":")
        dtype = self.data_type()
        nullable = True
        if self.accept("not"):
            self.expect("null", "NULL after NOT")
            nullable = False
        metadata = {}
        if self.accept("comment"):
            tok = self.tok
            if tok.kind != "string":
                raise self.fail("expected a quoted comment")
            self.i += 1
            metadata["comment"] = re.sub(r"\\(.)", r"\1", tok.text[1:-1])
        return StructField(name, dtype, nullable, metadata or None)

    def data_type(self) -> DataType:
        tok = self.tok
        word = tok.word()
        if tok.kind != "word" or word not in TYPE_NAMES:
            if tok.kind in ("word", "quoted"):
                close = difflib.get_close_matches(tok.text.lower(), TYPE_NAMES, n=1, cutoff=0.6)
                hint = f"; did you mean {close[0].upper()}?" if close else ""
                raise self.fail(
                    f"unknown type {tok.text!r}",
                    "use a Spark SQL type: "
                    "STRING, INT, BIGINT, DOUBLE, DECIMAL(p,s), BOOLEAN, DATE, TIMESTAMP, "
                    "ARRAY<t>, MAP<k,v>, STRUCT<...>",
                    hint,
                )
            raise self.fail("expected a type")
        self.i += 1
        if word in SIMPLE_TYPES:
            return SIMPLE_TYPES[word]
        if word in ("decimal", "dec", "numeric"):
            if self.accept("("):
                precision = self.integer()
                scale = self.integer() if self.accept(",") else 0
                self.expect(")")
                if not 1 <= precision <= 38 or scale > precision:
                    raise self.fail(
                        f"DECIMAL({precision},{scale}) is out of range",
                        "precision 1..38 and scale <= precision",
                    )
                return DecimalType(precision, scale)
            return DecimalType(10, 0)
        if word in ("char", "character", "varchar"):
            if not self.accept("("):
                raise self.fail(f"{word.upper()} needs a length", f"write {word.upper()}(10)")
            length = self.integer()
            self.expect(")")
            return VarcharType(length) if word == "varchar" else CharType(length)
        if word == "string":
            if self.accept("collate"):
                collation = self.name()
                canonical = collation.upper().startswith(("UTF8_", "UNICODE"))
                return StringType(collation.upper() if canonical else collation)
            return StringType()
        if word in ("geometry", "geography"):
            if not self.accept("("):
                raise self.fail(f"{word.upper()} needs an SRID", f"write {word.upper()}(4326)")
            srid = self.integer()
            self.expect(")")
            return GeometryType(srid) if word == "geometry" else GeographyType(srid)
        if word == "time":
            if self.accept("("):
                precision = self.integer()
                self.expect(")")
                return TimeType(precision)
            return TimeType()
        if word == "array":
            self.expect("<")
            element = self.data_type()
            self.expect(">")
            return ArrayType(element, True)
        if word == "map":
            self.expect("<")
            k = self.data_type()
            self.expect(",")
            v = self.data_type()
            self.expect(">")
            return MapType(k, v, True)
        if word == "struct":
            if self.accept("<>"):
                return StructType([])
            self.expect("<")
            if self.accept(">"):
                return StructType([])
            outer = self.field
            fields = self.fields(top=False)
            self.field = outer
            self.expect(">")
            return StructType(fields)
        return self.interval()

    def interval(self) -> DataType:
        start = self.tok.word()
        if (
            start not in YEAR_MONTH + DAY_TIME
            and self.tok.text in (",", ">", "")
            or start in ("not", "comment")
        ):
            return CalendarIntervalType()  # a bare INTERVAL
        if start not in YEAR_MONTH + DAY_TIME:
            raise self.fail("INTERVAL needs a unit (YEAR, MONTH, DAY, HOUR, MINUTE, SECOND)")
        self.i += 1
        end = start
        ranged = self.accept("to")
        if ranged:
            end = self.tok.word()
            self.i += 1
        units = YEAR_MONTH if start in YEAR_MONTH else DAY_TIME
        if end not in units or units.index(end) <= units.index(start) and ranged:
            self.i -= 1
            raise self.fail(f"INTERVAL {start.upper()} TO {end.upper()} is not an interval type")
        if units is YEAR_MONTH:
            return YearMonthIntervalType(units.index(start), units.index(end))
        return DayTimeIntervalType(units.index(start), units.index(end))


def parse_ddl(text: str, key: str = "source.schema") -> StructType:
    """The StructType of a Spark DDL schema, without Spark; ConfigError(key, ...) when invalid."""
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(
            key, "missing or empty schema", "give a Spark DDL string like 'id STRING, ts TIMESTAMP'"
        )
    return _Parser(text, key).schema()
