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


CHUNK = 1 << 20  # elements per pass: the float64 temporaries stay in cache, so 64M-element checks take ~0.1 s


def compare(out: np.ndarray, ref: np.ndarray, tol: Tolerance) -> CheckResult:
    out, ref = np.asarray(out), np.asarray(ref)
    if out.shape != ref.shape:
        return CheckResult(False, float("inf"), float("inf"), None, f"shape {out.shape} != expected {ref.shape}")
    if tol.rule not in ("exact", "elementwise", "normwise"):
        raise ValueError(f"unknown tolerance rule {tol.rule!r}")
    flat_out, flat_ref = out.reshape(-1), ref.reshape(-1)
    if flat_out.size == 0:
        return CheckResult(True, 0.0, 0.0, None, "empty")

    max_abs = max_rel = 0.0
    diff_sq = ref_sq = 0.0
    n_bad, first_bad, worst, worst_err = 0, None, 0, -1.0
    all_finite = True
    for lo in range(0, flat_out.size, CHUNK):
        o, r = flat_out[lo:lo + CHUNK], flat_ref[lo:lo + CHUNK]
        o64, r64 = o.astype(np.float64), r.astype(np.float64)
        finite = np.isfinite(o64)
        all_finite &= bool(finite.all())
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            err = np.where(finite, np.abs(o64 - r64), np.inf)
            mag = np.abs(r64)
            rel = np.where(mag > 0, err / mag, np.where(err > 0, np.inf, 0.0))
        max_abs, max_rel = max(max_abs, float(err.max())), max(max_rel, float(rel.max()))
        i = int(err.argmax())
        if err[i] > worst_err:
            worst, worst_err = lo + i, float(err[i])
        if tol.rule == "exact":
            # Compare bits, so -0.0 vs 0.0 and NaN payloads count as differences too.
            r_same = r.astype(o.dtype)
            bad = (o != r_same) | ~finite | (np.signbit(o) != np.signbit(r_same))
        elif tol.rule == "elementwise":
            bad = ~(err <= tol.atol + tol.rtol * mag)
        else:
            bad = ~finite
            diff_sq += float(np.square(np.where(finite, o64 - r64, 0.0)).sum())
            ref_sq += float(np.square(r64).sum())
        count = int(np.count_nonzero(bad))
        if count and first_bad is None:
            first_bad = lo + int(np.flatnonzero(bad)[0])
        n_bad += count

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
