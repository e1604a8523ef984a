"""MaxLength: Longest string length among the values in scope (see ``length.py`` for NULLs).

Runs in the fused scan as one ``max(length)``; states (``MaxState``) merge by taking the
max. No value in scope (empty input, all NULL with null_behavior "ignore", all filtered)
-> Failure (empty). String columns only.
"""

from __future__ import annotations

from dataclasses import dataclass

from streamdq.analyzers.basic_states import MaxState
from streamdq.analyzers.length import LengthExtreme


@dataclass(frozen=True)
class MaxLength(LengthExtreme):
    """Longest length of a string column, as a float.

    Examples
    --------
    Each batch's state is the ``max`` of its lengths; states merge:

    >>> a = MaxLength("name")
    >>> a.metric(a.state_from([4.0], 0).merge(a.state_from([7.0], 0))).value
    7.0
    >>> a.metric(a.empty_state()).empty
    True
    """

    NAME = "MaxLength"
    AGGREGATE = "max"
    STATE = MaxState
