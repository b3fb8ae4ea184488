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
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from pmppbench import __version__, workloads
from pmppbench.config import bundled
from pmppbench.errors import PmppError, UsageError

# Each command imports what it runs inside its own body (the function-local imports below):
# `pmppbench --help` and a mistake on the command line answer without loading the engine.

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


# ---- options, declared once for every command that takes them ---------------------------

def _opt(flag: str, help_: str, default=None):
    return typer.Option(default, flag, help=help_, show_default=False)


RUN_OPTIONS = {  # every command that runs a plan: the workload commands and `all`
    "check_only": _opt("--check-only", "Check every variant (on the check shapes, or the config's); no timing.", False),
    "out": _opt("--out", "Write results to FILE (.csv, .json, .md or .html), row by row; give --out again for "
                "more files (--out r.csv --out r.html)."),
    "force": _opt("--force", "Overwrite the --out files that exist.", False),
    "quiet": _opt("--quiet", "No progress bar or tables; only errors and the summary line.", False),
    "flush_l2": _opt("--flush-l2", "Cold-cache timing: flush L2 before every call and time each call with its own "
                     "events (default: hot, back-to-back calls).", False),
    "counters": _opt("--counters", "After the timed batches, run each passing variant once more, untimed, under "
                     "Nsight Compute (ncu) and show its hardware counters beside the model: DRAM bytes, L2/L1 hit "
                     "rates, shared-memory wavefronts per request, achieved occupancy.", False),
    "timeout": _opt("--timeout", "Seconds a check, warmup or batch may take before its variant is killed "
                    "(default: derived from the workload, at least 60)."),
    "devices": _opt("--devices", "GPUs to run on, all or indices such as 0,2 (default: the current one); each runs "
                    "the same plan, concurrently."),
    "ray": _opt("--ray", "Run on every GPU of a Ray cluster: auto (this machine's, or a new local one) or its "
                "address (needs pmppbench[fleet])."),
    "parallel_host_link": _opt("--parallel-host-link", "With --devices, run host-link work (the stream workload) "
                               "on every GPU at once instead of one GPU at a time.", False),
}
WORKLOAD_OPTIONS = {
    "seed": _opt("--seed", "Seed of the random input generator (>= 0).", "0"),
    "variants": _opt("--variants", "Comma-separated subset of variants to run."),
    "warmup": _opt("--warmup", "Override the protocol's warmup calls."),
    "batches": _opt("--batches", "Override the protocol's number of batches."),
    "kernel": _opt("--kernel", "Your own kernel, FILE.cu:NAME, checked and timed beside the others (needs --like)."),
    "like": _opt("--like", "The variant whose signature, launch geometry, reference and model --kernel takes."),
}


def _bundled_configs() -> str:
    return ", ".join(bundled())


ALL_OPTIONS = {
    "config": _opt("--config", f"TOML config file, or the name of a bundled one ({_bundled_configs()}); "
                   "default: default."),
    "only": _opt("--only", "Comma-separated workloads to run from the config."),
    "seed": _opt("--seed", "Seed of the random inputs (default: the config's, else 0)."),
}


REPEATABLE = {"out"}  # options that may be given several times (a list)


def _command(fn, params: dict, doc: str):
    """`fn(**kw)` as a Typer command with these parameters, all read as text (or flags) and
    parsed by planning.count()/counts(), so a 0, a -1 and an abc are worded the same way."""
    def annotation(name, info):
        if isinstance(info.default, bool):
            return bool
        return Optional[list[str]] if name in REPEATABLE else Optional[str]

    sig = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=annotation(name, info))
           for name, info in params.items()]
    fn.__signature__ = inspect.Signature(sig)
    fn.__annotations__ = {p.name: p.annotation for p in sig}
    fn.__doc__ = doc
    return fn


def _help_text(w) -> str:
    """A workload command's help: what it runs, then each size with its default (from the declaration)."""
    default = w.default_shape()
    sizes = [(d.upper(), f"{w.dim_help.get(d, '')} Default {default[d]}.") for d in w.dims]
    sizes.append(("REPS", f"Calls per timed batch. Default {w.protocol.reps}."))
    lines = [f"  {name:<6} {text}" for name, text in sizes]
    return f"{w.about}\n\n\b\nArguments (each optional; give the ones before it too):\n" + "\n".join(lines)


def register_workload_command(w, target: typer.Typer = app) -> None:
    """`pmppbench <workload> [SIZES...] [REPS]` with its axes and the common options."""
    def arg(name):
        return typer.Argument(None, show_default=False, metavar=name.upper())  # described in the help text

    params = {d: arg(d) for d in [*w.dims, "reps"]}
    params |= {a.name: _opt(a.option, a.help) for a in w.axes}
    params |= WORKLOAD_OPTIONS | RUN_OPTIONS

    def command(**kw):
        from pmppbench.planning import workload_plan  # noqa: PLC0415

        plan, protocols = workload_plan(w, kw)
        _execute(plan, protocols, kw)

    target.command(w.name, context_settings={"ignore_unknown_options": True})(_command(command, params, _help_text(w)))


def all_cmd(**kw):
    from pmppbench.planning import config_plan  # noqa: PLC0415

    plan, protocols, cfg = config_plan(kw)
    _execute(plan, protocols, kw, config=str(cfg.path), config_sha256=cfg.sha256)


app.command("all")(_command(all_cmd, ALL_OPTIONS | RUN_OPTIONS,
                            "Every workload and variant on the sizes of a config; rows are written as they finish."))


def _execute(plan, protocols: dict, kw: dict, **meta) -> None:
    from pmppbench.planning import count  # noqa: PLC0415
    from pmppbench.session import run_and_report  # noqa: PLC0415

    run_and_report(plan, out=[Path(p) for p in kw["out"] or []], force=kw["force"], quiet=kw["quiet"],
                   protocols=protocols, console=console, err_console=err_console, debug=STATE["debug"],
                   timeout_s=count("--timeout", kw["timeout"]), devices=kw["devices"],
                   host_link_parallel=kw["parallel_host_link"], ray=kw["ray"], **meta)


# ---- the other commands ---------------------------------------------------------------------

@app.command("report")
def report_cmd(
    results: Path = typer.Argument(..., help="A result file (.csv or .json) from pmppbench."),
    readme: Optional[Path] = typer.Option(None, "--readme", help="Replace the section between "
                                          "<!-- results:begin --> and <!-- results:end --> in this file."),
    html: Optional[Path] = typer.Option(None, "--html", help="Write one self-contained HTML page (the tables, "
                                        "ladder, roofline, counters and health view) to this file."),
    force: bool = typer.Option(False, "--force", help="Overwrite the --html file if it exists."),
):
    """Turn a result file into the Markdown tables (the README's results section), or an HTML page."""
    from pmppbench import resultfile  # noqa: PLC0415
    from pmppbench.export import files, markdown  # noqa: PLC0415
    from pmppbench.export import html as html_page  # noqa: PLC0415

    if html is not None:
        files.check_writable(html, force, "--html", exporter=False)
    rows, meta = resultfile.load(results)  # a broken file stops here: README and --html are never touched
    if html is not None:
        resultfile.write_atomic(html, html_page.document(rows, meta))
        console.print(f"wrote {html}", highlight=False)
        if readme is None:
            return
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
    html: Optional[Path] = typer.Option(None, "--html", help="Also write the comparison as one self-contained "
                                        "HTML page (each row's ratio with its noise range) to this file."),
    force: bool = typer.Option(False, "--force", help="Overwrite the --html file if it exists."),
):
    """Line up two result files; FASTER / SLOWER only when the difference exceeds both runs' noise."""
    from pmppbench import compare as comparing  # noqa: PLC0415

    if html is not None:
        from pmppbench.export import files  # noqa: PLC0415

        files.check_writable(html, force, "--html", exporter=False)
    rep = comparing.compare_files(base, new, fail_on_slower)
    comparing.print_comparison(console, rep)
    if html is not None:
        from pmppbench.export import html as html_page  # noqa: PLC0415
        from pmppbench.resultfile import write_atomic  # noqa: PLC0415

        write_atomic(html, html_page.compare_document(rep, rep.base_meta, rep.new_meta))
        console.print(f"wrote {html}", highlight=False)
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
