import numpy as np
import pytest

from protocols import LDPValueError, base_cut, base_pos, norm, norm_cut, norm_mul, norm_sub

X = np.array([5.0, -2.0, 3.0, 0.5, -1.0])


def test_each_method():
    np.testing.assert_allclose(base_pos(X), [5, 0, 3, 0.5, 0])
    np.testing.assert_allclose(norm(X, 10).sum(), 10)
    np.testing.assert_allclose(norm_mul(X, 10), np.array([5, 0, 3, 0.5, 0]) * 10 / 8.5)
    out = norm_sub(X, 6)
    assert out.sum() == pytest.approx(6) and (out >= 0).all()
    np.testing.assert_allclose(out, [4, 0, 2, 0, 0])       # δ = −1
    np.testing.assert_allclose(norm_cut(X, 6), [5, 0, 0, 0, 0])    # largest prefix with sum ≤ 6
    np.testing.assert_allclose(norm_cut(X, 100), base_pos(X))
    cut = base_cut(X, sigma=1.0, alpha=0.05)              # threshold Φ⁻¹(1 − 0.01) ≈ 2.33
    np.testing.assert_allclose(cut, [5, 0, 3, 0, 0])


def test_norm_sub_is_the_simplex_projection():
    rng = np.random.default_rng(0)
    for _ in range(50):
        x = rng.normal(size=10)
        y = norm_sub(x, 1.0)
        assert y.sum() == pytest.approx(1.0) and (y >= 0).all()
        # KKT: a common shift δ on the positive part
        shift = y[y > 0] - x[y > 0]
        np.testing.assert_allclose(shift, shift[0])
        assert (x[y == 0] + shift[0] <= 1e-12).all()


def test_inputs_untouched_and_validated():
    x = X.copy()
    norm_sub(x, 3)
    np.testing.assert_array_equal(x, X)
    with pytest.raises(LDPValueError):
        norm_sub([np.nan, 1], 1)
    with pytest.raises(LDPValueError):
        norm([1, 2], -1)
