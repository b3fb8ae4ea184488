"""Exports: CSV / JSON / Markdown written and read back, the streaming CSV sink."""

from __future__ import annotations


import pytest

from pmppbench.errors import UsageError
from pmppbench.results.derive import fill_relative
from pmppbench.results.export.markdown import table as markdown_table
from pmppbench.results.export.files import open_sink, save as write_results
from pmppbench.results.resultfile import load as read_results
from pmppbench.row import Result


def rows():
    a = Result("transpose", "naive", "64x64", dims={"m": 64, "n": 64}, check="PASS", median_ms=2.0,
               min_ms=1.9, max_ms=2.1, spread_pct=10.0, batch_means_ms=[2.0, 1.9, 2.1], bytes=32768,
               gb_per_s=0.016, registers=12, static_smem_bytes=0, dynamic_smem_bytes=0, local_bytes=0)
    b = Result("transpose", "padded33", "64x64", dims={"m": 64, "n": 64}, check="PASS", median_ms=1.0,
               min_ms=0.9, max_ms=1.1, spread_pct=20.0, batch_means_ms=[1.0, 0.9, 1.1], bytes=32768,
               gb_per_s=0.032, registers=16, static_smem_bytes=4224, dynamic_smem_bytes=0, local_bytes=0)
    c = Result("transpose", "copy", "64x64", check="FAIL", check_detail="1 of 4096 elements wrong; first at index 3")
    return [a, b, c]


def test_fill_relative_speedup_and_pct_of_roof():
    r = rows()
    r[2].check, r[2].median_ms, r[2].gb_per_s = "PASS", 0.5, 0.064
    fill_relative(r, baseline="naive", roof="copy", rate="GB/s")
    assert r[1].speedup == pytest.approx(2.0) and r[1].speedup_vs == "naive"
    assert r[1].pct_of_roof == pytest.approx(50.0) and r[1].pct_of == "copy"


@pytest.mark.parametrize("ext", [".csv", ".json"])
def test_round_trip(tmp_path, ext):
    path = tmp_path / f"r{ext}"
    write_results(path, rows(), {"name": "Test GPU", "driver": "13.0"})
    back, meta = read_results(path)
    assert meta["name"] == "Test GPU"
    assert [r.variant for r in back] == ["naive", "padded33", "copy"]
    assert back[0].batch_means_ms == [2.0, 1.9, 2.1] and back[0].dims == {"m": 64, "n": 64}
    assert back[1].median_ms == 1.0 and back[2].median_ms is None and back[2].check == "FAIL"


def test_markdown_has_units_and_the_failure(tmp_path):
    path = tmp_path / "r.md"
    write_results(path, rows(), {"name": "Test GPU"})
    text = path.read_text()
    assert "| variant | shape | check | median_ms |" in text and "GB/s" in text
    assert "first at index 3" in text
    assert "Test GPU" in text


def test_csv_sink_keeps_rows_written_before_a_crash(tmp_path):
    path = tmp_path / "long.csv"
    sink = open_sink(path, {"name": "x"})
    sink.add(rows()[0])
    # no close(): the process "dies" here
    back, _ = read_results(path)
    assert [r.variant for r in back] == ["naive"]
    sink.close()


def test_unknown_extension_and_missing_file(tmp_path):
    with pytest.raises(UsageError, match="unknown file type"):
        write_results(tmp_path / "r.txt", rows(), {})
    with pytest.raises(UsageError, match="no such result file"):
        read_results(tmp_path / "missing.csv")


def test_markdown_table_columns():
    text = markdown_table(rows()[:2])
    assert text.splitlines()[0].startswith("| variant | shape | check | median_ms | spread_% | GB/s")


def test_report_replaces_the_readme_section(tmp_path, run_cli):
    results = tmp_path / "r.csv"
    write_results(results, rows(), {"name": "Test GPU", "driver": "13.0", "timestamp": "2026-11-30"})
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- results:begin -->\nold numbers\n<!-- results:end -->\noutro\n")
    code, _, err = run_cli("report", str(results), "--readme", str(readme))
    assert code == 0, err
    text = readme.read_text()
    assert "old numbers" not in text and "Test GPU" in text and "#### transpose" in text
    assert text.startswith("intro\n") and text.endswith("outro\n")


def test_report_needs_the_markers(tmp_path, run_cli):
    results = tmp_path / "r.csv"
    write_results(results, rows(), {})
    readme = tmp_path / "README.md"
    readme.write_text("no markers here\n")
    code, _, err = run_cli("report", str(results), "--readme", str(readme))
    assert code == 2 and "results:begin" in err
