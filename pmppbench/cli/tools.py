"""What the tool commands print: `info`, `compile` and `resources` (the CLI only parses)."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any

from rich.table import Table

from pmppbench.hardware import device, occupancy
from pmppbench.measure import roofline
from pmppbench import paths, workloads
from pmppbench.hardware.archs import target_known
from pmppbench.hardware.compile import NeedsNewerArch, compile_apart, device_target, target_meets
from pmppbench.errors import CheckFailed, CompileError, EnvironmentProblem, UsageError
from pmppbench.hardware.gpu import nvrtc, require_device
from pmppbench.results.metadata import nvrtc_version
from pmppbench.hardware.occupancy import ResourceRow, SmLimits
from pmppbench.engine.worker.pipeline import prepared
from pmppbench.workloads.base import wide


def info(console, measure: bool) -> None:
    """The GPU's facts and ceilings: theoretical, and measured once with --measure (PMPP 5.1)."""
    d = device.current()
    t = Table(title=f"{d.name} ({d.arch})", show_header=False)
    t.add_column(justify="left")
    t.add_column(justify="right")
    rows = [
        ("compute capability", d.compute_capability),
        ("SMs", d.sm_count),
        ("SM clock (max)", f"{d.sm_clock_mhz:.0f} MHz"),
        ("memory clock", f"{d.mem_clock_mhz:.0f} MHz"),
        ("memory bus", f"{d.bus_width_bits} bit"),
        ("memory", f"{d.memory_bytes / 2**30:.1f} GiB"),
        ("L2 cache", f"{d.l2_bytes / 2**20:.1f} MiB"),
        ("shared memory per SM", f"{d.smem_per_sm / 1024:.0f} KiB"),
        ("shared memory per block (opt-in)", f"{d.smem_per_block / 1024:.0f} KiB ({d.smem_per_block_optin / 1024:.0f} KiB)"),
        ("registers per SM", f"{d.regs_per_sm}"),
        ("max threads per SM / per block", f"{d.max_threads_per_sm} / {d.max_threads_per_block}"),
        ("max blocks per SM", d.max_blocks_per_sm),
        ("driver / CUDA runtime / NVRTC / CuPy", f"{d.driver} / {d.cuda_runtime} / {nvrtc_version()} / {d.cupy}"),
        ("peak bandwidth (2 x mem clock x bus)", f"{d.peak_bandwidth_gbs:,.0f} GB/s"),
    ]
    if d.peak_fp32_gflops:
        rows += [
            (f"peak FP32 (SMs x {d.fp32_lanes_per_sm} lanes x 2 x clock)", f"{d.peak_fp32_gflops:,.0f} GFLOP/s"),
            ("ridge point (peak FP32 / peak bandwidth)", f"{d.ridge_flop_per_byte:.1f} FLOP/B"),
        ]
    for p in ("tf32", "bf16", "fp16"):  # the tensor cores, dense, FP32 accumulation (gemm --precision)
        peak = d.peak_gflops(p)
        if peak:
            rows.append((f"peak {p.upper()} tensor cores (dense, FP32 accumulation)", f"{peak:,.0f} GFLOP/s"))
    if measure:
        with console.status("measuring the copy bandwidth and the cuBLAS FP32 rate..."):
            measured = roofline.measure_and_cache()
    else:
        measured = roofline.load_cached(d.name, d.driver)
    if measured:
        rows += [
            ("measured bandwidth (D2D copy, read + write)", f"{measured.bandwidth_gbs:,.0f} GB/s"),
            ("measured FP32 (cuBLAS SGEMM)", f"{measured.fp32_gflops:,.0f} GFLOP/s"),
            ("measured ridge point", f"{measured.ridge_flop_per_byte:.1f} FLOP/B"),
        ]
    for k, v in rows:
        t.add_row(k, str(v))
    console.print(t)
    if measured:
        console.print(f"measured ceilings: {measured.how}" + ("" if measure else " (cached; --measure to redo)"),
                      highlight=False)
    else:
        console.print("no measured ceilings yet: `pmppbench info --measure` measures them once for this GPU")
    if d.ridge_flop_per_byte:
        console.print(f"Kernels below {d.ridge_flop_per_byte:.1f} FLOP/B are memory-bound on this GPU by the "
                      "roofline model (vecadd: 0.083 FLOP/B; naive GEMM: 0.25 FLOP/B).")


def supported_arch(arch: str, what: str = "") -> str:
    """`arch` if this NVRTC can build it (an arch-specific target, sm_90a, where it builds
    sm_90); EnvironmentProblem for a GPU architecture this NVRTC is too old or too new for;
    UsageError naming the ones it can build otherwise."""
    supported = [f"sm_{a}" for a in nvrtc().getSupportedArchs()]
    if (arch[:-1] if arch.endswith("a") else arch) in supported:
        return arch
    if target_known(arch):
        raise EnvironmentProblem(f"{what or '--arch ' + arch}: this NVRTC ({nvrtc_version()}) cannot build it (it builds "
                                 f"{supported[0]} to {supported[-1]}); install an NVRTC that supports {arch} "
                                 "(CUDA 12's for sm_70 and older, a newer CUDA for newer GPUs)")
    raise UsageError(f"--arch {paths.cut(arch, 40)}: this NVRTC cannot build it; choose one of {', '.join(supported)}")


def skipped_on(workload, arch: str) -> tuple[list[Any], set[str]]:
    """(the variants `arch` cannot build, the kernels only they launch): the variants that
    declare a newer or another arch-specific target (Variant.needs), and their 64-bit paths."""
    skipped = [v for v in workload.variants if not target_meets(arch, v.needs)]
    kept = {k for v in workload.variants if target_meets(arch, v.needs) for k in workload.kernels_of(v)}
    only = {k for v in skipped for k in workload.kernels_of(v)} - kept
    return skipped, only | {w for k in only if (w := wide(k))}


@dataclass(frozen=True)
class Compiled:
    """One line of `compile`: a kernel NVRTC built, with ptxas's resources and the variants
    that launch it (a learner's kernel, or a template's, is one more of these)."""

    workload: str
    kernel: str  # the name expression, e.g. "tiled<32, int>"
    defines: str  # "RADIUS=2", or ""
    resources: str  # "32 regs, 2048 B smem, 0 B stack, 0 B spills" ("" when ptxas said nothing)
    variants: str  # "tiled32, best" (the table names launching it)


COMPILE_WIDTH = 120  # `compile` never prints a longer line, however wide the terminal
GAP = "  "


def print_compiled(console, lines: list[Compiled]) -> None:
    """Each workload's kernels one line each, aligned, when they fit the terminal (at most
    COMPILE_WIDTH), the variants wrapping in their own column; otherwise each kernel as a
    block: the kernel, then its resources and variants on lines of their own, indented."""
    for name in dict.fromkeys(c.workload for c in lines):
        _print_workload(console, [c for c in lines if c.workload == name])


def _print_workload(console, lines: list[Compiled]) -> None:
    from rich.markup import escape  # noqa: PLC0415

    width = min(console.width, COMPILE_WIDTH)
    heads = [(c.workload, c.kernel, c.defines) for c in lines]
    widths = [max((len(h[i]) for h in heads), default=0) for i in range(3)]
    res_width = max((len(c.resources) for c in lines), default=0)
    lead = len("OK") + sum(len(GAP) + w for w in widths) + len(GAP) + res_width + len(GAP)
    if width - lead >= 24:  # room for a column of variant names
        for c in lines:
            head = GAP.join(cell.ljust(w) for cell, w in zip((c.workload, c.kernel, c.defines), widths))
            names = textwrap.wrap(c.variants, width - lead, break_long_words=False) or [""]
            console.print(f"[green]OK[/]{GAP}{escape(head)}{GAP}{escape(c.resources.ljust(res_width))}{GAP}"
                          f"{escape(names[0])}".rstrip(), highlight=False, soft_wrap=True)
            for more in names[1:]:
                console.print(" " * lead + escape(more), highlight=False, soft_wrap=True)
        return
    indent = " " * (len("OK") + len(GAP))
    for c in lines:
        head = textwrap.wrap(" ".join(x for x in (c.workload, c.kernel, c.defines) if x), width - len(indent),
                             subsequent_indent="  ", break_long_words=False)
        console.print(f"[green]OK[/]{GAP}{escape(head[0])}", highlight=False, soft_wrap=True)
        rest = head[1:] + textwrap.wrap(c.resources, width - len(indent), break_long_words=False)
        rest += textwrap.wrap(f"variants: {c.variants}", width - len(indent), subsequent_indent="  ",
                              break_long_words=False) if c.variants else []
        for line in rest:
            console.print(indent + escape(line), highlight=False, soft_wrap=True)


def compile_all(console, names: list[str] | None, arch: str | None, use_cache: bool) -> None:
    """Compile every kernel of the named workloads (each unit in a child process: Ctrl-C stops
    at once, compile_apart); one line per kernel (print_compiled): the variant's table name,
    the kernel expression it launches, the defines, ptxas's resources; then one SKIP line per
    variant that declares it needs a newer (or another arch-specific) target, with that
    target: those are not built, and their rows on such a GPU are SKIP too."""
    chosen = [workloads.get(n) for n in (names or workloads.names())]  # unknown names fail first
    given = arch is not None
    if arch is None:
        arch = device_target(device.current().arch)  # what load_kernels builds for it
    arch = supported_arch(arch, "" if given else f"this GPU ({arch})")
    console.print(f"NVRTC {nvrtc_version()}, {arch}", highlight=False)
    lines, failures, newer, skips, jobs, built = [], 0, [], [], [], {}
    for w in chosen:
        skipped, not_built = skipped_on(w, arch)
        skips += [(w.name, v.name, v.needs) for v in skipped]
        kernels = [k for k in w.kernel_names() if k not in not_built]
        built[w.name] = not_built
        jobs += [(w.name, kernels, arch, defines, use_cache) for defines in (w.compile_sets() if kernels else [])]
    for (name, _, _, defines, *_), unit in compile_apart(jobs):
        w = workloads.get(name)
        tag = " ".join(f"{k}={v}" for k, v in defines.items())
        if isinstance(unit, CompileError):
            failures += 1
            newer += [unit.arch] if isinstance(unit, NeedsNewerArch) else []
            console.print(f"[red]FAIL[/] {name} {tag} {arch}")
            console.print(str(unit), markup=False, highlight=False)
            continue
        if isinstance(unit, BaseException):
            raise unit
        for kernel, variants in w.kernel_variants():
            if kernel in built[name]:
                continue
            rep = unit.ptxas.get(kernel)
            res = "" if rep is None else (
                f"{rep.registers} regs, {rep.static_smem} B smem, {rep.stack_bytes} B stack, "
                f"{rep.spill_stores + rep.spill_loads} B spills")
            lines.append(Compiled(name, kernel, tag, res, variants))
    print_compiled(console, lines)
    for name, variant, needs in skips:
        console.print(f"[yellow]SKIP[/] {name} {variant}: needs {needs}, not built for {arch}", highlight=False,
                      soft_wrap=False)
    if failures and len(newer) == failures:  # the sources are right; the target is too old for them
        oldest = max(newer, key=lambda a: int(a[3:]))
        what = f"--arch {arch}" if given else f"this GPU ({arch})"
        problem = UsageError if given else EnvironmentProblem
        raise problem(f"{what}: {failures} compile unit(s) need {oldest} or newer (above); "
                      f"choose --arch {oldest} or newer")
    if failures:
        raise CheckFailed(f"{failures} compile unit(s) failed")


def resources(console, names: list[str] | None) -> None:
    """Registers, shared and local memory and occupancy of every kernel (PMPP 5.6)."""
    chosen = [workloads.get(n) for n in (names or workloads.names())]  # unknown names fail first
    require_device()
    limits = occupancy.limits_for_current_device()
    d = device.current()
    per_thread = d.smem_per_sm / d.max_threads_per_sm
    console.print(f"{d.name}: {d.smem_per_sm // 1024} KB shared memory / {d.max_threads_per_sm} threads = "
                  f"{per_thread:.0f} B per thread at full occupancy; {d.regs_per_sm} registers / "
                  f"{d.max_threads_per_sm} threads = {d.regs_per_sm // d.max_threads_per_sm} registers per thread",
                  highlight=False)
    disagree = 0
    for w in chosen:
        rows = resources_table_rows(w, limits=limits)
        disagree += sum(r.agrees is False for r in rows)
        occupancy.print_resources(console, rows, title=f"{w.title} · {w.label(w.default_shape())}")
    if disagree:
        raise CheckFailed(f"{disagree} kernel(s) where the hand computation and the occupancy API disagree")


def workload_launches(workload: Any, shape: dict) -> list[tuple[Any, Any]]:
    """(variant, Launch) for every variant of `workload` on `shape` that launches a kernel.

    Builds the jobs exactly as the runner does (pipeline.prepared, then job) but runs
    nothing. Only for immediate use: the launches' buffers are released on return, so read
    their kernel, block and dynamic shared memory, never launch them.
    """
    workload.validate(shape)
    # library calls (kernel None: cuBLAS, CUB, memcpy) launch no kernel of ours; and a library
    # that cannot run here (Unavailable) would stop the table
    variants = [v for v in workload.variants_for(shape) if v.kernel is not None]
    with prepared(workload, shape, variants) as (_inputs, ctx):
        launches = [(v, workload.job(v, shape, ctx).launch) for v in variants]
    return [(v, launch) for v, launch in launches if launch is not None]


def resources_table_rows(workload: Any, shape: dict | None = None, limits: SmLimits | None = None) -> list[ResourceRow]:
    """Rows of `pmppbench resources` for one workload on `shape` (default: its default shape).

    Needs a GPU: the kernels are loaded for the current device so the registers come from
    the driver, and every row carries the occupancy API's answer next to the hand's.
    """
    shape = workload.default_shape() if shape is None else shape
    limits = limits or occupancy.limits_for_current_device()
    label = workload.label(shape)
    rows = []
    for variant, launch in workload_launches(workload, shape):
        api = occupancy.api_active_blocks(launch.kernel, launch.threads_per_block, launch.dynamic_smem)
        rows.append(occupancy.resource_row(workload.name, variant.name, label, launch, limits, api,
                                           occupancy.max_dynamic_smem(launch.kernel)))
    return rows
