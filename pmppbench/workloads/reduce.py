"""Sum reduction (PMPP chapter 10): the book's rungs, a one-pass kernel beyond them, CUB.

`--dtype f32,i32` (both by default) is a compile-time define (ELEM), so every kernel has one
name and each dtype is its own compile unit. The book's rungs: `simple` (Fig. 10.6, stride
doubling: divergent warps), `convergent` (Fig. 10.9, stride halving), `shared` (Fig. 10.11,
one read of global memory, the tree in shared memory) -- each writes one partial sum per
2048-element segment and a second launch (`finish`) adds the partials, two launches per call --
then `segmented` (Fig. 10.13, one atomicAdd per block) and `coarsened` (Fig. 10.15, 16 inputs
per thread before the tree), whose output is zeroed before every call (the variant's reset,
part of the timed call; the caption says so). Beyond the book, `warp_vec`: one launch, a fixed
grid striding in 16-byte loads, warp shuffles, the last block adds the partials. Peers: `cub`
(cuda.compute's DeviceReduce) and `cupy_cub` (CuPy's CUB binding); roof: `read`, the same
bytes read once by warp_vec's loop with XOR in place of the add.

The check (docs: README "Reduction and histogram"). int32 sums are exact in any order (two's
complement addition is associative), so i32 is compared bit for bit with the CPU's int64 sum
wrapped to 32 bits. A float32 sum depends on the order of its additions: an input that passes
through a chain of d roundings carries a relative error of at most gamma_d = d*u / (1 - d*u),
u = 2^-24, so |sum - exact| <= gamma_d * sum(|x_i|) (Higham, Accuracy and Stability of
Numerical Algorithms, 4.2), with d the depth of the kernel's order of additions
(`additions_depth`, from its geometry) and sum(|x_i|) <= N * HIGH. The inputs are uniform in
[LOW, HIGH) = [0.5, 1): positive, so the exact sum is N * 0.75 and a result off by more than the
bound -- a dropped block, a zero, a NaN -- fails; where gamma_d * N < LOW (the smaller check
shapes) one dropped or doubled element fails too. CUB's order is its own; its bound is taken
at the deepest of ours (each CUB thread adds at most a few thousand inputs serially, then trees).
"""

from __future__ import annotations

import math

import numpy as np

from pmppbench.measure.check import Tolerance
from pmppbench.errors import UsageError
from pmppbench.hardware.gpu import cupy
from pmppbench.measure.protocol import Protocol
from pmppbench.workloads import cub
from pmppbench.workloads.base import Launch, Prebuilds, Sizes, Starter, Traffic, Variant, Workload
from pmppbench.workloads.helpers import (
    DTYPES, REPEAT_PERIOD, UNIT_ROUNDOFF, device_context, dtype_axis, index_arg, index_type, indexed_kernel,
    library_job, loaded, on_cores, random_array, repeated_random, staged_job, uniform32, with_wide_paths,
)

BLOCK = 1024  # BLOCK_DIM in reduce.cu: the book's segment is 2 * BLOCK inputs
COARSE = 8  # COARSE_FACTOR: coarsened's segment is 2 * COARSE * BLOCK inputs
FAST_BLOCK = 256  # warp_vec and read
FAST_BLOCKS_PER_SM = 8  # warp_vec's fixed grid: 8 x 256 threads per SM, a full SM of warps
ANY_GPU_SMS = 1  # warp_vec's float bound where the GPU is not given: its grid is longest-strided on one SM
LOW, HIGH = 0.5, 1.0  # float32 inputs: uniform in [LOW, HIGH)
INT_LIMIT = 1000  # int32 inputs: +-[1, INT_LIMIT], never 0 (a dropped element always changes the sum)
# A learner's kernel --like segmented or coarsened (docs/your-own-kernel.md): ELEM is the shape's
# element type (float or int), n the course's int (long long past 2^31 elements).
LEAVES = ("*out = the sum of in[0 .. n) (f32: within the bound of the --like's order of additions; i32: exact, "
          "wrapping)")
ZEROED = "*out zeroed (add each block's sum into it with one atomicAdd)"
TREE = ("    // the block's shared tree (PMPP 10.11): halve the active threads at each step\n"
        "    s[t] = sum;\n"
        "    for (unsigned stride = blockDim.x / 2; stride >= 1; stride /= 2) {\n"
        "        __syncthreads();\n"
        "        if (t < stride) s[t] += s[t + stride];\n"
        "    }\n"
        "    if (t == 0) atomicAdd(out, s[0]);  // one atomic per block\n")
SEGMENTED = Starter(
    "const ELEM* in, ELEM* out, int n", "ceil(n / (2 * BLOCK_DIM)) blocks: one per segment of 2 * BLOCK_DIM inputs",
    LEAVES,
    "    __shared__ ELEM s[BLOCK_DIM];\n"
    "    unsigned t = threadIdx.x;\n"
    "    long long i = 2LL * BLOCK_DIM * blockIdx.x + t;  // the segment's inputs t and t + BLOCK_DIM\n"
    "    ELEM sum = (i < n ? in[i] : ELEM(0)) + (i + BLOCK_DIM < n ? in[i + BLOCK_DIM] : ELEM(0));\n" + TREE,
    reset=ZEROED, block=("BLOCK_DIM",))
COARSENED = Starter(
    "const ELEM* in, ELEM* out, int n",
    "ceil(n / (2 * COARSE_FACTOR * BLOCK_DIM)) blocks: one per segment of 2 * COARSE_FACTOR * BLOCK_DIM inputs", LEAVES,
    "    __shared__ ELEM s[BLOCK_DIM];\n"
    "    unsigned t = threadIdx.x;\n"
    "    long long i = 2LL * COARSE_FACTOR * BLOCK_DIM * blockIdx.x + t;\n"
    "    ELEM sum = ELEM(0);\n"
    "    for (int tile = 0; tile < 2 * COARSE_FACTOR; ++tile)  // 2 * COARSE_FACTOR inputs added serially\n"
    "        if (i + (long long)tile * BLOCK_DIM < n) sum += in[i + (long long)tile * BLOCK_DIM];\n" + TREE,
    reset=ZEROED, block=("BLOCK_DIM",))
INDEXED = {"simple<int>", "convergent<int>", "shared<int>", "segmented<int>", "coarsened<int>"}
TWO_PASS = {"simple", "convergent", "shared"}  # + finish: two launches per call
ATOMIC = {"segmented", "coarsened"}  # one atomicAdd per block into the output: zeroed first
LARGE_CHECK = (1 << 31) + 5  # past 2^31 elements: the 64-bit path
CHUNK = 1 << 24  # host reference: float64 partial sums of this many inputs, one thread per core


class Reduce(Workload, Prebuilds):
    name = "reduce"
    title = "Sum reduction (PMPP ch. 10)"
    about = "Sum of N values: simple, convergent, shared, segmented, coarsened, warp_vec, CUB, and a read pass (4*N bytes)."
    dims = ("n",)
    dim_help = {"n": "Elements to sum."}
    axes = (dtype_axis(),)
    protocol = Protocol(warmup=3, batches=5, reps=50)
    variants = (
        Variant("simple", "simple<int>", "PMPP 10.6: stride doubling in global memory, t % stride: divergent warps; "
                "+ finish launch"),
        Variant("convergent", "convergent<int>", "PMPP 10.9: stride halving, the first `stride` threads stay "
                "active: whole warps retire; + finish launch"),
        Variant("shared", "shared<int>", "PMPP 10.11: one global read per input, the tree in shared memory; "
                "+ finish launch"),
        Variant("segmented", "segmented<int>", "PMPP 10.13: the shared tree on every block, one atomicAdd per "
                "block (output zeroed first)", defines=(("BLOCK_DIM", BLOCK),), starter=SEGMENTED),
        Variant("coarsened", "coarsened<int>", f"PMPP 10.15: {2 * COARSE} inputs per thread added serially, "
                "then the tree; one atomicAdd per block",
                defines=(("BLOCK_DIM", BLOCK), ("COARSE_FACTOR", COARSE)), starter=COARSENED),
        Variant("warp_vec", "warp_vec", "one pass: fixed grid, 16-byte loads 4 in flight, warp shuffles, the last "
                "block adds the partials (no reset)"),
        Variant("cub", None, "CUB DeviceReduce::Sum through cuda.compute (cuda-cccl), temp storage reused"),
        Variant("cupy_cub", None, "CUB DeviceReduce::Sum through CuPy's binding (cupy.cuda.cub.device_reduce)"),
        Variant("read", "read_xor", "the roof: the same 4*N bytes read once by warp_vec's loop, XOR for the add"),
    )
    baseline = "simple"
    roof = "read"
    rate = "GB/s"
    call = ("a call of simple, convergent, shared: 2 launches (+ finish); segmented, coarsened: "
            "output zeroed + 1 launch; cub: CUB's own launches, temp storage reused")

    # ---- shapes -------------------------------------------------------------------
    sizes = Sizes(default={"n": 1 << 26, "dtype": "f32"},
                  checks=tuple({"n": n, "dtype": d} for d in DTYPES
                               for n in (1, 31, 2049, 100003, 1 << 20, (1 << 24) + 3, LARGE_CHECK)))

    def device_bytes(self, shape):
        n = shape["n"]
        return 4 * n + 4 * segments(shape, "simple") * 2 * BLOCK + 4 * segments(shape, "shared") + 64

    # ---- geometry: one place for every launch ------------------------------------------
    def geometry(self, variant, shape, device=None):
        """The book's rungs: one block per segment; warp_vec and read: a grid sized by the SMs
        of `device` (fast_blocks)."""
        if variant.name in ("warp_vec", "read"):
            return (fast_blocks(shape, device.sm_count),), (FAST_BLOCK,)
        return (segments(shape, variant.name),), (BLOCK,)

    # ---- the check ------------------------------------------------------------------
    def tolerance_of(self, shape, variant, device=None):
        """Exact for int32 and the read roof; float32: the bound of the variant's own order of
        additions on `device` (None: on the fewest SMs, sound on any GPU)."""
        if variant.name == "read" or shape["dtype"] == "i32":
            return Tolerance("exact")
        sms = device.sm_count if device is not None else ANY_GPU_SMS
        return Tolerance("elementwise", atol=error_bound(variant.name, shape, sms))

    # ---- kernels ------------------------------------------------------------------
    def defines(self, shape):
        return {"ELEM": DTYPES[shape["dtype"]][0]}

    def kernel_names(self):
        return with_wide_paths(super().kernel_names(), INDEXED) + ["finish"]

    # ---- data ---------------------------------------------------------------------
    def make_inputs(self, shape, rng):
        n, dtype = shape["n"], shape["dtype"]
        if dtype == "f32":
            x = repeated_random(n, rng, LOW, HIGH) if n > REPEAT_PERIOD else random_array(n, rng, uniform32(LOW, HIGH))
            return {"x": x}
        block = rng.integers(1, INT_LIMIT + 1, size=min(n, REPEAT_PERIOD), dtype=np.int32)
        block *= np.where(rng.random(block.size) < 0.5, -1, 1).astype(np.int32)
        return {"x": np.resize(block, n)}  # repeated past one period, as repeated_random

    def reference_key(self, variant):
        return "xor" if variant.name == "read" else "sum"

    def reference(self, shape, inputs, variant):
        x = inputs["x"]
        if variant.name == "read":
            words = x.view(np.uint32)
            return np.array([np.bitwise_xor.reduce(words)], dtype=np.uint32)
        starts = range(0, x.size, CHUNK)
        parts = np.zeros(len(starts), dtype=np.float64 if x.dtype == np.float32 else np.int64)

        def part(i):
            parts[i] = x[starts[i]:starts[i] + CHUNK].sum(dtype=parts.dtype)

        on_cores(part, range(len(starts)))
        total = parts.sum()
        if x.dtype == np.float32:
            return np.array([total], dtype=np.float64)
        return np.array([total], dtype=np.int64).astype(np.int32)  # wrapped to 32 bits, as the GPU's adds

    def setup(self, shape, inputs, kernels):
        cp = cupy()
        _, dtype = DTYPES[shape["dtype"]]
        x = cp.asarray(inputs["x"])
        ctx = device_context(kernels, x=x, words=x.view(cp.uint32),
                             scratch=cp.empty(segments(shape, "simple") * 2 * BLOCK, dtype=dtype),
                             done=cp.zeros(1, dtype=cp.uint32),  # warp_vec's counter: each last block sets it back to 0
                             out=cp.empty(1, dtype=dtype), xor=cp.empty(1, dtype=cp.uint32), peers={})
        sms = ctx.device.sm_count
        ctx["partial"] = cp.empty(max(segments(shape, "shared"), FAST_BLOCKS_PER_SM * sms), dtype=dtype)
        return ctx

    def prebuild(self, shape, variants):
        """cuda.compute's sum object for the shape's dtype (CUB's JIT build), ahead of cub's job."""
        if any(v.name == "cub" for v in variants):
            cub.prebuild_reduce(cupy(), DTYPES[shape["dtype"]][1])

    def job(self, variant, shape, ctx, index: str | None = None):
        cp = cupy()
        n = shape["n"]
        x, out = ctx["x"], ctx["out"]
        if variant.name == "cub":
            run, held = cub.reduce_sum(cp, x, out)
            ctx["peers"]["cub"] = held
            return library_job(run, out)
        if variant.name == "cupy_cub":
            return library_job(cub.cupy_reduce_sum(x, out.reshape(())), out)
        grid, block = self.geometry(variant, shape, ctx.device)
        kernels = ctx.kernels
        if variant.name in ("warp_vec", "read"):
            data, dest = (x, out) if variant.name == "warp_vec" else (ctx["words"], ctx["xor"])
            partial = ctx["partial"] if variant.name == "warp_vec" else ctx["partial"].view(cp.uint32)
            launch = Launch(kernels[variant.kernel], grid, block, (data, partial, ctx["done"], dest, np.uint64(n)))
            return staged_job((launch,), dest)
        index = index or index_type_of(shape)
        kernel = indexed_kernel(self, shape, ctx, variant.kernel, index)
        size = index_arg(index, n)
        if variant.name in ATOMIC:
            launch = Launch(kernel, grid, block, (x, out, size))
            return staged_job((launch,), out, reset=lambda: out.fill(0))
        partial = ctx["partial"]
        args = (x, ctx["scratch"], partial, size) if variant.name != "shared" else (x, partial, size)
        first = Launch(kernel, grid, block, args)
        finish = loaded(ctx, self.name, "finish", self.defines(shape))
        second = Launch(finish, (1,), (BLOCK,), (partial, out, np.uint64(grid[0])))
        return staged_job((first, second), out)

    # ---- model --------------------------------------------------------------------
    def traffic(self, shape, variant, device=None):
        n = shape["n"]
        return Traffic(bytes=4 * n, flops=0 if variant.name == "read" else max(n - 1, 0))


def segments(shape, variant: str) -> int:
    """Blocks of a textbook rung: one per segment of 2 * BLOCK (coarsened: 2 * COARSE * BLOCK) inputs."""
    per = 2 * BLOCK * (COARSE if variant == "coarsened" else 1)
    return max(1, -(-shape["n"] // per))


def fast_blocks(shape, sms: int) -> int:
    """warp_vec's and read's grid on a GPU of `sms` SMs: FAST_BLOCKS_PER_SM blocks per SM,
    fewer for a short input."""
    vectors = max(1, shape["n"] // 4)
    return max(1, min(-(-vectors // FAST_BLOCK), FAST_BLOCKS_PER_SM * sms))


def additions_depth(name: str, shape, sms: int = ANY_GPU_SMS) -> int:
    """The longest chain of float additions one input passes through in this variant's
    order (the d of gamma_d). `sms`: the SM count warp_vec's grid follows (the fewer, the
    longer each thread's serial chain)."""
    n = shape["n"]
    tree = int(math.log2(BLOCK))  # the shared or global tree of BLOCK threads
    if name in TWO_PASS:  # pair add, tree, then finish: a serial sum of partials per thread and a tree
        return 1 + tree + -(-segments(shape, name) // BLOCK) + tree
    if name == "segmented":  # the tree, then the chain of atomicAdds into the output
        return 1 + tree + segments(shape, name)
    if name == "coarsened":
        return 2 * COARSE - 1 + tree + segments(shape, name)
    if name == "warp_vec":
        g = fast_blocks(shape, sms)
        per_thread = -(-max(1, n // 4) // (g * FAST_BLOCK))  # vectors added serially, 3 adds inside each
        warps = int(math.log2(FAST_BLOCK // 32))
        return per_thread + 4 + 1 + 5 + warps + -(-g // FAST_BLOCK) + 5 + warps
    # a library's order: bounded by the deepest of ours
    return max(additions_depth(v, shape) for v in ("simple", "segmented", "coarsened"))


def error_bound(name: str, shape, sms: int = ANY_GPU_SMS) -> float:
    """gamma_d * sum(|x_i|), sum(|x_i|) <= N * HIGH: the float32 check's absolute tolerance."""
    d = min(additions_depth(name, shape, sms), max(shape["n"] - 1, 1))  # no chain is longer than N - 1
    du = d * UNIT_ROUNDOFF
    if du >= 1:
        raise UsageError(f"reduce: N = {shape['n']} is too large for a float32 error bound (d*u >= 1)")
    return du / (1 - du) * shape["n"] * HIGH


def index_type_of(shape) -> str:
    """int while the last segment's last index (rounded up to whole segments) fits."""
    return index_type(segments(shape, "coarsened") * 2 * COARSE * BLOCK + 2 * BLOCK)


WORKLOAD = Reduce()
