"""Checking logic: a wrong or partly written output must FAIL."""

from __future__ import annotations

import numpy as np

from pmppbench.check import Tolerance, compare

EXACT = Tolerance("exact")
ELEM = Tolerance("elementwise", rtol=1e-6, atol=1e-6)
NORM = Tolerance("normwise", rtol=1e-5)


def test_identical_passes_every_rule():
    x = np.random.default_rng(0).standard_normal((7, 5)).astype(np.float32)
    for tol in (EXACT, ELEM, NORM):
        assert compare(x.copy(), x, tol).passed


def test_unwritten_poisoned_element_fails_with_its_index():
    ref = np.arange(10, dtype=np.float32) + 1
    out = ref.copy()
    out[7] = np.nan  # the kernel never wrote index 7
    for tol in (EXACT, ELEM, NORM):
        r = compare(out, ref, tol)
        assert not r.passed and r.first_bad == 7
        assert "index 7" in r.detail and "nan" in r.detail


def test_exact_rule_sees_the_smallest_difference():
    ref = np.ones(4, dtype=np.float32)
    out = ref.copy()
    out[2] = np.nextafter(np.float32(1), np.float32(2))
    r = compare(out, ref, EXACT)
    assert not r.passed and r.first_bad == 2


def test_elementwise_tolerance_boundary():
    ref = np.ones(3, dtype=np.float32)
    ok = ref + np.float32(1e-6)
    assert compare(ok, ref, Tolerance("elementwise", rtol=1e-6, atol=1e-6)).passed
    bad = ref.copy()
    bad[1] += np.float32(1e-3)
    r = compare(bad, ref, ELEM)
    assert not r.passed and r.first_bad == 1 and "1 of 3 elements wrong" in r.detail


def test_normwise_fails_on_large_error_and_points_at_worst():
    ref = np.ones((4, 4), dtype=np.float32)
    out = ref.copy()
    out[2, 3] = 1.5
    r = compare(out, ref, NORM)
    assert not r.passed and r.first_bad == 11 and "(2, 3)" in r.detail
    assert r.max_rel_err > 1e-5


def test_shape_mismatch_fails():
    r = compare(np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32), EXACT)
    assert not r.passed and "shape" in r.detail


def test_transpose_is_not_a_copy():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert not compare(a.T.copy(), a, EXACT).passed
