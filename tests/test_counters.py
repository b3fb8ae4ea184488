"""--counters: reading Nsight Compute's CSV, matching kernels to variants, the ratio columns
beside the model, the one line when counters cannot be read, the exports; on the GPU, the
bank conflicts of the transpose's shared32 and padded33 as the hardware counts them."""

from __future__ import annotations

import json
import shutil

import pytest

from pmppbench.engine.worker import counters as k
from pmppbench.results.export import markdown
from pmppbench.results.export.columns import counter_columns_for
from pmppbench.engine.plan import Step
from pmppbench.measure.protocol import Protocol
from pmppbench.row import Result

HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
          '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')


def details_csv(kernels: list[tuple[str, dict[str, str]]]) -> str:
    """ncu --csv --page details text for (kernel name, {metric: printed value}) in launch order."""
    lines = ["==PROF== Connected to process 4242 (python3)", "==PROF== Profiling \"range\": 0%....100% - 5 passes",
             HEADER]
    for i, (name, metrics) in enumerate(kernels):
        for metric, value in metrics.items():
            unit = "byte" if "bytes" in metric else "%" if "pct" in metric else ""
            lines.append(f'"{i}","4242","python3","127.0.0.1","{name}","1","7","(32, 32, 1)","(128, 128, 1)","0","9.0",'
                         f'"Command line profiler metrics","{metric}","{unit}","{value}"')
    lines.append("==PROF== Disconnected from process 4242")
    return "\n".join(lines) + "\n"


SHARED32 = {k.DRAM_READ: "67,108,864", k.DRAM_WRITE: "50,331,648", k.L2_HIT: "33.5", k.L1_HIT: "0",
            k.SMEM_LD_REQ: "524,288", k.SMEM_LD_WF: "16,777,216", k.SMEM_LD_CONFLICTS: "16,252,928",
            k.SMEM_ST_REQ: "524,288", k.SMEM_ST_WF: "524,288", k.SMEM_ST_CONFLICTS: "0",
            k.GLOBAL_LD: "67,108,864", k.GLOBAL_ST: "67,108,864", k.OCCUPANCY: "91.5", k.OCCUPANCY_LIMIT: "100",
            k.DURATION: "40000"}


# ---- reading ncu ------------------------------------------------------------------------------

def test_numbers_as_ncu_prints_them():
    assert k.number("67,108,864") == 67108864.0
    assert k.number(" 91.47 ") == 91.47
    assert k.number("n/a") is None and k.number("") is None and k.number("abc") is None


def test_details_csv_becomes_one_record_per_kernel_in_launch_order():
    text = details_csv([("pmpp:shared32", SHARED32), ("pmpp:padded33", {k.SMEM_LD_WF: "1,048,576"})])
    kernels = k.parse_csv(text)
    assert [x["id"] for x in kernels] == [0, 1]
    assert kernels[0]["name"] == "pmpp:shared32" and kernels[0][k.DRAM_READ] == 67108864.0
    assert kernels[0][k.SMEM_LD_WF] / kernels[0][k.SMEM_LD_REQ] == 32.0
    assert kernels[1] == {"id": 1, "name": "pmpp:padded33", k.SMEM_LD_WF: 1048576.0}


def test_a_real_ncu_log_of_the_transpose_reads_as_the_hardware_counted():
    """tests/data/ncu_transpose_4096.csv: ncu 2025.3.1's log of shared32 and padded33 at 4096^2
    on the H200 (its NVTX columns, thousands separators and kernel names renamed by range)."""
    from pathlib import Path

    kernels = k.parse_csv((Path(__file__).parent / "data" / "ncu_transpose_4096.csv").read_text())
    assert [x["name"].split("/")[0] for x in kernels] == ["pmpp:shared32", "pmpp:padded33"]
    grouped = k.group(kernels, [])
    rows = {}
    for v in ("shared32", "padded33"):
        rows[v] = counted(k.combine(grouped[v]), occupancy_theoretical_pct=100.0)
        assert rows[v].counters[k.SMEM_LD_REQ] == 524288  # 4096^2 / 32 lanes: one load per thread
        assert rows[v].dram_read_bytes == pytest.approx(4 * 4096 * 4096, rel=0.001)  # A, once
        assert rows[v].requested_vs_model == 1.0
    assert rows["shared32"].smem_ld_wavefronts_per_request == pytest.approx(32.13, abs=0.01)
    assert rows["padded33"].smem_ld_wavefronts_per_request == pytest.approx(1.05, abs=0.01)


def test_no_table_in_the_log_is_no_kernels():
    assert k.parse_csv("==PROF== Connected\n==WARNING== No kernels were profiled.\n") == []


def test_kernels_go_to_the_variant_named_by_their_nvtx_range():
    kernels = [{"id": 0, "name": "pmpp:naive"}, {"id": 1, "name": "pmpp:cublas"}, {"id": 2, "name": "pmpp:cublas"},
               {"id": 3, "name": "something_else"}]
    grouped = k.group(kernels, [])
    assert {v: [x["id"] for x in ks] for v, ks in grouped.items()} == {"naive": [0], "cublas": [1, 2]}


def test_without_nvtx_names_launch_order_is_used_only_when_it_is_unambiguous():
    kernels = [{"id": 0, "name": "copy"}, {"id": 1, "name": "naive"}]
    one_each = [{"variant": "copy", "launches": 1}, {"variant": "naive", "launches": 1}]
    assert {v: ks[0]["id"] for v, ks in k.group(kernels, one_each).items()} == {"copy": 0, "naive": 1}
    assert k.group(kernels, [{"variant": "copy", "launches": 1}, {"variant": "lib", "launches": None}]) == {}
    assert k.group(kernels, one_each[:1]) == {}  # a count that does not match: no guess


def test_a_variants_kernels_are_summed_and_its_percentages_weighted_by_time():
    a = {k.DRAM_READ: 100.0, k.L2_HIT: 50.0, k.OCCUPANCY: 90.0, k.DURATION: 3.0}
    b = {k.DRAM_READ: 20.0, k.L2_HIT: 10.0, k.OCCUPANCY: 30.0, k.DURATION: 1.0}
    c = k.combine([a, b])
    assert c[k.KERNELS] == 2 and c[k.DRAM_READ] == 120.0 and c[k.DURATION] == 4.0
    assert c[k.L2_HIT] == pytest.approx(40.0) and c[k.OCCUPANCY] == pytest.approx(75.0)
    assert k.DRAM_WRITE not in c  # not counted: left out, never a zero
    assert k.combine([{k.L1_HIT: None, k.DURATION: 1.0}]) == {k.KERNELS: 1.0, k.DURATION: 1.0}


def test_refused_counters_and_ncu_errors_are_one_line_with_the_fix():
    log = ("==PROF== Connected to process 7\n==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to "
           "access NVIDIA GPU Performance Counters on the target device 0.\n")
    assert k.problem(log, 1) == k.NO_PERMISSION
    assert "NVreg_RestrictProfilingToAdminUsers=0" in k.NO_PERMISSION and "\n" not in k.NO_PERMISSION
    why = k.problem("==ERROR== Failed to find metric sm__nonsense.sum\n", 1)
    assert why.startswith("--counters: ncu failed: Failed to find metric sm__nonsense.sum")
    assert k.problem("", 3) == "--counters: ncu exited with code 3; the run went on without counters"
    assert k.problem("==PROF== Disconnected\n", 0) is None


def test_the_profiler_command_never_changes_clocks_and_profiles_only_the_marked_runs(tmp_path):
    cmd = k.ncu_command("/usr/bin/ncu", tmp_path / "log.csv", tmp_path / "spec.pkl", tmp_path / "manifest.json")
    pairs = dict(zip(cmd, cmd[1:]))
    assert pairs["--clock-control"] == "none" and pairs["--cache-control"] == "all"
    assert pairs["--profile-from-start"] == "off" and pairs["--print-nvtx-rename"] == "kernel"
    assert pairs["--print-units"] == "base" and pairs["--metrics"].split(",") == list(k.METRICS)
    assert cmd[-4:] == ["-m", "pmppbench.engine.worker.counters", str(tmp_path / "spec.pkl"), str(tmp_path / "manifest.json")]


# ---- beside the model -----------------------------------------------------------------------

def counted(raw, **kw) -> Result:
    row = Result("transpose", "shared32", "4096x4096", check="PASS", bytes=8 * 4096 * 4096, counters=dict(raw), **kw)
    k.fill_counters(row)
    return row


def test_ratio_columns_put_each_counter_beside_its_model():
    raw = {name: k.number(v) for name, v in SHARED32.items()}
    row = counted(raw, occupancy_theoretical_pct=100.0)
    assert row.dram_read_bytes == 67108864 and row.dram_write_bytes == 50331648
    assert row.dram_vs_model == pytest.approx((67108864 + 50331648) / (8 * 4096 * 4096))  # 0.875
    assert row.requested_bytes == 2 * 67108864 and row.requested_vs_model == pytest.approx(1.0)
    assert row.smem_ld_wavefronts_per_request == 32.0
    assert row.smem_ld_conflicts_per_request == pytest.approx(31.0)
    assert row.smem_st_wavefronts_per_request == 1.0
    assert row.l2_hit_pct == 33.5 and row.l1_hit_pct == 0.0
    assert row.occupancy_achieved_pct == 91.5 and row.occupancy_vs_theoretical == pytest.approx(0.915)


def test_divergence_and_atomics_are_counted_per_warp_instruction():
    # PMPP 10.3's `simple` reduction: at stride s only every s-th lane of a warp adds, so the
    # warps issue instructions with few active threads; the histogram's atomics per request.
    raw = {k.THREAD_INST: 12.0e6, k.WARP_INST: 1.0e6, k.GLOBAL_ATOM: 300.0, k.GLOBAL_RED: 4096.0,
           k.SHARED_ATOM: 2.0e6}
    row = counted(raw)
    assert row.warp_efficiency_pct == pytest.approx(100 * 12 / 32)
    assert row.global_atomic_requests == 4396 and row.shared_atomic_instructions == 2_000_000
    only_red = counted({k.GLOBAL_RED: 7.0})
    assert only_red.global_atomic_requests == 7 and only_red.warp_efficiency_pct is None
    assert only_red.shared_atomic_instructions is None
    # Over a variant's kernels the instruction counts add, so the efficiency is weighted by them.
    both = k.combine([{k.THREAD_INST: 32.0e6, k.WARP_INST: 1.0e6, k.DURATION: 1.0},
                      {k.THREAD_INST: 1.0e6, k.WARP_INST: 1.0e6, k.DURATION: 9.0}])
    assert counted(both).warp_efficiency_pct == pytest.approx(100 * 33 / 64)
    headers = [c.header for c in counter_columns_for([row])]
    assert {"warp_eff_%", "glob_atom_req", "smem_atom_inst"} <= set(headers)
    assert "tensor_pipe_%" not in headers  # no tensor-pipe counter: no column


def test_tensor_pipe_utilization():
    assert counted({k.TENSOR_PIPE: 35.5}).tensor_pipe_pct == 35.5
    assert counted({k.THREAD_INST: 1.0, k.WARP_INST: 1.0}).tensor_pipe_pct is None
    both = k.combine([{k.TENSOR_PIPE: 90.0, k.DURATION: 3.0}, {k.TENSOR_PIPE: 10.0, k.DURATION: 1.0}])
    row = counted(both)
    assert row.tensor_pipe_pct == pytest.approx(70.0)  # weighted by duration
    assert "tensor_pipe_%" in [c.header for c in counter_columns_for([row])]


def test_requested_bytes_are_compared_with_the_modelled_requests_when_the_workload_has_them():
    m = 1024  # GEMM naive: 8MNK + 4MN requested, 12 M^2 logical
    modelled = 8 * m**3 + 4 * m * m
    row = Result("gemm", "naive", "1024x1024x1024", check="PASS", bytes=12 * m * m, model={"model_bytes": modelled},
                 counters={k.GLOBAL_LD: 8.0 * m**3, k.GLOBAL_ST: 4.0 * m * m, k.DRAM_READ: 8e6, k.DRAM_WRITE: 4e6})
    k.fill_counters(row)
    assert row.requested_vs_model == pytest.approx(1.0)
    assert row.dram_vs_model == pytest.approx(12e6 / (12 * m * m))


def test_a_missing_model_or_no_requests_leaves_the_ratio_empty():
    row = counted({k.SMEM_LD_REQ: 0.0, k.SMEM_LD_WF: 0.0, k.OCCUPANCY: 60.0, k.DRAM_READ: 5.0})
    assert row.smem_ld_wavefronts_per_request is None  # no shared loads at all
    assert row.occupancy_vs_theoretical is None  # no theoretical occupancy (a library call)
    assert row.dram_vs_model is None and row.dram_read_bytes == 5  # no write count: no ratio
    empty = Result("x", "y", "1", check="PASS")
    k.fill_counters(empty)
    assert empty.dram_read_bytes is None and empty.occupancy_achieved_pct is None


# ---- when counters cannot be read -----------------------------------------------------------

class _Workload:
    name = "transpose"

    def label(self, shape):
        return "8x8"


def _counted_step(variants, seed=0) -> Step:
    """A step of the stand-in workload with --counters on; it reaches the child as transpose."""
    return Step(_Workload(), {"m": 8, "n": 8}, Protocol(1, 1, 1, counters=True), seed, variants)


def test_without_ncu_every_passing_row_says_why_and_the_run_keeps_its_rows(monkeypatch):
    from pmppbench.workloads.base import Variant

    monkeypatch.setattr(k, "ncu_path", lambda: None)
    monkeypatch.setattr(k, "_theoretical_occupancy", lambda rows: None)
    variants = [Variant("a", "a", ""), Variant("b", "b", ""), Variant("c", "c", "")]
    rows = [Result("transpose", "a", "8x8", check="PASS", median_ms=1.0), Result("transpose", "b", "8x8", check="FAIL"),
            Result("transpose", "c", "8x8", check="PASS", median_ms=2.0)]
    k.collect(_counted_step(variants, 0), rows)
    assert [r.counters_note for r in rows] == [k.NO_NCU, "not profiled: FAIL", k.NO_NCU]
    assert rows[0].warnings == [k.NO_NCU] and rows[2].warnings == []
    assert [r.check for r in rows] == ["PASS", "FAIL", "PASS"] and rows[0].median_ms == 1.0


def test_the_command_line_takes_counters_and_prints_the_missing_tool_once(tmp_path, run_cli, monkeypatch):
    from test_config import FAKE_DEVICE

    from pmppbench.hardware import device, inventory
    from pmppbench.engine.driver.supervisor import Supervisor
    from pmppbench.engine.worker import pipeline
    from pmppbench.engine.worker.process import run_step

    monkeypatch.setattr(device, "current", lambda: FAKE_DEVICE)
    monkeypatch.setattr(inventory, "visible", lambda: [inventory.DeviceId(0, "Fake GPU", "GPU-0000", "0000:01:00.0")])
    monkeypatch.setattr(k, "ncu_path", lambda: None)
    monkeypatch.setattr(k, "_theoretical_occupancy", lambda rows: None)
    seen = []

    def fake_run(w, s, **kw):
        seen.append(kw["protocol"])
        variants = kw.get("variants") or w.variants_for(s)
        return [Result(w.name, v.name, w.label(s), check="PASS", median_ms=1.0, bytes=64) for v in variants]

    monkeypatch.setattr(pipeline, "run_shape", fake_run)  # the worker's step runs it, then counters.collect
    monkeypatch.setattr(Supervisor, "run", lambda self, step, progress=None: run_step(step))
    out = tmp_path / "r.json"
    code, stdout, err = run_cli("transpose", "64", "64", "--counters", "--out", str(out), "--check-only")
    assert code == 0, err
    assert all(p.counters for p in seen)
    assert stdout.count("Nsight Compute (ncu) is not on PATH") == 1  # one line for the whole run
    assert "hardware counters (ncu, 1 untimed run)" not in stdout  # no table of empty cells
    doc = json.loads(out.read_text())
    assert {r["counters_note"] for r in doc["results"]} == {k.NO_NCU}
    seen.clear()
    code, _, err = run_cli("transpose", "64", "64", "--check-only", "--quiet")
    assert code == 0, err
    assert seen and not any(p.counters for p in seen)


def test_every_command_offers_counters(run_cli):
    from pmppbench import workloads

    for name in [*workloads.names(), "all"]:
        code, stdout, _ = run_cli(name, "--help")
        assert code == 0 and "--counters" in stdout, name


def test_the_protocol_says_counters_were_read():
    from pmppbench.cli.planning import protocol_for
    from pmppbench.workloads.transpose import WORKLOAD

    assert "hardware counters from 1 more untimed run" in protocol_for(WORKLOAD, counters=True).describe()
    assert "counters" not in protocol_for(WORKLOAD).describe()


# ---- exports -----------------------------------------------------------------------------------

def test_the_counter_table_has_units_in_its_headers_and_appears_only_with_counters():
    raw = {name: k.number(v) for name, v in SHARED32.items()}
    rows = [counted(raw, occupancy_theoretical_pct=100.0),
            Result("transpose", "memcpy", "4096x4096", check="PASS", bytes=8 * 4096 * 4096,
                   counters_note="no kernel ran (a copy)")]
    headers = [c.header for c in counter_columns_for(rows)]
    assert headers == ["variant", "shape", "model_MB", "DRAM_rd_MB", "DRAM_wr_MB", "DRAM/model", "req_MB",
                       "req/model", "L2_hit_%", "L1_hit_%", "smem_ld_wf/req", "smem_ld_conf/req", "smem_st_wf/req",
                       "occ_theory_%", "occ_achieved_%", "occ/theory", "counters_note"]
    cells = {c.header: c.cell(rows[0]) for c in counter_columns_for(rows)}
    assert cells["DRAM_rd_MB"] == "67.1" and cells["DRAM/model"] == "0.875" and cells["counters_note"] == ""
    assert cells["smem_ld_wf/req"] == "32.00" and cells["occ/theory"] == "0.915"
    assert {c.header: c.cell(rows[1]) for c in counter_columns_for(rows)}["counters_note"] == "no kernel ran (a copy)"
    assert counter_columns_for([Result("transpose", "naive", "8x8", check="PASS")]) == []
    text = markdown.results_section(rows, {"name": "Test GPU"})
    assert "#### transpose · hardware counters (ncu, 1 untimed run)" in text and "| 32.00 |" in text
    plain = markdown.results_section([Result("transpose", "naive", "8x8", check="PASS")], {"name": "Test GPU"})
    assert "hardware counters" not in plain


def test_counter_columns_survive_csv_and_json(tmp_path):
    from pmppbench.results.export.files import save
    from pmppbench.results.resultfile import load

    raw = {name: k.number(v) for name, v in SHARED32.items()}
    rows = [counted(raw, occupancy_theoretical_pct=100.0)]
    for name in ("r.csv", "r.json"):
        save(tmp_path / name, rows, {"name": "Test GPU"})
        back, _ = load(tmp_path / name)
        assert back[0] == rows[0], name


def test_the_counters_chart_is_drawn(tmp_path):
    pytest.importorskip("matplotlib")
    from pmppbench.results.plot import plot_results

    raw = {name: k.number(v) for name, v in SHARED32.items()}
    row = counted(raw, occupancy_theoretical_pct=100.0, median_ms=0.1, gb_per_s=1342.0)
    paths = plot_results([row], {"name": "Test GPU"}, tmp_path)
    assert sorted(p.name for p in paths) == ["transpose.png", "transpose_counters.png"]
    assert (tmp_path / "transpose_counters.png").read_bytes()[:4] == b"\x89PNG"


# ---- on the GPU --------------------------------------------------------------------------------

@pytest.mark.gpu
def test_shared32_conflicts_32_ways_and_padded33_not_as_the_hardware_counts():
    """PMPP's transpose lesson, measured: shared32 reads a column of its 32x32 tile, every
    element in the same bank (>= 16 wavefronts per request, 32 expected); padded33's row
    stride of 33 puts them in 32 different banks (<= 2, 1 expected)."""
    if k.ncu_path() is None:
        pytest.skip("Nsight Compute (ncu) is not installed")
    from pmppbench.engine.worker.process import run_step
    from pmppbench.workloads.transpose import WORKLOAD

    variants = [WORKLOAD.variant("shared32"), WORKLOAD.variant("padded33")]
    rows = {r.variant: r for r in run_step(Step(WORKLOAD, {"m": 2048, "n": 2048}, Protocol(1, 1, 1, counters=True), 0,
                                                variants))}
    if rows["shared32"].counters_note == k.NO_PERMISSION:
        pytest.skip(k.NO_PERMISSION)
    assert rows["shared32"].counters, rows["shared32"].counters_note
    assert rows["shared32"].smem_ld_wavefronts_per_request >= 16
    assert rows["padded33"].smem_ld_wavefronts_per_request <= 2
    for r in rows.values():  # both write their tile row by row: conflict-free stores
        assert r.smem_st_wavefronts_per_request <= 2
        assert r.dram_read_bytes >= 0.95 * 4 * 2048 * 2048  # A was read from DRAM at least once


@pytest.mark.gpu
def test_counters_never_touch_the_timed_numbers_or_the_checks():
    if shutil.which("ncu") is None:
        pytest.skip("Nsight Compute (ncu) is not installed")
    from pmppbench.engine.worker.process import run_step
    from pmppbench.workloads.transpose import WORKLOAD

    rows = run_step(Step(WORKLOAD, {"m": 1024, "n": 1024}, Protocol(1, 2, 3, counters=True), 0,
                         [WORKLOAD.variant("naive"), WORKLOAD.variant("memcpy")]))
    by = {r.variant: r for r in rows}
    assert all(r.check == "PASS" and r.median_ms and r.batches == 2 for r in rows)
    assert by["memcpy"].counters == {} and by["memcpy"].counters_note == "no kernel ran (a copy)"
    if by["naive"].counters_note != k.NO_PERMISSION:
        assert by["naive"].counters[k.KERNELS] == 1 and by["naive"].occupancy_theoretical_pct == 100.0


# ---- the profiler's process, with a stand-in for ncu -------------------------------------------

FAKE_NCU = r'''#!@PYTHON@
"""A stand-in for ncu: reads the command line pmppbench gives it, writes the details CSV of
one kernel per variant (named by its NVTX range, as --print-nvtx-rename kernel does), or
the error a real ncu prints (FAKE_NCU_SAYS), or refuses metrics it does not know
(FAKE_NCU_UNKNOWN)."""
import json, os, pickle, sys
args = sys.argv[1:]
log = args[args.index("--log-file") + 1]
metrics = args[args.index("--metrics") + 1].split(",")
with open(os.environ["FAKE_NCU_CALLS"], "a") as f:
    f.write(json.dumps(args) + "\n")
says = os.environ.get("FAKE_NCU_SAYS")
if says:
    open(log, "w").write("==PROF== Connected to process 1\n" + says + "\n")
    sys.exit(1)
unknown = [m for m in metrics if m in os.environ.get("FAKE_NCU_UNKNOWN", "").split(",")]
if unknown:
    open(log, "w").write(f"==ERROR== Failed to find metric {unknown[0]}\n")
    sys.exit(1)
step = pickle.load(open(args[-2], "rb"))
names = [v.name for v in step.variants]
json.dump([{"variant": n, "launches": 1} for n in names], open(args[-1], "w"))
rows = ['@HEADER@']
for i, n in enumerate(names):
    for m in metrics:
        value = "1,048,576" if m.endswith("wavefronts_mem_shared_op_ld.sum") else "32,768" if "shared_ld" in m else "50"
        rows.append(f'"{i}","1","python3","h","pmpp:{n}","1","7","(32, 32, 1)","(2, 2, 1)","0","9.0","s","{m}","","{value}"')
open(log, "w").write("==PROF== Connected to process 1\n" + "\n".join(rows) + "\n")
'''


@pytest.fixture
def fake_ncu(tmp_path, monkeypatch):
    import sys

    script = tmp_path / "ncu"
    script.write_text(FAKE_NCU.replace("@PYTHON@", sys.executable).replace("@HEADER@", HEADER))
    script.chmod(0o755)
    calls = tmp_path / "calls.jsonl"
    monkeypatch.setenv("PMPPBENCH_NCU", str(script))
    monkeypatch.setenv("FAKE_NCU_CALLS", str(calls))
    monkeypatch.setattr(k, "_theoretical_occupancy", lambda rows: None)
    return lambda: [json.loads(line) for line in calls.read_text().splitlines()] if calls.exists() else []


def _step():
    from pmppbench.workloads.base import Variant

    variants = [Variant("shared32", "t", ""), Variant("padded33", "t", ""), Variant("broken", "t", "")]
    rows = [Result("transpose", v.name, "8x8", check="FAIL" if v.name == "broken" else "PASS", bytes=100)
            for v in variants]
    return variants, rows


def test_collect_runs_ncu_once_per_step_and_fills_the_passing_rows(fake_ncu):
    variants, rows = _step()
    beats = []
    k.collect(_counted_step(variants, 3), rows, at=lambda v, phase: beats.append(phase))
    assert len(fake_ncu()) == 1 and set(beats) <= {"counters"}  # heartbeats only while ncu runs
    spec_variants = fake_ncu()[0]
    assert "--clock-control" in spec_variants
    for r in rows[:2]:
        assert r.counters[k.KERNELS] == 1 and r.smem_ld_wavefronts_per_request == 32.0 and r.dram_vs_model == 1.0
        assert r.counters_note == ""
    assert rows[2].counters == {} and rows[2].counters_note == "not profiled: FAIL"


def test_a_metric_ncu_does_not_know_is_dropped_and_the_step_profiled_again(fake_ncu, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_UNKNOWN", k.SMEM_ST_CONFLICTS)
    variants, rows = _step()
    k.collect(_counted_step(variants, 0), rows)
    calls = fake_ncu()
    assert len(calls) == 2 and k.SMEM_ST_CONFLICTS not in calls[1][calls[1].index("--metrics") + 1]
    assert k.SMEM_ST_CONFLICTS not in rows[0].counters and rows[0].smem_ld_wavefronts_per_request == 32.0
    assert rows[0].warnings == [f"--counters: ncu has no metric {k.SMEM_ST_CONFLICTS} on this GPU; the rows go on "
                                "without it"] and rows[1].warnings == []


def test_the_child_finds_every_variant_again():
    """The child gets the step as the worker had it (pickled, by its workload's name): every
    variant as declared, a learner's as it came."""
    import pickle

    from pmppbench import workloads
    from pmppbench.workloads.base import Variant

    for name in workloads.names():
        w = workloads.get(name)
        step = Step(w, w.default_shape(), w.protocol, 5)
        back = pickle.loads(pickle.dumps(step))
        assert back.workload is w and back.variants == step.variants and back.seed == 5, name
        assert [vars(v) for v in back.variants] == [vars(v) for v in step.variants], name
    learner = Variant("mine", "mine", "your kernel from my.cu, run as naive", source="/tmp/my.cu", like="naive")
    stencil = workloads.get("stencil")
    back = pickle.loads(pickle.dumps(Step(stencil, stencil.default_shape(), stencil.protocol, 0, [learner])))
    assert back.variants == (learner,)


def test_a_failure_inside_the_profiling_is_one_warning_and_never_costs_a_row(fake_ncu, monkeypatch):
    def broken(*a, **kw):
        raise AttributeError("Can't pickle local object")

    monkeypatch.setattr(k, "_profile", broken)
    variants, rows = _step()
    k.collect(_counted_step(variants, 0), rows)
    assert [r.check for r in rows] == ["PASS", "PASS", "FAIL"]
    assert rows[0].warnings == ["--counters: AttributeError: Can't pickle local object; the run went on without "
                                "counters"]


def test_refused_permission_is_one_warning_and_no_retry(fake_ncu, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_SAYS", "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission")
    variants, rows = _step()
    k.collect(_counted_step(variants, 0), rows)
    assert len(fake_ncu()) == 1
    assert [r.counters_note for r in rows] == [k.NO_PERMISSION, k.NO_PERMISSION, "not profiled: FAIL"]
    assert sum(len(r.warnings) for r in rows) == 1 and rows[0].counters == {}
