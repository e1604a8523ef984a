"""Greedy budgeted maximum coverage (AVH, Sec. 4: choosing a program under a target FPR).

Pure driver-side function. Each candidate constraint has an estimated FPR (its cost)
and the set of synthetic corruptions it catches (its coverage). The program's FPR is
bounded by the union bound, the sum of the chosen costs, which must stay <= ``budget``.
``greedy_select`` repeatedly takes the affordable candidate with the best ratio of
newly covered corruptions to cost, then compares the result with the best single
affordable candidate and returns the better one (the classic (1 - 1/e)/2 guarantee of
Khuller, Moss & Naor). Empty candidates give an empty selection.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Set


def greedy_select(
    costs: Mapping[str, float],
    coverage: Mapping[str, Set[Hashable]],
    budget: float,
    eps: float = 1e-12,
) -> list[str]:
    """Names of the chosen candidates, in pick order."""
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
