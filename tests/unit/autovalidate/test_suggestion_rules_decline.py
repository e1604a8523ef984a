"""The categorical suggestion rules decline (never raise) on a profile whose histogram keys do
not parse as the column's declared type."""

from __future__ import annotations

import pytest

from streamdq.autovalidate.suggest.rules import (
    CategoricalRange,
    FractionalCategoricalRange,
    ProfiledColumn,
)

ODD_KEYS = {"1": 50, "2": 40, "x": 30, "NullValue": 5}


@pytest.mark.parametrize("rule", [CategoricalRange(), FractionalCategoricalRange()])
@pytest.mark.parametrize("keys", [ODD_KEYS, {"1.5": 60, "2": 60}, {"": 10, "3": 10}])
def test_integral_column_with_non_integer_keys_declines(rule, keys):
    column = ProfiledColumn("n", data_type="Integral", histogram=keys)
    assert rule(column, rows=125) is None


def test_integral_column_with_integer_keys_still_suggests():
    column = ProfiledColumn("n", data_type="Integral", histogram={"1": 50, "2": 40, "NullValue": 5})
    s = CategoricalRange()(column, rows=95)
    assert s is not None
    assert s.constraint["is_contained_in"]["values"] == [1, 2]


def test_inferred_integral_string_column_keeps_string_keys():
    column = ProfiledColumn("n", data_type="Integral", type_inferred=True, histogram={"1": 50, "2": 40})
    s = CategoricalRange()(column, rows=90)
    assert s is not None and s.constraint["is_contained_in"]["values"] == ["1", "2"]
