"""Synthetic corruptions (AVH Appendix B): each issue changes what it should and nothing else."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from streamdq.autovalidate.avh.corruptions import (
    ISSUE_TYPES,
    Corruption,
    apply,
    column_kind,
    corruptions_for,
)

N = 400


def make_frame(n: int = N) -> pd.DataFrame:
    rng = np.random.default_rng(42)
    frame = pd.DataFrame(
        {
            "id": np.arange(n, dtype=np.int64),
            "distance": rng.integers(100, 3000, size=n).astype(np.int64),
            "delay": np.round(rng.normal(10, 30, size=n), 1),
            "carrier": rng.choice(["ua", "aa", "dl", "b6", "ev"], size=n).astype(object),
            "tail": np.array([f"N{i:04d}XY" for i in rng.integers(0, 9999, size=n)], dtype=object),
        }
    )
    frame.loc[[3, 17], "delay"] = np.nan
    frame.loc[[5], "carrier"] = None
    return frame


def changed(before: pd.Series, after: pd.Series) -> np.ndarray:
    b, a = before.reset_index(drop=True), after.reset_index(drop=True)
    both_null = b.isna() & a.isna()
    return ((b != a) & ~both_null).to_numpy()


def all_cases() -> list[tuple[str, Corruption]]:
    cases = []
    for c in corruptions_for("numeric"):
        cases += [("distance", c), ("delay", c)]
    for c in corruptions_for("categorical"):
        cases += [("carrier", c), ("tail", c)]
    return cases


CASES = all_cases()
IDS = [f"{col}-{c.name}" for col, c in CASES]


def test_issue_lists_follow_appendix_b():
    numeric = {c.name for c in corruptions_for("numeric")}
    categorical = {c.name for c in corruptions_for("categorical")}
    assert {c.issue for c in corruptions_for("numeric")} == set(ISSUE_TYPES) - {
        "casing_change",
        "whitespace_padding",
    }
    assert {c.issue for c in corruptions_for("categorical")} == set(ISSUE_TYPES) - {"unit_change"}
    assert {"unit_change:x10", "unit_change:x100", "unit_change:x1000"} <= numeric
    assert {"volume_change:x2", "volume_change:x10", "volume_change:x0.5", "volume_change:x0.1"} <= numeric
    assert {"schema_change:1%", "schema_change:10%", "schema_change:100%"} <= categorical
    assert {"increased_nulls:1%", "increased_nulls:50%", "increased_nulls:100%"} <= categorical
    assert "increased_nulls:50%:null" in numeric
    assert {f"distribution_change:{p}:{v}" for p in ("10%", "50%") for v in ("first", "last")} <= numeric
    assert {"insertion:10%", "insertion:50%", "deletion:10%", "deletion:50%"} <= categorical
    assert {"whitespace_padding:10%", "whitespace_padding:50%", "whitespace_padding:100%"} <= categorical
    assert {"casing_change:1%:upper", "casing_change:100%:lower"} <= categorical
    # names are unique and stable
    assert len(numeric) == len(corruptions_for("numeric"))
    assert corruptions_for("numeric") == corruptions_for("numeric")


def test_corruption_validation():
    with pytest.raises(ValueError):
        Corruption("nonsense", 0.1)
    with pytest.raises(ValueError):
        Corruption("schema_change", 2.0)
    with pytest.raises(ValueError):
        Corruption("volume_change", 1.0)
    with pytest.raises(ValueError):
        Corruption("casing_change", 0.1, "sideways")
    assert Corruption("distribution_change", 0.1).variant == "first"
    with pytest.raises(ValueError):
        corruptions_for("temporal")


@pytest.mark.parametrize(("column", "corruption"), CASES, ids=IDS)
def test_only_the_column_changes_input_untouched_deterministic(column, corruption):
    frame = make_frame()
    snapshot = frame.copy(deep=True)
    out1 = apply(frame, column, corruption, np.random.default_rng(7))
    out2 = apply(frame, column, corruption, np.random.default_rng(7))
    pd.testing.assert_frame_equal(frame, snapshot)  # input not mutated
    pd.testing.assert_frame_equal(out1, out2)  # deterministic given the rng
    assert out1 is not frame
    assert list(out1.columns) == list(frame.columns)
    if corruption.issue == "volume_change":
        return
    assert len(out1) == len(frame)
    for other in frame.columns:
        if other != column:
            pd.testing.assert_series_equal(out1[other], frame[other])
    if column_kind(frame[column]) == "numeric":
        assert pd.api.types.is_numeric_dtype(out1[column].dtype)
    # the paper's corruptions at these magnitudes always change something on this frame, except
    # re-casing values already in that case ("tail" is upper case, "carrier" lower case)
    vacuous = corruption.issue == "casing_change" and (column == "tail") == (corruption.variant == "upper")
    if not vacuous:
        assert changed(frame[column], out1[column]).any(), corruption.name


def test_different_seeds_differ():
    frame = make_frame()
    c = Corruption("schema_change", 0.1)
    a = apply(frame, "carrier", c, np.random.default_rng(1))
    b = apply(frame, "carrier", c, np.random.default_rng(2))
    assert not a["carrier"].equals(b["carrier"])


@pytest.mark.parametrize("p", [0.01, 0.1, 1.0])
def test_schema_change_takes_values_from_the_neighbour_of_same_kind(p):
    frame = make_frame()
    out = apply(frame, "carrier", Corruption("schema_change", p), np.random.default_rng(0))
    diff = changed(frame["carrier"], out["carrier"])
    k = min(N - 1, max(1, round(p * N)))  # one carrier is null and never picked
    assert diff.sum() <= k
    assert diff.sum() == min(N - 1, k)  # tail numbers never equal a carrier code
    assert set(out["carrier"][diff]) <= set(frame["tail"])
    # numeric: nearest numeric neighbour of "distance" is "id" (left) vs "delay" (right): tie -> right
    out = apply(frame, "distance", Corruption("schema_change", 1.0), np.random.default_rng(0))
    assert set(out["distance"].dropna()) <= set(frame["delay"].dropna())
    # explicit source
    out = apply(frame, "distance", Corruption("schema_change", 1.0), np.random.default_rng(0), source="id")
    assert set(out["distance"]) <= set(frame["id"])
    assert out["distance"].dtype == np.int64


def test_schema_change_without_a_same_kind_neighbour_casts():
    frame = pd.DataFrame({"n": [1.0, 2.0, 3.0, 4.0], "s": ["a", "bb", "ccc", "dddd"]})
    out = apply(frame, "n", Corruption("schema_change", 1.0), np.random.default_rng(0))
    assert set(out["n"]) <= {1.0, 2.0, 3.0, 4.0}  # lengths of the strings
    assert pd.api.types.is_numeric_dtype(out["n"].dtype)
    frame = pd.DataFrame({"n": [10, 20, 30], "s": ["a", "b", "c"]})
    out = apply(frame, "s", Corruption("schema_change", 1.0), np.random.default_rng(0))
    assert set(out["s"]) <= {"10", "20", "30"}
    single = pd.DataFrame({"s": list("abcdefgh")})
    out = apply(single, "s", Corruption("schema_change", 1.0), np.random.default_rng(0))
    assert sorted(out["s"]) == sorted(single["s"])  # permuted


@pytest.mark.parametrize("factor", [10, 100, 1000])
def test_unit_change_multiplies(factor):
    frame = make_frame()
    out = apply(frame, "distance", Corruption("unit_change", factor), np.random.default_rng(0))
    assert out["distance"].dtype == np.int64
    assert (out["distance"] == frame["distance"] * factor).all()
    out = apply(frame, "delay", Corruption("unit_change", factor), np.random.default_rng(0))
    pd.testing.assert_series_equal(out["delay"], frame["delay"] * factor)


@pytest.mark.parametrize("p", [0.01, 0.1, 1.0])
@pytest.mark.parametrize("variant", ["upper", "lower"])
def test_casing_change_fraction(p, variant):
    frame = make_frame()
    frame["carrier"] = frame["carrier"].map(lambda v: v if v is None else (v.upper() if hash(v) % 2 else v))
    out = apply(frame, "carrier", Corruption("casing_change", p, variant), np.random.default_rng(0))
    diff = changed(frame["carrier"], out["carrier"])
    eligible = frame["carrier"].map(
        lambda v: isinstance(v, str) and (v.upper() if variant == "upper" else v.lower()) != v
    )
    assert diff.sum() == min(int(eligible.sum()), max(1, round(p * N)))
    after = out["carrier"][diff]
    before = frame["carrier"][diff]
    expected = before.str.upper() if variant == "upper" else before.str.lower()
    assert after.tolist() == expected.tolist()


def test_casing_does_not_apply_to_numbers():
    with pytest.raises(ValueError):
        apply(make_frame(), "distance", Corruption("casing_change", 0.1), np.random.default_rng(0))
    with pytest.raises(ValueError):
        apply(make_frame(), "carrier", Corruption("unit_change", 10), np.random.default_rng(0))
    with pytest.raises(KeyError):
        apply(make_frame(), "nope", Corruption("unit_change", 10), np.random.default_rng(0))


@pytest.mark.parametrize("p", [0.01, 0.5, 1.0])
def test_increased_nulls_paper_form_and_real_nulls(p):
    frame = make_frame()
    k = max(1, round(p * N))
    out = apply(frame, "distance", Corruption("increased_nulls", p), np.random.default_rng(0))
    assert out["distance"].dtype == np.int64
    assert (out["distance"] == 0).sum() == k
    out = apply(frame, "carrier", Corruption("increased_nulls", p), np.random.default_rng(0))
    assert (out["carrier"] == "").sum() == min(k, N - 1)
    out = apply(frame, "distance", Corruption("increased_nulls", p, "null"), np.random.default_rng(0))
    assert out["distance"].isna().sum() == k
    assert pd.api.types.is_float_dtype(out["distance"].dtype)
    out = apply(frame, "delay", Corruption("increased_nulls", p, "null"), np.random.default_rng(0))
    assert out["delay"].isna().sum() == min(N, k + 2)
    out = apply(frame, "carrier", Corruption("increased_nulls", p, "null"), np.random.default_rng(0))
    assert out["carrier"].isna().sum() == min(N, k + 1)


@pytest.mark.parametrize("factor", [2, 10, 0.5, 0.1])
def test_volume_change_resamples_whole_rows(factor):
    frame = make_frame()
    out = apply(frame, "carrier", Corruption("volume_change", factor), np.random.default_rng(0))
    assert len(out) == round(N * factor)
    assert list(out.index) == list(range(len(out)))
    # every output row is a whole input row (ids identify rows)
    merged = out.merge(frame, on="id", suffixes=("", "_src"))
    assert len(merged) == len(out)
    for col in ("distance", "carrier", "tail"):
        assert (merged[col].fillna("~") == merged[f"{col}_src"].fillna("~")).all()
    if factor > 1:
        assert set(out["id"]) == set(frame["id"])  # originals kept
    else:
        assert out["id"].is_unique and out["id"].is_monotonic_increasing


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_distribution_change_biased_sample(p):
    frame = make_frame()
    values = np.sort(frame["distance"].to_numpy())
    k = round(p * N)
    first = apply(frame, "distance", Corruption("distribution_change", p, "first"), np.random.default_rng(0))
    last = apply(frame, "distance", Corruption("distribution_change", p, "last"), np.random.default_rng(0))
    assert first["distance"].dtype == np.int64
    assert first["distance"].max() <= values[k - 1]
    assert last["distance"].min() >= values[N - k]
    cats = apply(frame, "carrier", Corruption("distribution_change", p, "first"), np.random.default_rng(0))
    assert cats["carrier"].isna().sum() == 1  # nulls stay where they were
    assert set(cats["carrier"].dropna()) <= set(sorted(frame["carrier"].dropna())[:k])


def test_character_perturbation_keeps_character_classes():
    frame = make_frame()
    out = apply(frame, "tail", Corruption("character_perturbation", 1.0), np.random.default_rng(0))
    for before, after in zip(frame["tail"], out["tail"], strict=True):
        assert len(before) == len(after)
        for b, a in zip(before, after, strict=True):
            assert b != a
            assert (b.isdigit() and a.isdigit()) or (b.isupper() and a.isupper())


@pytest.mark.parametrize("p", [0.01, 0.1])
def test_character_perturbation_rate(p):
    frame = make_frame(2000)
    out = apply(frame, "tail", Corruption("character_perturbation", p), np.random.default_rng(0))
    chars = sum(len(v) for v in frame["tail"])
    flips = sum(
        sum(b != a for b, a in zip(x, y, strict=True))
        for x, y in zip(frame["tail"], out["tail"], strict=True)
    )
    assert abs(flips / chars - p) < 4 * np.sqrt(p * (1 - p) / chars) + 1e-9


def test_numeric_digit_edits_parse_back():
    frame = make_frame()
    out = apply(frame, "distance", Corruption("character_perturbation", 1.0), np.random.default_rng(0))
    assert out["distance"].dtype == np.int64
    for before, after in zip(frame["distance"], out["distance"], strict=True):
        b, a = str(before), str(after).rjust(len(str(before)), "0")
        assert len(b) == len(a) and all(x != y for x, y in zip(b, a, strict=True))
    ins = apply(frame, "distance", Corruption("insertion", 0.5), np.random.default_rng(0))
    assert ins["distance"].dtype == np.int64
    grown = changed(frame["distance"], ins["distance"])
    assert 0.35 * N < grown.sum() <= 0.5 * N + 4 * np.sqrt(N * 0.25)
    assert (
        ins["distance"][grown].astype(str).str.len() >= frame["distance"][grown].astype(str).str.len()
    ).all()
    dele = apply(frame, "distance", Corruption("deletion", 0.5), np.random.default_rng(0))
    shrunk = changed(frame["distance"], dele["distance"])
    assert (dele["distance"][shrunk] < frame["distance"][shrunk]).all()  # positive ints lose a digit
    neg = pd.DataFrame({"v": [-5.0, -7.0, 3.0, 1.5]})
    out = apply(neg, "v", Corruption("deletion", 0.5), np.random.default_rng(3))
    assert pd.api.types.is_float_dtype(out["v"].dtype)  # '-5' -> '-' reads as missing
    ints = pd.DataFrame({"v": np.array([5, 7, 3, 9], dtype=np.int64)})
    out = apply(ints, "v", Corruption("deletion", 0.5), np.random.default_rng(3))
    assert pd.api.types.is_numeric_dtype(out["v"].dtype)
    assert out["v"].isna().sum() == changed(ints["v"], out["v"]).sum()


def test_insertion_and_deletion_on_strings():
    frame = make_frame()
    ins = apply(frame, "tail", Corruption("insertion", 0.5), np.random.default_rng(0))
    dele = apply(frame, "tail", Corruption("deletion", 0.5), np.random.default_rng(0))
    di, dd = changed(frame["tail"], ins["tail"]), changed(frame["tail"], dele["tail"])
    assert (ins["tail"][di].str.len() == frame["tail"][di].str.len() + 1).all()
    assert (dele["tail"][dd].str.len() == frame["tail"][dd].str.len() - 1).all()
    assert abs(di.mean() - 0.5) < 0.1 and abs(dd.mean() - 0.5) < 0.1


@pytest.mark.parametrize("p", [0.1, 0.5, 1.0])
def test_whitespace_padding(p):
    frame = make_frame()
    out = apply(frame, "tail", Corruption("whitespace_padding", p), np.random.default_rng(0))
    diff = changed(frame["tail"], out["tail"])
    assert diff.sum() == round(p * N)
    padded = out["tail"][diff]
    assert (padded.str.strip() == frame["tail"][diff]).all()
    assert (padded.str.len() == frame["tail"][diff].str.len() + 1).all()
    if p == 1.0:
        assert padded.str.startswith(" ").any() and padded.str.endswith(" ").any()


@pytest.mark.parametrize("side", ["leading", "trailing"])
def test_one_sided_padding_pads_every_value_on_the_same_side(side):
    frame = make_frame()
    out = apply(frame, "tail", Corruption("whitespace_padding", 1.0, side), np.random.default_rng(0))
    values = out["tail"].dropna()
    assert (values.str.startswith(" ") if side == "leading" else values.str.endswith(" ")).all()
    assert not (values.str.endswith(" ") if side == "leading" else values.str.startswith(" ")).any()
    # padding every value on one side keeps the distinct count (random sides double it)
    assert out["tail"].nunique() == frame["tail"].nunique()
    with pytest.raises(ValueError):
        Corruption("whitespace_padding", 1.0, "both")


def test_added_variants_come_after_the_papers_forms():
    """A catalogue index (and every seed derived from one) keeps naming the same corruption:
    the one-sided padding variants are appended at the end of the categorical catalogue."""
    names = [c.name for c in corruptions_for("categorical")]
    assert names[-6:] == [
        f"whitespace_padding:{p}:{side}" for side in ("leading", "trailing") for p in ("10%", "50%", "100%")
    ]
    assert names.index("whitespace_padding:100%") == len(names) - 7


@pytest.mark.parametrize(("column", "corruption"), CASES[::3], ids=IDS[::3])
def test_empty_frame(column, corruption):
    empty = make_frame().iloc[:0]
    out = apply(empty, column, corruption, np.random.default_rng(0))
    assert len(out) == 0 and list(out.columns) == list(empty.columns)
    assert out is not empty


def test_category_and_string_dtypes():
    frame = make_frame()
    frame["carrier"] = frame["carrier"].astype("category")
    out = apply(frame, "carrier", Corruption("casing_change", 1.0, "upper"), np.random.default_rng(0))
    assert out["carrier"].dropna().str.isupper().all()
    frame["tail"] = frame["tail"].astype("string")
    out = apply(frame, "tail", Corruption("increased_nulls", 0.5, "null"), np.random.default_rng(0))
    assert out["tail"].dtype == "string" and out["tail"].isna().sum() == N // 2
