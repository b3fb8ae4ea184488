"""The GEMM size table from a sweep CSV (studies/gemm_best_sweep.py): per shape, the
configuration `choose` names for it and that configuration's row of the sweep -- measured in
the same run as cuBLAS, tuned and the earlier rungs of the same shape -- as % of cuBLAS.
The last column is the sweep's own `best` row, i.e. what the rule of the sweep's commit
chose (for a rule written after the sweep it can differ from the pick).

    python3 scripts/gemm_best_table.py tests/data/gemm-best-sweep.csv

With --best the CSV is a run of the `best` variant under this rule (`pmppbench all --config
gemm_sizes`, results/<board>/gemm-sizes.csv): its `best` rows are the picks' numbers.

    python3 scripts/gemm_best_table.py --best results/h200/gemm-sizes.csv

Prints Markdown; scripts/results_tables.py writes docs/gemm.md's size table with it. Reads
the CSV only: no GPU.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pmppbench.workloads.gemm.best import CHOICES, choose  # noqa: E402

# The targets `best` was built to (as % of cuBLAS); other shapes have none.
TARGETS = {(512, 512, 512): 75, (1024, 1024, 1024): 85, (2048, 2048, 2048): 90, (4096, 4096, 4096): 90,
           (8192, 8192, 8192): 90, (4096, 4096, 1024): 90, (1024, 8192, 4096): 90, (4096, 1024, 8192): 90}
RUNGS = ("regtile2x2", "regtile4x4", "double_buffer", "tuned")


def rows_by_shape(path: Path) -> dict[tuple[int, int, int], dict[str, dict]]:
    out: dict = {}
    for r in csv.DictReader(open(path, newline="")):
        m, n, k = (int(x) for x in r["shape"].split("x"))
        out.setdefault((m, n, k), {})[r["variant"]] = r
    return out


def pct(r: dict | None) -> float | None:
    return float(r["pct_of_roof"]) if r and r.get("pct_of_roof") and r["check"] == "PASS" else None


def table(path: Path, sms: int = 132, best_rows: bool = False) -> list[str]:
    names = {cfg.name: key for key, cfg in CHOICES.items()}
    last = "" if best_rows else " `best` row of the sweep |"
    lines = ["| shape | cuBLAS µs | best: rule's pick | best % of cuBLAS | target | best earlier rung (% of cuBLAS) "
             "| speed-up over tuned |" + last,
             "|---|---:|---|---:|---:|---|---:|" + ("" if best_rows else "---:|")]
    for shape, rows in rows_by_shape(path).items():
        cfg = choose(*shape, sms)
        picked = rows.get("best") if best_rows else rows.get(cfg.name)
        cub = rows["cublas"]
        rung = max((r for r in RUNGS if pct(rows.get(r)) is not None), key=lambda r: pct(rows[r]))
        p = pct(picked)
        target = TARGETS.get(shape)
        if p is None:
            lines.append(f"| {shape[0]}x{shape[1]}x{shape[2]} | {float(cub['median_ms']) * 1e3:,.1f} "
                         f"| {names[cfg.name]} (`{cfg.name}`): not timed in this sweep | | | | | |")
            continue
        ratio = float(rows["tuned"]["median_ms"]) / float(picked["median_ms"]) if picked else None
        short = target is not None and p < target
        shown = f"{p:.2f}" if target else f"{p:.1f}"
        lines.append(
            f"| {shape[0]}x{shape[1]}x{shape[2]} | {float(cub['median_ms']) * 1e3:,.1f} | {names[cfg.name]} "
            f"(`{cfg.name}`) | {'**' if short else ''}{shown}{'**' if short else ''} "
            f"| {f'≥ {target}' if target else '—'} | {rung} ({pct(rows[rung]):.1f}) | {ratio:.2f}x |"
            + ("" if best_rows else f" {pct(rows.get('best')):.1f} |"))
    return lines


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("csv", type=Path)
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--best", action="store_true", help="the CSV's `best` rows ran this rule: they are the picks")
    args = ap.parse_args()
    print("\n".join(table(args.csv, args.sms, args.best)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
