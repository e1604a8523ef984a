"""The table-driven validator (streamdq.config_schema): every section of the run config is parsed
by it, so its rules are the run config's rules."""

from __future__ import annotations

import doctest
import math

import pytest

import streamdq.config_schema as schema_module
from streamdq.config_schema import (
    REQUIRED,
    Key,
    Table,
    boolean,
    duration,
    integer,
    list_of,
    number,
    one_of,
    optional,
    str_map,
    table,
    text,
)
from streamdq.errors import ConfigError, ErrorCollector, InvalidArgument, UnknownName

INNER = Table("inner", (Key("depth", integer(low=1), default=2, example=3),))
DEMO = Table(
    "demo",
    (
        Key("name", text(), default=REQUIRED, fix="write name: orders"),
        Key("every", duration(), default=60.0),
        Key("on", boolean(), default=True),
        Key("mode", one_of("fast", "safe"), default="safe"),
        Key("ratio", number(0, above=True), default=1.0, example=0.5),
        Key("tags", list_of(text()), default=None),
        Key("headers", str_map(), default=None),
        Key("inner", table(INNER), default=None),
        Key("limit", optional(integer(low=0)), default=10),
    ),
)


def test_doctests_run() -> None:
    assert doctest.testmod(schema_module).failed == 0


def test_defaults_fill_absent_keys_and_values_are_typed() -> None:
    out = DEMO.parse({"name": "x", "every": "2 min", "inner": {}}, "demo")
    assert out == {
        "name": "x",
        "every": 120.0,
        "on": True,
        "mode": "safe",
        "ratio": 1.0,
        "tags": None,
        "headers": None,
        "inner": {"depth": 2},
        "limit": 10,
    }


def test_every_mistake_at_once_each_naming_its_full_dotted_key() -> None:
    raw = {"every": "soon", "on": "yes", "mode": "slow", "tags": ["a", ""], "inner": {"depth": 0}, "x": 1}
    with pytest.raises(ConfigError) as err:
        DEMO.parse(raw, "sec")
    keys = [e.key for e in err.value.errors_list()]
    assert keys == ["sec.x", "sec.name", "sec.every", "sec.on", "sec.mode", "sec.tags[1]", "sec.inner.depth"]
    by_key = {e.key: e for e in err.value.errors_list()}
    assert (
        by_key["sec.name"].problem == "missing required key"
        and by_key["sec.name"].fix == "write name: orders"
    )
    assert by_key["sec.inner.depth"].fix == "write e.g. depth: 3"  # the key's example
    assert by_key["sec.mode"].fix == "use one of fast, safe"  # the check's own fix, the key having none
    assert by_key["sec.x"].problem == "unknown key"
    assert by_key["sec.every"].fix == "write e.g. every: 30 seconds"  # every mistake has a fix
    assert by_key["sec.on"].fix == "write true or false"
    assert all(e.fix for e in err.value.errors_list())


def test_a_collector_gets_the_mistakes_and_stand_ins_replace_bad_keys() -> None:
    errs = ErrorCollector("run.yaml")
    out = DEMO.parse({"name": "x", "ratio": -1}, "", errs)
    assert out["ratio"] == 1.0 and [e.key for e in errs.errors] == ["ratio"]
    assert errs.errors[0].file == "run.yaml"


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, True, "1", 0])
def test_numbers_are_finite_and_not_booleans(bad: object) -> None:
    with pytest.raises(ConfigError, match=r"^r: expected a finite number > 0"):
        number(0, above=True)("r", bad)


def test_a_section_that_is_not_a_mapping() -> None:
    with pytest.raises(ConfigError) as err:
        INNER.parse([1], "inner")
    assert err.value.key == "inner" and err.value.fix == "write e.g. inner: {depth: 3}"


def test_a_table_names_each_key_once() -> None:
    with pytest.raises(InvalidArgument, match="twice"):
        Table("t", (Key("a", boolean()), Key("a", boolean())))
    with pytest.raises(UnknownName):
        DEMO.key("nmae")
    assert DEMO.key("name").required


def test_rows_describe_the_table_for_the_docs() -> None:
    assert DEMO.rows()[0] == ("name", "string", "required", "")
    assert [row[2] for row in DEMO.rows()[1:4]] == ["60", "true", "safe"]
    assert "| `mode` | fast \\| safe | safe |  |" in DEMO.markdown()  # a cell's | is escaped


def test_rules_across_keys_run_when_the_keys_are_valid() -> None:
    def ordered(values: dict[str, object], where: str) -> None:
        if values["low"] > values["high"]:  # type: ignore[operator]
            raise ConfigError(f"{where}.high", "below low", "raise high")

    span = Table(
        "span", (Key("low", integer(), default=0), Key("high", integer(), default=9)), rules=(ordered,)
    )
    assert span.parse({"high": 3}, "s") == {"low": 0, "high": 3}
    with pytest.raises(ConfigError, match=r"^s.high: below low"):
        span.parse({"low": 5, "high": 3}, "s")
    with pytest.raises(ConfigError) as err:  # a bad key: the rule does not run on stand-ins
        span.parse({"low": "x", "high": -1}, "s")
    assert [e.key for e in err.value.errors_list()] == ["s.low"]
