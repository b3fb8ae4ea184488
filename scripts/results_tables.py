"""The tables README.md and docs/ quote, and each results/<board>/README.md, made from the
committed result files and their meta.json, never typed by hand.

    python scripts/results_tables.py            # rewrite them all
    python scripts/results_tables.py --check    # exit 1 and name what is stale (CI, tests)

A table in a Markdown file is a region between two markers:

    <!-- results: h100/default.csv summary -->          one row per workload (README)
    <!-- results: h100/default.csv table transpose -->  `pmppbench report`'s table of one workload
    <!-- results: h200/scan-sizes.csv pivot scan -->    one row per shape, one column per variant
    <!-- results: h100/default.csv ladder gemm 4096x4096x4096 -->  one shape's rungs, what each changes
    <!-- results: h200/gemm-sizes.csv gemm-sizes -->     best beside cuBLAS per shape (gemm_best_table.py)
    <!-- results: h100/gemm_shapes.csv gemm-shapes -->   best beside cuBLAS per shape and precision, with its bar
    <!-- end results -->

The path is relative to results/. `table` runs `pmppbench report` (the package's own Markdown
tables, every column), so the generator follows the exporter and needs nothing else of the package.
After a reference run (scripts/reference_run.sh) replaces a board's files, run this once.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"
REGION = re.compile(r"(<!-- results: (?P<spec>[^>]+?) -->\n)(?P<body>.*?)(<!-- end results -->)", re.S)
# Rows that are not the workload's own kernels: libraries beside them and the plain copy that
# transpose times as a floor. The roof (memcpy, read, cublas) is named by each row's pct_of.
LIBRARY = {"cub", "cupy_cub", "cublas"}
NOT_A_RUNG = LIBRARY | {"copy"}

# The files a board's folder holds, in this order, and the command that writes each (the
# reference run's; scripts/reference_run.sh). Plots and the page are made from default.csv.
DERIVED = {
    "default.html": "pmppbench report default.csv --html default.html",
    ".png": "pmppbench plot default.csv",
}


def _rows(path: Path) -> list[dict]:
    if path.suffix == ".json":
        return json.loads(path.read_text())["results"]
    return list(csv.DictReader(path.open(newline="")))


def _meta(path: Path) -> dict:
    if path.suffix == ".json":
        return json.loads(path.read_text())["meta"]
    return json.loads(Path(f"{path}.meta.json").read_text())


def _num(value) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def _unit(rows: list[dict]) -> tuple[str, str]:
    """The rate column a workload is judged by: GFLOP/s where its roof is cuBLAS, else GB/s."""
    if any(r.get("pct_of") == "cublas" for r in rows):
        return "gflop_per_s", "GFLOP/s"
    return "gb_per_s", "GB/s"


def _shape_key(r: dict) -> str:
    return r["shape"]


# ---- the tables ---------------------------------------------------------------------------

def summary(path: Path) -> list[str]:
    """One row per workload at its largest shape that has a textbook baseline: the baseline,
    the fastest of the workload's own rungs, the library and the roof beside it."""
    rows = [r for r in _rows(path) if r["check"] == "PASS"]
    out = ["| workload | shape | textbook rung | fastest rung | x textbook | library | roof | fastest, % of roof |",
           "|---|---|---|---|---:|---|---|---:|"]
    for workload in dict.fromkeys(r["workload"] for r in rows):
        mine = [r for r in rows if r["workload"] == workload and r.get("speedup_vs")]
        if not mine:
            continue
        col, unit = _unit(mine)
        shapes: dict[str, list[dict]] = {}
        for r in mine:
            shapes.setdefault(_shape_key(r), []).append(r)
        shape, group = max(shapes.items(), key=lambda kv: max(_num(r["bytes"]) or 0 for r in kv[1]))
        rate = {r["variant"]: _num(r[col]) for r in group if _num(r[col])}
        base = group[0]["speedup_vs"]
        roof = group[0].get("pct_of") or ""
        rungs = {v: x for v, x in rate.items() if v not in NOT_A_RUNG and v != roof}
        fastest = max(rungs, key=rungs.get)
        libs = {v: x for v, x in rate.items() if v in LIBRARY and v != roof}
        lib = max(libs, key=libs.get) if libs else ""
        pct = next((_num(r["pct_of_roof"]) for r in group if r["variant"] == fastest), None)
        out.append("| " + " | ".join([
            workload, shape,
            f"`{base}` {_fmt(rate[base])} {unit}" if base in rate else f"`{base}`",
            f"`{fastest}` {_fmt(rungs[fastest])} {unit}",
            f"{rungs[fastest] / rate[base]:.2f}" if base in rate else "",
            f"`{lib}` {_fmt(libs[lib])} {unit}" if lib else "none",
            f"`{roof}` {_fmt(rate[roof])} {unit}" if roof in rate else "none",
            f"{pct:.1f}" if pct is not None and roof in rate else "",
        ]) + " |")
    return out


@lru_cache(maxsize=None)
def _report(path: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "pmppbench", "report", str(path.relative_to(RESULTS))],
                          cwd=RESULTS, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"pmppbench report {path}: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def table(path: Path, workload: str) -> list[str]:
    """`pmppbench report`'s table of one workload (its every column), as README's used to hold."""
    text = _report(path)
    m = re.search(rf"^#### {re.escape(workload)}\n\n(.*?)\n(?:\n|$)", text, re.S | re.M)
    if m is None:
        raise SystemExit(f"{path}: no {workload} rows")
    return m.group(1).rstrip("\n").split("\n")


def pivot(path: Path, workload: str) -> list[str]:
    """One row per shape, one column per variant (in the file's order): each row's rate."""
    rows = [r for r in _rows(path) if r["workload"] == workload]
    if not rows:
        raise SystemExit(f"{path}: no {workload} rows")
    col, unit = _unit(rows)
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    out = ["| shape | " + " | ".join(f"`{v}` {unit}" for v in variants) + " |",
           "|---|" + "---:|" * len(variants)]
    cells: dict[str, dict[str, str]] = {}
    for r in rows:
        x = _num(r[col])
        cells.setdefault(r["shape"], {})[r["variant"]] = (_fmt(x) if x and r["check"] == "PASS" else r["check"])
    for shape, got in cells.items():
        out.append(f"| {shape} | " + " | ".join(got.get(v, "") for v in variants) + " |")
    return out


def ladder(path: Path, workload: str, shape: str) -> list[str]:
    """One workload's rows at one shape, in the table's order: each rung with what it changes
    (the variant's own `about` line), its rate, its % of the roof and its registers."""
    from pmppbench import workloads  # noqa: PLC0415  (the variants' own descriptions)

    w = workloads.get(workload)
    rows = [r for r in _rows(path) if r["workload"] == workload and r["shape"] == shape]
    if not rows:
        raise SystemExit(f"{path}: no {workload} rows at {shape}")
    col, unit = _unit(rows)
    roof = rows[0].get("pct_of") or "roof"
    out = [f"| rung | what it changes | {unit} | % of {'cuBLAS' if roof == 'cublas' else roof} | regs |",
           "|---|---|---:|---:|---:|"]
    for r in rows:
        x, pct = _num(r[col]), _num(r["pct_of_roof"])
        out.append(f"| {r['variant']} | {w.variant(r['variant']).about} | {_fmt(x) if x else r['check']} "
                   f"| {f'{pct:.1f}' if pct is not None else ''} | {r.get('registers') or ''} |")
    return out


def gemm_sizes(path: Path) -> list[str]:
    """The GEMM size table: per shape, `best` (the rule's pick) as % of cuBLAS from the same run,
    beside the earlier rungs (scripts/gemm_best_table.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import gemm_best_table  # noqa: PLC0415  (needs the package: the rule's picks)

    return gemm_best_table.table(path, best_rows=True)


def gemm_shapes(path: Path) -> list[str]:
    """Per shape and precision, `best`'s kernel and time beside cuBLAS's from the same run, its %
    of cuBLAS (the row's pct_of_roof), and the bar it is held to (docs/gemm-shapes.md: FP32 95% where M, N and K are all
    >= 2048, else 85%; the tensor cores 90% and 80%); a miss is in bold."""
    by: dict[tuple, dict] = {}
    for r in _rows(path):
        by.setdefault(_shape_key(r), {})[r["variant"]] = r
    out = ["| shape | precision | best's kernel | best ms | cuBLAS ms | % of cuBLAS | bar |",
           "|---|---|---|---:|---:|---:|---:|"]
    for v in by.values():
        b, c = v.get("best"), v.get("cublas")
        if not b or not c:
            continue
        dims = json.loads(b["dims"]) if isinstance(b["dims"], str) else b["dims"]
        precision = dims.get("precision", "fp32")
        high = min(dims["m"], dims["n"], dims["k"]) >= 2048
        bar = (95 if high else 85) if precision == "fp32" else (90 if high else 80)
        shape = f"{dims['m']} x {dims['n']} x {dims['k']}"
        if b["check"] != "PASS" or c["check"] != "PASS":
            out.append(f"| {shape} | {precision} | {b['check']} | | {c['check']} | | {bar} |")
            continue
        pct = _num(b["pct_of_roof"])  # the run's own % of cuBLAS (its roof row) of the same precision
        mark = "" if pct >= bar else "**"
        kernel = b["kernel"].split(" (")[0]
        out.append(f"| {shape} | {precision} | `{kernel}` | {_num(b['median_ms']):.4f} | {_num(c['median_ms']):.4f} "
                   f"| {mark}{pct:.1f}{mark} | {bar} |")
    return out


KINDS = {"summary": summary, "table": table, "pivot": pivot, "ladder": ladder, "gemm-sizes": gemm_sizes,
         "gemm-shapes": gemm_shapes}


def make(spec: str) -> list[str]:
    words = spec.split()
    if len(words) < 2 or words[1] not in KINDS:
        raise SystemExit(f"results region {spec!r}: expected 'BOARD/FILE KIND [WORKLOAD]' with KIND in {sorted(KINDS)}")
    path = RESULTS / words[0]
    if not path.is_file():
        raise SystemExit(f"results region {spec!r}: no file results/{words[0]}")
    return KINDS[words[1]](path, *words[2:])


def rewrite(text: str) -> str:
    return REGION.sub(lambda m: m.group(1) + "\n".join(make(m.group("spec"))) + "\n" + m.group(4), text)


# ---- each board's README ------------------------------------------------------------------

def _clocks(path: Path) -> str:
    """The SM and memory clocks the board reported, and the range of SM clocks its rows saw."""
    meta = _meta(path)
    seen = []
    for r in _rows(path):
        c = r.get("clocks")
        c = json.loads(c) if isinstance(c, str) and c else (c or {})
        seen += [c[k] for k in ("sm_mhz_min", "sm_mhz_max") if c.get(k)]
    text = f"SM {meta.get('sm_clock_mhz', 0):.0f} MHz, memory {meta.get('mem_clock_mhz', 0):.0f} MHz"
    if seen:
        text += f" (rows ran at SM {min(seen):.0f}-{max(seen):.0f} MHz)"
    return text


def board_readme(folder: Path) -> str:
    sources = sorted(p for p in folder.iterdir() if p.suffix == ".json" and not p.name.endswith(".meta.json")
                     or p.suffix == ".csv")
    sources.sort(key=lambda p: (p.name != "default.csv", p.name))
    first = _meta(sources[0])
    lines = [f"# {first.get('name', folder.name)}", "",
             f"Result files from the last runs of pmppbench on this board ({folder.name}). Generated by "
             "`python scripts/results_tables.py` from each file's meta.json; do not edit by hand. "
             "`scripts/reference_run.sh` writes them all.", "",
             "| file | command | commit | driver | date | clocks | wall |", "|---|---|---|---|---|---|---:|"]
    for p in sources:
        meta = _meta(p)
        command = re.sub(r" --out \S+", f" --out {p.name}", meta.get("command", "")).replace(" --force", "")
        wall = meta.get("wall_s", {}).get("wall") if isinstance(meta.get("wall_s"), dict) else None
        lines.append("| " + " | ".join([
            f"`{p.name}`" + (" (+ `.meta.json`)" if p.suffix == ".csv" else ""),
            f"`{command}`",
            meta.get("git_revision") or "not recorded",
            f"{meta.get('nvidia_driver', '?')} (CUDA {meta.get('driver', '?')})",
            meta.get("timestamp", "?")[:10],
            _clocks(p),
            f"{wall:.0f} s" if wall else "",
        ]) + " |")
    derived = sorted(p.name for p in folder.iterdir() if p.suffix in (".html", ".png"))
    if derived:
        lines += ["", "Made from `default.csv` (no GPU needed): "
                  + ", ".join(f"`{n}`" for n in derived if n.endswith(".html")) + " by `"
                  + DERIVED["default.html"] + "`; " + ", ".join(f"`{n}`" for n in derived if n.endswith(".png"))
                  + " by `" + DERIVED[".png"] + "`."]
    return "\n".join(lines) + "\n"


# ---- the whole tree -----------------------------------------------------------------------

def boards() -> list[Path]:
    return sorted(p for p in RESULTS.iterdir() if p.is_dir())


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def expected() -> dict[Path, str]:
    """Every generated file's text as it should be now."""
    out = {b / "README.md": board_readme(b) for b in boards()}
    for doc in documents():
        text = doc.read_text()
        if REGION.search(text):
            out[doc] = rewrite(text)
    return out


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for path, text in expected().items():
        if not path.exists() or path.read_text() != text:
            stale.append(path.relative_to(ROOT))
            if not check:
                path.write_text(text)
    if check and stale:
        print("stale: " + ", ".join(map(str, stale)) + " (run python scripts/results_tables.py)", file=sys.stderr)
        return 1
    for path in stale:
        print(f"updated {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
