"""Configs for `pmppbench all`: parsing, every validation error, and nothing lost on failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from pmppbench.cli import config
from pmppbench import workloads
from pmppbench.hardware.device import DeviceInfo
from pmppbench.errors import UsageError
from pmppbench.row import Result


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "c.toml"
    p.write_text(text)
    return p


def test_positional_and_named_shapes(tmp_path):
    cfg = config.load(write(tmp_path, """
seed = 7
[vecadd]
shapes = [[1000], {n = 2000}]
reps = 5
variants = ["scalar", "float4"]
"""))
    (section,) = cfg.sections
    assert cfg.seed == 7 and len(cfg.sha256) == 64
    assert section.shapes == [{"n": 1000}, {"n": 2000}]
    assert section.reps == 5 and section.variants == ["scalar", "float4"]


@pytest.mark.parametrize("text, needle", [
    ("[nosuch]\nshapes = [[1]]", "[nosuch]: unknown workload"),
    ("[vecadd]\nshapes = [[1]]\nrepz = 3", "[vecadd] repz: unknown key"),
    ("[vecadd]\nshapes = [[1]]\nreps = 'ten'", "[vecadd] reps: expected an integer >= 1"),
    ("[vecadd]\nshapes = [[1]]\nreps = 0", "[vecadd] reps: expected an integer >= 1"),
    ("[vecadd]\nshapes = [[0]]", "[vecadd] shapes[0]: vecadd: N must be a positive integer, got 0"),
    ("[vecadd]\nshapes = [[1, 2]]", "[vecadd] shapes[0]: expected 1 integers (n)"),
    ("[vecadd]\nshapes = [{m = 3}]", "[vecadd] shapes[0]: unknown key 'm'"),
    ("[vecadd]\nshapes = []", "[vecadd] shapes: expected a non-empty list"),
    ("[vecadd]\nreps = 3", "[vecadd] shapes: expected a non-empty list"),
    ("[vecadd]\nshapes = [[1]]\nvariants = ['fast']", "unknown variant 'fast'"),
    ("[vecadd]\nshapes = [[1.5]]", "expected 1 integers"),
    ("seed = -1\n[vecadd]\nshapes = [[1]]", "seed: expected a non-negative integer"),
    ("vecadd = 3", "vecadd: expected a table"),
    ("[vecadd\nshapes = 1", "not valid TOML"),
])
def test_validation_errors_name_file_and_key(tmp_path, text, needle):
    path = write(tmp_path, text)
    with pytest.raises(UsageError) as info:
        config.load(path)
    assert needle in str(info.value)
    assert str(path) in str(info.value) or "TOML" in str(info.value)


def test_only_filters_and_rejects_unknown(tmp_path):
    path = write(tmp_path, "[vecadd]\nshapes = [[1]]\n[transpose]\nshapes = [[2, 3]]\n")
    if "transpose" in workloads.names():
        assert [p.name for p in config.load(path, ["transpose"]).sections] == ["transpose"]
    with pytest.raises(UsageError, match="--only nope"):
        config.load(path, ["nope"])


def test_bundled_configs_are_valid():
    assert {"default", "quick", "sanitize", "gemm_shapes"} <= set(config.bundled())
    for name in config.bundled():
        assert config.resolve(name).is_file()
        config.load(name)  # validated whole
    for name in ("default", "quick", "sanitize"):  # these cover every workload
        assert {p.name for p in config.load(name).sections} == set(workloads.names())


FAKE_DEVICE = DeviceInfo("Fake GPU", "9.0", "sm_90", 132, 1980, 3201, 6144, 2**37, 60 << 20, 233472, 49152,
                         232448, 65536, 2048, 32, 1024, 32, "13.0", "13.0", "14.2.0")


@pytest.fixture
def fake_gpu(monkeypatch):
    """`all` on the CPU: a fake device and a runner that fails on the second workload."""
    from pmppbench.hardware import device
    from pmppbench.engine.worker import pipeline

    monkeypatch.setattr(device, "current", lambda: FAKE_DEVICE)

    def fake_run(w, s, **kw):
        if w.name == "transpose":
            raise RuntimeError("launch failed: an illegal memory access")
        return [Result(w.name, v.name, w.label(s), check="PASS", median_ms=1.0, run_id=kw.get("run_id", ""))
                for v in (kw.get("variants") or w.variants_for(s))]

    monkeypatch.setattr(pipeline, "run_shape", fake_run)
    # in this process: the worker process would have no fake device (tests/test_worker.py covers it)
    from pmppbench.hardware import inventory
    from pmppbench.engine.driver.supervisor import Supervisor
    from pmppbench.engine.worker.process import run_step

    monkeypatch.setattr(inventory, "visible", lambda: [inventory.DeviceId(0, "Fake GPU", "GPU-0000", "0000:01:00.0")])

    monkeypatch.setattr(Supervisor, "run", lambda self, step, progress=None: run_step(step))


def test_all_keeps_rows_before_a_failure_and_exits_1(tmp_path, run_cli, fake_gpu):
    if "transpose" not in workloads.names():
        pytest.skip("needs the transpose workload")
    cfg = write(tmp_path, "[vecadd]\nshapes = [[1000]]\n[transpose]\nshapes = [[8, 8]]\n[gemm]\nshapes=[[4,4,4]]\n"
                if "gemm" in workloads.names() else "[vecadd]\nshapes = [[1000]]\n[transpose]\nshapes = [[8, 8]]\n")
    out = tmp_path / "r.csv"
    code, stdout, err = run_cli("all", "--config", str(cfg), "--out", str(out), "--quiet")
    assert code == 1, err
    from pmppbench.results.resultfile import load as read_results

    rows, meta = read_results(out)
    assert [r.check for r in rows if r.workload == "vecadd"] == ["PASS"] * 3
    failed = [r for r in rows if r.workload == "transpose"]
    assert failed and all(r.check == "ERROR" and "illegal memory access" in r.error for r in failed)
    assert meta["config_sha256"] and meta["name"] == "Fake GPU" and meta["run_id"] == rows[0].run_id
    assert set(meta["wall_s"]) == {"wall", "timed", "checks", "references", "inputs", "compile", "counters", "other"}
    assert "wall time " in stdout
    if "gemm" in workloads.names():  # the run went on after the failure
        assert any(r.workload == "gemm" and r.check == "PASS" for r in rows)


def test_all_refuses_to_clobber(tmp_path, run_cli, fake_gpu):
    cfg = write(tmp_path, "[vecadd]\nshapes = [[1000]]\n")
    out = tmp_path / "r.csv"
    out.write_text("precious")
    code, _, err = run_cli("all", "--config", str(cfg), "--out", str(out))
    assert code == 2 and "--force" in err and out.read_text() == "precious"
    code, _, _ = run_cli("all", "--config", str(cfg), "--out", str(out), "--force", "--quiet")
    assert code == 0 and "vecadd" in out.read_text()


def test_bad_config_exits_2_before_gpu_work(tmp_path, run_cli):
    cfg = write(tmp_path, "[vecadd]\nshapes = [[-4]]\n")
    code, _, err = run_cli("all", "--config", str(cfg))
    assert code == 2 and "shapes[0]" in err and str(cfg) in err
