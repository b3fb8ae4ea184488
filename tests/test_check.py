"""Checking logic: a wrong or partly written output must FAIL."""

from __future__ import annotations

import numpy as np

from pmppbench.measure.check import Tolerance, compare

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


# ---- verdicts on large arrays: every chunk boundary, host and device paths ------------------

import pytest  # noqa: E402

from pmppbench.measure import check  # noqa: E402

HOST_LARGE = 3 * check.CHUNK + 12345  # several chunks, the last one partial
STRIDE = check.CHECK_BLOCKS * check.CHECK_THREADS  # the check kernel's grid: one element per thread per pass
DEVICE_LARGE = 32 * STRIDE + 12345  # 32 passes of every thread, the last one partial


def _planted(size: int) -> tuple[int, ...]:
    """The first, last and middle elements, and both sides of every pass boundary below them
    (the host path's chunks; the check kernel's grid-stride passes)."""
    step = CHUNK_OF[size]
    edges = set(range(step, size, step))
    return tuple(sorted({0, size // 2, size - 1} | edges | {c - 1 for c in edges}))


CHUNK_OF = {HOST_LARGE: check.CHUNK, DEVICE_LARGE: STRIDE}


def _large_case(size: int, seed: int = 0):
    ref64 = np.random.default_rng(seed).standard_normal(size)
    return ref64.astype(np.float32), ref64  # an FP32 output and its float64 reference


def _verdicts(size: int, to_device):
    """(rule, planted index) -> (passed, first_bad), for a clean output and wrong elements."""
    LARGE = size
    out32, ref64 = _large_case(size)
    ref32 = out32.copy()
    got = {}
    for name, tol, ref in (("exact", EXACT, ref32), ("elementwise", Tolerance("elementwise", 1e-6, 1e-6), ref64),
                           ("normwise", NORM, ref64)):
        r = compare(to_device(out32), ref, tol)
        got[name, None] = (r.passed, r.first_bad)
        for at in _planted(size):
            bad = out32.copy()
            bad[at] += np.float32(1000.0)  # far past every rule's tolerance
            r = compare(to_device(bad), ref, tol)
            got[name, at] = (r.passed, r.first_bad)
            if name != "normwise" and at < LARGE - 1:  # normwise points at the worst element instead
                bad[LARGE - 1] = np.nan  # a second bad element, later: first_bad stays
                r = compare(to_device(bad), ref, tol)
                got[name, at, "second"] = (r.passed, r.first_bad)
        nan = out32.copy()
        nan[LARGE // 3] = np.nan
        r = compare(to_device(nan), ref, tol)
        got[name, "nan"] = (r.passed, r.first_bad)
    return got


def _expected(size: int):
    LARGE = size
    want = {}
    for name in ("exact", "elementwise", "normwise"):
        want[name, None] = (True, None)
        for at in _planted(size):
            want[name, at] = (False, at)
            if name != "normwise" and at < LARGE - 1:
                want[name, at, "second"] = (False, at)
        want[name, "nan"] = (False, LARGE // 3)
    return want


def test_large_arrays_keep_their_verdicts_and_first_bad_index():
    assert _verdicts(HOST_LARGE, lambda a: a) == _expected(HOST_LARGE)


@pytest.mark.gpu
def test_large_arrays_keep_their_verdicts_on_the_gpu_path():
    from pmppbench.hardware.gpu import cupy

    cp = cupy()
    assert _verdicts(DEVICE_LARGE, cp.asarray) == _expected(DEVICE_LARGE)


@pytest.mark.gpu
def test_the_gpu_path_reports_what_the_host_path_reports():
    from pmppbench.hardware.gpu import cupy

    cp = cupy()
    out32, ref64 = _large_case(DEVICE_LARGE, 1)
    out32[DEVICE_LARGE // 2] += np.float32(1e-3)
    for tol in (Tolerance("elementwise", 1e-6, 1e-6), NORM):
        host, dev = compare(out32, ref64, tol), compare(cp.asarray(out32), ref64, tol)
        assert (host.passed, host.first_bad, host.detail.split(";")[0]) == \
               (dev.passed, dev.first_bad, dev.detail.split(";")[0])
        assert dev.max_abs_err == host.max_abs_err
        assert dev.max_rel_err == pytest.approx(host.max_rel_err, rel=1e-9)


@pytest.mark.parametrize("dtype, ref_dtype", [(np.int32, np.int32), (np.int32, np.int64), (np.uint32, np.uint32)])
def test_the_integer_device_path_reports_what_the_host_path_reports(dtype, ref_dtype):
    """check.array_stats compares an integer output on the GPU with CuPy in passes of
    DEVICE_CHUNK elements (an int32 scan of 2^26 elements is compared where it is); its
    numbers must not depend on the pass size: the host's CHUNK and the device's give the same
    stats exactly, on a right output, on wrong ones across pass borders, and on a poisoned one."""
    from pmppbench.measure.check import CHUNK, DEVICE_CHUNK, array_stats
    from pmppbench.workloads.helpers import POISON_INT

    assert DEVICE_CHUNK != CHUNK
    rng = np.random.default_rng(3)
    n = 2 * DEVICE_CHUNK + 17
    ref = rng.integers(0, 1 << 20, n).astype(ref_dtype)
    tol = Tolerance("exact")
    cases = [ref.astype(dtype)]
    wrong = ref.astype(dtype)
    wrong[[5, CHUNK + 1, DEVICE_CHUNK + 1, n - 1]] += 3
    cases.append(wrong)
    poisoned = ref.astype(dtype)
    poisoned[DEVICE_CHUNK - 1:] = np.array(POISON_INT).astype(dtype)
    cases.append(poisoned)
    for out in cases:
        assert array_stats(out, ref, tol, np, DEVICE_CHUNK) == array_stats(out, ref, tol)


@pytest.mark.parametrize("dtype, ref_dtype", [(np.int32, np.int64), (np.int32, np.int32), (np.uint32, np.uint32)])
@pytest.mark.gpu
def test_an_integer_output_on_the_gpu_gets_the_host_verdict_without_coming_back(dtype, ref_dtype, monkeypatch):
    """check.cu's integer compare gives the host's verdict and numbers, wrapped references
    included (an int32 sum whose int64 reference passed 2^31), and CuPy's array operations,
    each a kernel compiled at first use, are not what checks it."""
    from pmppbench.hardware.gpu import cupy

    cp = cupy()
    ref = (np.arange(3 << 20, dtype=np.int64) * 7).astype(ref_dtype)
    if ref_dtype == np.int64:
        ref[-3:] += 1 << 32  # the output's type wraps these: still exact
    out = ref.astype(dtype)
    out[(1 << 21) + 5] -= 1
    tol = Tolerance("exact")
    assert check._device_kernel(out.dtype, ref.dtype, "exact") in check.CHECK_KERNELS
    host_path = check.array_stats
    for o in (ref.astype(dtype), out):
        host = compare(o, ref, tol)
        monkeypatch.setattr(check, "array_stats", lambda *a, **k: pytest.fail("CuPy's array path was taken"))
        dev = compare(cp.asarray(o), ref, tol)
        monkeypatch.setattr(check, "array_stats", host_path)
        assert (dev.passed, dev.first_bad, dev.detail, dev.max_abs_err, dev.max_rel_err) == \
               (host.passed, host.first_bad, host.detail, host.max_abs_err, host.max_rel_err)


def test_the_check_kernel_covers_fp32_under_every_rule_and_integers_under_the_exact_one():
    kernels = {(o, r, rule): check._device_kernel(o, r, rule) for o in (np.float32, np.int32, np.uint32, np.int64)
               for r in (np.float32, np.float64, np.int32, np.int64, np.uint32) for rule in check.RULES}
    on_device = {key for key, name in kernels.items() if name}
    assert on_device == {(np.float32, r, rule) for r in (np.float32, np.float64) for rule in check.RULES} | \
        {(np.int32, np.int32, "exact"), (np.int32, np.int64, "exact"), (np.uint32, np.uint32, "exact")}
    assert {kernels[k] for k in on_device} == set(check.CHECK_KERNELS)
