"""README's workload tables follow the declarations: the generated ones are what
pmppbench.workloads.tables makes now, and the hand-written ones name only declared
workloads and variants (a renamed or removed variant fails here until README follows)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pmppbench import workloads
from pmppbench.workloads import tables

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def _rows(header: str) -> list[list[str]]:
    """The body rows of README's table whose header line is `header`, as cells."""
    lines = README.split("\n")
    start = lines.index(header) + 2
    out = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        out.append([c.strip() for c in line.strip("|").split("|")])
    return out


@pytest.mark.parametrize("name", tables.TABLES)
def test_generated_tables_are_what_the_declarations_make(name):
    assert tables.region(README, name) == tables.TABLES[name](), \
        f"README's {name} table is stale: run python -m pmppbench.workloads.tables README.md"


def test_the_commands_table_has_every_shipped_workload_in_order():
    rows = tables.commands_table()[2:]
    assert [re.match(r"\| `pmppbench (\w+)", r).group(1) for r in rows] == workloads.builtin_names()
    assert "`pmppbench gemm [M] [N] [K] [REPS] [--precision PRECISION,...]`" in rows[2] and "`best`, `cublas`" in rows[2]
    assert "[--radius RADIUS,...]" in rows[3] and "RADIUS = 32" in rows[3]


def test_rewrite_replaces_only_the_marked_regions():
    text = "intro\n<!-- generated: workload commands -->\nold\n<!-- end: workload commands -->\n" \
           "mid\n<!-- generated: protocols -->\n<!-- end: protocols -->\n" \
           "<!-- generated: your own kernel -->\n<!-- end: your own kernel -->\nend\n"
    out = tables.rewrite(text)
    assert out.startswith("intro\n<!-- generated: workload commands -->\n| command |") and "old" not in out
    assert "\nmid\n" in out and out.endswith("<!-- end: your own kernel -->\nend\n")
    assert tables.region(out, "your own kernel") == tables.likes_table()
    assert tables.region(out, "protocols") == tables.protocol_table()
    with pytest.raises(SystemExit, match="no region 'protocols'"):
        tables.rewrite("<!-- generated: workload commands -->\n<!-- end: workload commands -->\n")


def test_the_gemm_ladder_table_names_the_ladder_in_order():
    rows = _rows("| rung | what it changes | GFLOP/s | % of cuBLAS | regs |")
    named = [n.strip("*") for r in rows for n in r[0].split(" / ")]
    w = workloads.get("gemm")
    ladder = [v.name for v in w.variants_for(w.default_shape())]
    assert sorted(named) == sorted(ladder)  # every rung once; README groups tiled16 / tiled32 and reorders
