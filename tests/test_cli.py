"""CLI parsing and error messages: one line, the right exit code, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from pmppbench.hardware.gpu import has_device


def test_help_lists_the_workloads(run_cli):
    code, out, _ = run_cli("--help")
    assert code == 0
    for name in ("vecadd", "transpose", "gemm", "stencil", "stream", "compile", "info"):
        assert name in out


@pytest.mark.parametrize("args, needle", [
    # one wording for every bad size: zero, negative, not a number
    (["vecadd", "0"], "N must be a positive integer, got 0"),
    (["vecadd", "-5"], "N must be a positive integer, got -5"),
    (["vecadd", "abc"], "N must be a positive integer, got 'abc'"),
    (["transpose", "0"], "M must be a positive integer, got 0"),
    (["transpose", "-1"], "M must be a positive integer, got -1"),
    (["transpose", "abc"], "M must be a positive integer, got 'abc'"),
    (["vecadd", "1000", "0"], "REPS must be a positive integer, got 0"),
    (["stream", "1000", "4", "x"], "REPS must be a positive integer, got 'x'"),
    (["vecadd", "--seed", "-1"], "--seed must be an integer >= 0, got -1"),
    (["vecadd", "--warmup", "-1"], "--warmup must be an integer >= 0, got -1"),
    (["vecadd", "--variants", "nope"], "unknown variant 'nope'"),
    (["vecadd", "--variants", ""], "--variants takes comma-separated names such as scalar,float4, got ''"),
    (["vecadd", "--variants", "scalar,"], "--variants takes comma-separated names such as scalar,float4, got 'scalar,'"),
    (["vecadd", "--out", "results.xlsx"], "unknown file type .xlsx"),
    (["vecadd", "--nope"], "no such option --nope"),
    (["stream", "--streams", "0"], "--streams must be a positive integer, got 0"),
    (["resources", "nosuch"], "unknown workload 'nosuch'"),
    (["compile", "--arch", "sm_35"], "--arch sm_35: this NVRTC cannot build it; choose one of sm_"),
    (["compile", "nosuch", "--arch", "sm_90"], "unknown workload 'nosuch'"),
    (["all", "--config", "nosuch"], "--config nosuch: no such file; give a TOML file or a bundled config (default, "),
    (["all", "--seed", "-3"], "--seed must be an integer >= 0, got -3"),
])
def test_bad_input_is_one_line_exit_2(run_cli, args, needle):
    code, _, err = run_cli(*args)
    assert code == 2, err
    assert needle in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_out_that_cannot_be_written_is_refused_first(run_cli, tmp_path):
    # Before any GPU work: on a machine without a GPU these would otherwise say exit 3.
    for out, words in ((tmp_path, "is a folder"), (tmp_path / "no" / "r.csv", "does not exist"),
                       (Path("/proc/pmppbench-x.csv"), "cannot write there")):
        code, _, err = run_cli("vecadd", "--out", str(out))
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err


def test_no_arguments_prints_the_help(run_cli):
    code, out, _ = run_cli()
    assert code == 0 and "Commands" in out and "transpose" in out


def test_debug_anywhere_and_from_the_environment(run_cli, monkeypatch):
    # --debug shows the traceback, and bad input is still exit 2 (not 1, not an exception)
    code, _, err = run_cli("compile", "--arch", "bogus", "--debug")  # after the subcommand too
    assert code == 2 and err.startswith("Traceback"), err
    assert err.strip().splitlines()[-1].startswith("pmppbench: --arch bogus: this NVRTC cannot build it"), err
    monkeypatch.setenv("PMPPBENCH_DEBUG", "1")
    code, _, err = run_cli("compile", "--arch", "bogus")
    assert code == 2 and "Traceback" in err


def test_all_help_lists_every_bundled_config(run_cli):
    from pmppbench.cli import config

    code, out, _ = run_cli("all", "--help")
    assert code == 0
    for name in config.bundled():
        assert name in out


def test_help_shows_defaults_from_the_declaration(run_cli):
    from pmppbench import workloads

    for name in workloads.names():
        w = workloads.get(name)
        code, out, _ = run_cli(name, "--help")
        assert code == 0
        for d in w.dims:
            assert f"Default {w.default_shape()[d]}." in out
        assert f"Default {w.protocol.reps}." in out


@pytest.mark.skipif(has_device(), reason="this test is about machines without a GPU")
def test_resources_without_a_gpu_is_exit_3(run_cli):
    code, _, err = run_cli("resources")
    assert code == 3 and "no NVIDIA driver" in err and len(err.strip().splitlines()) == 1


def test_existing_out_file_is_not_overwritten(run_cli, tmp_path):
    target = tmp_path / "r.csv"
    target.write_text("keep me")
    code, _, err = run_cli("vecadd", "--out", str(target))
    assert code == 2 and "--force" in err
    assert target.read_text() == "keep me"


@pytest.mark.skipif(has_device(), reason="this test is about machines without a GPU")
def test_no_gpu_is_a_clear_message(run_cli):
    code, _, err = run_cli("vecadd", "1024")
    assert code == 3
    assert "pmppbench compile --arch" in err and "Traceback" not in err


def test_compile_without_gpu_prints_one_line_per_kernel(run_cli):
    code, out, _ = run_cli("compile", "--arch", "sm_90", "vecadd")
    assert code == 0
    lines = [l for l in out.splitlines() if l.startswith("OK")]
    # scalar<int>, float4_add, grid_stride, and scalar's 64-bit path scalar<long long>
    assert len(lines) == 4 and all("regs" in l for l in lines)


def test_debug_shows_the_traceback(run_cli):
    code, _, err = run_cli("--debug", "compile", "--arch", "bogus")
    assert code == 2 and 'raise UsageError(f"--arch {paths.cut(arch, 40)}: this NVRTC cannot build it' in err


def _result_file(path, median):
    from pmppbench.results.export.files import save as write_results
    from pmppbench.row import Result

    rows = [Result("vecadd", "scalar", "1000", check="PASS", median_ms=median, min_ms=median * 0.99,
                   max_ms=median * 1.01, spread_pct=2.0, bytes=12000, flops=1000, gb_per_s=12000 / median / 1e6,
                   gflop_per_s=1e-6 / median, device="Test GPU")]
    write_results(path, rows, {"name": "Test GPU", "peak_bandwidth_gbs": 4800.0, "peak_fp32_gflops": 66900.0})
    return path


def test_compare_exits_1_on_a_regression_beyond_pct(run_cli, tmp_path):
    base = _result_file(tmp_path / "base.csv", 1.0)
    new = _result_file(tmp_path / "new.csv", 1.5)
    code, out, _ = run_cli("compare", str(base), str(new), "--fail-on-slower", "10")
    assert code == 1 and "SLOWER" in out
    code, out, _ = run_cli("compare", str(base), str(base))
    assert code == 0 and "SAME" in out


def test_plot_writes_pngs(run_cli, tmp_path):
    pytest.importorskip("matplotlib")
    results = _result_file(tmp_path / "r.csv", 1.0)
    code, out, err = run_cli("plot", str(results), "--outdir", str(tmp_path / "plots"))
    assert code == 0, err
    pngs = list((tmp_path / "plots").glob("*.png"))
    assert pngs and all(p.stat().st_size > 1000 for p in pngs)


def test_missing_nvrtc_is_a_clear_message(monkeypatch):
    import builtins

    from pmppbench.errors import EnvironmentProblem
    from pmppbench.hardware.gpu import nvrtc

    real_import = builtins.__import__

    def no_cupy(name, *args, **kwargs):
        if name.startswith("cupy_backends"):
            raise ImportError("No module named 'cupy_backends'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cupy)
    with pytest.raises(EnvironmentProblem, match=r"pmppbench\[cuda13\]"):
        nvrtc()


def test_a_compile_failure_crosses_from_the_child_process_whole():
    """`compile` builds in child processes (compile_apart): the failure that names the arch a
    unit needs comes back with that arch, so the command still says which --arch to choose."""
    import pickle

    from pmppbench.hardware.compile import NeedsNewerArch

    back = pickle.loads(pickle.dumps(NeedsNewerArch("cp.async needs sm_80 or newer", "sm_80")))
    assert type(back) is NeedsNewerArch and (str(back), back.arch) == ("cp.async needs sm_80 or newer", "sm_80")
