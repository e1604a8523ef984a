"""Metric: what an analyzer says about the data, a value or a failure.

A metric names its entity (``Dataset``, ``Column`` or ``Mutlicolumn`` as in Deequ, spelled
``Multicolumn`` here), the analyzer name and the instance (the column or comma-joined
columns, ``*`` for the dataset). ``value`` is a float for scalar metrics; distribution-valued
metrics carry a typed, frozen, hashable value: a ``Distribution`` (Histogram, DataType: bins
with absolute counts and ratios) or ``Quantiles`` (ApproxQuantiles: quantile -> value). Both
are read-only ``dict`` subclasses whose JSON is the plain dict streamdq has always written
(``{"number_of_bins": n, "values": {key: {"absolute": a, "ratio": r}}, "tail_count": t}`` and
``{"0.5": v}``), so stored reports read back (``Metric.from_dict`` types them again by metric
name) and readers that index the dict keep working. A failed metric
carries ``failure`` (the reason) and ``value`` None; ``empty`` marks a failure caused by
no input in scope, which a constraint with a ``where`` filter treats as success
(SEMANTICS.md, constraints). ``approximate`` metrics come from sketches and carry
``error_bound`` (the sketch's own bound, e.g. normalized rank error for KLL, relative
standard error for HLL).

It is a value every layer carries (analyzers make it, checks judge it, ``BatchReport`` holds
it), so it lives at the bottom of the import layers beside ``report`` and ``errors``;
``streamdq.analyzers.metric`` re-exports it.

>>> failure(COLUMN, "Completeness", "id", "no rows", empty=True).ok
False
>>> d = Distribution.of({"a": (3, 0.75), "b": (1, 0.25)}, number_of_bins=2)
>>> d.bins["a"], d.ratio("b"), d.number_of_bins, d.tail_count
(Bin(absolute=3, ratio=0.75), 0.25, 2, None)
>>> m = Metric.from_dict(Metric(COLUMN, "Histogram", "item", d).to_dict())
>>> type(m.value).__name__, m.value == d, m.value["values"]["a"]["absolute"]
('Distribution', True, 3)
>>> d["number_of_bins"] = 5
Traceback (most recent call last):
...
TypeError: Distribution is read-only
>>> Quantiles.of({0.5: 2.0}).quantile(0.5)
2.0
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, NoReturn, Self

from streamdq.errors import StreamdqError

DATASET = "Dataset"
COLUMN = "Column"
MULTICOLUMN = "Multicolumn"


class ValueShapeError(StreamdqError, ValueError):
    """JSON that does not have the shape of a ``Distribution`` or ``Quantiles``."""


def _frozen(value: Any) -> Any:
    """``value`` with every nested dict read-only (lists become tuples)."""
    if isinstance(value, Mapping) and not isinstance(value, FrozenMapping):
        return FrozenMapping({str(k): _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def _plain(value: Any) -> Any:
    """``value`` as plain JSON data (dicts and lists), the inverse of ``_frozen``."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


class FrozenMapping(dict[str, Any]):
    """A read-only, hashable ``dict`` (nested dicts read-only too): equal to the plain dict with
    the same items, written to JSON as that dict, every mutator raises ``TypeError``."""

    __slots__ = ()

    def _read_only(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(f"{type(self).__name__} is read-only")

    __setitem__ = _read_only
    __delitem__ = _read_only
    __ior__ = _read_only  # type: ignore[assignment]
    clear = _read_only
    pop = _read_only
    popitem = _read_only
    setdefault = _read_only
    update = _read_only

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items())))

    def __reduce__(self) -> tuple[Callable[..., Self], tuple[dict[str, Any]]]:
        return (type(self), (dict(self),))

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        return self

    def to_json(self) -> dict[str, Any]:
        """The plain JSON dict (nested dicts plain too)."""
        plain: dict[str, Any] = _plain(self)
        return plain


class Bin(NamedTuple):
    """One bin of a ``Distribution``: its row count and its ratio."""

    absolute: int
    ratio: float


class Distribution(FrozenMapping):
    """The value of a distribution metric (Histogram, DataType): bins by key, each with its
    ``absolute`` count and ``ratio``, the ``number_of_bins`` (all keys, also those not shown) and
    Histogram's ``tail_count`` (rows in the bins not shown; None when the metric has none).
    Build one with ``Distribution.of``; ``from_json`` reads the stored dict."""

    __slots__ = ()

    @classmethod
    def of(
        cls, bins: Mapping[str, tuple[int, float]], number_of_bins: int, tail_count: int | None = None
    ) -> Distribution:
        values = {str(k): {"absolute": int(a), "ratio": float(r)} for k, (a, r) in bins.items()}
        data: dict[str, Any] = {"number_of_bins": int(number_of_bins), "values": values}
        if tail_count is not None:
            data["tail_count"] = int(tail_count)
        return cls(_frozen(data))

    @classmethod
    def from_json(cls, data: Any) -> Distribution:
        """The distribution a stored dict holds; ``ValueShapeError`` when it has another shape."""
        if not isinstance(data, Mapping) or not isinstance(data.get("values"), Mapping):
            raise ValueShapeError(f"not a distribution (no 'values' mapping): {data!r}")
        if set(data) - {"number_of_bins", "values", "tail_count"} or "number_of_bins" not in data:
            raise ValueShapeError(f"not a distribution (keys {sorted(data)}): {data!r}")
        bins: dict[str, tuple[int, float]] = {}
        for key, entry in data["values"].items():
            if not isinstance(entry, Mapping) or set(entry) != {"absolute", "ratio"}:
                raise ValueShapeError(f"not a distribution bin: {key!r}: {entry!r}")
            bins[key] = (entry["absolute"], entry["ratio"])
        try:
            return cls.of(bins, data["number_of_bins"], data.get("tail_count"))
        except (TypeError, ValueError):  # a count or ratio that is not a number
            raise ValueShapeError(f"not a distribution (counts and ratios are numbers): {data!r}") from None

    @property
    def bins(self) -> Mapping[str, Bin]:
        """Every shown bin by key, in the metric's order."""
        return {k: Bin(v["absolute"], v["ratio"]) for k, v in self["values"].items()}

    @property
    def number_of_bins(self) -> int:
        return int(self["number_of_bins"])

    @property
    def tail_count(self) -> int | None:
        tail = self.get("tail_count")
        return None if tail is None else int(tail)

    def absolute(self, key: str) -> int:
        """The row count of bin ``key`` (``KeyError`` when it is not shown)."""
        return int(self["values"][key]["absolute"])

    def ratio(self, key: str) -> float:
        """The ratio of bin ``key`` (``KeyError`` when it is not shown)."""
        return float(self["values"][key]["ratio"])


class Quantiles(FrozenMapping):
    """The value of ApproxQuantiles: each quantile's value, keyed by ``repr(float(q))`` (``"0.5"``)
    as it is stored. ``Quantiles.of({0.5: v})`` builds one, ``quantile(q)`` reads one."""

    __slots__ = ()

    @classmethod
    def of(cls, values: Mapping[float, float] | Iterable[tuple[float, float]]) -> Quantiles:
        pairs = values.items() if isinstance(values, Mapping) else values
        return cls({repr(float(q)): float(v) for q, v in pairs})

    @classmethod
    def from_json(cls, data: Any) -> Quantiles:
        """The quantiles a stored dict holds; ``ValueShapeError`` when it has another shape."""
        if not isinstance(data, Mapping):
            raise ValueShapeError(f"not quantiles: {data!r}")
        try:
            pairs = [(float(q), float(v)) for q, v in data.items()]
        except (TypeError, ValueError):
            raise ValueShapeError(f"not quantiles (quantile -> number): {data!r}") from None
        return cls.of(pairs)

    def quantile(self, q: float) -> float:
        """The value of quantile ``q`` (``KeyError`` when the metric did not ask for it)."""
        return float(self[repr(float(q))])


# the metric names whose value is typed, and the type their stored JSON is read back as
DISTRIBUTION_VALUES: dict[str, type[Distribution] | type[Quantiles]] = {
    "Histogram": Distribution,
    "DataType": Distribution,
    "ApproxQuantiles": Quantiles,
}


def typed_value(name: str, value: Any) -> Any:
    """A stored value of metric ``name`` as its typed value (``DISTRIBUTION_VALUES``); a value of
    another shape (a report written by another version, a user's metric of the same name) is
    returned as it is."""
    kind = DISTRIBUTION_VALUES.get(name)
    if kind is None or isinstance(value, kind) or not isinstance(value, Mapping):
        return value
    try:
        return kind.from_json(value)
    except ValueShapeError:
        return value


@dataclass(frozen=True)
class Metric:
    """One metric (module docstring): ``value`` is a float, a ``Distribution`` / ``Quantiles``
    (the metrics named in ``DISTRIBUTION_VALUES``), a user aggregation's JSON value, or None when
    ``failure`` says why there is none. ``to_dict`` writes plain JSON; ``from_dict`` reads it back,
    typing a distribution's value again."""

    entity: str
    name: str
    instance: str
    value: Any = None
    failure: str | None = None
    empty: bool = False
    approximate: bool = False
    error_bound: float | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def scalar(self) -> float | None:
        """The value as a float when it is scalar and successful, else None."""
        if self.failure is None and isinstance(self.value, int | float) and not isinstance(self.value, bool):
            return float(self.value)
        return None

    def to_dict(self) -> dict[str, Any]:
        value = self.value
        if isinstance(value, float) and not math.isfinite(value):
            value = repr(value)
        elif isinstance(value, FrozenMapping):
            value = value.to_json()
        out: dict[str, Any] = {
            "entity": self.entity,
            "name": self.name,
            "instance": self.instance,
            "value": value,
        }
        if self.failure is not None:
            out["failure"] = self.failure
            out["empty"] = self.empty
        if self.approximate:
            out["approximate"] = True
            out["error_bound"] = self.error_bound
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Metric:
        value = data.get("value")
        if isinstance(value, str) and value in ("nan", "inf", "-inf"):
            value = float(value)
        value = typed_value(data["name"], value)
        return cls(
            entity=data["entity"],
            name=data["name"],
            instance=data["instance"],
            value=value,
            failure=data.get("failure"),
            empty=bool(data.get("empty", False)),
            approximate=bool(data.get("approximate", False)),
            error_bound=data.get("error_bound"),
        )


def success(entity: str, name: str, instance: str, value: Any, **kwargs: Any) -> Metric:
    return Metric(entity, name, instance, value=value, **kwargs)


def failure(entity: str, name: str, instance: str, reason: str, *, empty: bool = False) -> Metric:
    return Metric(entity, name, instance, failure=reason, empty=empty)
