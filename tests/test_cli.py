"""CLI parsing and error messages: one line, the right exit code, no traceback."""

from __future__ import annotations

import pytest

from pmppbench.gpu import has_device


def test_help_lists_the_workloads(run_cli):
    code, out, _ = run_cli("--help")
    assert code == 0
    for name in ("vecadd", "transpose", "gemm", "stencil", "stream", "compile", "info"):
        assert name in out


@pytest.mark.parametrize("args, needle", [
    (["vecadd", "0"], "N must be a positive integer, got 0"),
    (["vecadd", "-5"], "sizes must be positive integers, got -5"),
    (["vecadd", "1000", "0"], "REPS must be a positive integer, got 0"),
    (["vecadd", "abc"], "Invalid value"),
    (["vecadd", "--variants", "nope"], "unknown variant 'nope'"),
    (["vecadd", "--out", "results.xlsx"], "unknown file type .xlsx"),
])
def test_bad_input_is_one_line_exit_2(run_cli, args, needle):
    code, _, err = run_cli(*args)
    assert code == 2, err
    assert needle in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


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
    assert len(lines) == 3 and all("regs" in l for l in lines)


def test_debug_shows_the_traceback(run_cli):
    with pytest.raises(Exception):
        run_cli("--debug", "compile", "--arch", "bogus")
