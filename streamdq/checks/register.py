"""Register the built-in constraint vocabulary, by explicit call (pandera's ``register.py``).

Importing a checks module registers nothing. ``register_builtins()`` adds the built-in kinds
(``kinds.py``: Deequ's vocabulary; ``kinds_statistics.py``; ``expression_kind.py``: CEL
expressions; ``kinds_aggregation.py``: aggregation functions) to the registry of
``streamdq.checks.vocabulary``, once per process (idempotent and thread-safe; a call made while
the built-ins are being registered returns at once). ``Constraint.create``, the kind look-ups of
``streamdq.checks.constraint`` and ``register_constraint_kind`` call it first, so a user never
needs to; a user kind registered after it may not reuse a built-in name.

>>> register_builtins()
>>> from streamdq.checks.vocabulary import constraint_kinds
>>> {"is_complete", "has_size", "expression", "aggregation"} <= set(constraint_kinds())
True
"""

from __future__ import annotations

import threading

_LOCK = threading.RLock()
_STARTED = False


def register_builtins() -> None:
    """Add the built-in constraint kinds to the vocabulary (once)."""
    global _STARTED
    with _LOCK:
        if _STARTED:
            return
        _STARTED = True
        from streamdq.checks import expression_kind, kinds, kinds_aggregation, kinds_statistics

        kinds.register()  # Deequ's vocabulary (kinds.py)
        kinds_statistics.register()  # has_range, has_exact_quantile, has_variance, ...
        expression_kind.register()  # expression: a named CEL expression
        kinds_aggregation.register()  # aggregation: user and built-in aggregation functions


__all__ = ["register_builtins"]
