"""Plots from synthetic result rows: the files exist, are PNGs and not empty; what goes on
the roofline; the messages for a file with nothing to plot and for a missing matplotlib."""

from __future__ import annotations

import sys

import pytest

from pmppbench.errors import EnvironmentProblem, UsageError
from pmppbench.results.plot import MATPLOTLIB_HINT, plot_results, roofline_points, largest_shapes
from pmppbench.results.export.files import save as write_results
from pmppbench.results.resultfile import load as read_results
from pmppbench.row import Result
from pmppbench.measure.roofline import Ceilings, ceilings_meta

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _row(workload, variant, shape, median_ms, nbytes, flops, **kw):
    seconds = median_ms / 1e3
    return Result(workload, variant, shape, check="PASS", median_ms=median_ms, min_ms=0.98 * median_ms,
                  max_ms=1.02 * median_ms, bytes=nbytes, flops=flops, gb_per_s=nbytes / seconds / 1e9,
                  gflop_per_s=flops / seconds / 1e9 if flops else None, device="Test GPU",
                  intensity_flop_per_byte=flops / nbytes if flops else None, **kw)


def rows():
    out = []
    for n in (1 << 20, 1 << 26):
        for variant, ms in (("scalar", 1.0), ("float4", 0.9), ("grid_stride", 0.95)):
            out.append(_row("vecadd", variant, str(n), ms * n / (1 << 26), 12 * n, n))
    for variant, ms in (("copy", 0.05), ("naive", 0.12), ("padded33", 0.06)):
        out.append(_row("transpose", variant, "4096x4096", ms, 8 * 4096 * 4096, 0))
    m = 1024
    for variant, ms, traffic in (("naive", 0.5, 8 * m**3), ("tiled32", 0.3, 8 * m**3 // 32), ("cublas", 0.05, 12 * m * m)):
        out.append(_row("gemm", variant, f"{m}x{m}x{m}", ms, traffic, 2 * m**3))
    out.append(_row("stream", "3 streams", "1048576x3", 2.0, 8 * 3 << 20, 10**9, timer="host"))
    out.append(Result("gemm", "broken", f"{m}x{m}x{m}", check="FAIL", check_detail="wrong"))
    return out


META = {"name": "Test GPU", "peak_bandwidth_gbs": 3350.0, "peak_fp32_gflops": 66900.0,
        "ceilings": ceilings_meta([Ceilings("theoretical", 3350.0, 66900.0),
                                   Ceilings("measured", 3000.0, 51000.0)])}


def _assert_png(path):
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 10_000, f"{path} is not a real chart"


def test_every_chart_is_written_as_a_non_empty_png(tmp_path):
    paths = plot_results(rows(), META, tmp_path / "plots")
    names = sorted(p.name for p in paths)
    assert names == ["gemm.png", "roofline.png", "stream.png", "transpose.png", "vecadd.png"]
    for p in paths:
        assert p.parent == tmp_path / "plots"
        _assert_png(p)


def test_plots_from_a_result_file_read_back(tmp_path):
    src = tmp_path / "results.csv"
    write_results(src, rows(), META)  # the ceilings travel in results.csv.meta.json
    back, meta = read_results(src)
    assert meta["ceilings"]["measured"]["bandwidth_gbs"] == 3000.0
    paths = plot_results(back, meta, tmp_path)
    assert tmp_path / "roofline.png" in paths
    for p in paths:
        _assert_png(p)


def test_a_file_without_ceilings_still_gets_a_roofline(tmp_path):
    paths = plot_results(rows(), {}, tmp_path)
    _assert_png(tmp_path / "roofline.png")
    assert tmp_path / "roofline.png" in paths


def test_the_roofline_holds_timed_passing_rows_with_flops_and_bytes():
    points = roofline_points(rows())
    labels = {(w, label) for w, label, _, _ in points}
    # only the largest shape of each workload is labelled, with the variant's name
    assert ("vecadd", "scalar") in labels and ("gemm", "cublas") in labels and ("vecadd", "") in labels
    assert largest_shapes(rows())["vecadd"] == "67108864"
    assert not any(w == "transpose" for w, *_ in points)  # AI = 0 has no place on a log axis
    assert not any(w == "stream" for w, *_ in points)  # host-timed: includes PCIe transfers
    assert not any("broken" in label for _, label, *_ in points)  # failed its check
    vec = next(p for p in points if p[1] == "scalar" and p[2] == pytest.approx(1 / 12) and p[3] > 60)
    assert vec[2] == pytest.approx(1 / 12)
    assert vec[3] == pytest.approx((1 << 26) / 1e-3 / 1e9)


def test_a_check_only_file_has_nothing_to_plot(tmp_path):
    untimed = [Result("vecadd", "scalar", "1", check="PASS")]
    with pytest.raises(UsageError, match="nothing to plot"):
        plot_results(untimed, META, tmp_path)
    assert not list(tmp_path.iterdir())


def test_missing_matplotlib_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)
    with pytest.raises(EnvironmentProblem) as info:
        plot_results(rows(), META, tmp_path / "plots")
    assert str(info.value) == MATPLOTLIB_HINT
    assert "pip install 'pmppbench[plot]'" in str(info.value) and info.value.exit_code == 3
    assert not (tmp_path / "plots").exists()
