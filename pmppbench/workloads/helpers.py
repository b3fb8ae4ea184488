"""What workloads may use to build their declarations: launch grids, the 64-bit index paths,
seeded FP32 inputs, a pool of threads for host work, the sampled check, and the usual jobs
(one launch; a reset and several launches) with their poison.

None of this is the contract (workloads/base.py): a workload is free to do without it, and
the runner never calls it. It lives here so that every workload does these things one way.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from pmppbench.hardware.compile import load_kernels
from pmppbench.hardware import device
from pmppbench.errors import UsageError
from pmppbench.hardware.gpu import cupy
from pmppbench.workloads.base import Axis, Context, Job, Launch, Shape, instantiation

# ---- grids ---------------------------------------------------------------------------------


def grid_1d(n: int, block: int) -> tuple[int]:
    return ((n + block - 1) // block,)


def per_thread(items: int, block: int) -> tuple[tuple[int], tuple[int]]:
    """(grid, block) for one thread per item, `items` items, in 1-D blocks of `block` threads."""
    return grid_1d(max(items, 1), block), (block,)


def grid_2d(cols: int, rows: int, bx: int, by: int) -> tuple[int, int]:
    """Blocks covering a rows x cols output, rounded up (PMPP 5.5's edge handling starts here)."""
    return ((cols + bx - 1) // bx, (rows + by - 1) // by)


UNIT_ROUNDOFF = 2.0 ** -24  # FP32's: the float checks' bounds (Higham's gamma_d = d u / (1 - d u))
# The element types of the reduction and the scan: the kernels' ELEM (C) and NumPy's dtype.
DTYPES = {"f32": ("float", np.float32), "i32": ("int", np.int32)}


def dtype_axis() -> Axis:
    return Axis("dtype", "Element types, comma-separated: f32, i32 (default both).", many=True, sweep=True,
                choices=tuple(DTYPES), default=tuple(DTYPES))


MAX_GRID_Y = 65535  # CUDA's limit on gridDim.y; the 2-D workloads run their row tiles along y


def check_row_tiles(workload: str, rows: int, tile: int) -> None:
    """Refuse M rows whose tiles of `tile` rows need more blocks than gridDim.y allows."""
    tiles = -(-rows // tile)
    if tiles > MAX_GRID_Y:
        raise UsageError(f"{workload}: M = {rows} rows needs {tiles} blocks of {tile} rows in gridDim.y, above "
                         f"CUDA's limit of {MAX_GRID_Y}; M must be at most {MAX_GRID_Y * tile}")


def device_context(kernels: dict, **buffers) -> Context:
    """The usual Context of setup(): the device buffers, the loaded kernels and the facts of the
    GPU they run on (ctx.device: what geometry() and GEMM's `best` read its SM count from)."""
    return Context(kernels, device.current(), **buffers)


# ---- index paths ---------------------------------------------------------------------------
# The textbook kernels index with the course's `int` where every index they form fits, and
# take a second, 64-bit instantiation of the same template where it would not. The host
# chooses per shape; both are compiled by `pmppbench compile` and checked by --check-only
# (each workload checks one shape past 2^31 elements).

INT_MAX = 2**31 - 1


def index_type(largest: int) -> str:
    """The C++ index type for a launch whose indices reach at most `largest` (in magnitude):
    the course's `int` while that fits in 31 bits, `long long` -- the 64-bit path -- beyond."""
    return "int" if largest <= INT_MAX else "long long"


def index_arg(index: str, value: int) -> np.integer:
    """A size argument in the kernel's index type."""
    return np.int32(value) if index == "int" else np.int64(value)


def with_wide_paths(names: list[str], indexed: set[str]) -> list[str]:
    """`names` plus the 64-bit instantiation of each of them in `indexed`: what `pmppbench
    compile` builds."""
    return names + [instantiation(n, "long long") for n in names if n in indexed]


def indexed_kernel(workload, shape: Shape, ctx: dict, kernel: str, index: str):
    """The loaded kernel `kernel` instantiated for `index`. The runner loads the variants' own
    names (the int path); another instantiation is compiled and loaded on first use, through
    the same cache, and kept in ctx.kernels."""
    return loaded(ctx, workload.name, instantiation(kernel, index), workload.defines(shape))


def loaded(ctx: dict, workload: str, expression: str, defines: dict | None = None):
    """The kernel `expression` of kernels_cu/<workload>.cu, compiled and loaded on first use
    (through the cache) and kept in ctx.kernels beside the ones the runner loaded."""
    kernels = ctx.kernels
    if expression not in kernels:
        kernels[expression] = load_kernels(workload, [expression], defines)[expression]
    return kernels[expression]


# ---- inputs --------------------------------------------------------------------------------

PIECE = 1 << 22  # values per independently seeded piece of a large random input

Fill = Callable[[np.random.Generator, np.ndarray], None]


def normal32(g: np.random.Generator, view: np.ndarray) -> None:
    g.standard_normal(dtype=np.float32, out=view)


def uniform32(low: float, high: float) -> Fill:
    """Uniform FP32 values in [low, high), as x * (high - low) + low from [0, 1)."""
    def fill(g: np.random.Generator, view: np.ndarray) -> None:
        g.random(dtype=np.float32, out=view)
        view *= np.float32(high - low)
        view += np.float32(low)
    return fill


def on_cores(fn: Callable[[Any], None], items) -> None:
    """fn(item) for every item, on one thread per core (at most 16): for NumPy work, whose
    loops release the GIL."""
    items = list(items)
    with ThreadPoolExecutor(max(1, min(len(items), os.cpu_count() or 1, 16))) as pool:
        list(pool.map(fn, items))


def random_array(shape: int | tuple[int, ...], rng: np.random.Generator, fill: Fill = normal32) -> np.ndarray:
    """An FP32 input of `shape`, filled by `fill(generator, view)`. Past one PIECE the array
    is filled piece by piece, each from its own child of `rng` (Generator.spawn), on one
    thread per core: NumPy's generators release the GIL while they fill. The pieces depend
    on the seed only, never on the thread count, so a seed still names one input on every
    machine."""
    out = np.empty(shape, dtype=np.float32)
    flat = out.reshape(-1)
    if flat.size <= PIECE:
        fill(rng, flat)
        return out
    starts = range(0, flat.size, PIECE)
    on_cores(lambda job: fill(job[1], flat[job[0]:job[0] + PIECE]), zip(starts, rng.spawn(len(starts))))
    return out


REPEAT_PERIOD = (1 << 24) - 3  # odd: no power-of-two wrap of an index lands on an equal value


def repeated_random(count: int, rng: np.random.Generator, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    """`count` FP32 values: one random block of REPEAT_PERIOD values, uniform in [low, high),
    repeated. Drawing 2^31 random numbers would take the host tens of seconds; copying one
    block is far cheaper. An index that wrapped by 2^31 or 2^32 (a 32-bit overflow) moves by a
    non-multiple of the odd period, so it reads a different value and the check sees it."""
    block = np.empty(min(count, REPEAT_PERIOD), dtype=np.float32)
    uniform32(low, high)(rng, block)
    out = np.empty(count, dtype=np.float32)
    out[: block.size] = block
    filled = block.size
    while filled < count:  # doubling copies
        step = min(filled, count - filled)
        out[filled: filled + step] = out[:step]
        filled += step
    return out


# ---- the sampled check ---------------------------------------------------------------------
# Outputs too large for a full CPU reference are checked exactly on a sample: picked elements
# of a 1-D output, or picked whole rows and whole columns of a 2-D one (a wrong column shows
# in every sampled row, a wrong row in every sampled column). The picks are drawn with the
# inputs from the seed, kept in inputs["sample"] (NumPy, for the reference) and
# ctx["sample"] (on the device, for the output), one index array per axis of the output.

SAMPLE = "sample"
Picks = tuple  # (elements,) of a 1-D output, or (rows, cols) of a 2-D one


def checked_indices(size: int, count: int, rng: np.random.Generator, edge: int = 64) -> np.ndarray:
    """Sorted indices into range(size) for a sampled check: one random index in each of
    `count` equal strata, the first and last `edge`, and the `edge` on either side of 2^31
    and 2^32 (where a 32-bit index would wrap)."""
    edges = np.linspace(0, size, count + 1).astype(np.int64)
    picks = rng.integers(edges[:-1], np.maximum(edges[1:], edges[:-1] + 1))
    near = [np.arange(c - edge, c + edge) for c in (0, size, 1 << 31, 1 << 32)]
    out = np.unique(np.concatenate([picks, *near]))
    return out[(out >= 0) & (out < size)]


def take(out, picks: Picks, xp=None):
    """The sampled part of `out` (NumPy or CuPy): the picked elements of a 1-D output; of a
    2-D output the picked rows (row-major), then the picked columns (each contiguous),
    flattened into one vector."""
    if len(picks) == 1:
        return out[picks[0]]
    xp = xp or (np if isinstance(out, np.ndarray) else cupy())
    rows, cols = picks
    return xp.concatenate([out[rows, :].ravel(), out[:, cols].T.ravel()])


def upload_sample(inputs: dict, ctx: dict) -> dict:
    """ctx with the inputs' sample copied to the device (nothing when the check is full)."""
    if SAMPLE in inputs:
        cp = cupy()
        ctx[SAMPLE] = tuple(cp.asarray(p) for p in inputs[SAMPLE])
    return ctx


# ---- jobs ----------------------------------------------------------------------------------

POISON_INT = -0x5A5A5A5B  # 0xA5A5A5A5 as int32; as uint32 the same bits


def poison(out) -> None:
    """Fill a device or host array with a value no correct kernel leaves: NaN for floating
    point, POISON_INT for integers (an unwritten int32 sum or histogram bin then FAILs)."""
    out.fill(np.nan if np.dtype(out.dtype).kind == "f" else np.array(POISON_INT).astype(out.dtype))


def output_job(run: Callable[[], None], out, ctx: dict, *, launch: Launch | None = None,
               transposed: bool = False, launches: tuple[Launch, ...] | None = None) -> Job:
    """The usual job: `run` writes the device array `out`, poisoned before a checked run;
    the check reads all of `out`, or the sample ctx["sample"] of it (`transposed`: the
    output's axes are the sample's in the other order, as a transpose's are). `launches`:
    what `run` launches, where it is not `launch` alone."""
    picks = ctx.get(SAMPLE)
    if picks is None:
        def output():
            return out
    else:
        picks = picks[::-1] if transposed else picks

        def output():
            return take(out, picks)

    if launches is None:
        launches = (launch,) if launch is not None and run is launch else ()  # else: unknown
    return Job(run=run, output=output, poison=lambda: poison(out), launch=launch, launches=tuple(launches))


def launch_job(launch: Launch, out, ctx: dict, **kw) -> Job:
    """output_job of one kernel launch (its resources in the row)."""
    return output_job(launch, out, ctx, launch=launch, **kw)


def launches_job(launches: tuple[Launch, ...], out, ctx: dict) -> Job:
    """launch_job of a call of several launches in order (copies before the variant's own
    kernel): the output sampled as output_job's, the row showing the last launch's
    resources, every launch counted in the job's `launches`."""
    if len(launches) == 1:
        return launch_job(launches[0], out, ctx)

    def run() -> None:
        for launch in launches:
            launch()

    return output_job(run, out, ctx, launch=launches[-1], launches=launches)


def staged_job(launches: tuple[Launch, ...], out, reset: Callable[[], None] | None = None) -> Job:
    """A call of several steps: `reset` (declared by the variant: an accumulator zeroed, a
    counter cleared) and then each launch in order, all of it inside the timed call. `out` is
    poisoned before a checked call (the reset may overwrite the poison: a kernel that then adds
    nothing still leaves a wrong value) and checked whole. The resource columns show the first
    launch, the variant's own kernel."""
    def run() -> None:
        if reset is not None:
            reset()
        for launch in launches:
            launch()

    return Job(run=run, output=lambda: out, poison=lambda: poison(out), launch=launches[0],
               launches=tuple(launches), reset=reset)


def library_job(run: Callable[[], None], out) -> Job:
    """A library peer's call (CUB, cuBLAS) writing `out`: no launch of ours to show or count."""
    return Job(run=run, output=lambda: out, poison=lambda: poison(out))
