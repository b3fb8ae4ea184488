"""What a workload declares, and nothing more.

A workload is data and small functions: its variants, the shapes it checks, how to make
inputs, the CPU reference, how to bind a variant to device buffers (a Job), and the traffic
model (bytes, FLOPs) of each variant, its protocol and the sizes and options its command
takes. It never prints, times or writes files: the session, the runner and the exporters do
that once for every workload (docs/architecture.md). The command line, `compile`,
`resources`, config validation and the tests that iterate `workloads.names()` all follow
from the declaration, so adding a workload costs one .cu file, one module subclassing
Workload, one registry line, its config sections and its tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pmppbench.check import Tolerance
from pmppbench.errors import UsageError
from pmppbench.protocol import Protocol

Shape = dict[str, int]  # named sizes and compile-time parameters, e.g. {"n": 1 << 26}
Geometry = Callable[[Shape], tuple[tuple[int, ...], tuple[int, ...]]]  # shape -> (grid, block)


@dataclass(frozen=True)
class Variant:
    name: str  # the name in the table, CSV, tests and README: "padded33"
    kernel: str | None  # NVRTC name expression in kernels_cu/<workload>.cu: "tiled<33>"; None for library calls
    about: str  # one line: what this variant changes and why it should be faster
    timed: bool = True  # False: checked only (a demonstration, e.g. the stream event dependency)
    source: str | None = None  # a learner's own .cu file (--kernel FILE:NAME); `kernel` is NAME in it
    like: str | None = None  # ... launched with this variant's signature and geometry (--like)
    geometry: Geometry | None = field(default=None, compare=False)  # its launch: shape -> (grid, block)

    def __getstate__(self) -> dict:
        # Steps travel to worker processes (and Ray actors) by pickle; a geometry is often a
        # lambda, so it stays behind and the worker takes the declared variant by name
        # (Workload.resolve).
        return {**self.__dict__, "geometry": None}

    def launch_geometry(self, shape: Shape) -> tuple[tuple[int, ...], tuple[int, ...]]:
        if self.geometry is None:
            raise ValueError(f"variant {self.name} declares no launch geometry")
        return self.geometry(shape)


class Unavailable(Exception):
    """Raised by Workload.job for a variant that cannot run on this machine (a library peer
    whose package is not installed): its row is SKIP with this reason, never an ERROR."""


@dataclass(frozen=True)
class Axis:
    """A shape key the command takes as an option, e.g. the stencil's `--radius 2,32`.

    `many`: the option takes a comma-separated list. With `sweep` every value becomes its own
    shape (one row set per radius); without it the list is one shape's value (the stream
    counts compared within one shape). `minimum` is the smallest value allowed.
    """

    name: str
    help: str
    many: bool = False
    sweep: bool = False
    minimum: int = 1
    choices: tuple[str, ...] = ()  # a named axis (--dtype f32,i32): its values are these words, not integers
    default: tuple = ()  # swept when the option is not given (the command's default shapes), e.g. both dtypes

    @property
    def option(self) -> str:
        return "--" + self.name


@dataclass(frozen=True)
class Launch:
    """One kernel launch, kept so the result row can show the kernel's resources."""

    kernel: Any  # compile.Kernel
    grid: tuple[int, ...]
    block: tuple[int, ...]
    args: tuple
    dynamic_smem: int = 0

    @property
    def threads_per_block(self) -> int:
        return int(np.prod(self.block))

    def __call__(self, stream=None) -> None:
        self.kernel(self.grid, self.block, self.args, shared_mem=self.dynamic_smem, stream=stream)


@dataclass
class Job:
    """One variant bound to one shape's device buffers, ready to run."""

    run: Callable[[], None]  # one call: what the protocol repeats
    output: Callable[[], Any]  # the result: a device array (checked on the GPU) or a host array
    poison: Callable[[], None]  # fill the output with NaN (integers: POISON_INT) before a checked run
    launch: Launch | None = None  # for the resource columns; None for library calls
    launches: tuple[Launch, ...] = ()  # every kernel launch of one call, in order (a call may be several)
    reset: Callable[[], None] | None = None  # what each call does first (e.g. zero an atomic accumulator)


def poison(out) -> None:
    """Fill a device or host array with a value no correct kernel leaves: NaN for floating
    point, POISON_INT for integers (an unwritten int32 sum or histogram bin then FAILs)."""
    out.fill(np.nan if np.dtype(out.dtype).kind == "f" else np.array(POISON_INT).astype(out.dtype))


POISON_INT = -0x5A5A5A5B  # 0xA5A5A5A5 as int32; as uint32 the same bits


def kernel_job(launch: Launch, out, out_shape: tuple[int, ...] | None = None) -> Job:
    """The usual job: one launch that writes the device array `out`, checked where it is (as
    `out_shape` when given) and poisoned before it."""
    view = out if out_shape is None else out.reshape(out_shape)
    return Job(run=launch, output=lambda: view, poison=lambda: poison(out), launch=launch, launches=(launch,))


def staged_job(launches: tuple[Launch, ...], out, reset: Callable[[], None] | None = None,
               output: Callable[[], Any] | None = None) -> Job:
    """A call of several steps: `reset` (declared by the variant: an accumulator zeroed, a
    counter cleared) and then each launch in order, all of it inside the timed call; the
    output `out` is poisoned before a checked call (the reset may overwrite the poison: a
    kernel that then adds nothing still leaves a wrong value). The resource columns show the
    first launch, the variant's own kernel."""
    def run() -> None:
        if reset is not None:
            reset()
        for launch in launches:
            launch()

    return Job(run=run, output=output or (lambda: out), poison=lambda: poison(out), launch=launches[0],
               launches=tuple(launches), reset=reset)


@dataclass
class ModelRuns:
    """Runs the runner times for a workload's model columns, never as a variant's row:
    name -> zero-argument run, under `protocol`, with the event timer on `stream`."""

    runs: dict[str, Callable[[], None]]
    protocol: Protocol
    stream: Any = None


@dataclass(frozen=True)
class Traffic:
    """The variant's model: bytes it must move through global memory and FLOPs it does.

    `bytes` is what the effective-bandwidth column divides by (the logical traffic of the
    algorithm, the course's protocol); `extra` holds named model columns a workload adds (e.g. the
    stencil's global read requests per output).
    """

    bytes: int
    flops: int = 0
    extra: dict[str, float] = field(default_factory=dict)


class Workload:
    """Base class; subclasses fill in the class attributes and the methods below."""

    name: str = ""
    title: str = ""
    about: str = ""  # the command's one-line help
    dims: tuple[str, ...] = ()  # positional CLI sizes, in order: ("m", "n")
    dim_help: dict[str, str] = {}  # what each size means, for the command's help
    axes: tuple[Axis, ...] = ()  # shape keys given as options (--radius, --streams)
    protocol: Protocol = Protocol(warmup=3, batches=5, reps=20)  # the timing contract (README, "The protocol")
    shares_host_link: bool = False  # its timed work crosses PCIe: with --devices, one GPU at a time
    variants: tuple[Variant, ...] = ()
    tolerance: Tolerance | None = None  # the check rule, unless tolerance_for derives one per shape
    baseline: str | None = None  # "speedup vs" column: this variant's time / each variant's time
    roof: str | None = None  # "% of" column: each variant's rate / this variant's rate
    rate: str = "GB/s"  # the headline rate column: "GB/s" or "GFLOP/s"

    def tolerance_for(self, shape: Shape) -> Tolerance:
        """The check rule for one shape: the class's `tolerance`, or (overridden) a bound that
        depends on the shape, as GEMM's on K, the stencil's on R and the stream's on TERMS."""
        if self.tolerance is None:
            raise NotImplementedError(f"{self.name}: set `tolerance` or override tolerance_for")
        return self.tolerance

    def tolerance_of(self, shape: Shape, variant: Variant) -> Tolerance:
        """The check rule for one variant on one shape: tolerance_for(shape), unless the bound
        depends on the variant too (the reduction's on its order of additions, or a roof row
        that computes something else exactly)."""
        return self.tolerance_for(shape)

    # ---- shapes -------------------------------------------------------------------
    def default_shape(self) -> Shape:
        raise NotImplementedError

    def check_shapes(self) -> list[Shape]:
        raise NotImplementedError

    def label(self, shape: Shape) -> str:
        """How the shape reads in tables: sizes joined by 'x', parameters appended."""
        sizes = "x".join(str(shape[d]) for d in self.dims)
        params = " ".join(f"{k}={v}" for k, v in shape.items() if k not in self.dims)
        return f"{sizes} {params}".strip()

    def validate(self, shape: Shape) -> None:
        """Raise UsageError for a shape the workload cannot run (before any GPU work)."""
        for d in self.dims:
            v = shape.get(d)
            if not is_int(v, 1):
                raise UsageError(f"{self.name}: {d.upper()} must be a positive integer, got {v!r}")

    def axis(self, name: str) -> Axis | None:
        return next((a for a in self.axes if a.name == name), None)

    def device_bytes(self, shape: Shape) -> int:
        """Device memory the shape needs, checked against free memory before allocating."""
        raise NotImplementedError

    # ---- kernels ------------------------------------------------------------------
    def defines(self, shape: Shape) -> dict[str, Any]:
        """Compile-time -D defines for this shape (e.g. the stencil radius)."""
        return {}

    def compile_sets(self) -> list[dict[str, Any]]:
        """Every set of defines `pmppbench compile` should build (default: just one)."""
        return [{}]

    def variants_for(self, shape: Shape) -> tuple[Variant, ...]:
        """The variants run on this shape (default: all; the stream workload derives them)."""
        return self.variants

    def kernel_names(self) -> list[str]:
        return unique_kernels(self.variants)

    def kernel_variants(self) -> list[tuple[str, str]]:
        """(kernel expression, the table names of the variants launching it) for every kernel
        `compile` builds; a 64-bit instantiation is named after its variants' int path."""
        names: dict[str, list[str]] = {}
        for v in self.variants:
            if v.kernel:
                names.setdefault(v.kernel, []).append(v.name)
        out = []
        for kernel in self.kernel_names():
            if kernel in names:
                out.append((kernel, ", ".join(names[kernel])))
                continue
            narrow = next((k for k in names if k.endswith(">") and _wide(k) == kernel), None)
            out.append((kernel, ", ".join(names[narrow]) + " (64-bit path)" if narrow else ""))
        return out

    # ---- data ---------------------------------------------------------------------
    def make_inputs(self, shape: Shape, rng: np.random.Generator) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def reference(self, shape: Shape, inputs: dict[str, np.ndarray], variant: Variant) -> np.ndarray:
        raise NotImplementedError

    def reference_key(self, variant: Variant) -> str:
        """Variants with the same key share one reference (computed once per shape)."""
        return "default"

    def setup(self, shape: Shape, inputs: dict[str, np.ndarray], kernels: dict) -> Any:
        """Upload inputs and allocate outputs; returns whatever job() needs."""
        raise NotImplementedError

    def job(self, variant: Variant, shape: Shape, ctx: Any) -> Job:
        raise NotImplementedError

    def teardown(self, ctx: Any) -> None:
        """Release what setup() took beyond ordinary device arrays (streams, pinned memory)."""

    # ---- model --------------------------------------------------------------------
    def traffic(self, shape: Shape, variant: Variant) -> Traffic:
        raise NotImplementedError

    def model_runs(self, shape: Shape, ctx: Any, rows: list) -> "ModelRuns | None":
        """Optional: extra runs the runner times after the variants, for model columns (the
        stream workload's stages alone). A workload never times anything itself."""
        return None

    def call_note(self, shape: Shape) -> str:
        """Optional: what one timed call contains where that is more than the variant's one
        kernel (a reset before it, several launches), for the table's caption."""
        return ""

    def annotate(self, shape: Shape, ctx: Any, rows: list, timings: dict) -> None:
        """Optional: add model columns to the shape's timed rows; `timings` holds the runner's
        Timing of each of model_runs() (empty without them)."""

    # ---- helpers for subclasses ---------------------------------------------------
    def variant(self, name: str) -> Variant:
        for v in self.variants:
            if v.name == name:
                return v
        raise UsageError(f"{self.name}: unknown variant {name!r}; choose from {', '.join(self.variant_names())}")

    def resolve(self, variants: list[Variant]) -> list[Variant]:
        """Variants that came through a pickle, as declared (with their geometry); a learner's
        kernel and any variant the workload does not declare stay as they came."""
        out = []
        for v in variants:
            try:
                declared = self.variant(v.name)
            except UsageError:
                declared = None
            out.append(declared if declared is not None and declared == v else v)
        return out

    def variant_names(self) -> list[str]:
        return [v.name for v in self.variants]


def grid_1d(n: int, block: int) -> tuple[int]:
    return ((n + block - 1) // block,)


def per_thread(elements: Callable[[Shape], int], block: int) -> Geometry:
    """One thread per item, `elements(shape)` items, in 1-D blocks of `block` threads."""
    return lambda shape: (grid_1d(max(elements(shape), 1), block), (block,))


def grid_2d(cols: int, rows: int, bx: int, by: int) -> tuple[int, int]:
    """Blocks covering a rows x cols output, rounded up (PMPP 5.5's edge handling starts here)."""
    return ((cols + bx - 1) // bx, (rows + by - 1) // by)


MAX_GRID_Y = 65535  # CUDA's limit on gridDim.y; the 2-D workloads run their row tiles along y


def check_row_tiles(workload: str, rows: int, tile: int) -> None:
    """Refuse M rows whose tiles of `tile` rows need more blocks than gridDim.y allows."""
    tiles = -(-rows // tile)
    if tiles > MAX_GRID_Y:
        raise UsageError(f"{workload}: M = {rows} rows needs {tiles} blocks of {tile} rows in gridDim.y, above "
                         f"CUDA's limit of {MAX_GRID_Y}; M must be at most {MAX_GRID_Y * tile}")


def is_int(value: Any, minimum: int) -> bool:
    """An integer (Python or NumPy, not bool) of at least `minimum`."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= minimum


def unique_kernels(variants) -> list[str]:
    """The kernels `variants` launch, each once, in order: one compile and load per kernel."""
    return list(dict.fromkeys(v.kernel for v in variants if v.kernel))


# ---- index paths ---------------------------------------------------------------
# The textbook kernels index with the course's `int` where every index they form fits, and
# take a second, 64-bit instantiation of the same template where it would not. The host
# chooses per shape; both are compiled by `pmppbench compile` and checked by --check-only
# (each workload checks one shape past 2^31 elements).

INT_MAX = 2**31 - 1
INDEX_TYPES = ("int", "long long")


def index_type(largest: int) -> str:
    """The C++ index type for a launch whose indices reach at most `largest` (in magnitude):
    the course's `int` while that fits in 31 bits, `long long` -- the 64-bit path -- beyond."""
    return "int" if largest <= INT_MAX else "long long"


def index_arg(index: str, value: int) -> np.integer:
    """A size argument in the kernel's index type."""
    return np.int32(value) if index == "int" else np.int64(value)


def instantiation(kernel: str, index: str) -> str:
    """The name expression of `kernel` (whose last template argument is the index type, as
    written in the Variant: "tiled<32, int>") for another index type: "tiled<32, long long>"."""
    head, sep, last = kernel.rpartition(",") if "," in kernel else kernel.rpartition("<")
    if not kernel.endswith(">") or last.strip(" >") not in INDEX_TYPES:
        raise ValueError(f"{kernel!r} does not end in an index type argument")
    return f"{head}{sep}{' ' if sep == ',' else ''}{index}>"


def indexed_kernel(workload: Workload, shape: Shape, ctx: dict, kernel: str, index: str):
    """The loaded kernel `kernel` instantiated for `index`. The runner loads the variants' own
    names (the int path); another instantiation is compiled and loaded on first use, through
    the same cache, and kept in ctx["kernels"]."""
    name = instantiation(kernel, index)
    kernels = ctx["kernels"]
    if name not in kernels:
        from pmppbench.compile import load_kernels  # noqa: PLC0415 (needs a GPU)

        kernels[name] = load_kernels(workload.name, [name], workload.defines(shape))[name]
    return kernels[name]


def _wide(kernel: str) -> str | None:
    try:
        return instantiation(kernel, "long long")
    except ValueError:
        return None


def with_wide_paths(names: list[str], indexed: set[str]) -> list[str]:
    """`names` plus the 64-bit instantiation of each of them in `indexed`: what `pmppbench
    compile` builds."""
    return names + [instantiation(n, "long long") for n in names if n in indexed]


# ---- inputs -------------------------------------------------------------------------------

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
    import os  # noqa: PLC0415
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    items = list(items)
    with ThreadPoolExecutor(max(1, min(len(items), os.cpu_count() or 1, 16))) as pool:
        list(pool.map(fn, items))


def random_array(shape: int | tuple[int, ...], rng: np.random.Generator, fill: Fill = normal32) -> np.ndarray:
    """An FP32 input of `shape`, filled by `fill(generator, view)`. Past one PIECE the array
    is filled piece by piece, each from its own child of `rng` (Generator.spawn), on one
    thread per core: NumPy's generators release the GIL while they fill, so 2 x 64M values
    take a fraction of a second instead of two. The pieces depend on the seed only, never on
    the thread count, so a seed still names one input on every machine."""
    out = np.empty(shape, dtype=np.float32)
    flat = out.reshape(-1)
    if flat.size <= PIECE:
        fill(rng, flat)
        return out
    starts = range(0, flat.size, PIECE)
    on_cores(lambda job: fill(job[1], flat[job[0]:job[0] + PIECE]), zip(starts, rng.spawn(len(starts))))
    return out


# ---- inputs and checks past 2^31 elements -------------------------------------------------

REPEAT_PERIOD = (1 << 24) - 3  # odd: no power-of-two wrap of an index lands on an equal value


def repeated_random(count: int, rng: np.random.Generator, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    """`count` FP32 values: one random block of REPEAT_PERIOD values, uniform in [low, high),
    repeated. Drawing 2^31 random numbers would take the host tens of seconds; copying one block
    takes about one. An index that wrapped by 2^31 or 2^32 (a 32-bit overflow) moves by a
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


def checked_indices(size: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """Sorted indices into range(size) for a sampled check: one random index in each of
    `count` equal strata, the first and last 64, and the 64 on either side of 2^31 and 2^32
    (where a 32-bit index would wrap)."""
    edges = np.linspace(0, size, count + 1).astype(np.int64)
    picks = rng.integers(edges[:-1], np.maximum(edges[1:], edges[:-1] + 1))
    near = [np.arange(c - 64, c + 64) for c in (0, size, 1 << 31, 1 << 32)]
    out = np.unique(np.concatenate([picks, *near]))
    return out[(out >= 0) & (out < size)]
