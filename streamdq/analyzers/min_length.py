"""MinLength: Shortest string length among the values in scope (see ``length.py`` for NULLs).

Runs in the fused scan as one ``min(length)``; states (``MinState``) merge by taking the
min. No value in scope (empty input, all NULL with null_behavior "ignore", all filtered)
-> Failure (empty). String columns only.
"""

from __future__ import annotations

from dataclasses import dataclass

from streamdq.analyzers.basic_states import MinState
from streamdq.analyzers.length import LengthExtreme


@dataclass(frozen=True)
class MinLength(LengthExtreme):
    """Shortest length of a string column, as a float.

    Examples
    --------
    Each batch's state is the ``min`` of its lengths; states merge:

    >>> a = MinLength("name", null_behavior="empty_string")
    >>> a.metric(a.state_from([4.0], 0).merge(a.state_from([7.0], 0))).value
    4.0
    >>> a.to_spec()
    {'analyzer': 'MinLength', 'column': 'name', 'null_behavior': 'empty_string'}
    """

    NAME = "MinLength"
    AGGREGATE = "min"
    STATE = MinState
