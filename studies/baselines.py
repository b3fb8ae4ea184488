"""Every textbook rung beside the course's own listing of the same algorithm.

Run on a GPU machine:

    python3 studies/baselines.py [--out baselines.txt] [--json FILE]
                                 [--before DIR] [--ab] [--only vecadd,stencil] [--quick]

For every shape of configs/default.toml, each textbook rung (vecadd scalar; transpose copy,
naive, shared32, padded33; gemm naive, tiled16, tiled32, coarsened; stencil naive, shared;
reduce simple, convergent, shared, segmented, coarsened on float; histogram global_atomic,
privatized, shared_private, coarsened_contiguous, coarsened_interleaved, aggregated on 7 bins;
scan kogge_stone, brent_kung, coarsened on float inclusive scans)
is timed in one protocol call beside the course's listing (studies/course_listings/course.cu:
the same algorithm as the course writes it, `int` indices, the course's block sizes and
launch). Both are compiled by the same NVRTC path (pmppbench.hardware.compile, the same options and
cache), run on the same device buffers and inputs, and are checked against the workload's
own reference before any timing. The protocol is the workload's (Workload.protocol)
with the order alternated batch by batch, so neither side gains from going first.

For the reduction, the histogram and the scan a call is more than one launch (a reset, a
finish launch, the scan's sums and add-back): the listing runs in the rung's own call, its kernel in place of the rung's.

The ratio column is rung / listing time: above 1.00 the rung is slower than the listing.

Extra columns, for finding causes (same call, same alternation):
  --ab          the rung's 64-bit instantiation at the same shape ("64-bit"), and the
                rung's own source with __restrict__ added to every `float*` parameter
                ("restrict": the loads become LDG.E.CONSTANT, the non-coherent read-only
                path, where a rung with plain pointers and the course use LDG.E)
  --before DIR  the rungs of an older kernels_cu/ (e.g. `git archive <rev> kernels_cu |
                tar -x -C DIR`), launched with 64-bit sizes as they were

Without a GPU, `--sass` compiles the same kernels for sm_90 through the same path and prints
what their machine code has in common with the listing's: instructions, registers, S2R
(special-register reads), plain and read-only (LDG.E.CONSTANT) global loads, and whether the
rung's SASS is the listing's instruction for instruction. It needs cuobjdump (the CUDA
toolkit, or pip's nvidia-cuda-cuobjdump). The SASS depends on the NVRTC version: install the
one the GPU machine has (the H200 image's is 13.0: pip install nvidia-cuda-nvrtc==13.0.88)
to see what it runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pmppbench.cli import config  # noqa: E402
from pmppbench import workloads  # noqa: E402
from pmppbench.measure.check import compare  # noqa: E402
from pmppbench.hardware.compile import compile_unit, kernels_from, load_kernels  # noqa: E402
from pmppbench.measure.protocol import measure  # noqa: E402
from pmppbench.engine.worker.pipeline import clock_observer, prepared  # noqa: E402
from pmppbench.workloads.base import Launch, instantiation  # noqa: E402
from pmppbench.workloads.helpers import grid_1d, grid_2d  # noqa: E402

LISTINGS = ROOT / "studies" / "course_listings"


# ---- the course's listings and how the course launches them -------------------------------

def vecadd_launch(kernel, shape, ctx):
    n = shape["n"]
    return Launch(kernel, grid_1d(n, 256), (256,), (ctx["a"], ctx["b"], ctx["c"], np.int32(n)))


def transpose_launch(kernel, shape, ctx):
    m, n = shape["m"], shape["n"]
    return Launch(kernel, grid_2d(n, m, 32, 32), (32, 32), (ctx["a"], ctx["b"], np.int32(m), np.int32(n)))


def gemm_launch(tile):
    def launch(kernel, shape, ctx):
        m, n, k = shape["m"], shape["n"], shape["k"]
        args = (ctx["a"], ctx["b"], ctx["c"], np.int32(m), np.int32(n), np.int32(k))
        return Launch(kernel, grid_2d(n, m, tile, tile), (tile, tile), args)
    return launch


def gemm_coarsened_launch(kernel, shape, ctx):
    # The course's kernel: square width x width, width a multiple of TILE_WIDTH * COARSE_FACTOR.
    m, n, k = shape["m"], shape["n"], shape["k"]
    assert m == n == k and m % 128 == 0, "the course's coarsened listing needs square sizes, a multiple of 128"
    return Launch(kernel, grid_2d(n, m, 32 * 4, 32), (32, 32), (ctx["a"], ctx["b"], ctx["c"], np.int32(m)))


def stencil_launch(kernel, shape, ctx):
    n = shape["n"]
    return Launch(kernel, grid_1d(n, 256), (256,), (ctx["x"], ctx["y"], np.int32(n)))


@dataclass(frozen=True)
class Call:
    """A rung's whole call (a reset, several launches): what the protocol times for the
    reduction and the histogram, whose calls are more than one launch."""

    kernel: object  # the kernel in place (for the registers column)
    run: object

    def __call__(self) -> None:
        self.run()


def in_rungs_call(rung: str):
    """The listing run in the rung's own call (its reset, its finish launch): the rung's job with
    the listing's kernel in place of the rung's, as the course's kernels take the rung's arguments."""
    def launch(kernel, shape, ctx, w):
        v = w.variant(rung)
        job = w.job(v, shape, ctx.with_kernels({**ctx.kernels, v.kernel: kernel}))
        return Call(kernel, job.run)
    launch.whole_call = True
    return launch


@dataclass(frozen=True)
class Pair:
    rung: str  # the variant name in pmppbench's table
    listing: str  # the kernel in studies/course_listings/course.cu
    launch: object  # (kernel, shape, ctx) -> Launch, as the course launches it
    before: str  # the rung's kernel in kernels_cu/ before the int index paths (64-bit sizes)


PAIRS = {
    "vecadd": [Pair("scalar", "vector_add", vecadd_launch, "scalar")],
    "transpose": [Pair("copy", "copy", transpose_launch, "copy"),
                  Pair("naive", "naive", transpose_launch, "naive"),
                  Pair("shared32", "shared32", transpose_launch, "tiled<32>"),
                  Pair("padded33", "padded33", transpose_launch, "tiled<33>")],
    "gemm": [Pair("naive", "gemm_naive", gemm_launch(16), "naive"),
             Pair("tiled16", "gemm_tiled16", gemm_launch(16), "tiled<16>"),
             Pair("tiled32", "gemm_tiled32", gemm_launch(32), "tiled<32>"),
             Pair("coarsened", "gemm_coarsened", gemm_coarsened_launch, "coarsened<32, 4>")],
    "stencil": [Pair("naive", "stencil_naive", stencil_launch, "naive"),
                Pair("shared", "stencil_shared", stencil_launch, "shared")],
    "reduce": [Pair(r, k, in_rungs_call(r), "") for r, k in (
        ("simple", "SimpleSumReductionKernel"), ("convergent", "ConvergentSumReductionKernel"),
        ("shared", "SharedMemorySumReductionKernel"), ("segmented", "SegmentedSumReductionKernel"),
        ("coarsened", "CoarsenedSumReductionKernel"))],
    "histogram": [Pair(r, k, in_rungs_call(r), "") for r, k in (
        ("global_atomic", "histo_kernel"), ("privatized", "histo_private_kernel"),
        ("shared_private", "histo_shared_kernel"), ("coarsened_contiguous", "histo_contiguous_kernel"),
        ("coarsened_interleaved", "histo_interleaved_kernel"), ("aggregated", "histo_aggregated_kernel"))],
    "scan": [Pair(r, k, in_rungs_call(r), "") for r, k in (
        ("kogge_stone", "Kogge_Stone_scan_kernel"), ("brent_kung", "Brent_Kung_scan_kernel"),
        ("coarsened", "three_phase_scan_kernel"))],
}
# The listings are the course's: float sums, the 7-bin letter histogram, float inclusive scans.
COURSE_SHAPES = {"reduce": lambda s: s["dtype"] == "f32", "histogram": lambda s: s["bins"] == 7,
                 "scan": lambda s: s["dtype"] == "f32" and s["kind"] == "inclusive"}


# ---- loading kernels from another source folder, through the same compile path ------------

def load_from(folder: Path, unit: str, names: list[str], defines: dict) -> dict:
    with kernels_from(folder):
        return load_kernels(unit, names, defines)


def is_indexed(w, variant) -> bool:
    """Does this rung have int and long long instantiations (the two index paths)?"""
    try:
        return instantiation(variant.kernel, "long long") in w.kernel_names()
    except ValueError:
        return False


def with_restrict(source: Path, folder: Path, unit: str) -> None:
    """<folder>/<unit>.cu: `source` with `__restrict__` on every `float*` parameter that lacks it."""
    text = re.sub(r"\b((?:const )?float\*) (\w+)([,)])", r"\1 __restrict__ \2\3", source.read_text())
    (folder / f"{unit}.cu").write_text(text)


# ---- one shape ------------------------------------------------------------------------------

@dataclass
class Row:
    workload: str
    shape: str
    rung: str
    kernel: str
    listing: str
    ms: dict = field(default_factory=dict)  # column -> median ms
    spread: dict = field(default_factory=dict)  # column -> spread %
    regs: dict = field(default_factory=dict)  # column -> registers
    checks: dict = field(default_factory=dict)  # column -> PASS / FAIL detail


def run_shape(w, shape, pairs, args, scratch: Path) -> list[Row]:
    import cupy as cp

    variants = [w.variant(p.rung) for p in pairs]
    defines = w.defines(shape)
    rows = []
    with prepared(w, shape, variants) as (inputs, ctx):
        course = load_from(LISTINGS, "course", [p.listing for p in pairs], defines)
        tolerances = {v.name: w.tolerance_of(shape, v, ctx.device) for v in variants}
        extra_units = {}
        if args.ab:
            names = sorted({v.kernel for v in variants})
            extra_units["restrict"] = load_from(scratch / "restrict", f"restrict_{w.name}", names, defines)
        if args.before:
            extra_units["before"] = load_from(scratch / "before", f"before_{w.name}",
                                              sorted({p.before for p in pairs}), defines)
        references = {}
        for pair, v in zip(pairs, variants):
            key = w.reference_key(v)
            if key not in references:
                references[key] = w.reference(shape, inputs, v)
            ref = references[key]
            job = w.job(v, shape, ctx)
            if getattr(pair.launch, "whole_call", False):  # the call is more than one launch
                entries = {"listing": (pair.launch(course[pair.listing], shape, ctx, w), job),
                           "rung": (Call(job.launch.kernel, job.run), job)}
            else:
                entries = {"listing": (pair.launch(course[pair.listing], shape, ctx), job),
                           "rung": (job.launch, job)}
            indexed = is_indexed(w, v)
            if args.ab:
                if indexed:
                    wide = w.job(v, shape, ctx, index="long long")
                    entries["64-bit"] = (wide.launch, wide)
                r_job = w.job(v, shape, ctx.with_kernels(dict(extra_units["restrict"])))
                entries["restrict"] = (r_job.launch, r_job)
            if args.before:
                old = extra_units["before"][pair.before]
                if indexed:  # the old kernel took 64-bit sizes: launch it where the long long path goes
                    b_ctx = ctx.with_kernels({instantiation(v.kernel, "long long"): old})
                    b = w.job(v, shape, b_ctx, index="long long")
                else:
                    b = w.job(v, shape, ctx.with_kernels({v.kernel: old}))
                entries["before"] = (b.launch, b)
            row = Row(w.name, w.label(shape), v.name, job.launch.kernel.name, pair.listing)
            runs = {}
            for col, (launch, out_job) in entries.items():
                out_job.poison()  # every entry writes the same output buffer: NaN first
                launch()
                cp.cuda.Device().synchronize()
                result = compare(out_job.output(), ref, tolerances[v.name])
                row.checks[col] = result.status if result.passed else f"{result.status}: {result.detail}"
                row.regs[col] = launch.kernel.registers
                if result.passed:
                    runs[col] = launch
            protocol = replace(w.protocol, alternate=True)
            if args.quick:
                protocol = replace(protocol, batches=3, reps=max(1, protocol.reps // 4))
            for col, t in measure(runs, protocol, observer=clock_observer()).items():
                row.ms[col], row.spread[col] = t.median_ms, 100 * t.spread
            rows.append(row)
            print(format_row(row, columns(args)), flush=True)
    return rows


# ---- output -----------------------------------------------------------------------------------

def columns(args) -> list[str]:
    cols = ["rung"]
    if args.ab:
        cols += ["64-bit", "restrict"]
    if args.before:
        cols += ["before"]
    return cols


HEADER_FMT = "{:<10} {:<15} {:<10} {:>11} {:>6} {:>11} {:>6} {:>7}"


def header(cols) -> str:
    head = HEADER_FMT.format("workload", "shape", "rung", "listing ms", "spr%", "rung ms", "spr%", "ratio")
    for c in cols[1:]:
        head += f" {c + ' ms':>15} {'ratio':>6}"
    return head + "  regs (listing/rung" + "".join(f"/{c}" for c in cols[1:]) + ")"


def ratio(row: Row, col: str) -> str:
    if col not in row.ms or "listing" not in row.ms:
        return "-"
    return f"{row.ms[col] / row.ms['listing']:.3f}"


def format_row(row: Row, cols) -> str:
    def ms(col):
        return f"{row.ms[col]:.4f}" if col in row.ms else row.checks.get(col, "-")[:11]

    def spr(col):
        return f"{row.spread[col]:.2f}" if col in row.spread else "-"

    line = HEADER_FMT.format(row.workload, row.shape, row.rung, ms("listing"), spr("listing"), ms("rung"),
                             spr("rung"), ratio(row, "rung"))
    for c in cols[1:]:
        line += f" {ms(c):>15} {ratio(row, c):>6}" if c in row.checks else f" {'-':>15} {'-':>6}"
    regs = "/".join(str(row.regs.get(c, "-")) for c in ["listing", *cols])
    return line + "  " + regs


# ---- --sass: the machine code, no GPU needed ---------------------------------------------------

SASS_RADII = (2, 32)  # the stencil radii of configs/default.toml


def cuobjdump() -> str:
    found = shutil.which("cuobjdump")
    if found:
        return found
    for base in sys.path:
        candidate = Path(base) / "nvidia" / "cu13" / "bin" / "cuobjdump"
        if candidate.is_file():
            return str(candidate)
    raise SystemExit("--sass needs cuobjdump: install the CUDA toolkit or `pip install nvidia-cuda-cuobjdump`")


def sass_of(unit) -> dict[str, list[str]]:
    """name expression -> the kernel's SASS instructions (addresses and encodings dropped)."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(unit.cubin)
        f.flush()
        tool = cuobjdump()
        env = {**os.environ, "PATH": f"{Path(tool).parent}{os.pathsep}{os.environ.get('PATH', '')}"}  # its nvdisasm
        text = subprocess.run([tool, "-sass", f.name], capture_output=True, text=True, check=True, env=env).stdout
    parts = re.split(r"\n\s*Function : (\S+)\n", text)
    by_symbol = {}
    for i in range(1, len(parts), 2):
        body = [re.sub(r"/\*[0-9a-f]{4}\*/\s*", "", line).split(";")[0].strip()
                for line in parts[i + 1].splitlines() if re.match(r"\s+/\*[0-9a-f]{4}\*/", line)]
        by_symbol[parts[i]] = [b for b in body if b and b != "NOP"]
    return {name: by_symbol[symbol] for name, symbol in unit.lowered.items()}


def sass_facts(code: list[str], registers: int) -> str:
    ops = [re.sub(r"^@!?U?P\w+\s+", "", line).split()[0] for line in code]
    loads = sum(op.startswith("LDG") and "CONSTANT" not in op for op in ops)
    constant = sum(op.startswith("LDG") and "CONSTANT" in op for op in ops)
    return f"{len(code):>6} {registers:>5} {ops.count('S2R'):>4} {loads:>4} {constant:>9}"


def sass_report(args) -> int:
    from pmppbench.hardware.gpu import nvrtc

    version = ".".join(str(v) for v in nvrtc().getVersion())
    lines = [f"# studies/baselines.py --sass: sm_90 SASS through pmppbench.hardware.compile, NVRTC {version}",
             f"{'workload':<10} {'R':>3} {'rung':<10} {'column':<8} {'kernel':<22} {'instr':>6} {'regs':>5} "
             f"{'S2R':>4} {'LDG':>4} {'LDG.CONST':>9}  SASS == listing's"]
    names = args.only.split(",") if args.only else list(PAIRS)
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            w = workloads.get(name)
            if args.before:
                (Path(tmp) / f"before_{name}.cu").write_text((args.before / f"{name}.cu").read_text())
            for defines in ([{"RADIUS": r} for r in SASS_RADII] if name == "stencil" else [{}]):
                pairs = PAIRS[name]
                rungs = [w.variant(p.rung) for p in pairs]
                names_now = list(dict.fromkeys(
                    [v.kernel for v in rungs] + [instantiation(v.kernel, "long long") for v in rungs if is_indexed(w, v)]))
                units = {"rung": compile_unit(name, names_now, "sm_90", defines)}
                with kernels_from(LISTINGS):
                    units["listing"] = compile_unit("course", [p.listing for p in pairs], "sm_90", defines)
                if args.before:
                    with kernels_from(Path(tmp)):
                        units["before"] = compile_unit(f"before_{name}", sorted({p.before for p in pairs}), "sm_90",
                                                       defines)
                code = {col: sass_of(u) for col, u in units.items()}
                for pair, v in zip(pairs, rungs):
                    listing = code["listing"][pair.listing]
                    rows = [("listing", "listing", pair.listing), ("rung", "rung", v.kernel)]
                    if is_indexed(w, v):
                        rows.append(("64-bit", "rung", instantiation(v.kernel, "long long")))
                    if args.before:
                        rows.append(("before", "before", pair.before))
                    for col, unit, kernel in rows:
                        sass = code[unit][kernel]
                        same = "-" if col == "listing" else ("yes" if sass == listing else "no")
                        radius = defines.get("RADIUS", "")
                        lines.append(f"{name:<10} {radius!s:>3} {v.name:<10} {col:<8} {kernel:<22} "
                                     f"{sass_facts(sass, units[unit].ptxas[kernel].registers)}  {same}")
    print("\n".join(lines))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the table here too")
    parser.add_argument("--json", type=Path, help="write every number as JSON here")
    parser.add_argument("--before", type=Path, help="an older kernels_cu/ folder to time beside")
    parser.add_argument("--ab", action="store_true", help="add the 64-bit and __restrict__ columns")
    parser.add_argument("--only", help="comma-separated workloads (default: all four)")
    parser.add_argument("--quick", action="store_true", help="fewer batches and calls (a smoke test)")
    parser.add_argument("--sass", action="store_true", help="no GPU: compare the rungs' and listings' SASS")
    args = parser.parse_args(argv)
    if args.sass:
        return sass_report(args)

    from pmppbench.hardware import device
    from pmppbench.hardware.gpu import require_device

    require_device()
    dev = device.current()
    names = args.only.split(",") if args.only else list(PAIRS)
    plans = {p.name: p.shapes for p in config.load(None).sections}
    cols = columns(args)
    lines = [f"# studies/baselines.py{' --ab' if args.ab else ''}{' --before' if args.before else ''} on "
             f"{dev.name} ({dev.arch}); ratio = time / course listing's time, same protocol call, order alternated",
             header(cols)]
    print("\n".join(lines), flush=True)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        (scratch / "restrict").mkdir()
        (scratch / "before").mkdir()
        for name in names:
            w = workloads.get(name)
            with_restrict(ROOT / "kernels_cu" / f"{name}.cu", scratch / "restrict", f"restrict_{name}")
            if args.before:
                (scratch / "before" / f"before_{name}.cu").write_text((args.before / f"{name}.cu").read_text())
            for shape in plans[name]:
                if COURSE_SHAPES.get(name, lambda s: True)(shape):
                    rows += run_shape(w, shape, PAIRS[name], args, scratch)
    lines += [format_row(r, cols) for r in rows]
    failed = [f"{r.workload} {r.shape} {r.rung} {c}: {s}" for r in rows for c, s in r.checks.items() if s != "PASS"]
    worst = max(rows, key=lambda r: r.ms.get("rung", 0) / r.ms.get("listing", float("inf")))
    lines.append(f"# {len(rows)} rungs; largest ratio {ratio(worst, 'rung')} ({worst.workload} {worst.shape} "
                 f"{worst.rung}); largest spread {max(max(r.spread.values(), default=0) for r in rows):.2f}%; "
                 f"{len(failed)} failed checks")
    lines += [f"# FAIL {f}" for f in failed]
    print("\n" + "\n".join(lines))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n")
    if args.json:
        args.json.write_text(json.dumps([r.__dict__ for r in rows], indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
