"""PatternMatch: the fraction of rows in scope whose string column contains a regex match.

Semantics (Deequ): a row matches when ``regexp_extract(col, pattern, 0) != ''``, so the
(Java) regex is searched anywhere in the value, an empty match is a non-match and NULL is
a non-match that stays in the denominator. String columns only. ``pattern`` is a regex or
one of the built-in names in ``PATTERNS`` (EMAIL, URL, CREDITCARD,
SOCIAL_SECURITY_NUMBER_US). An invalid Java regex fails this analyzer alone when the
pass runs (the plan isolates it). Runs in the fused scan as two conditional counts; states
(``NumMatchesAndCount``) merge by addition. No row in scope -> Failure (empty).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from streamdq.analyzers.base import col, in_scope, rows_in_scope
from streamdq.analyzers.matches import MatchRatio
from streamdq.analyzers.numeric import string_precondition
from streamdq.analyzers.row_aggregate import RowAggregate, count_if

# The reference's built-in patterns (Java regex syntax, as regexp_extract evaluates them).
PATTERNS: dict[str, str] = {
    "EMAIL": (
        r"""(?:[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*|"(?:[\x01-\x08\x0b\x0c"""
        r"""\x0e-\x1f\x21\x23-\x5b\x5d-\x7f]|\\[\x01-\x09\x0b\x0c\x0e-\x7f])*")@(?:(?:[a-z0-9]"""
        r"""(?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?|\[(?:(?:25[0-5]|2[0-4][0-9]"""
        r"""|[01]?[0-9][0-9]?)\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?|[a-z0-9-]*[a-z0-9]:"""
        r"""(?:[\x01-\x08\x0b\x0c\x0e-\x1f\x21-\x5a\x53-\x7f]|\\[\x01-\x09\x0b\x0c\x0e-\x7f])+)\])"""
    ),
    "URL": r"(https?|ftp)://[^\s/$.?#].[^\s]*",
    "SOCIAL_SECURITY_NUMBER_US": (
        r"((?!219-09-9999|078-05-1120)(?!666|000|9\d{2})\d{3}-(?!00)\d{2}-(?!0{4})\d{4})"
        r"|((?!219 09 9999|078 05 1120)(?!666|000|9\d{2})\d{3} (?!00)\d{2} (?!0{4})\d{4})"
        r"|((?!219099999|078051120)(?!666|000|9\d{2})\d{3}(?!00)\d{2}(?!0{4})\d{4})"
    ),
    "CREDITCARD": (
        r"\b(?:3[47]\d{2}([\ \-]?)\d{6}\1\d|(?:(?:4\d|5[1-5]|65)\d{2}|6011)([\ \-]?)\d{4}\2\d{4}\2)\d{4}\b"
    ),
}


def resolve_pattern(pattern: str) -> str:
    """The regex for ``pattern``: a built-in name is replaced by its regex."""
    return PATTERNS.get(pattern, pattern)


@dataclass(frozen=True)
class PatternMatch(MatchRatio):
    """#rows whose value contains a match of ``pattern`` / #rows in scope.

    Examples
    --------
    A batch's state is (rows whose value matches, rows in scope):

    >>> p = PatternMatch("email", PATTERNS["EMAIL"])
    >>> p.metric(p.state_from([9, 10], 0).merge(p.state_from([0, 0], 0))).value
    0.9
    """

    NAME = "PatternMatch"
    column: str
    pattern: str
    where: str | None = None

    def preconditions(self, schema: StructType) -> str | None:
        reason = super().preconditions(schema) or string_precondition(self, schema, self.column)
        if reason is not None:
            return reason
        regex = resolve_pattern(self.pattern)
        if regex == "":
            return "PatternMatch: the pattern is empty"
        return None

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        found = F.regexp_extract(col(self.column), resolve_pattern(self.pattern), 0) != F.lit("")
        hit = in_scope(self.where) & F.coalesce(found, F.lit(False))
        return [count_if(hit), rows_in_scope(self.where)]
