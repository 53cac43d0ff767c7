"""Agreement statistics checked against published and hand-computed values."""

import pytest

from review.agreement import coincidences, krippendorff_alpha, weighted_cohen_kappa

N = None
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four observers,
# twelve units, values 1-5, missing data. Published: nominal .743, ordinal .815, interval .849.
OBS_A = [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N]
OBS_B = [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3]
OBS_C = [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N]
OBS_D = [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N]
TEXTBOOK_UNITS = list(zip(OBS_A, OBS_B, OBS_C, OBS_D, strict=True))


@pytest.mark.parametrize(
    ("metric", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_alpha_matches_krippendorffs_published_example(metric, published):
    assert krippendorff_alpha(TEXTBOOK_UNITS, metric=metric) == pytest.approx(published, abs=5e-4)


def test_ordinal_alpha_matches_a_hand_computed_example():
    # Units (1,1) (1,2) (2,2) (3,3), two raters each, so every pair weighs 1/(m-1) = 1.
    # Coincidences: o11=2, o12=o21=1, o22=2, o33=2  ->  n1=3, n2=3, n3=2, n=8.
    # Ordinal delta^2_ck = (sum_{g=c..k} n_g - (n_c+n_k)/2)^2:
    #   d12 = (6 - 3)^2 = 9,  d13 = (8 - 2.5)^2 = 30.25,  d23 = (5 - 2.5)^2 = 6.25.
    # Observed  sum o_ck d_ck        = 2 * 1 * 9                           = 18
    # Expected  sum n_c n_k d_ck     = 2 * (3*3*9 + 3*2*30.25 + 3*2*6.25) = 600
    # alpha = 1 - (n-1) * 18 / 600 = 1 - 126/600 = 0.79
    assert krippendorff_alpha([(1, 1), (1, 2), (2, 2), (3, 3)]) == pytest.approx(0.79)


def test_alpha_ignores_units_with_a_single_rating():
    with_lonely = [(1, 1), (1, 2), (2, 2), (3, 3), (5, None), (4,)]
    assert krippendorff_alpha(with_lonely) == pytest.approx(0.79)


def test_alpha_is_undefined_without_variation_or_pairs():
    assert krippendorff_alpha([(3, 3), (3, 3)]) is None
    assert krippendorff_alpha([(3,), (4, None)]) is None
    assert krippendorff_alpha([]) is None


def test_alpha_is_one_for_perfect_agreement_and_negative_for_systematic_disagreement():
    assert krippendorff_alpha([(1, 1), (3, 3), (5, 5)]) == pytest.approx(1.0)
    assert krippendorff_alpha([(1, 5), (5, 1), (1, 5)]) < 0


def test_coincidences_weight_pairs_by_one_over_m_minus_one():
    o = coincidences([(1, 1, 2)])
    # three raters: 6 ordered pairs, each weighing 1/2
    assert o == {(1, 1): 1.0, (1, 2): 1.0, (2, 1): 1.0}


PAIRS = [(1, 1), (2, 2), (3, 3), (1, 2)]


def test_quadratic_weighted_kappa_matches_a_hand_computed_example():
    # Observed proportions: o11=o22=o33=o12=1/4. Marginals: rater 1 (1/2, 1/4, 1/4),
    # rater 2 (1/4, 1/2, 1/4). Quadratic weights (i-j)^2.
    # sum w*o = 1 * 1/4 = 0.25
    # sum w*e = 1*(1/2*1/2) + 4*(1/2*1/4) + 1*(1/4*1/4) + 1*(1/4*1/4) + 4*(1/4*1/4) + 1*(1/4*1/2)
    #         = 0.25 + 0.5 + 0.0625 + 0.0625 + 0.25 + 0.125 = 1.25
    # kappa_w = 1 - 0.25 / 1.25 = 0.8
    assert weighted_cohen_kappa(PAIRS, categories=[1, 2, 3]) == pytest.approx(0.8)


def test_linear_weighted_kappa_matches_a_hand_computed_example():
    # Linear weights |i-j|: sum w*o = 0.25;
    # sum w*e = 0.25 + 2*0.125 + 0.0625 + 0.0625 + 2*0.0625 + 0.125 = 0.875
    # kappa_w = 1 - 0.25 / 0.875 = 5/7
    kappa = weighted_cohen_kappa(PAIRS, categories=[1, 2, 3], weights="linear")
    assert kappa == pytest.approx(5 / 7)


def test_kappa_is_symmetric_in_the_two_raters():
    swapped = [(b, a) for a, b in PAIRS]
    assert weighted_cohen_kappa(swapped, categories=[1, 2, 3]) == pytest.approx(0.8)


def test_kappa_is_undefined_when_both_raters_use_one_category():
    assert weighted_cohen_kappa([(4, 4), (4, 4)], categories=[1, 2, 3, 4, 5]) is None
    assert weighted_cohen_kappa([], categories=[1, 2, 3]) is None


def test_kappa_rejects_ratings_outside_the_scale():
    with pytest.raises(ValueError, match="outside the categories"):
        weighted_cohen_kappa([(1, 9)], categories=[1, 2, 3])
