"""Comparing a GPU result with the CPU reference.

Three rules, chosen per workload:
- "exact": bit-for-bit equality (transpose and copies are permutations of the input).
- "elementwise": |out - ref| <= atol + rtol * |ref| at every index (vecadd, stencil, stream).
- "normwise": ||out - ref||_F / ||ref||_F <= rtol (GEMM: FP32 dot products accumulate
  rounding in an order the CPU does not reproduce, so a per-element bound would be either
  too loose or flaky; the normwise error is the standard measure).
In every rule a non-finite output never passes: outputs are poisoned with NaN before the
run, so an element the kernel never wrote is caught here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Tolerance:
    rule: str = "elementwise"  # "exact" | "elementwise" | "normwise"
    rtol: float = 0.0
    atol: float = 0.0

    def describe(self) -> str:
        if self.rule == "exact":
            return "bit-exact"
        if self.rule == "normwise":
            return f"||out-ref||/||ref|| <= {self.rtol:g}"
        return f"|out-ref| <= {self.atol:g} + {self.rtol:g}*|ref|"


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    max_abs_err: float
    max_rel_err: float
    first_bad: int | None  # flat index of the first failing element, if any
    detail: str  # one line for the table / error message

    @property
    def status(self) -> str:
        return "PASS" if self.passed else "FAIL"


def _where(index: int, shape: tuple[int, ...]) -> str:
    if len(shape) <= 1:
        return f"index {index}"
    coords = np.unravel_index(index, shape)
    return f"index {index} {tuple(int(c) for c in coords)}"


CHUNK = 1 << 20  # host elements per pass: the float64 temporaries stay in cache
DEVICE_CHUNK = 1 << 23  # device elements per pass: a few 64 MB temporaries, whatever the output's size


def _array_module(out):
    """numpy for a host output, cupy for one still on the GPU. The GPU path compares there
    against the CPU reference uploaded chunk by chunk (CuPy's own elementwise kernels and
    reductions, never the kernel under test), so the output is not copied back at all."""
    if type(out).__module__.startswith("cupy"):
        from pmppbench.gpu import cupy  # noqa: PLC0415

        return cupy()
    return np


def compare(out, ref: np.ndarray, tol: Tolerance) -> CheckResult:
    """Check `out` (a host array, or a device array compared on the GPU) against the CPU
    reference `ref` under `tol`; every element is compared, in float64."""
    xp = _array_module(out)
    out = out if xp is not np else np.asarray(out)
    ref = np.asarray(ref)
    if out.shape != ref.shape:
        return CheckResult(False, float("inf"), float("inf"), None, f"shape {out.shape} != expected {ref.shape}")
    if tol.rule not in ("exact", "elementwise", "normwise"):
        raise ValueError(f"unknown tolerance rule {tol.rule!r}")
    flat_out, flat_ref = out.reshape(-1), ref.reshape(-1)
    if flat_out.size == 0:
        return CheckResult(True, 0.0, 0.0, None, "empty")

    chunk = CHUNK if xp is np else DEVICE_CHUNK
    max_abs = max_rel = 0.0
    diff_sq = ref_sq = 0.0
    n_bad, first_bad, worst, worst_err = 0, None, 0, -1.0
    all_finite = True
    for lo in range(0, flat_out.size, chunk):
        o, r = flat_out[lo:lo + chunk], xp.asarray(flat_ref[lo:lo + chunk])
        o64, r64 = o.astype(np.float64, copy=False), r.astype(np.float64, copy=False)
        finite = xp.isfinite(o64)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            err = xp.where(finite, xp.abs(o64 - r64), np.inf)
            mag = xp.abs(r64)
            rel = xp.where(mag > 0, err / mag, xp.where(err > 0, np.inf, 0.0))
        if tol.rule == "exact":
            # Compare bits, so -0.0 vs 0.0 and NaN payloads count as differences too.
            r_same = r.astype(o.dtype)
            bad = (o != r_same) | ~finite | (xp.signbit(o) != xp.signbit(r_same))
        elif tol.rule == "elementwise":
            bad = ~(err <= tol.atol + tol.rtol * mag)
        else:
            bad = ~finite
            diff_sq += float(xp.square(xp.where(finite, o64 - r64, 0.0)).sum())
            ref_sq += float(xp.square(r64).sum())
        i = int(err.argmax())
        # One transfer of the chunk's scalars (one synchronization on the GPU path).
        c_max_abs, c_max_rel, c_worst, c_finite, count, c_first = (
            float(v) for v in _host(xp, xp.stack([err[i], rel.max(), err[i], finite.all(),
                                                  xp.count_nonzero(bad), bad.argmax()]).astype(np.float64)))
        max_abs, max_rel = max(max_abs, c_max_abs), max(max_rel, c_max_rel)
        all_finite &= bool(c_finite)
        if c_worst > worst_err:
            worst, worst_err = lo + i, c_worst
        if count and first_bad is None:
            first_bad = lo + int(c_first)  # argmax of a boolean array: its first True
        n_bad += int(count)

    if tol.rule == "normwise":
        ref_norm = ref_sq ** 0.5
        max_rel = (diff_sq ** 0.5) / ref_norm if ref_norm > 0 else diff_sq ** 0.5  # reported: the norm ratio
        if all_finite and max_rel > tol.rtol:
            first_bad = worst  # point at the worst element
    if first_bad is None:
        return CheckResult(True, max_abs, max_rel, None, f"max abs err {max_abs:.3g}")
    if tol.rule == "normwise" and all_finite:
        summary, which = f"normwise error {max_rel:.3g} > {tol.rtol:g}", "worst"
    else:
        summary, which = f"{n_bad} of {flat_out.size} elements wrong", "first"
    i = first_bad
    detail = (f"{summary}; {which} at {_where(i, out.shape)}: got {float(flat_out[i]):.9g}, "
              f"expected {float(flat_ref[i]):.9g}")
    return CheckResult(False, max_abs, max_rel, i, detail)


def _host(xp, a) -> np.ndarray:
    return a if xp is np else a.get()
