import math

import pytest
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy

from streamdq.autovalidate.avh.distances import chi_squared, cosine, js, kl, l1, linf

P = {"a": 5, "b": 3, "c": 2}
Q = {"a": 2, "b": 3, "d": 5}


def test_identical_distributions_are_zero():
    for f in (l1, linf, cosine, chi_squared, kl, js):
        assert f(P, {k: 2 * v for k, v in P.items()}) == pytest.approx(0.0, abs=1e-9)


def test_values_against_scipy_and_by_hand():
    assert l1(P, Q) == pytest.approx(0.3 + 0.0 + 0.2 + 0.5)
    assert linf(P, Q) == pytest.approx(0.5)
    keys = ["a", "b", "c", "d"]
    p = [P.get(k, 0) / 10 for k in keys]
    q = [Q.get(k, 0) / 10 for k in keys]
    assert js(P, Q) == pytest.approx(jensenshannon(p, q, base=2) ** 2)
    eps = 1e-6
    ps = [x + eps for x in [P.get(k, 0) for k in keys]]
    qs = [x + eps for x in [Q.get(k, 0) for k in keys]]
    assert kl(P, Q) == pytest.approx(entropy(ps, qs))
    assert 0 < cosine(P, Q) < 1
    assert math.isfinite(chi_squared(P, Q)) and chi_squared(P, Q) > 0


def test_empty_side_raises():
    with pytest.raises(ValueError):
        l1({}, Q)
