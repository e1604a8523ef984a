from streamdq.autovalidate.avh.select import greedy_select


def test_hand_made_instance_with_known_optimum():
    costs = {"a": 0.0004, "b": 0.0004, "c": 0.0009, "d": 0.0002}
    coverage = {"a": {1, 2, 3}, "b": {4, 5}, "c": {1, 2, 3, 4, 5, 6}, "d": {6}}
    # optimum under 0.001: a + b + d covers {1..6} at 0.001 (c alone also covers 6)
    chosen = greedy_select(costs, coverage, budget=0.001)
    covered = set().union(*(coverage[n] for n in chosen))
    assert covered == {1, 2, 3, 4, 5, 6}
    assert sum(costs[n] for n in chosen) <= 0.001 + 1e-12


def test_falls_back_to_best_single_when_ratio_greedy_is_poor():
    costs = {"cheap": 0.0001, "big": 0.001}
    coverage = {"cheap": {1}, "big": {1, 2, 3, 4, 5}}
    assert greedy_select(costs, coverage, budget=0.001) == ["big"]


def test_budget_respected_and_empty():
    assert greedy_select({}, {}, budget=0.001) == []
    assert greedy_select({"x": 0.01}, {"x": {1}}, budget=0.001) == []
