"""The command line: parse the words into a Plan, hand it to the session, say how it ended.

Every workload command (`pmppbench vecadd`, `transpose`, ...) is made from its workload's
declaration: the sizes in order, then REPS, then its own options (`--radius`, `--streams`)
and the common ones. Exit codes: 0 success, 1 a check failed (or a kernel did not compile),
2 bad input, 3 something missing on this machine. No traceback unless --debug.
"""

from __future__ import annotations

import errno
import inspect
import os
import sys
import traceback
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from pmppbench import __version__, paths, workloads
from pmppbench.cli.config import bundled
from pmppbench.errors import PmppError, UsageError
from pmppbench.workloads.base import Workload

# Each command imports what it runs inside its own body (the function-local imports below):
# `pmppbench --help` and a mistake on the command line answer without loading the engine.

app = typer.Typer(
    add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Checked, carefully timed GPU kernels from PMPP chapters 5-6 and 9-11 and the tensor "
         "cores beyond them. Every variant is checked "
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

def _opt(flag: str, help_: str, default=None, metavar: str | None = None):
    """An option read as text (or a flag), shown in --help as `flag METAVAR`, never as a Python type."""
    return typer.Option(default, flag, help=help_, show_default=False, metavar=metavar)


RUN_OPTIONS = {  # every command that runs a plan: the workload commands and `all`
    "check_only": _opt("--check-only", "Check every variant (on the check shapes, or the config's); no timing.", False),
    "out": _opt("--out", "Write results to FILE (.csv, .json, .md or .html), row by row; give --out again for "
                "more files (--out r.csv --out r.html).", metavar="FILE"),
    "force": _opt("--force", "Overwrite the --out files that exist.", False),
    "quiet": _opt("--quiet", "No progress bar or tables; only errors and the summary line.", False),
    "flush_l2": _opt("--flush-l2", "Cold-cache timing: flush L2 before every call and time each call with its own "
                     "events (default: hot, back-to-back calls).", False),
    "counters": _opt("--counters", "After the timed batches, run each passing variant once more, untimed, under "
                     "Nsight Compute (ncu) and show its hardware counters beside the model: DRAM bytes, L2/L1 hit "
                     "rates, shared-memory wavefronts per request, achieved occupancy.", False),
    "until_stable": _opt("--until-stable", "Take batches until the noise of the batch means (stdev / mean) is "
                         "below NOISE% (default 0.5%; write the value with its %), at least the protocol's "
                         "batches, at most --stable-limit seconds per variant (default 10).", metavar="NOISE%"),
    "stable_limit": _opt("--stable-limit", "With --until-stable: the seconds a variant's batches may take.", metavar="SECONDS"),
    "discard_on_throttle": _opt("--discard-on-throttle", "Time again a batch that ended with NVML reporting a "
                                "thermal or power slowdown, or the SM clock under 90% of its maximum (at most "
                                "as many as the protocol's batches); the row says how many.", False),
    "timeout": _opt("--timeout", "Seconds a check, warmup or batch may take before its variant is killed "
                    "(default: derived from the workload, at least 60).", metavar="SECONDS"),
    "devices": _opt("--devices", "GPUs to run on, all or indices such as 0,2 (default: the current one); each runs "
                    "the same plan, concurrently.", metavar="all|I,J"),
    "ray": _opt("--ray", "Run on every GPU of a Ray cluster: auto (this machine's, or a new local one) or its "
                "address (needs pmppbench[fleet]).", metavar="auto|ADDRESS"),
    "parallel_host_link": _opt("--parallel-host-link", "With --devices, run host-link work (the stream workload) "
                               "on every GPU at once instead of one GPU at a time.", False),
}
WORKLOAD_OPTIONS = {
    "seed": _opt("--seed", "Seed of the random input generator (>= 0).", "0", metavar="N"),
    "variants": _opt("--variants", "Comma-separated subset of variants to run.", metavar="NAMES"),
    "warmup": _opt("--warmup", "Override the protocol's warmup calls.", metavar="N"),
    "batches": _opt("--batches", "Override the protocol's number of batches.", metavar="N"),
    "kernel": _opt("--kernel", "Your own kernel, FILE.cu:NAME, checked and timed beside the others (needs --like).", metavar="FILE.cu:NAME"),
    "like": _opt("--like", "The variant whose signature, launch geometry, reference and model --kernel takes.", metavar="VARIANT"),
}


def _bundled_configs() -> str:
    return ", ".join(bundled())


ALL_OPTIONS = {
    "config": _opt("--config", f"TOML config file, or the name of a bundled one ({_bundled_configs()}); "
                   "default: default.", metavar="FILE|NAME"),
    "only": _opt("--only", "Comma-separated workloads to run from the config.", metavar="NAMES"),
    "seed": _opt("--seed", "Seed of the random inputs (default: the config's, else 0).", metavar="N"),
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
    """A workload command's help: what it runs, each size with its default (from the
    declaration), then every variant --variants accepts, those of the default table marked."""
    default = w.default_shape()
    sizes = [(d.upper(), f"{w.dim_help.get(d, '')} Default {default[d]}.") for d in w.dims]
    sizes.append(("REPS", f"Calls per timed batch. Default {w.protocol.reps}."))
    lines = [f"  {name:<6} {text}" for name, text in sizes]
    return (f"{w.about}\n\n\b\nArguments (each optional; give the ones before it too):\n" + "\n".join(lines)
            + "\n\n\b\n" + "\n".join(_variants_help(w)))


def _variants_help(w, width: int = 76) -> list[str]:
    """'Variants (* in the default table):' and the names, wrapped; the ones --variants takes
    beyond the table (a workload that builds variants by name) said in words."""
    table = {v.name for v in w.variants_for(w.default_shape())}
    names = list(dict.fromkeys([*w.variant_names(), *(v.name for v in w.variants_for(w.default_shape()))]))
    words = [f"{n}*" if n in table else n for n in names]
    lines, line = ["Variants (* in the default table; --variants picks any):"], " "
    for word in words:
        if len(line) + len(word) + 2 > width and line.strip():
            lines.append(line.rstrip(","))
            line = " "
        line += f" {word},"
    lines.append(line.rstrip(","))
    if type(w).variant is not Workload.variant:  # a workload that builds variants by name
        lines.append(f"  --variants also takes the names {w.name} builds on request (an unknown name is answered "
                     "with their form)")
    return lines


def register_workload_command(w, target: typer.Typer = app) -> None:
    """`pmppbench <workload> [SIZES...] [REPS]` with its axes and the common options."""
    def arg(name):  # described once, in the help text: hidden from typer's own list
        return typer.Argument(None, show_default=False, metavar=name.upper(), hidden=True)

    params = {d: arg(d) for d in [*w.dims, "reps"]}
    params |= {a.name: _opt(a.option, a.help, metavar=_axis_metavar(a)) for a in w.axes}
    params |= WORKLOAD_OPTIONS | RUN_OPTIONS

    def command(**kw):
        from pmppbench.cli.planning import workload_plan  # noqa: PLC0415

        plan, protocols = workload_plan(w, kw)
        _execute(plan, protocols, kw)

    target.command(w.name, context_settings={"ignore_unknown_options": True})(_command(command, params, _help_text(w)))


def _axis_metavar(axis) -> str:
    one = "|".join(axis.choices) if axis.choices else "N"
    return f"{one}[,...]" if axis.many else one


def all_cmd(**kw):
    from pmppbench.cli.planning import config_plan  # noqa: PLC0415

    plan, protocols, cfg = config_plan(kw)
    _execute(plan, protocols, kw, config=str(cfg.path), config_sha256=cfg.sha256)


app.command("all")(_command(all_cmd, ALL_OPTIONS | RUN_OPTIONS,
                            "Every workload and variant on the sizes of a config; rows are written as they finish."))


def _execute(plan, protocols: dict, kw: dict, **meta) -> None:
    from pmppbench.cli.planning import run_options  # noqa: PLC0415
    from pmppbench.engine.driver.session import run_and_report  # noqa: PLC0415

    opts = run_options(kw)  # every option checked before the GPU is looked for
    plan, protocols = _with_stop_rules(plan, protocols, kw)
    run_and_report(plan, force=kw["force"], quiet=kw["quiet"], protocols=protocols, console=console,
                   err_console=err_console, debug=STATE["debug"], host_link_parallel=kw["parallel_host_link"],
                   **opts, **meta)


def _with_stop_rules(plan, protocols: dict, kw: dict):
    """The plan and protocols with --until-stable, --stable-limit and --discard-on-throttle applied."""
    from dataclasses import replace  # noqa: PLC0415

    from pmppbench.measure.protocol import stop_options  # noqa: PLC0415

    for flag, key, form in (("--until-stable", "until_stable", "the noise to reach as a percentage such as 0.5%"),
                            ("--stable-limit", "stable_limit", "seconds > 0 such as 10")):
        if kw[key] is not None and len(kw[key]) > 30:  # nothing it takes is this long: not echoed whole
            raise UsageError(f"{flag} takes {form}, got {paths.quoted(kw[key], 30)}")
    extra = stop_options(kw["until_stable"], kw["stable_limit"], kw["discard_on_throttle"])
    if not extra:
        return plan, protocols
    steps = tuple(replace(s, protocol=replace(s.protocol, **extra)) for s in plan.steps)
    return replace(plan, steps=steps), {k: replace(p, **extra) for k, p in protocols.items()}


def optional_noise(argv: list[str]) -> list[str]:
    """--until-stable's NOISE may be left out: a bare --until-stable (the last word, or one
    followed by a word that is not a percentage such as 0.5%) gets the default, so
    `gemm --until-stable 1024 1024 1024` reads its sizes as sizes."""
    from pmppbench.measure.protocol import DEFAULT_NOISE  # noqa: PLC0415

    out = []
    for i, word in enumerate(argv):
        out.append(word)
        if word == "--until-stable":
            following = argv[i + 1] if i + 1 < len(argv) else ""
            if _fraction(following):  # 0.5: meant as the noise, not a size (sizes are whole)
                raise UsageError(f"--until-stable takes its noise with a % sign: write --until-stable "
                                 f"{following.strip()}%, got {paths.quoted(following, 30)}")
            if not following.endswith("%"):
                out.append(f"{100 * DEFAULT_NOISE:g}%")
    return out


def _fraction(word: str) -> bool:
    """A number that is not a whole one (0.5, .5, 1e-3): no size or count can be it."""
    try:
        value = float(word)
    except ValueError:
        return False
    return not word.strip().lstrip("+-").isdigit() and value == value


# ---- the other commands ---------------------------------------------------------------------

def _argument(default, metavar: str):
    """A command's argument, described once in its help's Arguments block (_with_arguments),
    hidden from typer's own list, which adds Python type names (`RESULTS <str>`)."""
    return typer.Argument(default, metavar=metavar, show_default=False, hidden=True)


def _with_arguments(doc: str, *arguments: tuple[str, str]) -> str:
    return f"{doc}\n\n\b\nArguments:\n" + "\n".join(f"  {name:<9} {text}" for name, text in arguments)


RESULT_FILE = ("RESULTS", "A result file (.csv or .json) from pmppbench.")


@app.command("report", help=_with_arguments(
    "Turn a result file into the Markdown tables (the README's results section), or an HTML page; on a terminal, "
    "tables that fit it.", RESULT_FILE))
def report_cmd(
    results: str = _argument(..., "RESULTS"),
    readme: Optional[str] = typer.Option(None, "--readme", metavar="FILE", help="Replace the section between "
                                         "<!-- results:begin --> and <!-- results:end --> in this file."),
    html: Optional[str] = typer.Option(None, "--html", metavar="FILE", help="Write one self-contained HTML page "
                                       "(the tables, ladder, roofline, counters and health view) to this file."),
    markdown_out: bool = typer.Option(False, "--markdown", help="Print the Markdown section on a terminal too "
                                      "(a pipe or a file always gets it; a terminal gets tables that fit it)."),
    force: bool = typer.Option(False, "--force", help="Overwrite the --html file if it exists."),
):
    """Turn a result file into the Markdown tables (the README's results section), or an HTML page;
    on a terminal, tables that fit it."""
    from pmppbench.results import resultfile  # noqa: PLC0415
    from pmppbench.results.export import files, markdown  # noqa: PLC0415
    from pmppbench.results.export import html as html_page  # noqa: PLC0415

    source = paths.given("RESULTS", results)
    target = paths.given("--readme", readme)
    page = paths.given("--html", html)
    inputs = _inputs("RESULTS", source)
    if target is not None:
        for label, path in inputs.items():
            if paths.same_file(target, path):
                raise UsageError(f"--readme {paths.shown(target)} is the same file as {label}; give the README to "
                                 "update, not the result file")
    if page is not None:
        files.check_writable(page, force, "--html", exporter=False,
                             inputs={**inputs, **({"--readme": target} if target is not None else {})})
    notes: list[str] = []
    rows, meta = resultfile.load(source, notes)  # a broken file stops here: README and --html are never touched
    _say(notes)
    if page is not None:
        resultfile.write_atomic(page, html_page.document(rows, meta))
        console.print(f"wrote {page}", markup=False, highlight=False)
        if target is None:
            return
    if target is None and console.is_terminal and not markdown_out:
        report_tables(console, rows, meta, results)
        return
    text = markdown.results_section(rows, meta, source=results)
    if target is None:
        console.print(text, markup=False, highlight=False, soft_wrap=True)
        return
    doc = markdown.replace_section(_readme_text(target), text)
    if doc is None:
        raise UsageError(f"--readme {target}: needs the markers {markdown.BEGIN} and {markdown.END} "
                         "around the results section")
    try:
        resultfile.write_atomic(target, doc)
    except OSError as exc:
        raise UsageError(f"--readme {target}: cannot write it ({exc.strerror or exc}); check the folder's "
                         "permissions") from None
    console.print(f"updated {target}", markup=False, highlight=False)


def _inputs(label: str, source: Path) -> dict[str, Path]:
    """A result file and the metadata file beside it, as inputs no output may replace."""
    from pmppbench.results.resultfile import meta_path_for  # noqa: PLC0415

    return {label: source, f"{label}'s metadata file": meta_path_for(source)}


def _say(notes: list[str]) -> None:
    """What a result file's reader noticed and did not stop for, one line each on stderr."""
    for note in notes:
        err_console.print(f"pmppbench: {note}", markup=False, highlight=False)


def report_tables(out: Console, rows, meta: dict, source: str) -> None:
    """A result file as a run prints it: per workload its table fitted to `out`'s width."""
    from pmppbench.results.export import markdown, terminal  # noqa: PLC0415
    from pmppbench.results.export.html import protocol_caption  # noqa: PLC0415

    out.print(markdown.device_line(meta, source), markup=False, highlight=False, soft_wrap=False)
    for workload in dict.fromkeys(r.workload for r in rows):
        mine = [r for r in rows if r.workload == workload]
        terminal.print_table(out, mine, title=workload, caption=protocol_caption(mine, meta, workload))
    terminal.print_warnings(out, rows)
    terminal.print_stability(out, rows)


def _readme_text(target: Path) -> str:
    """The README to update, read as UTF-8; a folder, a missing file, a device or FIFO, a file
    past the README cap or another encoding is one line."""

    kind = paths.kind(target, "--readme")
    if kind == paths.FOLDER:
        raise UsageError(f"--readme {target} is a folder; give the Markdown file to update")
    if kind in (paths.MISSING, paths.DANGLING):
        raise UsageError(f"--readme {target}: no such file" + (" (a symbolic link to nothing)" if kind == paths.DANGLING
                                                               else "") + "; give an existing Markdown file")
    data = paths.read_capped(target, "README", f"--readme {paths.shown(target)}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"--readme {target}: not UTF-8 text (byte {exc.start}); save it as UTF-8 first") from None


@app.command()
def info(measure: bool = typer.Option(False, "--measure", help="Measure the practical ceilings (1 GiB device-to-device "
                                      "copy, cuBLAS FP32 GEMM 8192^3) and cache them for this GPU and driver.")):
    """The GPU's facts and ceilings: theoretical, and measured once with --measure (PMPP 5.1)."""
    from pmppbench.cli import tools  # noqa: PLC0415

    tools.info(console, measure)


@app.command("compile", help=_with_arguments(
    "Compile every kernel with NVRTC: one line per kernel with its variants and ptxas's resources.",
    ("WORKLOAD", "Workloads to compile (default: all).")))
def compile_cmd(
    names: Optional[list[str]] = _argument(None, "WORKLOAD..."),
    arch: Optional[str] = typer.Option(None, "--arch", metavar="sm_XX", help="Target such as sm_90; default: the current GPU's. "
                                       "With --arch no GPU is needed."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ignore the on-disk compile cache."),
    kernel: Optional[str] = typer.Option(None, "--kernel", metavar="FILE.cu:NAME", help="Compile your own kernel "
                                         "instead, as it runs --like VARIANT (one workload): its resources, or "
                                         "NVRTC's errors with file and line."),
    like: Optional[str] = typer.Option(None, "--like", metavar="VARIANT", help="With --kernel: the variant whose "
                                       "defines your kernel is compiled with."),
):
    """Compile every kernel with NVRTC: one line per kernel with its variants and ptxas's resources."""
    from pmppbench.cli import tools  # noqa: PLC0415

    if kernel is not None or like is not None:
        from pmppbench.cli import learning  # noqa: PLC0415

        learning.compile_learner(console, names, kernel, like, arch, use_cache=not no_cache)
        return
    tools.compile_all(console, names, arch, use_cache=not no_cache)


@app.command(help=_with_arguments(
    "Print a .cu to start your own kernel from: the signature, the defines, the launch geometry and what the "
    "reference computes, in comments, and a simple correct body (it PASSes as given).",
    ("WORKLOAD", "The workload, e.g. transpose."),
    ("VARIANT", "The variant your kernel runs --like (default: the workload's first that takes one).")))
def template(workload: str = _argument(..., "WORKLOAD"), variant: Optional[str] = _argument(None, "[VARIANT]")):
    """Print a .cu to start your own kernel from (it PASSes as given)."""
    from pmppbench.cli import learning  # noqa: PLC0415

    sys.stdout.write(learning.template(workload, variant))


@app.command(help=_with_arguments(
    "Registers, shared and local memory, and occupancy of every kernel (PMPP 5.6): the hand computation beside "
    "the CUDA occupancy API's answer.", ("WORKLOAD", "Workloads (default: all).")))
def resources(names: Optional[list[str]] = _argument(None, "WORKLOAD...")):
    """Registers, shared and local memory, and occupancy of every kernel (PMPP 5.6): the hand
    computation beside the CUDA occupancy API's answer."""
    from pmppbench.cli import tools  # noqa: PLC0415

    tools.resources(console, names)


@app.command(help=_with_arguments(
    "Roofline chart and one bar chart per workload, as PNG files (needs pmppbench[plot]).", RESULT_FILE))
def plot(
    results: str = _argument(..., "RESULTS"),
    outdir: Optional[str] = typer.Option(None, "--outdir", metavar="DIR",
                                         help="Folder for the PNG files (default: beside RESULTS)."),
    force: bool = typer.Option(False, "--force", help="Overwrite PNG files that exist."),
):
    """Roofline chart and one bar chart per workload, as PNG files (needs pmppbench[plot])."""
    from pmppbench.results import resultfile  # noqa: PLC0415
    from pmppbench.results import plot as plotting  # noqa: PLC0415

    source = paths.given("RESULTS", results)
    folder = paths.given("--outdir", outdir)
    notes: list[str] = []
    rows, meta = resultfile.load(source, notes)
    _say(notes)
    for path in plotting.plot_results(rows, meta, folder or source.parent, force=force):
        console.print(f"wrote {path}", markup=False, highlight=False)


@app.command(help=_with_arguments(
    "Line up two result files; each ratio with its 95% bootstrap interval over batch means, FASTER / SLOWER only "
    "when the interval lies beyond 1 +- 1%.", ("BASE", "Baseline result file (.csv or .json)."),
    ("NEW", "New result file.")))
def compare(
    base: str = _argument(..., "BASE"),
    new: str = _argument(..., "NEW"),
    fail_on_slower: Optional[str] = typer.Option(None, "--fail-on-slower", metavar="PCT",
                                                 help="Exit 1 when a row is slower by more than PCT percent "
                                                      "(a number > 0) at 95% confidence; exit 2 when nothing could "
                                                      "be judged or NEW lost rows of a step it ran."),
    html: Optional[str] = typer.Option(None, "--html", metavar="FILE", help="Also write the comparison as one "
                                       "self-contained HTML page (each row's ratio with its interval) to this file."),
    force: bool = typer.Option(False, "--force", help="Overwrite the --html file if it exists."),
):
    """Line up two result files; each ratio with its 95% bootstrap interval over batch means, FASTER / SLOWER
    only when the interval lies beyond 1 +- 1%."""
    from pmppbench.results import compare as comparing  # noqa: PLC0415

    pct = comparing.threshold(fail_on_slower)  # before any file is read
    page = paths.given("--html", html)
    if page is not None:
        from pmppbench.results.export import files  # noqa: PLC0415

        files.check_writable(page, force, "--html", exporter=False,
                             inputs={**_inputs("BASE", Path(base)), **_inputs("NEW", Path(new))})
    notes: list[str] = []
    rep = comparing.compare_files(paths.given("BASE", base), paths.given("NEW", new), pct, notes)
    _say(notes)
    comparing.print_comparison(console, rep)
    if page is not None:
        from pmppbench.results.export import html as html_page  # noqa: PLC0415
        from pmppbench.results.resultfile import write_atomic  # noqa: PLC0415

        write_atomic(page, html_page.compare_document(rep, rep.base_meta, rep.new_meta))
        console.print(f"wrote {page}", markup=False, highlight=False)
    if rep.exit_code == 2:
        raise UsageError(rep.gate_problem)
    if rep.exit_code:
        raise typer.Exit(rep.exit_code)


# ---- entry point ----------------------------------------------------------------------------

for _name in workloads.names():
    register_workload_command(workloads.get(_name))


def main(argv: Optional[list[str]] = None) -> int:
    """Run the CLI; returns the exit code (also used by the tests).

    Under --debug a refusal shows its traceback and still returns its own exit code (bad
    input stays 2). Text that the terminal's encoding cannot show (a path in another script
    under PYTHONIOENCODING=ascii) is escaped rather than fatal, and output that cannot be
    written (stdout on a full disk, /dev/full) is one line on stderr, exit 3."""
    argv = list(sys.argv[1:] if argv is None else argv)
    STATE["debug"] = "--debug" in argv or os.environ.get("PMPPBENCH_DEBUG", "") not in ("", "0")
    argv = [a for a in argv if a != "--debug"] or ["--help"]  # no words: the help, exit 0
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        return _main(argv)
    except OSError as exc:  # only a stream can fail here: every file error is worded where it happens
        if STATE["debug"]:
            traceback.print_exc()
        _drop_stdout()
        err_console.print(f"pmppbench: cannot write the output ({exc.strerror or exc}); free space or "
                          "send it elsewhere", markup=False, highlight=False)
        return 3


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush cannot fail a second time."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # a captured stdout (tests) has no descriptor
        pass


INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, as a shell reports a process it stopped


def _main(argv: list[str]) -> int:
    group = typer.main.get_command(app)
    try:
        argv = optional_noise(argv)
        result = group.main(args=argv, prog_name="pmppbench", standalone_mode=False)
        sys.stdout.flush()  # a full disk shows now, not in the interpreter's exit
        if result == INTERRUPTED:  # newer typer answers Ctrl-C with this code and no word
            err_console.print("pmppbench: interrupted")
        return result if isinstance(result, int) else 0
    except PmppError as exc:
        if STATE["debug"]:
            traceback.print_exc()
        err_console.print(f"pmppbench: {exc}", markup=False, highlight=False)
        return exc.exit_code
    except KeyboardInterrupt:
        err_console.print("pmppbench: interrupted")
        return INTERRUPTED
    except BrokenPipeError:  # `pmppbench ... | head`: the reader left; that is not a failure
        _drop_stdout()
        return 0
    except OSError as exc:
        if exc.filename is None and exc.errno in (errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG):
            raise  # a stream that cannot be written: main() says so
        return _unexpected(exc)
    except Exception as exc:  # the parser's own exceptions (typer vendors click in newer versions)
        code = getattr(exc, "exit_code", None)
        kind = type(exc).__name__
        if kind == "Exit":
            return int(code or 0)
        if kind == "Abort":  # older click and typer pass Ctrl-C on as Abort
            err_console.print("pmppbench: interrupted")
            return INTERRUPTED
        if hasattr(exc, "format_message") and code is not None:
            ctx = getattr(exc, "ctx", None)
            hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            err_console.print(f"pmppbench: {exc.format_message()}{hint}", markup=False, highlight=False)
            return 2
        return _unexpected(exc)


def _unexpected(exc: BaseException) -> int:
    if STATE["debug"]:
        raise exc
    err_console.print(f"pmppbench: unexpected {type(exc).__name__}: {exc} (run with --debug for the traceback)",
                      markup=False, highlight=False)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
