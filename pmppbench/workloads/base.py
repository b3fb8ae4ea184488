"""What a workload declares, and nothing more.

A workload is data and small functions: its variants, the shapes it checks, how to make
inputs, the CPU reference, how to bind a variant to device buffers (a Job), and the traffic
model (bytes, FLOPs) of each variant, its protocol and the sizes and options its command
takes. It never prints, times or writes files: the session, the runner and the exporters do
that once for every workload (docs/architecture.md). The command line, `compile`,
`resources`, config validation and the tests that iterate `workloads.names()` all follow
from the declaration, so adding a workload costs one .cu file, one module subclassing
Workload, one registry line, its config sections and its tests (docs/adding-a-workload.md).
What workloads may use to fill it in (grids, index paths, inputs, the sampled check) is in
workloads/helpers.py.
"""

from __future__ import annotations

import re

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from pmppbench.hardware.archs import capability
from pmppbench.measure.check import Tolerance
from pmppbench.errors import UsageError
from pmppbench.measure.protocol import Protocol

if TYPE_CHECKING:
    from pmppbench.hardware.device import DeviceInfo

Shape = dict[str, int]  # named sizes and compile-time parameters, e.g. {"n": 1 << 26}
Geometry = tuple[tuple[int, ...], tuple[int, ...]]  # (grid, block) of one launch


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

    def tolerance_of(self, shape: Shape, variant: Variant, device: "DeviceInfo | None" = None) -> Tolerance:
        """The check rule for one variant on one shape: tolerance_for(shape), unless the bound
        depends on the variant too (the reduction's on its order of additions, or a roof row
        that computes something else exactly). `device`: the GPU the job runs on, where the
        order follows its geometry (a grid sized by the SMs); None: a bound sound on any GPU."""
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
        for axis in self.axes:  # a named axis takes its declared words; one without a default may be left out
            if axis.choices and (axis.name in shape or axis.default) and shape.get(axis.name) not in axis.choices:
                raise UsageError(f"{self.name}: {axis.name} must be one of {', '.join(axis.choices)}, "
                                 f"got {shape.get(axis.name)!r}")

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

    def kernels_of(self, variant: Variant) -> list[str]:
        """Every kernel expression `variant` may launch (its `kernel`; a workload whose variant
        launches another instantiation per shape, e.g. GEMM's rungs per precision, says so):
        what a target that cannot run the variant leaves out of its build."""
        return [variant.kernel] if variant.kernel else []

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

    def geometry(self, variant: Variant, shape: Shape, device: "DeviceInfo | None" = None) -> Geometry:
        """(grid, block) of `variant`'s launch on `shape` (`device`: the GPU's facts, for a
        grid sized by its SMs); a learner's kernel (--like) takes the geometry of the variant
        it is like, through job()."""
        raise ValueError(f"{self.name}: variant {variant.name} declares no launch geometry")

    def job(self, variant: Variant, shape: Shape, ctx: Any) -> Job:
        raise NotImplementedError

    def prebuild(self, shape: Shape, variants: list[Variant]) -> None:
        """Optional: build ahead what the variants' jobs on `shape` will ask for that costs host
        time and no device memory worth counting (a library peer's JIT-compiled kernels). A
        worker calls it on its build thread for every step of its plan, while the GPU runs the
        steps before. job() never depends on it (it asks for the same thing and gets the build
        done, in flight or not yet started); an error here is left for job() to report."""

    def teardown(self, ctx: Any) -> None:
        """Release what setup() took beyond ordinary device arrays (streams, pinned memory)."""

    # ---- model --------------------------------------------------------------------
    def traffic(self, shape: Shape, variant: Variant, device: "DeviceInfo | None" = None) -> Traffic:
        """The variant's model on `shape`. `device`: the facts of the GPU the job ran on, for a
        model that depends on them (GEMM's `best` chooses its tiles by the SM count); None
        where no GPU is asked (bytes and FLOPs never depend on it)."""
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

    def variant_names(self) -> list[str]:
        return [v.name for v in self.variants]


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
