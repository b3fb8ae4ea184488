"""The workload contract: what a workload declares, and nothing more.

Eight members are required (REQUIRED): its `name`, its `variants` (the table's rows), its
`sizes` (the default shape and the shapes --check-only runs), its check rule (`tolerance`),
and four functions: `make_inputs` (seeded host inputs), `reference` (the CPU answer), `job`
(one variant bound to the shape's device buffers) and `traffic` (the bytes and FLOPs the
variant must move and do). Everything else has a default that fits most workloads: the
command's words (title, dims, axes), the protocol, setup (upload the inputs), the launch
geometry, compile-time defines, per-variant check rules. What only a few need is opt-in, on
the Variant or behind a small interface (ModelColumns, Prebuilds). A workload never prints,
times or writes files: the engine and the exporters do that once for every workload
(docs/architecture.md). Adding one costs one .cu file, one module, one registry line, its
config sections, its tests and its docs page (docs/adding-a-workload.md). What workloads may
use to fill the contract in (grids, index paths, inputs, the sampled check) is in
workloads/helpers.py.
"""

from __future__ import annotations

import itertools
import re

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from pmppbench.hardware import device as devices
from pmppbench.hardware.archs import capability
from pmppbench.hardware.gpu import cupy
from pmppbench.measure.check import Tolerance
from pmppbench.errors import UsageError
from pmppbench.measure.protocol import Protocol

if TYPE_CHECKING:
    from pmppbench.hardware.device import DeviceInfo

Shape = dict[str, int]  # named sizes and compile-time parameters, e.g. {"n": 1 << 26}
Geometry = tuple[tuple[int, ...], tuple[int, ...]]  # (grid, block) of one launch


@dataclass(frozen=True)
class Sizes:
    """The shapes a workload runs: `default` (the command without sizes) and `checks` (what
    --check-only runs: the edges where a kernel goes wrong, and the default)."""

    default: Shape
    checks: tuple[Shape, ...]


class Context:
    """What setup() makes of one shape and every job() of it reads: the device buffers by name
    (ctx["a"]), the loaded kernels by name expression, and the facts of the GPU they run on.
    `keep` holds what is not a buffer (streams, pinned host memory, a library's objects), and
    `on_close` what must be released when the shape is done (the engine calls close())."""

    def __init__(self, kernels: dict | None = None, device: "DeviceInfo | None" = None, **arrays: Any):
        self.kernels: dict[str, Any] = dict(kernels or {})
        self.device = device
        self.arrays: dict[str, Any] = dict(arrays)
        self.keep: dict[str, Any] = {}
        self._close: list[Callable[[], None]] = []

    def __getitem__(self, name: str) -> Any:
        return self.arrays[name]

    def __setitem__(self, name: str, value: Any) -> None:
        self.arrays[name] = value

    def __contains__(self, name: str) -> bool:
        return name in self.arrays

    def get(self, name: str, default: Any = None) -> Any:
        return self.arrays.get(name, default)

    def with_kernels(self, kernels: dict) -> "Context":
        """The same buffers and GPU with other kernels (a study swaps a rung's kernel for another)."""
        other = Context(kernels, self.device)
        other.arrays, other.keep = dict(self.arrays), self.keep
        return other

    def on_close(self, release: Callable[[], None]) -> None:
        self._close.append(release)

    def close(self) -> None:
        """Release what on_close() was given, last first; every release runs."""
        errors = []
        while self._close:
            try:
                self._close.pop()()
            except Exception as exc:  # noqa: BLE001 -- the others must still run
                errors.append(exc)
        if errors:
            raise errors[0]


@dataclass(frozen=True)
class Variant:
    """One row of the workload's table: plain data, so a step carrying it pickles as it is
    (to a worker process, a Ray actor, the counters child). How it launches is the
    workload's (Workload.geometry, Workload.job)."""

    name: str  # the name in the table, CSV, tests and README: "padded33"
    kernel: str | None  # NVRTC name expression in kernels_cu/<workload>.cu: "tiled<33>"; None for library calls
    about: str  # one line: what this variant changes and why it should be faster
    timed: bool = True  # False: checked only (a demonstration, e.g. the stream event dependency)
    source: str | None = None  # a learner's own .cu file (--kernel FILE:NAME); `kernel` is NAME in it
    like: str | None = None  # ... launched with this variant's signature and geometry (--like)
    needs: str | None = None  # the oldest arch it runs on: "sm_80" (cp.async) = 8.0 or newer;
    # an arch-specific target such as "sm_90a" (wgmma, TMA) = that compute capability alone
    wide: bool = False  # `kernel` ends in the course's int index and has a 64-bit path (long long)
    computes: str = ""  # variants that compute the same thing share one CPU reference ("" = the workload's one)
    kernels: tuple[str, ...] = ()  # every kernel it may launch, where that is more than `kernel` (one per precision)
    defines: tuple[tuple[str, Any], ...] = ()  # compile-time constants its kernel is built with, given to a
    # learner's kernel --like it too (BLOCK_DIM, COARSE_FACTOR, tile sizes), beside the shape's (defines())
    starter: "Starter | None" = None  # opt-in: what a learner's kernel --like this variant is given and must do


@dataclass(frozen=True)
class Starter:
    """The contract of a learner's kernel run --like a variant (Variant.starter), from which
    docs/your-own-kernel.md's table and `pmppbench template` are made: the kernel's parameters,
    its grid in words (the block is the variant's geometry), what one call must leave in the
    output, what the harness does before each call, and a simple correct body that PASSes as
    given, for the learner to replace. A variant without one cannot be a --like: its call is
    several launches or a library's, or its arguments are nothing a learner's kernel could take
    (a tensor map, the look-back's epoch-stamped status words)."""

    params: str  # the kernel's parameter list: "const float* a, const float* b, float* c, int n"
    grid: str  # how the grid covers the output, in words: "one thread per element, rounded up to whole blocks"
    leaves: str  # what one call must leave in the output: "c[i] = a[i] + b[i] for every i < n"
    body: str  # the template's kernel body (CUDA, indented by four spaces)
    reset: str = ""  # what the harness does before each call, inside the timed call ("histo zeroed")
    block: tuple[str, ...] = ()  # the defines (Variant.defines) that give the block's dimensions, x first
    helpers: str = ""  # __device__ functions the body uses, written before the kernel


def arch_meets(gpu: str, needs: str | None) -> bool:
    """Whether a GPU of compute capability or arch `gpu` ("8.9" or "sm_89") can run a variant
    that `needs` an arch. Arch-specific features (the trailing "a": sm_90a) are not forward
    compatible: they run on that one compute capability only; plain archs run on it and
    every newer one. (compile.target_meets asks the same of a build target.)"""
    if needs is None:
        return True
    if not re.fullmatch(r"sm_\d\d+a?", needs):
        raise ValueError(f"needs must look like sm_80 or sm_90a, got {needs!r}")
    want, have = capability(needs), capability(gpu)
    return have == want if needs.endswith("a") else have >= want


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
    poison: Callable[[], None]  # before a checked run: fill the output with what no kernel leaves (helpers.poison)
    launch: Launch | None = None  # for the resource columns; None for library calls
    launches: tuple[Launch, ...] = ()  # every kernel launch of one call, in order (a call may be several)
    reset: Callable[[], None] | None = None  # what each call does first (e.g. zero an atomic accumulator)


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


REQUIRED = ("name", "variants", "sizes", "tolerance", "make_inputs", "reference", "job", "traffic")


class Workload:
    """Base class: a workload declares the REQUIRED members and overrides what else it needs."""

    # ---- required: what it is, its table, its shapes, its check rule --------------------------
    name: str = ""
    variants: tuple[Variant, ...] = ()
    sizes: Sizes | None = None  # a class attribute, or a property where the shapes are computed
    tolerance: Tolerance | None = None  # one rule for every shape; or override tolerance_for / tolerance_of

    # ---- the command's words and the table's columns (defaults fit most) -----------------------
    title: str = ""
    about: str = ""  # the command's one-line help
    dims: tuple[str, ...] = ()  # positional CLI sizes, in order: ("m", "n")
    dim_help: dict[str, str] = {}  # what each size means, for the command's help
    axes: tuple[Axis, ...] = ()  # shape keys given as options (--radius, --streams)
    protocol: Protocol = Protocol(warmup=3, batches=5, reps=20)  # the timing contract (docs/measurement.md)
    shares_host_link: bool = False  # its timed work crosses PCIe: with --devices, one GPU at a time
    baseline: str | None = None  # "speedup vs" column: this variant's time / each variant's time
    roof: str | None = None  # "% of" column: each variant's rate / this variant's rate
    rate: str = "GB/s"  # the headline rate column: "GB/s" or "GFLOP/s"
    model_columns: "ModelColumns | None" = None  # opt-in: model runs timed after the variants
    extra_kernels: tuple[str, ...] = ()  # kernels `compile` builds beyond the variants' own (what a job picks)
    kernel_labels: dict[str, str] = {}  # how `compile` names a kernel's users where the variants' names do not
    call: str = ""  # what one timed call contains beyond the variant's one kernel (the caption; call_note)

    # ---- required functions ---------------------------------------------------------------------
    def make_inputs(self, shape: Shape, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Seeded host inputs of one shape (never zeros: a kernel that writes nothing must fail)."""
        raise NotImplementedError

    def reference(self, shape: Shape, inputs: dict[str, np.ndarray], variant: Variant) -> np.ndarray:
        """The CPU answer `variant`'s output is checked against."""
        raise NotImplementedError

    def job(self, variant: Variant, shape: Shape, ctx: Context) -> Job:
        """`variant` bound to the shape's device buffers: one call, its output and its poison."""
        raise NotImplementedError

    def traffic(self, shape: Shape, variant: Variant, device: "DeviceInfo | None" = None) -> Traffic:
        """The variant's model on `shape`. `device`: the facts of the GPU the job ran on, for a
        model that depends on them (GEMM's `best` chooses its tiles by the SM count); None
        where no GPU is asked (bytes and FLOPs never depend on it)."""
        raise NotImplementedError

    # ---- optional, with defaults ----------------------------------------------------------------
    def setup(self, shape: Shape, inputs: dict[str, np.ndarray], kernels: dict) -> Context:
        """Upload the inputs and allocate outputs: the Context every job() of the shape reads.
        By default every NumPy input goes to the device under its own name."""
        cp = cupy()
        arrays = {k: cp.asarray(v) for k, v in inputs.items() if isinstance(v, np.ndarray)}
        return Context(kernels, devices.current(), **arrays)

    def device_bytes(self, shape: Shape) -> int:
        """Device memory the shape needs, compared with the free memory before anything is
        allocated (a shape that does not fit is a SKIP row); 0: not known, not compared."""
        return 0

    def tolerance_for(self, shape: Shape) -> Tolerance:
        """The check rule for one shape: `tolerance`, unless the bound depends on the shape
        (GEMM's on K, the stencil's on R, the stream's on TERMS)."""
        if self.tolerance is None:
            raise NotImplementedError(f"{self.name}: set `tolerance` or override tolerance_for")
        return self.tolerance

    def tolerance_of(self, shape: Shape, variant: Variant, device: "DeviceInfo | None" = None) -> Tolerance:
        """The check rule for one variant on one shape: tolerance_for(shape), unless the bound
        depends on the variant too (the reduction's on its order of additions). `device`: the
        GPU the job runs on, where the order follows its geometry; None: a bound sound on any GPU."""
        return self.tolerance_for(shape)

    def validate(self, shape: Shape) -> None:
        """Raise UsageError for a shape the workload cannot run (before any GPU work)."""
        for d in self.dims:
            v = shape.get(d)
            if not is_int(v, 1):
                raise UsageError(f"{self.name}: {d.upper()} must be a positive integer, got {v!r}")
        for axis in self.axes:  # a named axis takes its declared words; one without a default may be left out
            if axis.choices and (axis.name in shape or axis.default) and shape.get(axis.name) not in axis.choices:
                raise UsageError(f"{self.name}: {axis.name} must be one of {', '.join(axis.choices)}, "
                                 f"got {shape.get(axis.name)!r}")

    def label(self, shape: Shape) -> str:
        """How the shape reads in tables: sizes joined by 'x', parameters appended."""
        sizes = "x".join(str(shape[d]) for d in self.dims)
        params = " ".join(f"{k}={v}" for k, v in shape.items() if k not in self.dims)
        return f"{sizes} {params}".strip()

    def defines(self, shape: Shape) -> dict[str, Any]:
        """Compile-time -D defines for this shape (e.g. the stencil radius)."""
        return {}

    def compile_sets(self) -> list[dict[str, Any]]:
        """Every set of defines `pmppbench compile` builds: the defines of each combination of the
        swept axes' defaults (the command's default shapes), each set once; [{}] without any."""
        swept = [a for a in self.axes if a.sweep and a.default]
        sets: list[dict[str, Any]] = []
        for values in itertools.product(*(a.default for a in swept)):
            defines = self.defines({**self.default_shape(), **{a.name: v for a, v in zip(swept, values)}})
            if defines not in sets:
                sets.append(defines)
        return sets or [{}]

    def variants_for(self, shape: Shape) -> tuple[Variant, ...]:
        """The variants run on this shape (default: all; the stream workload derives them)."""
        return self.variants

    def kernel_names(self) -> list[str]:
        """Every kernel `compile` builds: the variants' own, and the 64-bit path of each
        variant that declares one (Variant.wide)."""
        names = unique_kernels(self.variants)
        names += [w for v in self.variants if v.wide and v.kernel and (w := wide(v.kernel)) not in names]
        return names + [k for k in dict.fromkeys(self.extra_kernels) if k not in names]

    def kernels_of(self, variant: Variant) -> list[str]:
        """Every kernel expression `variant` may launch (its `kernel`; a workload whose variant
        launches another instantiation per shape, e.g. GEMM's rungs per precision, says so):
        what a target that cannot run the variant leaves out of its build."""
        return list(variant.kernels) if variant.kernels else [variant.kernel] if variant.kernel else []

    def geometry(self, variant: Variant, shape: Shape, device: "DeviceInfo | None" = None) -> Geometry:
        """(grid, block) of `variant`'s launch on `shape` (`device`: the GPU's facts, for a
        grid sized by its SMs); a learner's kernel (--like) takes the geometry of the variant
        it is like, through job()."""
        raise ValueError(f"{self.name}: variant {variant.name} declares no launch geometry")

    def reference_key(self, variant: Variant) -> str:
        """Variants with the same key share one reference (computed once per shape): by
        default what the Variant says it computes."""
        return variant.computes or "default"

    def call_note(self, shape: Shape) -> str:
        """What one timed call contains where that is more than the variant's one kernel (a
        reset before it, several launches), for the table's caption: `call`, unless it depends on
        the shape."""
        return self.call

    # ---- derived from the declaration -----------------------------------------------------------
    def default_shape(self) -> Shape:
        return dict(self.sizes.default)

    def check_shapes(self) -> list[Shape]:
        return [dict(s) for s in self.sizes.checks]

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
            narrow = next((k for k in names if k.endswith(">") and wide(k) == kernel), None)
            out.append((kernel, ", ".join(names[narrow]) + " (64-bit path)" if narrow else ""))
        return [(kernel, self.kernel_labels.get(kernel, users)) for kernel, users in out]

    def variant(self, name: str) -> Variant:
        for v in self.variants:
            if v.name == name:
                return v
        raise UsageError(f"{self.name}: unknown variant {name!r}; choose from {', '.join(self.variant_names())}")

    def variant_names(self) -> list[str]:
        return [v.name for v in self.variants]


class ModelColumns:
    """Opt-in (Workload.model_columns): runs the engine times after the variants, for model
    columns, never as a variant's row (the stream workload's stages alone). A workload never
    times anything itself."""

    def model_runs(self, shape: Shape, ctx: Context, rows: list) -> "ModelRuns | None":
        raise NotImplementedError

    def annotate(self, shape: Shape, ctx: Context, rows: list, timings: dict) -> None:
        """Add model columns to the shape's timed rows; `timings`: each model run's Timing."""
        raise NotImplementedError


class Prebuilds:
    """Opt-in: build ahead what the variants' jobs on `shape` will ask for that costs host time
    and no device memory worth counting (a library peer's JIT-compiled kernels). A worker calls
    it on its build thread for every step of its plan, while the GPU runs the steps before.
    job() never depends on it (it asks for the same thing and gets the build done, in flight
    or not yet started); an error here is left for job() to report."""

    def prebuild(self, shape: Shape, variants: list[Variant]) -> None:
        raise NotImplementedError


def missing(workload: Workload) -> list[str]:
    """The REQUIRED members `workload` does not declare (the registry refuses such a workload)."""
    cls, out = type(workload), []
    for member in REQUIRED:
        if member == "tolerance":
            ok = workload.tolerance is not None or any(getattr(cls, m) is not getattr(Workload, m)
                                                       for m in ("tolerance_for", "tolerance_of"))
        elif member in ("make_inputs", "reference", "job", "traffic"):
            ok = getattr(cls, member) is not getattr(Workload, member)
        else:
            ok = bool(getattr(workload, member, None))
        if not ok:
            out.append(member)
    return out


def unique_kernels(variants) -> list[str]:
    """The kernels `variants` launch, each once, in order: one compile and load per kernel."""
    return list(dict.fromkeys(v.kernel for v in variants if v.kernel))


def is_int(value: Any, minimum: int) -> bool:
    """An integer (Python or NumPy, not bool) of at least `minimum`: a valid size or parameter."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= minimum


# ---- kernel names with an index type ---------------------------------------------------------
# A textbook kernel whose last template argument is its index type is declared with the
# course's `int` ("tiled<32, int>"); its 64-bit path is the same name with `long long`
# (workloads/helpers.py chooses between them per shape).

INDEX_TYPES = ("int", "long long")


def instantiation(kernel: str, index: str) -> str:
    """The name expression of `kernel` (whose last template argument is the index type, as
    written in the Variant: "tiled<32, int>") for another index type: "tiled<32, long long>"."""
    head, sep, last = kernel.rpartition(",") if "," in kernel else kernel.rpartition("<")
    if not kernel.endswith(">") or last.strip(" >") not in INDEX_TYPES:
        raise ValueError(f"{kernel!r} does not end in an index type argument")
    return f"{head}{sep}{' ' if sep == ',' else ''}{index}>"


def wide(kernel: str) -> str | None:
    """The 64-bit instantiation of `kernel`, or None when its last argument is no index type."""
    try:
        return instantiation(kernel, "long long")
    except ValueError:
        return None
