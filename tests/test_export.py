"""Each exporter against its exact expected text (golden output)."""

from __future__ import annotations

import json

from rich.console import Console

from pmppbench.export import csv as csv_export
from pmppbench.export import json as json_export
from pmppbench.export import markdown, terminal
from pmppbench.resultfile import FORMAT_VERSION
from pmppbench.results import Result


def rows():
    naive = Result("transpose", "naive", "64x64", dims={"m": 64, "n": 64}, check="PASS", median_ms=2.0, min_ms=1.9,
                   max_ms=2.1, spread_pct=10.0, batch_means_ms=[2.0, 1.9, 2.1], bytes=32768, gb_per_s=1234.5,
                   speedup_vs="naive", speedup=1.0, bound="memory-bound", sol_pct_theoretical=25.6,
                   registers=12, static_smem_bytes=0, dynamic_smem_bytes=0, local_bytes=0)
    copy = Result("transpose", "copy", "64x64", dims={"m": 64, "n": 64}, check="FAIL",
                  check_detail="1 of 4096 elements wrong; first at index 3")
    return [naive, copy]


MARKDOWN = """\
| variant | shape | check | median_ms | spread_% | GB/s | x vs naive | bound | SoL_peak_% | regs | smem_B | local_B | detail |
|---|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|
| naive | 64x64 | PASS | 2.0000 | 10.0 | 1,234 | 1.00 | memory | 25.6 | 12 | 0 | 0 |  |
| copy | 64x64 | FAIL |  |  |  |  |  |  |  |  |  | 1 of 4096 elements wrong; first at index 3 |
"""


def test_markdown_table_exact():
    assert markdown.table(rows()) == MARKDOWN


def test_markdown_sol_column_names_the_measured_ceiling():
    r = rows()
    r[0].sol_pct_measured = 30.1
    header = markdown.table(r).splitlines()[0]
    assert "SoL_measured_%" in header and "SoL_peak_%" not in header


def test_results_section_exact():
    meta = {"name": "Test GPU", "driver": "13.0", "nvrtc": "13.2", "timestamp": "2026-12-01T00:00:00+00:00"}
    text = markdown.results_section(rows(), meta, source="r.csv")
    assert text == ("Measured on **Test GPU** (CUDA driver API 13.0, NVRTC 13.2) at 2026-12-01T00:00:00+00:00, "
                    "from `r.csv`.\n\nLargest batch spread of calls >= 100 us: 10.00% (transpose naive 64x64).\n\n"
                    "#### transpose\n\n" + MARKDOWN)


def test_readme_section_replacement():
    doc = "intro\n<!-- results:begin -->\nold\n<!-- results:end -->\noutro\n"
    assert markdown.replace_section(doc, "new\n") == "intro\n<!-- results:begin -->\nnew\n<!-- results:end -->\noutro\n"
    assert markdown.replace_section("no markers", "new") is None


def test_csv_exact():
    text = csv_export.dumps(rows()[:1])
    header, line = text.splitlines()
    assert header.startswith("format_version,workload,variant,shape,dims,check,max_abs_err,")
    assert line == ('2,transpose,naive,64x64,"{""m"": 64, ""n"": 64}",PASS,,,,,2.0,1.9,2.1,10.0,"[2.0, 1.9, 2.1]",,,,,'
                    'False,32768,,1234.5,,,,memory-bound,25.6,,naive,1.0,,,{},,12,0,0,0,,,{},,,,,,,,,,,,,,,{},[],,,,,,,,')


def test_json_exact():
    doc = json.loads(json_export.dumps(rows()[:1], {"name": "Test GPU"}))
    assert doc["format_version"] == FORMAT_VERSION and doc["meta"] == {"name": "Test GPU"}
    assert doc["results"][0]["batch_means_ms"] == [2.0, 1.9, 2.1] and doc["results"][0]["dims"] == {"m": 64, "n": 64}


TERMINAL = """\
┏━━━━━━━━━┳━━━━━━━┳━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━┳━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
┃ variant ┃ shape ┃ check ┃ median_ms ┃ spread_% ┃  GB/s ┃ x vs naive ┃ bound  ┃ SoL_peak_% ┃ regs ┃ smem_B ┃ local_B ┃ detail                                     ┃
┡━━━━━━━━━╇━━━━━━━╇━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━╇━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩
│ naive   │ 64x64 │ PASS  │    2.0000 │     10.0 │ 1,234 │       1.00 │ memory │       25.6 │   12 │      0 │       0 │                                            │
│ copy    │ 64x64 │ FAIL  │           │          │       │            │        │            │      │        │         │ 1 of 4096 elements wrong; first at index 3 │
└─────────┴───────┴───────┴───────────┴──────────┴───────┴────────────┴────────┴────────────┴──────┴────────┴─────────┴────────────────────────────────────────────┘
"""


def test_terminal_table_exact():
    console = Console(width=200, record=True, color_system=None)
    terminal.print_table(console, rows(), title="T")
    title, *table = [line.rstrip() for line in console.export_text().splitlines()]
    assert title.strip() == "T" and "\n".join(table) + "\n" == TERMINAL
