"""The command line: parse, validate, hand over to the runner, print.

Exit codes: 0 success, 1 a check failed (or a kernel did not compile), 2 bad input,
3 something missing on this machine (no GPU, old driver, no NVRTC/CuPy). No traceback
unless --debug.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from pmppbench import __version__, workloads
from pmppbench.errors import CheckFailed, PmppError, UsageError
from pmppbench.protocol import DEFAULTS

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Checked, carefully timed GPU kernels from PMPP chapters 5-6. Every variant is checked "
         "against a CPU reference (PASS/FAIL), then timed: warmup, batches of calls between CUDA "
         "events, median of the batch means.",
)
# Tables are wide; when output goes to a file or pipe (logs, CI) Rich would otherwise squeeze
# them into 80 columns and cut every cell. $COLUMNS still wins when set.
_WIDTH = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 200
console = Console(soft_wrap=True, width=_WIDTH)
err_console = Console(stderr=True, soft_wrap=True)
STATE = {"debug": False, "quiet": False}


def version_callback(value: bool):
    if value:
        console.print(f"pmppbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show full tracebacks."),
    version: bool = typer.Option(False, "--version", callback=version_callback, is_eager=True,
                                 help="Print the version and exit."),
):
    STATE["debug"] = debug


# ---- shared options ------------------------------------------------------------------

def _default_reps(workload: str) -> int:
    """The protocol's calls per batch, for help texts (so they cannot drift from PROTOCOL.md)."""
    return DEFAULTS[workload].reps


CheckOnly = typer.Option(False, "--check-only", help="Check every variant on the workload's check shapes; no timing.")
Seed = typer.Option(0, "--seed", help="Seed of the random input generator.")
Out = typer.Option(None, "--out", help="Write results to FILE (.csv, .json or .md).")
Force = typer.Option(False, "--force", help="Overwrite --out if it exists.")
VariantsOpt = typer.Option(None, "--variants", help="Comma-separated subset of variants to run.")
Warmup = typer.Option(None, "--warmup", help="Override the protocol's warmup calls.")
Batches = typer.Option(None, "--batches", help="Override the protocol's number of batches.")
FlushL2 = typer.Option(False, "--flush-l2", help="Cold-cache timing: flush L2 before every call and time each "
                       "call with its own events (default: hot, back-to-back calls).")


def _positive(name: str, value: Optional[int]) -> None:
    if value is not None and value <= 0:
        raise UsageError(f"{name} must be a positive integer, got {value}")


def _out_path(out: Optional[Path], force: bool) -> Optional[Path]:
    if out is None:
        return None
    from pmppbench.report import format_for  # noqa: PLC0415

    format_for(out)
    if out.exists() and not force:
        raise UsageError(f"{out} exists; pass --force to overwrite it or choose another --out")
    if not out.parent.exists():
        raise UsageError(f"--out {out}: folder {out.parent} does not exist")
    return out


def _pick_variants(workload, spec: Optional[str]):
    if not spec:
        return None
    return [workload.variant(name.strip()) for name in spec.split(",") if name.strip()]


def _protocol(workload, reps=None, warmup=None, batches=None, flush_l2=False):
    """PROTOCOL.md's defaults for the workload, with the user's overrides."""
    from dataclasses import replace  # noqa: PLC0415

    _positive("REPS", reps)
    if warmup is not None and warmup < 0:
        raise UsageError(f"--warmup must be >= 0, got {warmup}")
    _positive("--batches", batches)
    protocol = DEFAULTS[workload.name].with_reps(reps)
    if warmup is not None:
        protocol = replace(protocol, warmup=warmup)
    if batches is not None:
        protocol = replace(protocol, batches=batches)
    if flush_l2:
        if protocol.timer != "events":
            raise UsageError(f"--flush-l2 does not apply to {workload.name}: its timing already includes "
                             "host transfers")
        protocol = replace(protocol, timer="cold")
    return protocol


def _run_meta(seed: int, **extra) -> dict:
    """Metadata every result file records: device, software, revision, command, time."""
    from pmppbench import device  # noqa: PLC0415
    from pmppbench.results import now_iso  # noqa: PLC0415

    from pmppbench import roofline  # noqa: PLC0415

    from pmppbench.runner import clock_watch  # noqa: PLC0415

    dev = device.current()
    watch = clock_watch()
    return {**dev.metadata(), "ceilings": roofline.ceilings_meta(roofline.ceilings_for(dev)),
            "nvml": "available" if watch.available else f"unavailable ({watch.reason})",
            "nvidia_driver": watch.driver_version,
            "timestamp": now_iso(), "git_revision": _git_revision(),
            "command": "pmppbench " + " ".join(sys.argv[1:]), "seed": seed, **extra}


def _git_revision() -> str:
    import subprocess  # noqa: PLC0415

    top = Path(__file__).resolve().parent.parent
    if not (top / ".git").exists():
        return ""
    try:
        rev = subprocess.run(["git", "-C", str(top), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=5).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(top), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return f"{rev}-dirty" if rev and dirty else rev


def _caption(rows, protocol, check_only: bool) -> str:
    from pmppbench import device  # noqa: PLC0415

    d = device.current()
    tolerances = "; ".join(dict.fromkeys(r.tolerance for r in rows if r.tolerance))
    what = f"check only · {tolerances}" if check_only else protocol.describe()
    return f"{d.name} ({d.arch}) · {what}"


def _print_stability(rows) -> None:
    from pmppbench.noise import stability_line  # noqa: PLC0415

    line = stability_line(rows)
    if line:
        console.print(line, highlight=False)


def _fail_if_bad(rows) -> None:
    bad = [r for r in rows if not r.ok]
    if bad:
        raise CheckFailed(f"{len(bad)} of {len(rows)} rows did not PASS: "
                          + "; ".join(f"{r.workload} {r.variant} {r.shape}: {r.error or r.check_detail}"
                                      for r in bad[:3]))


def bench(workload_name: str, shapes: list[dict], *, reps: Optional[int], check_only: bool, seed: int,
          out: Optional[Path], force: bool, variants: Optional[str], warmup: Optional[int] = None,
          batches: Optional[int] = None, flush_l2: bool = False) -> None:
    """The one path every workload command takes."""
    from pmppbench import report, runner  # noqa: PLC0415

    workload = workloads.get(workload_name)
    protocol = _protocol(workload, reps, warmup, batches, flush_l2)
    chosen = _pick_variants(workload, variants)
    for shape in shapes:
        workload.validate(shape)
    out = _out_path(out, force)
    meta = _run_meta(seed, protocol={workload.name: protocol.__dict__})
    rows = []
    try:
        with console.status(f"{workload.name}: compiling and checking...") as status:
            def progress(w, v, s):
                status.update(f"{w} {s}: {v}")

            for row in runner.run_workload(workload, shapes, protocol=protocol, check_only=check_only,
                                           seed=seed, variants=chosen, progress=progress):
                rows.append(row)
    finally:
        if rows:
            report.print_table(console, rows, title=workload.title, caption=_caption(rows, protocol, check_only))
            report.print_warnings(console, rows)
            _print_stability(rows)
            if out:
                report.write_results(out, rows, meta)
                console.print(f"wrote {out}")
    _fail_if_bad(rows)


def _shapes(workload_name: str, given: dict, check_only: bool, extra: Optional[dict] = None) -> list[dict]:
    """Explicit sizes win; otherwise --check-only uses the check shapes, timing the defaults."""
    workload = workloads.get(workload_name)
    for k, v in given.items():
        _positive(k.upper(), v)
    if check_only and all(v is None for v in given.values()):
        shapes = workload.check_shapes()
    else:
        base = workload.default_shape()
        shapes = [{**base, **{k: v for k, v in given.items() if v is not None}}]
    if extra:
        shapes = [{**s, **extra} for s in shapes]
    return shapes


# ---- workload commands -------------------------------------------------------------

@app.command()
def vecadd(
    n: Optional[int] = typer.Argument(None, help="Elements per vector (default 67108864)."),
    reps: Optional[int] = typer.Argument(None, help=f"Calls per timed batch (default {_default_reps('vecadd')})."),
    check_only: bool = CheckOnly, seed: int = Seed, out: Optional[Path] = Out, force: bool = Force,
    variants: Optional[str] = VariantsOpt, warmup: Optional[int] = Warmup, batches: Optional[int] = Batches,
    flush_l2: bool = FlushL2,
):
    """Vector add C = A + B: scalar, float4, grid_stride (12 bytes per element)."""
    bench("vecadd", _shapes("vecadd", {"n": n}, check_only), reps=reps, check_only=check_only, seed=seed,
          out=out, force=force, variants=variants, warmup=warmup, batches=batches,
          flush_l2=flush_l2)


@app.command()
def transpose(
    m: Optional[int] = typer.Argument(None, help="Rows of the FP32 input A (default 4096)."),
    n: Optional[int] = typer.Argument(None, help="Columns of A (default 4096)."),
    reps: Optional[int] = typer.Argument(None, help=f"Calls per timed batch (default {_default_reps('transpose')})."),
    check_only: bool = CheckOnly, seed: int = Seed, out: Optional[Path] = Out, force: bool = Force,
    variants: Optional[str] = VariantsOpt, warmup: Optional[int] = Warmup, batches: Optional[int] = Batches,
    flush_l2: bool = FlushL2,
):
    """Matrix transpose B = A^T: copy, naive, shared32, padded33, coarsened (8*M*N bytes)."""
    bench("transpose", _shapes("transpose", {"m": m, "n": n}, check_only), reps=reps, check_only=check_only,
          seed=seed, out=out, force=force, variants=variants, warmup=warmup, batches=batches,
          flush_l2=flush_l2)


@app.command()
def gemm(
    m: Optional[int] = typer.Argument(None, help="Rows of C and A (default 1024)."),
    n: Optional[int] = typer.Argument(None, help="Columns of C and B (default 1024)."),
    k: Optional[int] = typer.Argument(None, help="Columns of A, rows of B (default 1024)."),
    reps: Optional[int] = typer.Argument(None, help=f"Calls per timed batch (default {_default_reps('gemm')})."),
    check_only: bool = CheckOnly, seed: int = Seed, out: Optional[Path] = Out, force: bool = Force,
    variants: Optional[str] = VariantsOpt, warmup: Optional[int] = Warmup, batches: Optional[int] = Batches,
    flush_l2: bool = FlushL2,
):
    """FP32 GEMM C = A*B: the PMPP ladder from naive to register tiling, with cuBLAS beside it."""
    bench("gemm", _shapes("gemm", {"m": m, "n": n, "k": k}, check_only), reps=reps, check_only=check_only,
          seed=seed, out=out, force=force, variants=variants, warmup=warmup, batches=batches,
          flush_l2=flush_l2)


def _int_list(option: str, text: Optional[str]) -> Optional[list[int]]:
    if text is None:
        return None
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"{option} takes comma-separated integers such as 2,32 (got {text!r})") from None
    if not values:
        raise UsageError(f"{option} needs at least one value")
    return values


@app.command()
def stencil(
    n: Optional[int] = typer.Argument(None, help="Elements (default 16777216)."),
    reps: Optional[int] = typer.Argument(None, help=f"Calls per timed batch (default {_default_reps('stencil')})."),
    radius: Optional[str] = typer.Option(None, "--radius", help="Stencil radius R, or a list such as 2,32 "
                                         "(default 32; with --check-only: 1,2,32,64)."),
    check_only: bool = CheckOnly, seed: int = Seed, out: Optional[Path] = Out, force: bool = Force,
    variants: Optional[str] = VariantsOpt, warmup: Optional[int] = Warmup, batches: Optional[int] = Batches,
    flush_l2: bool = FlushL2,
):
    """1D stencil y[i] = mean(x[i-R..i+R]): naive, shared (halo tile), coarsened."""
    radii = _int_list("--radius", radius)
    if radii is not None and any(r < 0 for r in radii):
        raise UsageError(f"--radius must be >= 0, got {radius}")
    base = _shapes("stencil", {"n": n}, check_only)
    if radii is None:
        shapes = base
    else:  # every shape at every radius
        shapes = [{**s, "radius": r} for r in radii for s in base]
        shapes = list({tuple(sorted(s.items())): s for s in shapes}.values())
    bench("stencil", shapes, reps=reps, check_only=check_only, seed=seed, out=out, force=force,
          variants=variants, warmup=warmup, batches=batches,
          flush_l2=flush_l2)


@app.command()
def stream(
    chunk: Optional[int] = typer.Argument(None, help="Elements per chunk (default 1048576)."),
    terms: Optional[int] = typer.Argument(None, help="Sine terms per element (default 64)."),
    streams: Optional[str] = typer.Option(None, "--streams", help="Stream counts to compare (default 1,3)."),
    chunks: Optional[int] = typer.Option(None, "--chunks", help="Number of chunks (default 3)."),
    reps: Optional[int] = typer.Option(None, "--reps", help="Complete pipeline runs per timed batch "
                                       f"(default {_default_reps('stream')})."),
    check_only: bool = CheckOnly, seed: int = Seed, out: Optional[Path] = Out, force: bool = Force,
    variants: Optional[str] = VariantsOpt, warmup: Optional[int] = Warmup, batches: Optional[int] = Batches,
    flush_l2: bool = FlushL2,
):
    """CUDA streams: upload / kernel / download of chunks on 1 vs 3 streams, plus an event dependency."""
    counts = _int_list("--streams", streams)
    if counts is not None and any(c <= 0 for c in counts):
        raise UsageError(f"--streams must list positive integers, got {streams}")
    _positive("--chunks", chunks)
    extra = {}
    if counts is not None:
        extra["streams"] = tuple(counts)
    if chunks is not None:
        extra["chunks"] = chunks
    bench("stream", _shapes("stream", {"chunk": chunk, "terms": terms}, check_only, extra), reps=reps,
          check_only=check_only, seed=seed, out=out, force=force, variants=variants, warmup=warmup,
          batches=batches, flush_l2=flush_l2)


@app.command("all")
def all_cmd(
    config: Optional[str] = typer.Option(None, "--config", help="TOML config (default configs/default.toml; "
                                         "bundled: default, quick, sanitize)."),
    out: Optional[Path] = Out, force: bool = Force,
    only: Optional[str] = typer.Option(None, "--only", help="Comma-separated workloads to run from the config."),
    check_only: bool = typer.Option(False, "--check-only", help="Check every variant on the config's shapes; no timing."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seed of the random inputs (default: the config's, else 0)."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar or tables; only errors and the summary line."),
    flush_l2: bool = FlushL2,
):
    """Every workload and variant on the sizes of a config; rows are written as they finish."""
    from pmppbench import config as cfg_mod  # noqa: PLC0415
    from pmppbench import report, runner  # noqa: PLC0415
    from pmppbench.results import Result  # noqa: PLC0415

    only_list = [x.strip() for x in only.split(",") if x.strip()] if only else None
    cfg = cfg_mod.load(config, only_list)  # validated whole before any GPU work
    out = _out_path(out, force)
    seed = cfg.seed if seed is None else seed
    protocols = {p.name: _protocol(workloads.get(p.name), p.reps, p.warmup, p.batches,
                                   flush_l2 and workloads.get(p.name).name != "stream") for p in cfg.plans}
    import uuid  # noqa: PLC0415

    run_id = uuid.uuid4().hex[:8]
    meta = _run_meta(seed, config=str(cfg.path), config_sha256=cfg.sha256, run_id=run_id,
                     protocol={k: v.__dict__ for k, v in protocols.items()}, check_only=check_only)
    sink = report.CsvSink(out, meta) if out and report.format_for(out) == "csv" else None
    rows: list[Result] = []
    # Shape i of a workload gets seed + i, as in the single-workload commands.
    steps = [(p, i, shape) for p in cfg.plans for i, shape in enumerate(p.shapes)]

    def keep(row):
        rows.append(row)
        if sink:
            sink.add(row)

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, \
        TimeRemainingColumn  # noqa: PLC0415

    progress = Progress(TextColumn("{task.description:<48}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=console,
                        disable=quiet, transient=False)
    interrupted = False
    try:
        with progress:
            task = progress.add_task("starting", total=len(steps))
            for plan, index, shape in steps:
                w = workloads.get(plan.name)
                chosen = [w.variant(v) for v in plan.variants] if plan.variants else None

                def note(wn, vn, label):
                    progress.update(task, description=f"{wn} {label}: {vn}")

                try:
                    for row in runner.run_workload(w, [shape], protocol=protocols[plan.name], check_only=check_only,
                                                   seed=seed + index, variants=chosen, progress=note, run_id=run_id):
                        keep(row)
                except KeyboardInterrupt:
                    raise
                except Exception as exc:  # record the failure in the shape's rows and go on
                    if STATE["debug"] and not isinstance(exc, PmppError):
                        raise
                    for v in chosen or w.variants_for(shape):
                        keep(Result(w.name, v.name, w.label(shape), dims=dict(shape), check="ERROR",
                                    error=f"{type(exc).__name__}: {exc}".splitlines()[0], seed=seed + index,
                                    run_id=run_id))
                progress.advance(task)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if sink:
            sink.close()
        elif out and rows:
            report.write_results(out, rows, meta)
    if not quiet:
        for name in dict.fromkeys(r.workload for r in rows):
            w = workloads.get(name)
            mine = [r for r in rows if r.workload == name]
            report.print_table(console, mine, title=w.title, caption=_caption(mine, protocols[name], check_only))
        report.print_warnings(console, rows)
    _print_stability(rows)
    passed = sum(r.check == "PASS" for r in rows)
    console.print(f"{len(rows)} rows, {passed} PASS" + (f"; written to {out}" if out and rows else "")
                  + (" (interrupted: finished rows kept)" if interrupted else ""))
    if interrupted:
        raise KeyboardInterrupt
    _fail_if_bad(rows)


@app.command("report")
def report_cmd(
    results: Path = typer.Argument(..., help="A result file (.csv or .json) from pmppbench."),
    readme: Optional[Path] = typer.Option(None, "--readme", help="Replace the section between "
                                          "<!-- results:begin --> and <!-- results:end --> in this file."),
):
    """Turn a result file into the Markdown tables (the README's results section)."""
    from pmppbench import report  # noqa: PLC0415

    rows, meta = report.read_results(results)
    text = report.results_section(rows, meta, source=str(results))
    if readme is None:
        console.print(text, markup=False, highlight=False)
        return
    report.replace_section(readme, text)
    console.print(f"updated {readme}")


# ---- tools -----------------------------------------------------------------------

@app.command()
def info(
    measure: bool = typer.Option(False, "--measure", help="Measure the practical ceilings (1 GiB device-to-device "
                                 "copy, cuBLAS FP32 GEMM 8192^3) and cache them for this GPU and driver."),
):
    """The GPU's facts and ceilings: theoretical, and measured once with --measure (PMPP 5.1)."""
    from rich.table import Table  # noqa: PLC0415

    from pmppbench import device, roofline  # noqa: PLC0415

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
        ("driver / CUDA runtime / CuPy", f"{d.driver} / {d.cuda_runtime} / {d.cupy}"),
        ("peak bandwidth (2 x mem clock x bus)", f"{d.peak_bandwidth_gbs:,.0f} GB/s"),
    ]
    if d.peak_fp32_gflops:
        rows += [
            (f"peak FP32 (SMs x {d.fp32_lanes_per_sm} lanes x 2 x clock)", f"{d.peak_fp32_gflops:,.0f} GFLOP/s"),
            ("ridge point (peak FP32 / peak bandwidth)", f"{d.ridge_flop_per_byte:.1f} FLOP/B"),
        ]
    measured = None
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


@app.command("compile")
def compile_cmd(
    names: Optional[list[str]] = typer.Argument(None, help="Workloads to compile (default: all)."),
    arch: Optional[str] = typer.Option(None, "--arch", help="Target such as sm_90; default: the current GPU's. "
                                       "With --arch no GPU is needed."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ignore the on-disk compile cache."),
):
    """Compile every kernel variant of every workload with NVRTC; one status line per kernel."""
    from pmppbench.compile import compile_unit  # noqa: PLC0415
    from pmppbench.errors import CompileError  # noqa: PLC0415

    if arch is None:
        from pmppbench import device  # noqa: PLC0415

        arch = device.current().arch
    failures = 0
    for wname in names or workloads.names():
        w = workloads.get(wname)
        for defines in w.compile_sets():
            tag = " ".join(f"{k}={v}" for k, v in defines.items())
            try:
                unit = compile_unit(w.name, w.kernel_names(), arch, defines, use_cache=not no_cache)
            except CompileError as exc:
                failures += 1
                console.print(f"[red]FAIL[/] {w.name} {tag} {arch}")
                console.print(str(exc), markup=False, highlight=False)
                continue
            for name in w.kernel_names():
                rep = unit.ptxas.get(name)
                res = "" if rep is None else (
                    f"{rep.registers} regs, {rep.static_smem} B smem, {rep.stack_bytes} B stack, "
                    f"{rep.spill_stores + rep.spill_loads} B spills")
                console.print(f"[green]OK[/]   {w.name:<9} {name:<28} {tag:<16} {arch}  {res}", highlight=False)
    if failures:
        raise CheckFailed(f"{failures} compile unit(s) failed")


@app.command()
def resources(
    names: Optional[list[str]] = typer.Argument(None, help="Workloads (default: all)."),
):
    """Registers, shared and local memory, and occupancy of every kernel (PMPP 5.6), without timing.

    The hand computation is shown beside the CUDA occupancy API's answer.
    """
    from pmppbench import device, occupancy  # noqa: PLC0415

    limits = occupancy.limits_for_current_device()
    d = device.current()
    per_thread = d.smem_per_sm / d.max_threads_per_sm
    console.print(f"{d.name}: {d.smem_per_sm // 1024} KB shared memory / {d.max_threads_per_sm} threads = "
                  f"{per_thread:.0f} B per thread at full occupancy; {d.regs_per_sm} registers / "
                  f"{d.max_threads_per_sm} threads = {d.regs_per_sm // d.max_threads_per_sm} registers per thread",
                  highlight=False)
    disagree = 0
    for name in names or workloads.names():
        w = workloads.get(name)
        rows = occupancy.resources_table_rows(w, limits=limits)
        disagree += sum(r.agrees is False for r in rows)
        occupancy.print_resources(console, rows, title=f"{w.title} · {w.label(w.default_shape())}")
    if disagree:
        raise CheckFailed(f"{disagree} kernel(s) where the hand computation and the occupancy API disagree")


@app.command()
def plot(
    results: Path = typer.Argument(..., help="A result file (.csv or .json)."),
    outdir: Optional[Path] = typer.Option(None, "--outdir", help="Folder for the PNG files (default: beside RESULTS)."),
):
    """Roofline chart and one bar chart per workload, as PNG files (needs pmppbench[plot])."""
    from pmppbench import plot as plotting  # noqa: PLC0415
    from pmppbench import report  # noqa: PLC0415

    rows, meta = report.read_results(results)
    outdir = outdir or results.parent
    outdir.mkdir(parents=True, exist_ok=True)
    for path in plotting.plot_results(rows, meta, outdir):
        console.print(f"wrote {path}")


@app.command()
def compare(
    base: Path = typer.Argument(..., help="Baseline result file (.csv or .json)."),
    new: Path = typer.Argument(..., help="New result file."),
    fail_on_slower: Optional[float] = typer.Option(None, "--fail-on-slower", metavar="PCT",
                                                   help="Exit 1 when a row is SLOWER by more than PCT percent."),
):
    """Line up two result files; FASTER / SLOWER only when the difference exceeds both runs' noise."""
    from pmppbench import compare as comparing  # noqa: PLC0415

    rep = comparing.compare_files(base, new, fail_on_slower)
    comparing.print_comparison(console, rep)
    if rep.exit_code:
        raise typer.Exit(rep.exit_code)


# ---- entry point -----------------------------------------------------------------

def main(argv: Optional[list[str]] = None) -> int:
    """Run the CLI; returns the exit code (also used by the tests)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    STATE["debug"] = "--debug" in argv or bool(os.environ.get("PMPPBENCH_DEBUG"))
    command = typer.main.get_command(app)
    try:
        result = command.main(args=argv, prog_name="pmppbench", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except PmppError as exc:
        if STATE["debug"]:
            raise
        message = str(exc)
        err_console.print(f"pmppbench: {message}", markup=False, highlight=False)
        return exc.exit_code
    except KeyboardInterrupt:
        err_console.print("pmppbench: interrupted")
        return 130
    except Exception as exc:  # click/typer usage errors, Exit, Abort
        code = getattr(exc, "exit_code", None)
        if hasattr(exc, "format_message") and code is not None:  # a usage error from the parser
            hint = ""
            ctx = getattr(exc, "ctx", None)
            if ctx is not None:
                hint = f" (see `{ctx.command_path} --help`)"
            message = exc.format_message()
            negative = re.fullmatch(r"No such option: (-\d+)", message)
            if negative:  # "-5" parses as an option; say what the user meant
                message = f"sizes must be positive integers, got {negative.group(1)}"
            err_console.print(f"pmppbench: {message}{hint}", markup=False, highlight=False)
            return int(code) if code else 2
        if type(exc).__name__ in ("Exit",):
            return int(code or 0)
        if type(exc).__name__ == "Abort":
            err_console.print("pmppbench: interrupted")
            return 130
        if STATE["debug"]:
            raise
        err_console.print(f"pmppbench: unexpected {type(exc).__name__}: {exc} (run with --debug for the traceback)",
                          markup=False, highlight=False)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
