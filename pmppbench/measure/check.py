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

from pmppbench.hardware.compile import load_kernels
from pmppbench.hardware.gpu import cupy


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
DEVICE_CHUNK = 1 << 21  # device elements per pass (an integer output): 16 MiB of float64 error at a time
CHECK_THREADS, CHECK_BLOCKS, STATS = 256, 2048, 8  # kernels_cu/check.cu's block, grid and values per block
RULES = {"exact": 0, "elementwise": 1, "normwise": 2}


def on_device(a) -> bool:
    return type(a).__module__.startswith("cupy")


def to_host(a) -> np.ndarray:
    """`a` as a NumPy array, copied back when it is on the GPU."""
    return a.get() if on_device(a) else np.asarray(a)


def device_copy(ref: np.ndarray):
    """The reference uploaded once, for every variant of a shape whose output is on the GPU."""
    return cupy().asarray(ref)


@dataclass
class _Stats:
    """What a pass over the elements leaves: the verdict is worded from these alone."""

    max_abs: float = 0.0
    max_rel: float = 0.0
    n_bad: int = 0
    first_bad: int | None = None
    worst: int = 0
    worst_err: float = -1.0
    all_finite: bool = True
    diff_sq: float = 0.0
    ref_sq: float = 0.0

    def add(self, lo: int, max_err: float, worst: int, max_rel: float, count: int, first: int | None,
            finite: bool, diff_sq: float, ref_sq: float) -> None:
        """One chunk starting at flat index `lo` (chunks come in order)."""
        self.max_abs, self.max_rel = max(self.max_abs, max_err), max(self.max_rel, max_rel)
        if max_err > self.worst_err:
            self.worst, self.worst_err = lo + worst, max_err
        if count and self.first_bad is None:
            self.first_bad = lo + first
        self.n_bad += count
        self.all_finite &= finite
        self.diff_sq += diff_sq
        self.ref_sq += ref_sq


def array_stats(flat_out, flat_ref, tol: Tolerance, xp=np, chunk: int = CHUNK) -> _Stats:
    """The array path, with array module `xp`: NumPy on the host, in chunks whose float64
    temporaries stay in cache; CuPy for an integer output on the GPU (compare), in chunks of
    DEVICE_CHUNK, so that only the verdict's few numbers come back."""
    stats = _Stats()
    for lo in range(0, flat_out.size, chunk):
        o, r = flat_out[lo:lo + chunk], flat_ref[lo:lo + chunk]
        o64, r64 = o.astype(np.float64), r.astype(np.float64)
        finite = xp.isfinite(o64)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            err = xp.where(finite, xp.abs(o64 - r64), np.inf)
            mag = xp.abs(r64)
            rel = xp.where(mag > 0, err / mag, xp.where(err > 0, np.inf, 0.0))
        diff_sq = ref_sq = 0.0
        if tol.rule == "exact":
            # Compare bits, so -0.0 vs 0.0 and NaN payloads count as differences too.
            r_same = r.astype(o.dtype)
            bad = (o != r_same) | ~finite | (xp.signbit(o) != xp.signbit(r_same))
        elif tol.rule == "elementwise":
            bad = ~(err <= tol.atol + tol.rtol * mag)
        else:
            bad = ~finite
            diff_sq = float(xp.square(xp.where(finite, o64 - r64, 0.0)).sum())
            ref_sq = float(xp.square(r64).sum())
        i = int(err.argmax())
        count = int(xp.count_nonzero(bad))
        stats.add(lo, float(err[i]), i, float(rel.max()), count, int(bad.argmax()) if count else None,
                  bool(finite.all()), diff_sq, ref_sq)  # argmax of a boolean array: its first True
    return stats


def _kernel_stats(name: str, flat_out, flat_ref, tol: Tolerance) -> _Stats:
    """kernels_cu/check.cu's kernel `name`: one launch over the whole output, then the blocks
    combined here."""
    cp = cupy()
    kernel = load_kernels("check", list(CHECK_KERNELS))[name]
    n = flat_out.size
    blocks = max(1, min(CHECK_BLOCKS, -(-n // CHECK_THREADS)))
    partial = cp.empty(blocks * STATS, dtype=cp.float64)
    kernel((blocks,), (CHECK_THREADS,), (cp.ascontiguousarray(flat_out), cp.ascontiguousarray(flat_ref),
                                         np.uint64(n), np.float64(tol.rtol), np.float64(tol.atol), partial))
    p = partial.get().reshape(blocks, STATS)
    max_err = float(p[:, 0].max())
    first = int(p[:, 4].min())
    count = int(p[:, 3].sum())
    stats = _Stats()
    stats.add(0, max_err, int(p[p[:, 0] == max_err, 1].min()), float(p[:, 2].max()), count,
              first if count else None, bool(p[:, 5].all()), float(p[:, 6].sum()), float(p[:, 7].sum()))
    return stats


# (output, reference) element types with a compare<O, R, RULE> in kernels_cu/check.cu: FP32 under
# every rule; int32 and uint32 outputs (scans, sums, histograms) under the exact rule alone.
_C_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double", np.dtype(np.int32): "int",
            np.dtype(np.int64): "long long", np.dtype(np.uint32): "unsigned int"}
_DEVICE_PAIRS = {("float", "float"): tuple(RULES), ("float", "double"): tuple(RULES),
                 ("int", "int"): ("exact",), ("int", "long long"): ("exact",),
                 ("unsigned int", "unsigned int"): ("exact",)}
CHECK_KERNELS = tuple(f"compare<{o}, {r}, {RULES[rule]}>" for (o, r), rules in _DEVICE_PAIRS.items() for rule in rules)


def _device_kernel(out_dtype, ref_dtype, rule: str) -> str | None:
    """The check.cu kernel for this output, reference and rule, or None (then CuPy's arrays)."""
    o, r = _C_TYPES.get(np.dtype(out_dtype)), _C_TYPES.get(np.dtype(ref_dtype))
    return f"compare<{o}, {r}, {RULES[rule]}>" if rule in _DEVICE_PAIRS.get((o, r), ()) else None


def compare(out, ref, tol: Tolerance) -> CheckResult:
    """Check `out` against the CPU reference `ref` under `tol`: every element, in float64.
    A host output is compared with NumPy. One still on the GPU is compared there against the
    reference uploaded (`device_copy`), so that it is not copied back: by kernels_cu/check.cu
    for the pairs of element types it has (FP32 under every rule, int32 and uint32 under the
    exact one: a scan, a sum, a histogram), by array_stats with CuPy for other integer pairs
    under the exact rule. A device output of another type comes back and takes the host path."""
    ref_dtype = getattr(ref, "dtype", None)
    kernel = _device_kernel(out.dtype, ref_dtype, tol.rule) if on_device(out) and ref_dtype is not None else None
    device = kernel is not None
    integers = (on_device(out) and not device and tol.rule == "exact" and np.dtype(out.dtype).kind in "iu"
                and ref_dtype is not None and np.dtype(ref_dtype).kind in "iu")
    if not (device or integers):
        out, ref = to_host(out), to_host(ref)
    if out.shape != ref.shape:
        return CheckResult(False, float("inf"), float("inf"), None, f"shape {out.shape} != expected {ref.shape}")
    if tol.rule not in RULES:
        raise ValueError(f"unknown tolerance rule {tol.rule!r}")
    flat_out, flat_ref = out.reshape(-1), ref.reshape(-1)
    if flat_out.size == 0:
        return CheckResult(True, 0.0, 0.0, None, "empty")
    if device or integers:
        flat_ref = flat_ref if on_device(flat_ref) else device_copy(flat_ref)
    if device:
        stats = _kernel_stats(kernel, flat_out, flat_ref, tol)
    elif integers:
        stats = array_stats(flat_out, flat_ref, tol, cupy(), DEVICE_CHUNK)
    else:
        stats = array_stats(flat_out, flat_ref, tol)
    return _verdict(stats, tol, out.shape, flat_out, flat_ref)


def _verdict(s: _Stats, tol: Tolerance, shape: tuple[int, ...], flat_out, flat_ref) -> CheckResult:
    max_rel, first_bad = s.max_rel, s.first_bad
    if tol.rule == "normwise":
        ref_norm = s.ref_sq ** 0.5
        max_rel = (s.diff_sq ** 0.5) / ref_norm if ref_norm > 0 else s.diff_sq ** 0.5  # reported: the norm ratio
        if s.all_finite and max_rel > tol.rtol:
            first_bad = s.worst  # point at the worst element
    if first_bad is None:
        return CheckResult(True, s.max_abs, max_rel, None, f"max abs err {s.max_abs:.3g}")
    if tol.rule == "normwise" and s.all_finite:
        summary, which = f"normwise error {max_rel:.3g} > {tol.rtol:g}", "worst"
    else:
        summary, which = f"{s.n_bad} of {flat_out.size} elements wrong", "first"
    i = first_bad
    detail = (f"{summary}; {which} at {_where(i, shape)}: got {float(flat_out[i]):.9g}, "
              f"expected {float(flat_ref[i]):.9g}")
    return CheckResult(False, s.max_abs, max_rel, i, detail)
