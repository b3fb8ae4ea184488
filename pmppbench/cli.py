"""The command line: parse the words into a Plan, hand it to the session, say how it ended.

Every workload command (`pmppbench vecadd`, `transpose`, ...) is made from its workload's
declaration: the sizes in order, then REPS, then its own options (`--radius`, `--streams`)
and the common ones. Exit codes: 0 success, 1 a check failed (or a kernel did not compile),
2 bad input, 3 something missing on this machine. No traceback unless --debug.
"""

from __future__ import annotations

import inspect
import os
import sys
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from pmppbench import __version__, workloads
from pmppbench.errors import PmppError, UsageError

app = typer.Typer(
    add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None,
    help="Checked, carefully timed GPU kernels from PMPP chapters 5-6. Every variant is checked "
         "against a CPU reference (PASS/FAIL), then timed: warmup, batches of calls between CUDA "
         "events, median of the batch means.",
)
# Tables are wide; when output goes to a file or pipe (logs, CI) Rich would otherwise squeeze
# them into 80 columns and cut every cell. $COLUMNS still wins when set.
_WIDTH = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 200
console = Console(soft_wrap=True, width=_WIDTH)
err_console = Console(stderr=True, soft_wrap=True)  # progress and errors: stdout stays the results
STATE = {"debug": False}


def _version(value: bool):
    if value:
        console.print(f"pmppbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show full tracebacks (anywhere on the line, or PMPPBENCH_DEBUG=1)."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
):
    pass  # --debug is read by main() before parsing, wherever it stands


# ---- values the user types ------------------------------------------------------------

def count(name: str, text: Optional[str], minimum: int = 1) -> Optional[int]:
    """A size or count from the command line, with one wording for 0, -1 and abc alike."""
    if text is None:
        return None
    what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
    if str(text).startswith("--"):
        raise UsageError(f"no such option {text}")
    try:
        value = int(text)
    except (TypeError, ValueError):
        raise UsageError(f"{name} must be {what}, got {text!r}") from None
    if value < minimum:
        raise UsageError(f"{name} must be {what}, got {value}")
    return value


def counts(name: str, text: Optional[str], minimum: int = 1) -> Optional[list[int]]:
    if text is None:
        return None
    parts = text.split(",")
    if not text.strip() or any(not p.strip() for p in parts):
        raise UsageError(f"{name} takes comma-separated integers such as 2,32, got {text!r}")
    return [count(name, p.strip(), minimum) for p in parts]


def pick_variants(workload, spec: Optional[str]):
    if spec is None:
        return None
    parts = [p.strip() for p in spec.split(",")]
    if not spec.strip() or any(not p for p in parts):
        raise UsageError(f"--variants takes comma-separated names such as {','.join(workload.variant_names()[:2])}, "
                         f"got {spec!r}")
    return [workload.variant(p) for p in parts]


def learner_variant(workload, spec: Optional[str], like: Optional[str]):
    """--kernel FILE.cu:NAME --like V: NAME from the learner's file, run as V is run."""
    from pmppbench.workloads.base import Variant  # noqa: PLC0415

    if spec is None and like is None:
        return None
    if spec is None or like is None:
        raise UsageError("--kernel and --like go together: --kernel my.cu:my_kernel --like "
                         f"{workload.variant_names()[0]}")
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name.isidentifier():
        raise UsageError(f"--kernel takes FILE.cu:NAME (NAME a __global__ function in FILE), got {spec!r}")
    if not Path(path).is_file():
        raise UsageError(f"--kernel {spec}: no such file {path}")
    base = workload.variant(like)
    if base.kernel is None or base.source:
        raise UsageError(f"--like {like}: it calls a library, not a kernel; choose one of "
                         f"{', '.join(v.name for v in workload.variants if v.kernel)}")
    if name in workload.variant_names():
        raise UsageError(f"--kernel {spec}: {name!r} is already a variant's name; rename your kernel")
    return Variant(name, name, f"your kernel from {path}, run as {like}", source=str(Path(path).resolve()), like=like)


def protocol_for(workload, reps=None, warmup=None, batches=None, flush_l2=False):
    """The workload's declared protocol with the user's overrides."""
    protocol = workload.protocol.with_reps(reps)
    if warmup is not None:
        protocol = replace(protocol, warmup=warmup)
    if batches is not None:
        protocol = replace(protocol, batches=batches)
    if flush_l2:
        if protocol.timer != "events":
            raise UsageError(f"--flush-l2 does not apply to {workload.name}: its timing already includes host transfers")
        protocol = replace(protocol, timer="cold")
    return protocol


def shapes_for(workload, dims: dict, axes: dict, check_only: bool) -> list[dict]:
    """Explicit sizes win; otherwise --check-only uses the check shapes, timing the default.
    A swept axis (the stencil's radius) makes one shape per value."""
    given = {k: v for k, v in dims.items() if v is not None}
    shapes = workload.check_shapes() if check_only and not given else [{**workload.default_shape(), **given}]
    for axis in workload.axes:
        value = axes.get(axis.name)
        if value is None:
            continue
        if axis.sweep:
            shapes = [{**s, axis.name: v} for v in value for s in shapes]
            shapes = list({tuple(sorted(s.items())): s for s in shapes}.values())
        else:
            shapes = [{**s, axis.name: tuple(value) if axis.many else value} for s in shapes]
    for shape in shapes:
        workload.validate(shape)
    return shapes


# ---- workload commands, made from the declarations ----------------------------------------

def _parameters(w) -> list[inspect.Parameter]:
    """The command's parameters, all read as text and parsed by count()/counts(), so a
    0, a -1 and an abc are worded the same way."""
    def arg(name, help_):
        return (name, typer.Argument(None, help=help_, show_default=False, metavar=name.upper()))

    def opt(name, flag, help_, default=None):
        return (name, typer.Option(default, flag, help=help_, show_default=False))

    spec = [arg(d, None) for d in w.dims] + [arg("reps", None)]  # described in the help text
    spec += [opt(a.name, a.option, a.help) for a in w.axes]
    spec += [
        opt("check_only", "--check-only", "Check every variant on the workload's check shapes; no timing.", False),
        opt("seed", "--seed", "Seed of the random input generator (>= 0).", "0"),
        opt("out", "--out", "Write results to FILE (.csv, .json or .md), row by row."),
        opt("force", "--force", "Overwrite --out if it exists.", False),
        opt("variants", "--variants", "Comma-separated subset of variants to run."),
        opt("warmup", "--warmup", "Override the protocol's warmup calls."),
        opt("batches", "--batches", "Override the protocol's number of batches."),
        opt("flush_l2", "--flush-l2", "Cold-cache timing: flush L2 before every call and time each call with its "
            "own events (default: hot, back-to-back calls).", False),
        opt("quiet", "--quiet", "No progress bar or tables; only errors and the summary line.", False),
        opt("timeout", "--timeout", "Seconds a check, warmup or batch may take before its variant is killed "
            "(default: derived from the workload, at least 60)."),
        opt("devices", "--devices", "GPUs to run on, all or indices such as 0,2 (default: the current one); each "
            "runs the same plan, concurrently."),
        opt("ray", "--ray", "Run on every GPU of a Ray cluster: auto (this machine's, or a new local one) or its "
            "address (needs pmppbench[fleet])."),
        opt("parallel_host_link", "--parallel-host-link", "With --devices, run host-link work (the stream "
            "workload) on every GPU at once instead of one GPU at a time.", False),
        opt("kernel", "--kernel", "Your own kernel, FILE.cu:NAME, checked and timed beside the others "
            "(needs --like)."),
        opt("like", "--like", "The variant whose signature, launch geometry, reference and model --kernel takes."),
    ]
    return [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=info,
                              annotation=bool if isinstance(info.default, bool) else Optional[str])
            for name, info in spec]


def _help_text(w) -> str:
    """The command's help: what it runs, then each size with its default (from the declaration)."""
    default = w.default_shape()
    sizes = [(d.upper(), f"{w.dim_help.get(d, '')} Default {default[d]}.") for d in w.dims]
    sizes.append(("REPS", f"Calls per timed batch. Default {w.protocol.reps}."))
    lines = [f"  {name:<6} {text}" for name, text in sizes]
    return f"{w.about}\n\n\b\nArguments (each optional; give the ones before it too):\n" + "\n".join(lines)


def register_workload_command(w, target: typer.Typer = app) -> None:
    def command(**kw):
        dims = {d: count(d.upper(), kw[d]) for d in w.dims}
        reps = count("REPS", kw["reps"])
        axes = {a.name: (counts if a.many else count)(a.option, kw[a.name], a.minimum) for a in w.axes}
        protocol = protocol_for(w, reps, count("--warmup", kw["warmup"], 0), count("--batches", kw["batches"]),
                                kw["flush_l2"])
        chosen = pick_variants(w, kw["variants"])
        learner = learner_variant(w, kw["kernel"], kw["like"])
        if learner:
            chosen = [*(chosen or w.variants), learner]
        seed = count("--seed", kw["seed"], 0)
        shapes = shapes_for(w, dims, axes, kw["check_only"])
        from pmppbench.session import Plan, Step  # noqa: PLC0415

        plan = Plan([Step(w, s, protocol, seed + i, chosen) for i, s in enumerate(shapes)], kw["check_only"],
                    uuid.uuid4().hex[:8])
        _execute(plan, out=Path(kw["out"]) if kw["out"] else None, force=kw["force"], quiet=kw["quiet"],
                 protocols={w.name: protocol}, timeout_s=count("--timeout", kw["timeout"]), devices=kw["devices"],
                 host_link_parallel=kw["parallel_host_link"], ray=kw["ray"])

    params = _parameters(w)
    command.__signature__ = inspect.Signature(params)
    command.__annotations__ = {p.name: p.annotation for p in params}
    command.__doc__ = _help_text(w)
    target.command(w.name, context_settings={"ignore_unknown_options": True})(command)


def _execute(plan, **kw) -> None:
    from pmppbench.session import run_and_report  # noqa: PLC0415

    run_and_report(plan, console=console, err_console=err_console, debug=STATE["debug"], **kw)


# ---- the other commands ---------------------------------------------------------------------

def _bundled_configs() -> str:
    from pmppbench.config import bundled  # noqa: PLC0415

    return ", ".join(bundled())


@app.command("all")
def all_cmd(
    config: Optional[str] = typer.Option(None, "--config", help="TOML config file, or the name of a bundled one "
                                         f"({_bundled_configs()}); default: default."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write results to FILE (.csv, .json or .md), row by row."),
    force: bool = typer.Option(False, "--force", help="Overwrite --out if it exists."),
    only: Optional[str] = typer.Option(None, "--only", help="Comma-separated workloads to run from the config."),
    check_only: bool = typer.Option(False, "--check-only", help="Check every variant on the config's shapes; no timing."),
    seed: Optional[str] = typer.Option(None, "--seed", help="Seed of the random inputs (default: the config's, else 0)."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar or tables; only errors and the summary line."),
    flush_l2: bool = typer.Option(False, "--flush-l2", help="Cold-cache timing for every event-timed workload."),
    timeout: Optional[str] = typer.Option(None, "--timeout", help="Seconds a check, warmup or batch may take before "
                                          "its variant is killed (default: derived from the workload, at least 60)."),
    devices: Optional[str] = typer.Option(None, "--devices", help="GPUs to run on, all or indices such as 0,2 "
                                          "(default: the current one); each runs the same plan, concurrently."),
    parallel_host_link: bool = typer.Option(False, "--parallel-host-link", help="With --devices, run the stream "
                                            "workload on every GPU at once instead of one GPU at a time."),
    ray: Optional[str] = typer.Option(None, "--ray", help="Run on every GPU of a Ray cluster: auto or its address "
                                      "(needs pmppbench[fleet])."),
):
    """Every workload and variant on the sizes of a config; rows are written as they finish."""
    from pmppbench import config as configs  # noqa: PLC0415
    from pmppbench.session import Plan, Step  # noqa: PLC0415

    cfg = configs.load(config, None if only is None else [x.strip() for x in only.split(",") if x.strip()] or [""])
    seed_value = cfg.seed if seed is None else count("--seed", seed, 0)
    protocols, steps = {}, []
    for p in cfg.plans:
        w = workloads.get(p.name)
        protocols[p.name] = protocol_for(w, p.reps, p.warmup, p.batches, flush_l2 and w.protocol.timer == "events")
        chosen = [w.variant(v) for v in p.variants] if p.variants else None
        # Shape i of a workload gets seed + i, as in the workload commands.
        steps += [Step(w, s, protocols[p.name], seed_value + i, chosen) for i, s in enumerate(p.shapes)]
    _execute(Plan(steps, check_only, uuid.uuid4().hex[:8]), out=out, force=force, quiet=quiet, protocols=protocols,
             timeout_s=count("--timeout", timeout), devices=devices, host_link_parallel=parallel_host_link, ray=ray,
             config=str(cfg.path), config_sha256=cfg.sha256)


@app.command("report")
def report_cmd(
    results: Path = typer.Argument(..., help="A result file (.csv or .json) from pmppbench."),
    readme: Optional[Path] = typer.Option(None, "--readme", help="Replace the section between "
                                          "<!-- results:begin --> and <!-- results:end --> in this file."),
):
    """Turn a result file into the Markdown tables (the README's results section)."""
    from pmppbench import resultfile  # noqa: PLC0415
    from pmppbench.export import markdown  # noqa: PLC0415

    rows, meta = resultfile.load(results)  # a broken file stops here: README is never touched
    text = markdown.results_section(rows, meta, source=str(results))
    if readme is None:
        console.print(text, markup=False, highlight=False, soft_wrap=True)
        return
    if not readme.is_file():
        raise UsageError(f"--readme {readme}: no such file")
    doc = markdown.replace_section(readme.read_text(), text)
    if doc is None:
        raise UsageError(f"--readme {readme}: needs the markers {markdown.BEGIN} and {markdown.END} "
                         "around the results section")
    resultfile.write_atomic(readme, doc)
    console.print(f"updated {readme}")


@app.command()
def info(measure: bool = typer.Option(False, "--measure", help="Measure the practical ceilings (1 GiB device-to-device "
                                      "copy, cuBLAS FP32 GEMM 8192^3) and cache them for this GPU and driver.")):
    """The GPU's facts and ceilings: theoretical, and measured once with --measure (PMPP 5.1)."""
    from pmppbench import tools  # noqa: PLC0415

    tools.info(console, measure)


@app.command("compile")
def compile_cmd(
    names: Optional[list[str]] = typer.Argument(None, help="Workloads to compile (default: all)."),
    arch: Optional[str] = typer.Option(None, "--arch", help="Target such as sm_90; default: the current GPU's. "
                                       "With --arch no GPU is needed."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ignore the on-disk compile cache."),
):
    """Compile every kernel with NVRTC: one line per kernel with its variants and ptxas's resources."""
    from pmppbench import tools  # noqa: PLC0415

    tools.compile_all(console, names, arch, use_cache=not no_cache)


@app.command()
def resources(names: Optional[list[str]] = typer.Argument(None, help="Workloads (default: all).")):
    """Registers, shared and local memory, and occupancy of every kernel (PMPP 5.6): the hand
    computation beside the CUDA occupancy API's answer."""
    from pmppbench import tools  # noqa: PLC0415

    tools.resources(console, names)


@app.command()
def plot(
    results: Path = typer.Argument(..., help="A result file (.csv or .json)."),
    outdir: Optional[Path] = typer.Option(None, "--outdir", help="Folder for the PNG files (default: beside RESULTS)."),
    force: bool = typer.Option(False, "--force", help="Overwrite PNG files that exist."),
):
    """Roofline chart and one bar chart per workload, as PNG files (needs pmppbench[plot])."""
    from pmppbench import plot as plotting  # noqa: PLC0415
    from pmppbench import resultfile  # noqa: PLC0415

    rows, meta = resultfile.load(results)
    for path in plotting.plot_results(rows, meta, outdir or results.parent, force=force):
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


# ---- entry point ----------------------------------------------------------------------------

for _name in workloads.names():
    register_workload_command(workloads.get(_name))


def main(argv: Optional[list[str]] = None) -> int:
    """Run the CLI; returns the exit code (also used by the tests)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    STATE["debug"] = "--debug" in argv or os.environ.get("PMPPBENCH_DEBUG", "") not in ("", "0")
    argv = [a for a in argv if a != "--debug"] or ["--help"]  # no words: the help, exit 0
    group = typer.main.get_command(app)
    try:
        result = group.main(args=argv, prog_name="pmppbench", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except PmppError as exc:
        if STATE["debug"]:
            raise
        err_console.print(f"pmppbench: {exc}", markup=False, highlight=False)
        return exc.exit_code
    except KeyboardInterrupt:
        err_console.print("pmppbench: interrupted")
        return 130
    except BrokenPipeError:  # `pmppbench ... | head`: the reader left; that is not a failure
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # the parser's own exceptions (typer vendors click in newer versions)
        code = getattr(exc, "exit_code", None)
        kind = type(exc).__name__
        if kind == "Exit":
            return int(code or 0)
        if kind == "Abort":
            err_console.print("pmppbench: interrupted")
            return 130
        if hasattr(exc, "format_message") and code is not None:
            ctx = getattr(exc, "ctx", None)
            hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            err_console.print(f"pmppbench: {exc.format_message()}{hint}", markup=False, highlight=False)
            return 2
        if STATE["debug"]:
            raise
        err_console.print(f"pmppbench: unexpected {kind}: {exc} (run with --debug for the traceback)",
                          markup=False, highlight=False)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
