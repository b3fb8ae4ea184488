"""Every table fits the terminal it is printed on: at 80 and at 120 columns no line is longer
than the terminal, no cell is cut (no "…", every shown cell whole on its row's line), and a
column left out is named under its table. Rendered: `compare`, `report`, `compile` and the
table of every workload (made-up rows with each workload's own variants, shape and model
columns); and `--help` lists each argument once, no Python type, every variant."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from pmppbench import workloads
from pmppbench.results import compare as comparing
from pmppbench.results.derive import fill_rates, fill_relative
from pmppbench.results.export import terminal
from pmppbench.results.export.columns import columns_for
from pmppbench.results.resultfile import load
from pmppbench.row import Result

DATA = Path(__file__).resolve().parent / "data"
WIDTHS = (80, 120)


def render(width: int, draw) -> str:
    """What `draw(console)` prints on a terminal `width` columns wide (as the CLI's console:
    soft_wrap, so only what the code wraps is wrapped)."""
    out = io.StringIO()
    draw(Console(file=out, width=width, soft_wrap=True, color_system=None))
    return out.getvalue()


def dropped(text: str) -> list[str]:
    """The columns the notes under the tables name as left out."""
    names = []
    for m in re.finditer(r"not shown at \d+ columns: (.*?) \(a wider terminal shows them\)", " ".join(text.split())):
        names += m.group(1).split(", ")
    return names


def whole(cell: str, line: str) -> bool:
    """`cell` on `line` as a whole token (not the start of a longer number or name)."""
    return re.search(rf"(?<![\w.,+-]){re.escape(cell)}(?![\w.,%])", line) is not None


def row_line(text: str, *tokens: str) -> str:
    """The one line holding every token of a row whole."""
    found = [line for line in text.splitlines() if all(whole(t, line) for t in tokens if t)]
    assert found, f"no line holds {tokens}:\n{text}"
    return found[0]


def assert_fits(text: str, width: int) -> None:
    long = [line for line in text.splitlines() if len(line) > width]
    assert not long, f"{len(long)} lines past {width} columns, e.g. {long[0]!r}"
    assert "…" not in text


# ---- a run's table, for every workload ---------------------------------------------------------

DETAIL = "1 of 16777216 elements wrong; first at index 3: got 2.5, expected 2.0 within the tolerance"


def made_up_rows(w) -> list[Result]:
    """One row per variant of `w`'s default table on its default shape: its real model
    (bytes, FLOPs and the model's own columns, derived as a run derives them), resources, a
    time, and the last row a FAIL with a long detail."""
    shape = w.default_shape()
    rows = []
    for i, v in enumerate(w.variants_for(shape)):
        t = w.traffic(shape, v)
        median = 0.0137 * (i + 1) ** 1.7
        r = Result(w.name, v.name, w.label(shape), dims=dict(shape), check="PASS", median_ms=median,
                   min_ms=0.99 * median, max_ms=1.01 * median, spread_pct=2.0, batch_means_ms=[median] * 5,
                   bytes=t.bytes, flops=t.flops, model=dict(t.extra), registers=32 + i, static_smem_bytes=4096 * i,
                   dynamic_smem_bytes=0, local_bytes=0, bound="memory-bound", sol_pct_measured=81.5 - i)
        r.intensity_flop_per_byte = t.flops / t.bytes if t.bytes else None
        fill_rates(r)
        rows.append(r)
    fill_relative(rows, w.baseline, w.roof, w.rate)
    last = rows[-1]
    last.check, last.check_detail, last.median_ms = "FAIL", DETAIL, None
    return rows


def check_run_table(text: str, rows: list[Result], width: int) -> None:
    assert_fits(text, width)
    cols = columns_for(rows)
    gone = dropped(text)
    assert set(gone) <= {c.header for c in cols if c.drop}  # only droppable columns, each named
    shown = [c for c in cols if c.header not in gone and not c.words]
    for r in rows:
        line = row_line(text, r.variant, r.shape.split()[0], r.check)
        for c in shown:
            cell = c.cell(r)
            if cell:
                assert whole(cell, line), (c.header, cell, line)
    words = " ".join(text.split())
    assert all(word in words for word in DETAIL.split())  # the detail wraps, every word of it kept


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", workloads.names())
def test_every_workloads_table_fits(name, width):
    rows = made_up_rows(workloads.get(name))
    text = render(width, lambda c: terminal.print_table(c, rows, title=name, caption="warmup 3 · 5 batches x 20 calls"))
    check_run_table(text, rows, width)
    if width == 120:  # what 120 columns gives up, 80 gives up too
        assert set(dropped(text)) <= set(dropped(render(80, lambda c: terminal.print_table(c, rows, title=name))))


def test_a_wide_terminal_drops_nothing_and_a_narrow_one_keeps_the_headline_rate():
    rows = made_up_rows(workloads.get("gemm"))
    text = render(400, lambda c: terminal.print_table(c, rows, title="gemm"))
    assert dropped(text) == [] and "┃ variant" in text and "GFLOP/s" in text  # the wide table as it always was
    narrow = dropped(render(80, lambda c: terminal.print_table(c, rows, title="gemm")))
    assert "GFLOP/s" not in narrow and "GB/s" in narrow  # GEMM's headline is its FLOP rate


# ---- report, on a terminal ---------------------------------------------------------------------

@pytest.mark.parametrize("width", WIDTHS)
def test_report_fits(width):
    from pmppbench.cli.app import report_tables

    rows, meta = load(DATA / "sample.csv")
    text = render(width, lambda c: report_tables(c, rows, meta, "sample.csv"))
    assert_fits(text, width)
    assert text.startswith("Measured on NVIDIA H200")
    for name in dict.fromkeys(r.workload for r in rows):
        mine = [r for r in rows if r.workload == name]
        gone = dropped(text)
        for r in mine:
            line = row_line(text, r.variant, r.shape, r.check, f"{r.median_ms:.4f}")
            for c in columns_for(mine):
                if c.header not in gone and c.cell(r):
                    assert whole(c.cell(r), line), (c.header, line)


def test_report_on_a_terminal_and_in_a_pipe(tmp_path, run_cli, monkeypatch):
    """A pipe gets the Markdown section (README, scripts); a terminal gets the tables, unless --markdown."""
    from pmppbench.cli import app

    shutil.copy(DATA / "sample.csv", tmp_path / "r.csv")
    shutil.copy(DATA / "sample.csv.meta.json", tmp_path / "r.csv.meta.json")
    code, out, _ = run_cli("report", str(tmp_path / "r.csv"))
    assert code == 0 and "| variant | shape | check |" in out
    monkeypatch.setattr(app, "console", Console(width=80, force_terminal=True, soft_wrap=True, color_system=None))
    code, out, _ = run_cli("report", str(tmp_path / "r.csv"))
    assert code == 0 and "| variant |" not in out and "not shown at 80 columns:" in out
    assert max(len(line) for line in out.splitlines()) <= 80
    code, out, _ = run_cli("report", str(tmp_path / "r.csv"), "--markdown")
    assert code == 0 and "| variant | shape | check |" in out


# ---- compare -------------------------------------------------------------------------------------

def comparison_report():
    base, meta = load(DATA / "sample.csv")
    new, _ = load(DATA / "sample.csv")
    for i, r in enumerate(new):
        scale = (0.7, 1.0, 1.4)[i % 3]
        r.median_ms, r.min_ms, r.max_ms = scale * r.median_ms, scale * r.min_ms, scale * r.max_ms
        r.batch_means_ms = [scale * t for t in r.batch_means_ms]
    new[-1].check, new[-1].check_detail = "FAIL", DETAIL
    return comparing.compare_results(base, new, base_name="results/h200/main/default.csv",
                                     new_name="results/h200/branch/default.csv")


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_fits(width):
    report = comparison_report()
    text = render(width, lambda c: comparing.print_comparison(c, report))
    assert_fits(text, width)
    gone = dropped(text)
    assert set(gone) <= {"change_%", "base_spread_%", "new_spread_%"}
    headers = comparing.HEADERS
    for c in report.matched:
        cells = dict(zip(headers, comparing.comparison_cells(c)))
        line = row_line(text, cells["variant"], cells["shape"], cells["new/base"], cells["verdict"])
        for h, cell in cells.items():
            if cell and h not in gone and h != "workload":  # narrow: the workload heads its own table
                assert whole(cell, line), (h, cell, line)
    assert report.summary() in " ".join(text.split())


def test_compare_at_80_columns_keeps_every_number():
    """The failure that started this: at 80 columns the medians and ratios were cut to '0.2…'."""
    report = comparison_report()
    text = render(80, lambda c: comparing.print_comparison(c, report))
    for c in report.matched:
        if c.ratio is not None:
            assert f"{c.base.median_ms:.4f}" in text and f"{c.new.median_ms:.4f}" in text and f"{c.ratio:.3f}" in text


# ---- compile --------------------------------------------------------------------------------------

def test_compile_lines_fit():
    from pmppbench.cli.tools import Compiled, print_compiled

    lines = [Compiled("vecadd", "scalar<int>", "", "12 regs, 0 B smem, 0 B stack, 0 B spills", "scalar"),
             Compiled("vecadd", "scalar<long long>", "", "12 regs, 0 B smem, 0 B stack, 0 B spills",
                      "scalar (64-bit path)"),
             Compiled("gemm", "pipelined<128, 256, 16, 64, 64, 4, 4, 4, true, false>", "PRECISION=2",
                      "255 regs, 49152 B smem, 1024 B stack, 1024 B spills",
                      ", ".join(f"pl_128x256x16_w64x64_i{i}_t4x4_chk_nf" for i in range(12)))]
    for width in (*WIDTHS, 200):
        text = render(width, lambda c: print_compiled(c, lines))
        assert_fits(text, min(width, 120))
        assert sum(line.startswith("OK  ") for line in text.splitlines()) == len(lines)
        for c in lines:
            assert any(c.kernel in line for line in text.splitlines())  # never broken
            assert any(c.resources in line for line in text.splitlines())
            assert all(name in text for name in c.variants.split(", "))
    wide = render(200, lambda c: print_compiled(c, lines[:2])).splitlines()
    assert wide[0].split() == ["OK", "vecadd", "scalar<int>", "12", "regs,", "0", "B", "smem,", "0", "B", "stack,", "0",
                               "B", "spills", "scalar"]  # short lines stay one line per kernel


@pytest.mark.parametrize("width", WIDTHS)
def test_compile_fits(width):
    pytest.importorskip("cupy", reason="compile needs NVRTC (pmppbench[cuda13]; CI installs it)")
    from pmppbench.cli import tools

    text = render(width, lambda c: tools.compile_all(c, ["vecadd", "transpose"], "sm_90", use_cache=True))
    assert_fits(text, width)
    built = []
    for name in ("vecadd", "transpose"):
        w = workloads.get(name)
        _, not_built = tools.skipped_on(w, "sm_90")
        built += [k for k, _ in w.kernel_variants() if k not in not_built]
    lines = text.splitlines()
    assert sum(line.startswith("OK  ") for line in lines) == len(built)
    assert all(any(re.search(rf"(?<![\w<]){re.escape(k)}(?![\w>,])", line) for line in lines) for k in built)


# ---- --help -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", workloads.names())
def test_workload_help_lists_each_argument_once_and_every_variant(run_cli, name):
    w = workloads.get(name)
    code, out, _ = run_cli(name, "--help")
    assert code == 0
    assert "<str>" not in out and "<list" not in out and "TEXT" not in out
    for size in [*w.dims, "reps"]:
        assert len(re.findall(rf"^\s+{size.upper()}\s", out, re.M)) == 1, size
    listed = " ".join(out.split("Variants (* in the default table; --variants picks any):")[1].split("Options:")[0].split())
    table = {v.name for v in w.variants_for(w.default_shape())}
    for v in w.variants:
        assert re.search(rf"(?<![\w=]){re.escape(v.name)}{re.escape('*') if v.name in table else ''}(,|\s|$)",
                         listed), v.name


@pytest.mark.parametrize("command", ["all", "compile", "report", "compare", "plot", "resources", "info"])
def test_no_help_shows_a_python_type(run_cli, command):
    code, out, _ = run_cli(command, "--help")
    assert code == 0 and out.startswith(f"Usage: pmppbench {command} ")
    assert not re.search(r"<(str|int|float|list|bool)", out) and "TEXT" not in out, out
    assert out.count("Arguments:") <= 1
