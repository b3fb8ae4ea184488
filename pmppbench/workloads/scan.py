"""Prefix sum (PMPP chapter 11): the book's section scans in its three-kernel scan, the
single-pass scans, CUB, and a memcpy of the same bytes.

`--dtype f32,i32` and `--kind inclusive,exclusive` (all four by default) are compile-time
defines (ELEM, EXCLUSIVE): every kernel has one name and each pair is its own compile unit.

The book's rungs are section scans, each the first of the three kernels of PMPP 11.5's
hierarchical scan so that every rung scans the whole array: `kogge_stone` (Fig. 11.3, 1024
elements per block), `brent_kung` (Fig. 11.4, 2048), `coarsened` (the three-phase scan of 11.4,
4096). The second kernel (`scan_sums`, one block) scans the sections' totals, the third
(`add_carries`) adds them back: three launches per call, each element read and written twice.
`hierarchical` is the same three kernels with a register tile scan (16-byte loads, warp
shuffles) as the first. Single pass, one launch, each element read once and written once:
`domino` (PMPP 11.6: tiles numbered in the order their blocks start, each waiting for its
predecessor's prefix) and `lookback` (decoupled look-back, Merrill and Garland 2016). Peers:
`cub` (cuda.compute's DeviceScan) and the roof `memcpy` (the driver's device-to-device copy of
the same 4N bytes, read and written).

The check (docs/scan.md). int32 prefix sums are exact in any order of additions (two's
complement), so i32 is compared bit for bit with the CPU's int64 prefix sums wrapped to 32
bits. A float32 prefix y_i is a sum whose inputs each pass through a chain of at most d
roundings, so |y_i - exact_i| <= gamma_d * sum_{j<=i} |x_j|, gamma_d = d*u / (1 - d*u), u =
2^-24 (Higham, Accuracy and Stability of Numerical Algorithms, 4.2). The inputs are uniform in
[LOW, HIGH) = [0.5, 1), positive, so that sum is the exact prefix itself and the bound is the
relative tolerance gamma_d at every element: the allowed error grows with the prefix. d is the
variant's longest chain (`additions_depth`): its in-tile chain plus one addition per tile
whose carry passes on serially (scan_sums' chunks, domino's tiles, look-back's windows), so
it grows with N / tile. CUB's order is its own: its bound is taken at the deepest of ours.
The memcpy roof is checked bit for bit against the input. Above SAMPLE_ABOVE elements the
output is checked on a sample (helpers.checked_indices), the reference of just those prefixes.
"""

from __future__ import annotations

import numpy as np

from pmppbench.hardware import occupancy
from pmppbench.measure.check import Tolerance  # noqa: F401 (tests read sc.Tolerance)
from pmppbench.errors import UsageError
from pmppbench.hardware.gpu import cupy
from pmppbench.measure.protocol import Protocol
from pmppbench.workloads import cub
from pmppbench.workloads.base import Axis, Job, Launch, Prebuilds, Sizes, Traffic, Variant, Workload
from pmppbench.workloads.helpers import (
    DTYPES, REPEAT_PERIOD, SAMPLE, UNIT_ROUNDOFF, checked_indices, device_context, dtype_axis, index_arg, index_type,
    indexed_kernel, loaded, on_cores, poison, random_array, repeated_random, take, uniform32, upload_sample,
    with_wide_paths,
)

# Sections and tiles, as in scan.cu: (elements per block, threads per block).
SECTIONS = {"kogge_stone": (1024, 1024), "brent_kung": (2048, 1024), "coarsened": (4096, 512),
            "hierarchical": (4096, 256)}
PASS_TILE, PASS_THREADS = 8192, 256  # domino: 256 threads x 8 rows of 16-byte vectors
LOOKBACK_ROWS, LOOKBACK_THREADS = 8, 256  # lookback: LB_ROWS, LB_THREADS in scan_lookback.cuh
LOOKBACK_TILE = LOOKBACK_THREADS * LOOKBACK_ROWS * 4
# lookback_staged: LS_ROWS, LS_THREADS in scan_lookback.cuh, the same tile held in shared memory, not registers
STAGED_ROWS, STAGED_THREADS = 7, 256  # 7168 elements: 7 tiles of 28 KB in 228 KB (studies/scan_lookback.py)
STAGED_TILE = STAGED_THREADS * STAGED_ROWS * 4
STAGED_BLOCK = STAGED_THREADS + 32  # the tile's 8 warps and the looker
# lookback's L2 prefetch distance (its `ahead` argument), in waves of resident blocks: each block asks
# L2 for the tile this many waves on, so that a block's loads meet L2 instead of DRAM (scan_lookback.cuh). Less
# than a wave: tiles fetched further ahead leave L2 before their blocks come and are read twice
# (the distances measured: docs/scan.md).
LOOKBACK_AHEAD_WAVES = 0.25
# lookback_staged's: three eighths of its 7-block waves (346 tiles on the H200). Its prefetch marks
# the lines evict_last and the block's copy evict_first (scan_lookback.cuh), so that they stay in L2
# until read and go first after: with that, three eighths beat a quarter (the best distance
# without hints) by 1-3 points at 2^24-2^28 (studies/scan_lookback.py); half a wave was slower again
# (docs/scan.md)
STAGED_AHEAD_WAVES = 0.375
AHEAD_WAVES = {"lookback": LOOKBACK_AHEAD_WAVES, "lookback_staged": STAGED_AHEAD_WAVES}
ADD_THREADS, SUMS_THREADS, SUMS_CHUNK = 256, 1024, 4096  # add_carries; scan_sums and its chunk
THREE_KERNEL = tuple(SECTIONS)
SINGLE_PASS = ("domino", "lookback", "lookback_staged")
LOOKBACKS = ("lookback", "lookback_staged")  # the decoupled look-backs: one bound, an `ahead` each
PASS_TILES = {"domino": (PASS_TILE, PASS_THREADS), "lookback": (LOOKBACK_TILE, LOOKBACK_THREADS),
              "lookback_staged": (STAGED_TILE, STAGED_BLOCK)}  # (elements, threads of the block)
LOW, HIGH = 0.5, 1.0  # float32 inputs: uniform in [LOW, HIGH)
INT_LIMIT = 1000  # int32 inputs: +-[1, INT_LIMIT], never 0 (a dropped element changes every later prefix)
KINDS = ("inclusive", "exclusive")
INDEXED = {"kogge_stone<int>", "brent_kung<int>", "coarsened<int>"}
LARGE_CHECK = (1 << 31) + 5  # past 2^31 elements: the 64-bit path
SAMPLE_ABOVE = 1 << 28  # more elements: an exact (i32) or bounded (f32) check of SAMPLES sampled prefixes
SAMPLES = 1 << 14
CHUNK = 1 << 24  # host reference: prefix sums of this many inputs per thread, then their offsets

# The longest chain of float additions inside one section or tile (the carry chain across
# tiles is added per shape in additions_depth): Kogge-Stone's log2(1024) steps; Brent-Kung's
# up-sweep and down-sweep, 11 + 10; coarsened's 7 sequential, 9 Kogge-Stone steps over 512
# ends and the carry; the register tile's 3 in-vector adds, 5 shuffle steps, 1 for the lane's
# left neighbour, one per row for the warp's earlier rows, 8 for the warps to the left and 2 to
# compose the output.
TILE_DEPTH = {"kogge_stone": 10, "brent_kung": 21, "coarsened": 17, "hierarchical": 3 + 5 + 1 + 4 + 8 + 2,
              "domino": 3 + 5 + 1 + 8 + 8 + 2, "lookback": 3 + 5 + 1 + LOOKBACK_ROWS + LOOKBACK_THREADS // 32 + 2,
              # lookback_staged: an element of an earlier warp passes through its thread's sum of
              # rows (2 + rows), the warp sum (5), the warps to the left (8) and 2 to compose; one of
              # its own warp through the in-warp scan (3 + 5 + 1 + rows) and 2
              "lookback_staged": max(2 + STAGED_ROWS + 5 + STAGED_THREADS // 32, 3 + 5 + 1 + STAGED_ROWS) + 2}
SUMS_DEPTH = 4 + 5 + 1 + 32 + 1  # scan_sums within a chunk: a thread's 4, the warp, its 32 warps, the carry
ADD_DEPTH = 1  # add_carries


def tiles_of(n: int, size: int) -> int:
    return max(1, -(-n // size))


class Scan(Workload, Prebuilds):
    name = "scan"
    title = "Prefix sum (PMPP ch. 11)"
    about = ("Prefix sums of N values: Kogge-Stone, Brent-Kung, coarsened and hierarchical three-kernel scans, "
             "domino and decoupled look-back single-pass scans, CUB, and a memcpy (8*N bytes).")
    dims = ("n",)
    dim_help = {"n": "Elements to scan."}
    axes = (dtype_axis(),
            Axis("kind", "Scans, comma-separated: inclusive, exclusive (default both).", many=True, sweep=True,
                 choices=KINDS, default=KINDS))
    protocol = Protocol(warmup=3, batches=5, reps=20)
    variants = (
        Variant("kogge_stone", "kogge_stone<int>", "PMPP 11.3: Kogge-Stone section scan of 1024 (N log N adds); "
                "+ scan of the section sums + add-back"),
        Variant("brent_kung", "brent_kung<int>", "PMPP 11.4: Brent-Kung up-sweep and down-sweep over 2048 (2N adds); "
                "+ scan of the sums + add-back"),
        Variant("coarsened", "coarsened<int>", "PMPP 11.4: three-phase, 8 sequential per thread, Kogge-Stone over "
                "the ends; + scan of the sums + add-back"),
        Variant("hierarchical", "tile_scan", "PMPP 11.5's three kernels with a register tile scan (16-byte loads, "
                "warp shuffles) first: 4N element passes"),
        Variant("domino", "domino", "PMPP 11.6: one pass, tiles in start order, each waits for its predecessor's "
                "prefix (adjacent synchronization)"),
        Variant("lookback", "lookback", f"one pass, decoupled look-back over 32 predecessors at once, {LOOKBACK_TILE}-"
                "element tiles in 16-byte vectors, each tile prefetched to L2 a quarter wave of resident blocks ahead"),
        Variant("lookback_staged", "lookback_staged", f"lookback with the {STAGED_TILE}-element tile brought to shared "
                "memory by the copy engine (7 blocks per SM, not 4), tiles by block index as CUB's, "
                "a ninth warp looking back while the tile lands, its total published before the scan"),
        Variant("cub", None, "CUB DeviceScan (InclusiveSum / ExclusiveSum) through cuda.compute, temp storage reused"),
        Variant("memcpy", None, "the roof: the driver's device-to-device copy of the same 4*N bytes"),
    )
    baseline = "kogge_stone"
    roof = "memcpy"
    rate = "GB/s"
    call = ("a call of kogge_stone, brent_kung, coarsened, hierarchical: 3 launches (section scan, scan of the "
            "section sums, add-back); domino, lookback: 1 launch, no reset; cub: CUB's own launches")

    # ---- shapes -------------------------------------------------------------------
    # One element, each section and tile size and one past it, sizes that are not a multiple of
    # the 4-element vector, a few million; past 2^31 once per dtype (f32 inclusive, i32
    # exclusive: each dtype and each kind takes the 64-bit path once).
    sizes = Sizes(default={"n": 1 << 26, "dtype": "f32", "kind": "inclusive"}, checks=tuple(
        {"n": n, "dtype": d, "kind": k} for d in DTYPES for k in KINDS
        for n in sorted({1, 3, 1024, 1025, 2048, 2049, 4096, 4097, 8192, 8193, 8195, LOOKBACK_TILE, LOOKBACK_TILE + 1,
                         STAGED_TILE, STAGED_TILE + 1, 100003, (1 << 20) + 2, (1 << 24) + 3})) + (
        {"n": LARGE_CHECK, "dtype": "f32", "kind": "inclusive"}, {"n": LARGE_CHECK, "dtype": "i32", "kind": "exclusive"}))

    def device_bytes(self, shape):
        """The input and output, the section sums, the tiles' status words; a full check's
        float64 reference too."""
        n = shape["n"]
        reference = 0 if sampled(shape) else 8 * n
        return 8 * n + 4 * (tiles_of(n, 1024) + 1) + 8 * sum(tiles_of(n, t) + 1 for t, _ in PASS_TILES.values()) + reference

    # ---- geometry -----------------------------------------------------------------
    def geometry(self, variant, shape, device=None):
        """Three-kernel rungs: the first kernel's grid, one block per section; single pass: one
        block per tile."""
        n = shape["n"]
        if variant.name in SECTIONS:
            size, threads = SECTIONS[variant.name]
            return (tiles_of(n, size),), (threads,)
        if variant.name in SINGLE_PASS:
            size, threads = PASS_TILES[variant.name]
            return (tiles_of(n, size),), (threads,)
        return super().geometry(variant, shape, device)

    # ---- the check ------------------------------------------------------------------
    def tolerance_of(self, shape, variant, device=None):
        """Exact for int32 and the memcpy roof; float32: gamma_d of the variant's chain,
        relative to each exact prefix (the inputs are positive)."""
        if variant.name == "memcpy" or shape["dtype"] == "i32":
            return Tolerance("exact")
        return Tolerance("elementwise", rtol=relative_bound(variant.name, shape))

    # ---- kernels ------------------------------------------------------------------
    def defines(self, shape):
        return {"ELEM": DTYPES[shape["dtype"]][0], "EXCLUSIVE": int(shape["kind"] == "exclusive")}

    def kernel_names(self):
        return with_wide_paths(super().kernel_names(), INDEXED) + ["scan_sums", "add_carries"]

    # ---- data ---------------------------------------------------------------------
    def make_inputs(self, shape, rng):
        n, dtype = shape["n"], shape["dtype"]
        if dtype == "f32":
            x = repeated_random(n, rng, LOW, HIGH) if n > REPEAT_PERIOD else random_array(n, rng, uniform32(LOW, HIGH))
        else:
            block = rng.integers(1, INT_LIMIT + 1, size=min(n, REPEAT_PERIOD), dtype=np.int32)
            block *= np.where(rng.random(block.size) < 0.5, -1, 1).astype(np.int32)
            x = np.resize(block, n)  # repeated past one period, as repeated_random
        inputs = {"x": x}
        if sampled(shape):
            inputs[SAMPLE] = (checked_indices(n, SAMPLES, rng),)
        return inputs

    def reference_key(self, variant):
        return "copy" if variant.name == "memcpy" else "scan"

    def reference(self, shape, inputs, variant):
        x = inputs["x"]
        picks = inputs[SAMPLE][0] if SAMPLE in inputs else None
        if variant.name == "memcpy":
            return x if picks is None else x[picks]
        return prefix_sums(x, shape["kind"] == "exclusive", picks)

    def setup(self, shape, inputs, kernels):
        cp = cupy()
        n = shape["n"]
        _, dtype = DTYPES[shape["dtype"]]
        x = cp.asarray(inputs["x"])
        out = cp.empty(n, dtype=dtype)
        assert x.data.ptr % 16 == 0 and out.data.ptr % 16 == 0  # 16-byte vectors (CuPy aligns to 256 B)
        ctx = device_context(kernels, x=x, out=out, sums=cp.empty(tiles_of(n, 1024), dtype=dtype), peers={},
                             # one status word per tile and a ticket counter each, never reset (scan.cu)
                             status={v: cp.zeros(tiles_of(n, t), dtype=cp.uint64) for v, (t, _) in PASS_TILES.items()},
                             ticket={v: cp.zeros(1, dtype=cp.uint64) for v in SINGLE_PASS})
        return upload_sample(inputs, ctx)

    def prebuild(self, shape, variants):
        """cuda.compute's scan object for the shape's dtype and kind, ahead of cub's job."""
        if any(v.name == "cub" for v in variants):
            cub.prebuild_scan(cupy(), DTYPES[shape["dtype"]][1], shape["kind"] == "exclusive")

    def job(self, variant, shape, ctx, index: str | None = None):
        """`index` forces an instantiation of the book's section kernels (studies/baselines.py);
        by default the shape's own (index_type)."""
        cp = cupy()
        n = shape["n"]
        x, out = ctx["x"], ctx["out"]
        if variant.name == "cub":
            run, held = cub.prefix_sum(cp, x, out, shape["kind"] == "exclusive")
            ctx["peers"]["cub"] = held
            return call_job(run, out, ctx)
        if variant.name == "memcpy":
            def copy():
                out.data.copy_from_device_async(x.data, x.nbytes)

            return call_job(copy, out, ctx)
        grid, block = self.geometry(variant, shape)
        kernels = ctx.kernels
        if variant.name in SINGLE_PASS:
            kernel = kernels[variant.kernel]
            args = (x, out, ctx["status"][variant.name], ctx["ticket"][variant.name], np.uint64(n), np.uint64(grid[0]))
            if variant.name in LOOKBACKS:
                waves = AHEAD_WAVES[variant.name]
                args += (np.uint64(lookback_ahead(kernel, ctx.device.sm_count, waves, threads=block[0])),)
            if variant.name == "lookback_staged":
                args += (np.uint64(ramped_blocks(kernel, ctx.device.sm_count, grid[0], threads=block[0])),)
            return call_job(None, out, ctx, (Launch(kernel, grid, block, args),))
        if variant.kernel in INDEXED:
            index = index or index_type_of(shape)
            kernel = indexed_kernel(self, shape, ctx, variant.kernel, index)
            size = index_arg(index, n)
        else:
            kernel, size = kernels[variant.kernel], np.uint64(n)
        sums = ctx["sums"]
        launches = [Launch(kernel, grid, block, (x, out, sums, size))]
        sections = grid[0]
        if sections > 1:  # one section has no sums to scan and nothing to add back
            defines = self.defines(shape)
            launches.append(Launch(loaded(ctx, self.name, "scan_sums", defines), (1,), (SUMS_THREADS,),
                                   (sums, np.uint64(sections))))
            launches.append(Launch(loaded(ctx, self.name, "add_carries", defines), (sections - 1,), (ADD_THREADS,),
                                   (out, sums, np.uint64(n), np.uint32(SECTIONS[variant.name][0]))))
        return call_job(None, out, ctx, tuple(launches))

    # ---- model --------------------------------------------------------------------
    def traffic(self, shape, variant, device=None):
        """Logical traffic 8N bytes (each input read once, each output written once) and N - 1
        additions for every variant. Model column: the element passes over global memory the
        variant's algorithm makes, 4 for the three kernels (the first reads and writes every
        element, add_carries reads and writes them again), 2 for a single pass and the copy
        (CUB's DeviceScan is a single-pass decoupled look-back)."""
        n = shape["n"]
        passes = 4 if variant.name in SECTIONS else 2
        flops = 0 if variant.name == "memcpy" else max(n - 1, 0)
        return Traffic(bytes=8 * n, flops=flops, extra={"passes": passes})


def sampled(shape) -> bool:
    """Whether the shape's output is checked on a sample of its prefixes."""
    return shape["n"] > SAMPLE_ABOVE


def additions_depth(name: str, shape) -> int:
    """The longest chain of float additions one input passes through in this variant's
    order (the d of gamma_d): the in-tile chain, then the carries between tiles."""
    n = shape["n"]
    if name in SECTIONS:
        chunks = -(-tiles_of(n, SECTIONS[name][0]) // SUMS_CHUNK)
        return TILE_DEPTH[name] + SUMS_DEPTH + chunks + ADD_DEPTH
    tiles = tiles_of(n, PASS_TILES[name][0]) if name in PASS_TILES else 0
    if name == "domino":  # one addition per tile: the prefix passes from tile to tile
        return TILE_DEPTH[name] + tiles + 1
    if name in LOOKBACKS:  # at most every predecessor's aggregate, 32 at a time in a 5-step tree
        return TILE_DEPTH[name] + tiles + 5 * -(-tiles // 32) + 1
    return max(additions_depth(v, shape) for v in (*THREE_KERNEL, *SINGLE_PASS))


def relative_bound(name: str, shape) -> float:
    """gamma_d with d capped at N - 1 (no chain is longer)."""
    d = min(additions_depth(name, shape), max(shape["n"] - 1, 1))
    du = d * UNIT_ROUNDOFF
    if du >= 1:
        raise UsageError(f"scan: N = {shape['n']} is too large for a float32 error bound (d*u >= 1)")
    return du / (1 - du)


def call_job(run, out, ctx, launches=()):
    """A call of `launches` in order (or the library's `run`), its output checked whole or
    on the shape's sample."""
    if launches:
        def run():
            for launch in launches:
                launch()

    picks = ctx.get(SAMPLE)
    output = (lambda: out) if picks is None else (lambda: take(out, picks))
    return Job(run=run, output=output, poison=lambda: poison(out), launch=launches[0] if launches else None,
               launches=tuple(launches))


def resident_blocks(kernel, sm_count: int, threads: int) -> int:
    """A wave: the blocks of the loaded kernel resident at once on the GPU (the occupancy API's blocks
    per SM, times the SMs)."""
    return occupancy.api_active_blocks(kernel, threads) * sm_count


def lookback_ahead(kernel, sm_count: int, waves: float = LOOKBACK_AHEAD_WAVES, threads: int = LOOKBACK_THREADS) -> int:
    """lookback's and lookback_staged's `ahead`: `waves` waves of resident blocks, in tiles."""
    return int(waves * resident_blocks(kernel, sm_count, threads))


def ramped_blocks(kernel, sm_count: int, tiles: int, threads: int = STAGED_BLOCK) -> int:
    """lookback_staged's `ramped`: the first wave (whose copies leave on scan_lookback.cuh's LS_RAMP), or 0 where
    the grid is one wave and has no later wave to let in early."""
    wave = resident_blocks(kernel, sm_count, threads)
    return wave if tiles > wave else 0


def prefix_sums(x: np.ndarray, exclusive: bool, picks: np.ndarray | None = None) -> np.ndarray:
    """The exact prefix sums of x (float64 for float32 inputs; int64 wrapped to int32 for
    int32, as the GPU's adds wrap), inclusive or exclusive, of every element or of `picks`:
    each CHUNK summed on its own core, then every chunk's cumulative sum from its offset."""
    wide = np.float64 if x.dtype == np.float32 else np.int64
    starts = list(range(0, x.size, CHUNK))
    totals = np.zeros(len(starts), dtype=wide)

    def total(i):
        totals[i] = x[starts[i]:starts[i] + CHUNK].sum(dtype=wide)

    on_cores(total, range(len(starts)))
    offsets = np.concatenate([[0], np.cumsum(totals)[:-1]]).astype(wide)
    size = x.size if picks is None else picks.size
    out = np.empty(size, dtype=wide)

    def chunk(i):
        lo, hi = starts[i], min(starts[i] + CHUNK, x.size)
        if picks is None:
            where, at = slice(lo, hi), None
        else:
            a, b = np.searchsorted(picks, [lo, hi])
            if a == b:
                return
            where, at = slice(a, b), picks[a:b] - lo
        part = np.cumsum(x[lo:hi], dtype=wide)
        if exclusive:
            part = np.concatenate([[0], part[:-1]]).astype(wide)
        part += offsets[i]
        out[where] = part if at is None else part[at]

    on_cores(chunk, range(len(starts)))
    return out if wide == np.float64 else out.astype(np.int32)


def index_type_of(shape) -> str:
    """int while the last section's indices (rounded up to whole sections, plus one) fit."""
    return index_type(max((tiles_of(shape["n"], s) + 1) * s for s, _ in SECTIONS.values()))


WORKLOAD = Scan()
