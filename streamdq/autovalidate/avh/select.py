"""Greedy budgeted maximum coverage (AVH, Sec. 4: choosing a program under a target FPR).

Pure driver-side function. Each candidate constraint has an estimated FPR (its cost)
and the set of synthetic corruptions it catches (its coverage). The program's FPR is
bounded by the union bound, the sum of the chosen costs, which must stay <= ``budget``.
``greedy_select`` repeatedly takes the affordable candidate with the best ratio of
newly covered corruptions to cost, then compares the result with the best single
affordable candidate and returns the better one (the classic (1 - 1/e)/2 guarantee of
Khuller, Moss & Naor). Empty candidates give an empty selection.

``depth`` > 1 asks for each corruption to be caught by up to ``depth`` candidates of different
``groups`` (metrics): after the first cover, the budget left buys second covers, cheapest per
newly doubled corruption first. Coverage is measured on one draw of synthetic issues; a
corruption caught by one constraint just past its bound is often missed by that constraint on
the next draw, and a second metric that also catches it is what makes the catch hold
(bench/README.md, ``## autovalidate``). ``depth=1`` is the classic selection.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Set

from streamdq.errors import InvalidArgument


def greedy_select(
    costs: Mapping[str, float],
    coverage: Mapping[str, Set[Hashable]],
    budget: float,
    eps: float = 1e-12,
    *,
    depth: int = 1,
    groups: Mapping[str, Hashable] | None = None,
) -> list[str]:
    """Names of the chosen candidates, in pick order (``depth``/``groups``: module docstring;
    a candidate's group defaults to its name)."""
    if depth < 1:
        raise InvalidArgument(f"depth must be >= 1, got {depth}")
    first = _first_cover(costs, coverage, budget, eps)
    if depth == 1:
        return first
    return _deeper_cover(costs, coverage, budget, eps, depth, groups or {}, first)


def _deeper_cover(
    costs: Mapping[str, float],
    coverage: Mapping[str, Set[Hashable]],
    budget: float,
    eps: float,
    depth: int,
    groups: Mapping[str, Hashable],
    chosen_first: list[str],
) -> list[str]:
    chosen = list(chosen_first)
    spent = sum(costs[n] for n in chosen)
    by: dict[Hashable, set[Hashable]] = {}  # corruption -> groups that cover it
    for name in chosen:
        for e in coverage.get(name, ()):
            by.setdefault(e, set()).add(groups.get(name, name))
    remaining = set(costs) - set(chosen)
    while True:
        best, best_ratio = None, 0.0
        for name in sorted(remaining):
            cost = costs[name]
            if spent + cost > budget + eps:
                continue
            group = groups.get(name, name)
            gain = sum(
                1 for e in coverage.get(name, ()) if len(by.get(e, ())) < depth and group not in by.get(e, ())
            )
            if gain == 0:
                continue
            ratio = gain / max(cost, eps)
            if ratio > best_ratio:
                best, best_ratio = name, ratio
        if best is None:
            return chosen
        chosen.append(best)
        spent += costs[best]
        remaining.discard(best)
        for e in coverage.get(best, ()):
            by.setdefault(e, set()).add(groups.get(best, best))


def _first_cover(
    costs: Mapping[str, float],
    coverage: Mapping[str, Set[Hashable]],
    budget: float,
    eps: float,
) -> list[str]:
    chosen: list[str] = []
    covered: set[Hashable] = set()
    spent = 0.0
    remaining = set(costs)
    while True:
        best, best_ratio = None, 0.0
        for name in sorted(remaining):
            cost = costs[name]
            if spent + cost > budget + eps:
                continue
            gain = len(set(coverage.get(name, ())) - covered)
            if gain == 0:
                continue
            ratio = gain / max(cost, eps)
            if ratio > best_ratio:
                best, best_ratio = name, ratio
        if best is None:
            break
        chosen.append(best)
        covered |= set(coverage.get(best, ()))
        spent += costs[best]
        remaining.discard(best)
    singles = [n for n in costs if costs[n] <= budget + eps]
    if singles:
        top = max(sorted(singles), key=lambda n: len(coverage.get(n, ())))
        if len(coverage.get(top, ())) > len(covered):
            return [top]
    return chosen
