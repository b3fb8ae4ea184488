"""Each exporter against its exact expected text (golden output)."""

from __future__ import annotations

import json

import pytest

from rich.console import Console

from pmppbench.results.export import csv as csv_export
from pmppbench.results.export import json as json_export
from pmppbench.results.export import markdown, terminal
from pmppbench.results.resultfile import FORMAT_VERSION
from pmppbench.row import Result


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
                    'False,,,32768,,1234.5,,,,memory-bound,25.6,,naive,1.0,,,{},,12,0,0,0,,,{},,,,,,,,,,,,,,,,,,,{},[],,,,,,,,')


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


# ---- the exporters behind one interface, several --out files at once --------------------------

def test_every_format_is_an_exporter_chosen_by_its_extension(tmp_path):
    from pmppbench.results.export import files, html

    assert list(files.EXPORTERS) == ["csv", "json", "md", "html"]
    meta = {"name": "Test GPU"}
    for suffix, exporter in files.EXPORTERS.items():
        assert files.exporter_for(tmp_path / f"r.{suffix.upper()}") is exporter
        path = tmp_path / f"r.{suffix}"
        files.save(path, rows(), meta)
        assert path.read_text() == exporter.document(rows(), meta)
    assert files.EXPORTERS["html"].document is html.document
    assert files.EXPORTERS["md"].document(rows(), meta) == markdown.document(rows(), meta)
    assert (tmp_path / "r.csv.meta.json").is_file() and not (tmp_path / "r.json.meta.json").exists()


def test_every_sink_holds_the_rows_so_far(tmp_path):
    from pmppbench.results.export import files
    from pmppbench.results.resultfile import load

    paths = [tmp_path / f"r.{s}" for s in ("csv", "json", "md", "html")]
    sinks = files.open_sinks(paths, {"name": "Test GPU"})
    sinks_rows = rows()
    for s in sinks:
        s.add(sinks_rows[0])
    # no close(): the run "dies" here; every file already has the finished row
    for p in paths[:2]:
        assert [r.variant for r in load(p)[0]] == ["naive"]
    assert "| naive | 64x64 | PASS |" in paths[2].read_text()
    assert "<td>naive</td><td>64x64</td>" in paths[3].read_text()
    for s in sinks:
        s.close({"name": "Test GPU", "wall_s": {"wall": 1.0}})
    assert load(paths[0])[1]["wall_s"] == {"wall": 1.0}


@pytest.fixture
def fake_run(monkeypatch):
    """`all` on the CPU: a fake device whose runner passes every variant."""
    from pmppbench.hardware import device, inventory
    from pmppbench.engine.driver.supervisor import Supervisor
    from pmppbench.engine.worker import pipeline
    from pmppbench.engine.worker.process import run_step
    from pmppbench.hardware.device import DeviceInfo

    fake = DeviceInfo("Fake GPU", "9.0", "sm_90", 132, 1980, 3201, 6144, 2**37, 60 << 20, 233472, 49152,
                      232448, 65536, 2048, 32, 1024, 32, "13.0", "13.0", "14.2.0")
    monkeypatch.setattr(device, "current", lambda: fake)
    monkeypatch.setattr(pipeline, "run_shape", lambda w, s, **kw: [
        Result(w.name, v.name, w.label(s), check="PASS", median_ms=1.0, run_id=kw.get("run_id", ""))
        for v in (kw.get("variants") or w.variants_for(s))])
    monkeypatch.setattr(inventory, "visible", lambda: [inventory.DeviceId(0, "Fake GPU", "GPU-0000", "0000:01:00.0")])
    monkeypatch.setattr(Supervisor, "run", lambda self, step, progress=None: run_step(step))


def test_out_given_several_times(tmp_path, run_cli, fake_run):
    from pmppbench.results.resultfile import load

    cfg = tmp_path / "c.toml"
    cfg.write_text("[vecadd]\nshapes = [[1000]]\n")
    outs = [tmp_path / "r.csv", tmp_path / "r.json", tmp_path / "r.html"]
    code, stdout, err = run_cli("all", "--config", str(cfg), *[a for p in outs for a in ("--out", str(p))], "--quiet")
    assert code == 0, err
    assert f"3 rows, 3 PASS; written to {outs[0]}, {outs[1]}, {outs[2]}" in stdout
    assert [r.variant for r in load(outs[0])[0]] == [r.variant for r in load(outs[1])[0]] == \
        ["scalar", "float4", "grid_stride"]
    page = outs[2].read_text()
    assert page.count('<td class="PASS">PASS</td>') == 3
    # a workload command takes the same --out list
    more = [tmp_path / "v.md", tmp_path / "v.html"]
    code, stdout, err = run_cli("vecadd", "1000", *[a for p in more for a in ("--out", str(p))], "--quiet")
    assert code == 0, err
    assert "| scalar | 1000 | PASS |" in more[0].read_text() and more[1].read_text().count('<td class="PASS">') == 3


def test_out_refusals_touch_nothing(tmp_path, run_cli, fake_run):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[vecadd]\nshapes = [[1000]]\n")
    csv_out, html_out = tmp_path / "r.csv", tmp_path / "r.html"
    html_out.write_text("precious")
    code, _, err = run_cli("all", "--config", str(cfg), "--out", str(csv_out), "--out", str(html_out))
    assert code == 2 and err.strip() == (f"pmppbench: --out {html_out} exists; pass --force to overwrite it or "
                                         "choose another --out")
    assert html_out.read_text() == "precious" and not csv_out.exists()
    code, _, err = run_cli("all", "--config", str(cfg), "--out", str(csv_out), "--out", str(csv_out))
    assert code == 2 and err.strip() == f"pmppbench: --out {csv_out}: given twice (as {csv_out}); give each --out file once"
    code, _, err = run_cli("all", "--config", str(cfg), "--out", str(tmp_path / "r.xlsx"))
    assert code == 2 and err.strip() == (f"pmppbench: --out {tmp_path / 'r.xlsx'}: unknown file type .xlsx; "
                                         "use .csv, .json, .md, .html")
