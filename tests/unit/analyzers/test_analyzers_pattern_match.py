"""PatternMatch: regex searched anywhere; empty match and NULL are non-matches; strings only."""

from __future__ import annotations

import pytest

from streamdq.analyzers import PATTERNS, PatternMatch
from tests.unit.analyzers.analyzer_testkit import assert_failed, metric_of, metrics_of, value_of


def _strings(spark, values):
    return spark.createDataFrame([(v,) for v in values], "some string")


def test_builtin_patterns_match_reference_cases(spark):
    cards = [
        "378282246310005",
        "6011111111111117",
        "6011 1111 1111 1117",
        "6011-1111-1111-1117",
        "5555555555554444",
        "5555 5555 5555 4444",
        "5555-5555-5555-4444",
        "4111111111111111",
        "4111 1111 1111 1111",
        "4111-1111-1111-1111",
        "0000111122223333",
        "000011112222333",
        "00001111222233",
    ]
    urls = [
        "http://foo.com/blah_blah",
        "http://foo.com/blah_blah_(wikipedia)",
        "http://foo.bar/?q=Test%20URL-encoded%20stuff",
        "http://➡.ws/䨹",
        "http://⌘.ws/",
        "http://☺.damowmow.com/",
        "http://例子.测试",
        "https://foo_bar.example.com/",
        "http://userid@example.com:8080",
        "http://foo.com/blah_(wikipedia)#cite-1",
        "http://../",
        "h://test",
        "http://.www.foo.bar/",
    ]
    ssns = [
        "111-05-1130",
        "111051130",
        "111-05-000",
        "111-00-000",
        "000-05-1130",
        "666-05-1130",
        "900-05-1130",
        "999-05-1130",
    ]
    assert value_of(_strings(spark, cards), PatternMatch("some", "CREDITCARD")) == pytest.approx(10 / 13)
    assert value_of(_strings(spark, urls), PatternMatch("some", "URL")) == pytest.approx(10 / 13)
    assert value_of(
        _strings(spark, ssns), PatternMatch("some", "SOCIAL_SECURITY_NUMBER_US")
    ) == pytest.approx(2 / 8)
    emails = _strings(spark, ["someone@somewhere.org", "someone@else"])
    assert value_of(emails, PatternMatch("some", "EMAIL")) == 0.5
    assert set(PATTERNS) == {"EMAIL", "URL", "CREDITCARD", "SOCIAL_SECURITY_NUMBER_US"}


def test_regex_is_searched_anywhere_and_null_is_non_match(spark):
    df = _strings(spark, ["1", "a", "xx1yy", None])
    # "1" and "xx1yy" contain a digit; NULL stays in the denominator
    assert value_of(df, PatternMatch("some", r"\d")) == 0.5


def test_empty_match_is_non_match(spark):
    df = _strings(spark, ["bbb", "aab"])
    # a* matches the empty string at position 0 of "bbb": regexp_extract gives '' -> no match
    assert value_of(df, PatternMatch("some", "a*")) == 0.5


def test_where_filter_and_empty_scope(spark):
    df = spark.createDataFrame([(1, "a1"), (2, "b"), (3, "c3"), (4, None)], "id int, some string")
    assert value_of(df, PatternMatch("some", r"\d", where="id >= 2")) == pytest.approx(1 / 3)
    assert_failed(metric_of(df, PatternMatch("some", r"\d", where="id > 9")), empty=True)


def test_non_string_column_fails(spark):
    df = spark.createDataFrame([(1.1,), (None,), (3.2,)], "some double")
    assert_failed(metric_of(df, PatternMatch("some", r"\d\.\d")), contains="needs a string type")


def test_invalid_regex_fails_alone(spark):
    df = _strings(spark, ["a1", "b"])
    bad, good = PatternMatch("some", "(unclosed"), PatternMatch("some", r"\d")
    m_bad, m_good = metrics_of(df, bad, good)
    assert not m_bad.ok
    assert m_good.value == 0.5
