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


def compare(out: np.ndarray, ref: np.ndarray, tol: Tolerance) -> CheckResult:
    out, ref = np.asarray(out), np.asarray(ref)
    if out.shape != ref.shape:
        return CheckResult(False, float("inf"), float("inf"), None, f"shape {out.shape} != expected {ref.shape}")
    flat_out, flat_ref = out.reshape(-1), ref.reshape(-1).astype(out.dtype)
    if flat_out.size == 0:
        return CheckResult(True, 0.0, 0.0, None, "empty")

    out64, ref64 = flat_out.astype(np.float64), flat_ref.astype(np.float64)
    finite = np.isfinite(out64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        err = np.where(finite, np.abs(out64 - ref64), np.inf)
        rel = np.where(np.abs(ref64) > 0, err / np.abs(ref64), np.where(err > 0, np.inf, 0.0))
    max_abs, max_rel = float(err.max()), float(rel.max())

    if tol.rule == "exact":
        # Compare bits, so -0.0 vs 0.0 and NaN payloads count as differences too.
        width = flat_out.dtype.itemsize
        bad = (flat_out.view(np.uint8).reshape(-1, width) != flat_ref.view(np.uint8).reshape(-1, width)).any(axis=1)
        bad |= ~finite
    elif tol.rule == "elementwise":
        bad = ~(err <= tol.atol + tol.rtol * np.abs(ref64))
    elif tol.rule == "normwise":
        ref_norm = float(np.linalg.norm(ref64))
        diff_norm = float(np.linalg.norm(np.where(finite, out64 - ref64, 0.0)))
        max_rel = diff_norm / ref_norm if ref_norm > 0 else diff_norm  # reported: the norm ratio
        bad = ~finite
        if not bad.any() and max_rel > tol.rtol:
            bad[int(err.argmax())] = True  # point at the worst element
    else:
        raise ValueError(f"unknown tolerance rule {tol.rule!r}")

    if not bad.any():
        return CheckResult(True, max_abs, max_rel, None, f"max abs err {max_abs:.3g}")
    i = int(np.flatnonzero(bad)[0])
    if tol.rule == "normwise" and finite.all():
        summary, which = f"normwise error {max_rel:.3g} > {tol.rtol:g}", "worst"
    else:
        summary, which = f"{int(bad.sum())} of {flat_out.size} elements wrong", "first"
    detail = f"{summary}; {which} at {_where(i, out.shape)}: got {float(flat_out[i]):.9g}, expected {float(flat_ref[i]):.9g}"
    return CheckResult(False, max_abs, max_rel, i, detail)
