"""The JSON decoder's single-pass form: streamdq's JVM function ``io.streamdq.JsonDecode``.

Where it runs: inside the Spark plan, as one Catalyst expression per record
(``io.streamdq.JsonDecodeExpression``, one call in the stage's generated code, in Spark's internal
values: the payload's bytes read in place, STRING or BINARY, the parser's row handed on without
an external ``Row`` conversion, the UTF-8 check and repair in the same call), on batch and
streaming DataFrames alike. A Java UDF did the same work with a copy of every payload, a String
round trip for every string value and two more passes for UTF-8: in JFR samples of the tasks at
50,000 rows, 1.54x the task time of Spark's JSON reader, against 1.38x for the expression
(bench/streaming/decode_part.py measures the whole frame). It needs streamdq's jar on
the session's classpath (``streamdq.spark.get_spark`` puts it there when the machine has a JDK;
``streamdq.jvm.jar``); :func:`json_decode_function` says whether the session has it.

Why hand-written: the expression decoder (``decode.decode_json`` with ``decoder="spark"``) must
read every good record twice, once typed (``from_json``) and once for its key set
(``json_object_keys``), because no Spark built-in gives both; that second token scan alone costs
as much as Spark's whole JSON reader (bench/streaming/decode_part.py). No library does it in
one pass either. The Java code does, and reuses Spark's own JSON parser for the values
(``JacksonParser`` and ``FailureSafeParser`` with from_json's options, session time zone and
corrupt-record handling), listening to the tokens on their way to it for the keys, so that the
typed values are exactly ``from_json``'s. Records that are not clean (anything that failed to
convert, undecodable text, NaN tokens) take the same exact path as the expression decoder,
through Spark's own ``from_json`` to ``MAP<STRING,STRING>``. The two decoders are held equal by
tests/unit/sources/test_sources_decode_jvm.py (edge cases and a hypothesis property).

Empty input gives an empty output; a NULL payload is an ``"empty payload"``.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

JAVA_CLASS = "io.streamdq.JsonDecode"
FUNCTION_PREFIX = "streamdq_decode_json_"

_lock = threading.Lock()
_registered: dict[tuple[int, str], str] = {}
_problems: dict[int, str] = {}
_frame_methods: dict[int, Any] = {}


def unavailable_reason(spark: SparkSession) -> str | None:
    """Why the last :func:`json_decode_function` call on this session found no JVM decoder."""
    return _problems.get(_session_key(spark))


def _session_key(spark: SparkSession) -> int:
    try:
        return int(spark._jsparkSession.hashCode())  # type: ignore[attr-defined]
    except Exception:
        return id(spark)


def function_name(struct: StructType, required: Sequence[str], corrupt: str) -> str:
    """The session function's name for one decoder configuration (a digest of it)."""
    key = "\x1f".join([struct.json(), *sorted(required), corrupt])
    return FUNCTION_PREFIX + hashlib.sha256(key.encode()).hexdigest()[:16]


def json_decode_function(
    spark: SparkSession, struct: StructType, required: Sequence[str], corrupt: str
) -> str | None:
    """Registers the JVM decoder for ``struct`` in ``spark`` and returns its SQL function name, or
    ``None`` when the session cannot run it (no jar on its classpath, a Spark Connect session, a
    jar that does not link against this Spark: see :func:`unavailable_reason`). Registration and
    a driver-side self-test run once per session and configuration."""
    name = function_name(struct, required, corrupt)
    key = (_session_key(spark), name)
    with _lock:
        if key in _registered:
            return _registered[key]
        jvm = getattr(spark, "_jvm", None)
        jss = getattr(spark, "_jsparkSession", None)
        if jvm is None or jss is None:
            _problems[key[0]] = "not a classic Spark session (no JVM gateway)"
            return None
        try:
            cls = jvm.io.streamdq.JsonDecode
            tz = jss.conf().get("spark.sql.session.timeZone")
            cls.selfTest(struct.json(), corrupt, tz)
            cls.register(jss, name, struct.json(), list(required), corrupt)
        except Exception as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            _problems[key[0]] = f"{JAVA_CLASS} is not loadable in this session: {first[:300]}"
            return None
        _problems.pop(key[0], None)
        _registered[key] = name
        return name


def available(spark: SparkSession) -> bool:
    """True when ``spark`` can run the JVM decoder (its reason otherwise: :func:`unavailable_reason`)."""
    return json_decode_function(spark, StructType([]), (), "__probe") is not None


def decoded_struct(function: str, payload: Column) -> Column:
    """The decoder's output struct (never NULL) for ``payload`` (STRING or BINARY, read as it
    is): fields ``typed`` (a struct of the schema's typed values as ``_0.._n-1``, all nullable;
    NULL when nothing could be read), ``error`` (without the UTF-8 reason), ``raw`` (the payload, invalid UTF-8 as
    U+FFFD), ``invalid_utf8``, ``unknown``, ``missing``, ``type_errors``."""
    return F.call_function(function, payload)


def frame(df: DataFrame, spec: dict[str, Any]) -> DataFrame:
    """The decoded frame of ``df`` built on the JVM (``JsonDecode.frame``, ``spec`` as its
    comment says) in ONE gateway call, its projections made of Column objects: no SQL text to
    parse per frame and no py4j list conversion (one call per element). Building the decoded
    frame is paid per microbatch and per batch read. Needs the jar, as the decoder does (call it
    after :func:`json_decode_function` returned a name)."""
    spark = df.sparkSession
    key = _session_key(spark)
    method = _frame_methods.get(key)
    if method is None:
        method = spark._jvm.io.streamdq.JsonDecode.frame  # type: ignore[attr-defined,union-attr]
        _frame_methods[key] = method
    return DataFrame(method(df._jdf, json.dumps(spec)), spark)
