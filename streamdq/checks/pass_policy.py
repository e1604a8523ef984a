"""Pass policy (DolphinScheduler's "Pass" step): when a dataset's judgement counts as passed.

Written as ``pass:`` in a check file (or a run config, for its dataset)::

    pass: always              # the default, as in the seed: always passes
    pass: all                 # every check passed
    pass: any                 # at least one check passed
    pass: [no null value, all order is unique]   # these checks passed
    pass: {at_least: 3}       # at least 3 checks passed

"Checks" are the entries of the result document's ``check`` map (``check_names``): every
``expression`` constraint by its ``name``, and every check holding other constraints by its
``description`` (passed = those constraints all passed). ``parse`` checks at load time that
listed names exist and that ``at_least`` is between 1 and the number of checks.

``decide(outcomes)`` is pure: ``outcomes`` maps the check names judged in one document (one
scope, or the whole table in ``verify``) to passed or not. Names listed in the policy but not
judged in this document (their scope is another) are not required; a document that judged no
check passes under every policy except ``at_least``.

Example::

    >>> p = PassPolicy.parse({"at_least": 2}, names=["a", "b", "c"])
    >>> p.decide({"a": True, "b": False, "c": True}), p.to_spec()
    (True, {'at_least': 2})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from streamdq.checks.constraint import did_you_mean
from streamdq.errors import ConfigError

MODES = ("always", "all", "any")


@dataclass(frozen=True)
class PassPolicy:
    """``mode``: always | all | any | checks (the named ``checks`` all pass) | at_least (N pass)."""

    mode: str = "always"
    checks: tuple[str, ...] = ()
    at_least: int = 0

    @classmethod
    def parse(
        cls, value: Any, *, names: Sequence[str], file: str | None = None, path: str = "pass"
    ) -> PassPolicy:
        """The policy written as ``value`` (None: always); ``names``: the check names it may use."""
        if value is None:
            return cls()
        if isinstance(value, str):
            mode = value.strip().lower()
            if mode in MODES:
                return cls(mode)
            raise ConfigError(
                path,
                f"got {value!r}; expected always, all, any, a list of check names or {{at_least: N}}"
                f"{did_you_mean(mode, MODES)}",
                file=file,
            )
        if isinstance(value, list):
            if not value or not all(isinstance(v, str) and v for v in value):
                raise ConfigError(path, f"got {value!r}; expected a non-empty list of check names", file=file)
            for i, name in enumerate(value):
                if name not in names:
                    raise ConfigError(
                        f"{path}[{i}]",
                        f"unknown check {name!r} (checks: {', '.join(names) or 'none'}){did_you_mean(name, names)}",
                        file=file,
                    )
            return cls("checks", tuple(dict.fromkeys(value)))
        if isinstance(value, Mapping) and set(value) == {"at_least"}:
            n = value["at_least"]
            if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= len(names):
                raise ConfigError(
                    f"{path}.at_least",
                    f"got {n!r}; expected an integer from 1 to {len(names)} (the number of checks)",
                    file=file,
                )
            return cls("at_least", at_least=n)
        raise ConfigError(
            path,
            f"got {value!r}; expected always, all, any, a list of check names or {{at_least: N}}",
            file=file,
        )

    def decide(self, outcomes: Mapping[str, bool]) -> bool:
        """Whether a document with these check outcomes passes (see module docstring)."""
        if self.mode == "always":
            return True
        if self.mode == "all":
            return all(outcomes.values())
        if self.mode == "any":
            return not outcomes or any(outcomes.values())
        if self.mode == "checks":
            return all(outcomes[name] for name in self.checks if name in outcomes)
        return sum(1 for ok in outcomes.values() if ok) >= self.at_least

    def to_spec(self) -> Any:
        if self.mode == "checks":
            return list(self.checks)
        if self.mode == "at_least":
            return {"at_least": self.at_least}
        return self.mode

    def describe(self) -> str:
        spec = self.to_spec()
        if isinstance(spec, list):
            return "checks " + ", ".join(spec)
        if isinstance(spec, dict):
            return f"at least {self.at_least} checks"
        return str(spec)
