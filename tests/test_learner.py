"""A learner's own kernel beside the ladder: --kernel FILE.cu:NAME --like VARIANT."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pmppbench.hardware.compile import compile_unit
from pmppbench.errors import CompileError

HERE = Path(__file__).resolve().parent / "learner"


@pytest.mark.parametrize("args, needle", [
    (["vecadd", "--kernel", "x.cu:k"], "--kernel and --like go together"),
    (["vecadd", "--like", "scalar"], "--kernel and --like go together"),
    (["vecadd", "--kernel", str(HERE / "vecadd_mine.cu"), "--like", "scalar"], "--kernel takes FILE.cu:NAME"),
    (["vecadd", "--kernel", "nofile.cu:my_add", "--like", "scalar"], "no such file nofile.cu"),
    (["vecadd", "--kernel", f"{HERE / 'vecadd_mine.cu'}:my_add", "--like", "nope"], "unknown variant 'nope'"),
    (["gemm", "--kernel", f"{HERE / 'vecadd_mine.cu'}:my_add", "--like", "cublas"], "--like cublas: it calls a library"),
    (["vecadd", "--kernel", f"{HERE / 'vecadd_mine.cu'}:scalar", "--like", "scalar"], "is already a variant's name"),
])
def test_bad_learner_options_are_one_line_exit_2(run_cli, args, needle):
    code, _, err = run_cli(*args)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err


def test_a_compile_error_names_the_learners_file_and_line():
    with pytest.raises(CompileError) as info:
        compile_unit("vecadd", ["my_add"], "sm_90", source=HERE / "broken.cu")
    text = str(info.value)
    assert f"{HERE / 'broken.cu'}(4)" in text and "undeclared_offset" in text


def test_the_learners_kernel_compiles_with_the_name_expression():
    unit = compile_unit("vecadd", ["my_add", "first_call_only"], "sm_90", source=HERE / "vecadd_mine.cu")
    assert set(unit.lowered) == {"my_add", "first_call_only"} and unit.ptxas["my_add"].registers > 0


def test_a_kernel_right_only_on_its_first_call_fails_after_its_batches(monkeypatch):
    """The runner checks a learner's kernel again after timing (CPU: a NumPy stand-in)."""
    from fake_workload import Copy2D
    from pmppbench.engine.worker import pipeline
    from pmppbench.workloads.base import Job, Variant

    w = Copy2D()
    calls = []

    def stand_in(workload, variant, shape, ctx):
        a, b = ctx["a"], ctx["b"]

        def run():
            calls.append(1)
            b[...] = a if len(calls) == 1 else a + 1

        return Job(run=run, output=lambda: b.copy(), poison=lambda: b.fill(np.nan))

    monkeypatch.setattr(pipeline, "learner_job", stand_in)
    mine = Variant("first_call_only", "first_call_only", "mine", source="mine.cu", like="rows")
    shape = w.default_shape()
    inputs = w.make_inputs(shape, np.random.default_rng(0))

    class Timer:
        def batch_ms(self, fn, reps):
            for _ in range(reps):
                fn()
            return 1.0

    rows = pipeline.evaluate(w, shape, [w.variant("rows"), mine], inputs, w.setup(shape, inputs, {}),
                           protocol=w.protocol, timer=Timer())
    by = {r.variant: r for r in rows}
    assert by["rows"].check == "PASS" and by["rows"].median_ms == 1.0
    assert by["first_call_only"].check == "FAIL" and by["first_call_only"].median_ms is None
    assert by["first_call_only"].check_detail.startswith("after its timed batches, on fresh inputs: ")


@pytest.mark.gpu
def test_learner_kernels_beside_the_ladder(run_cli, tmp_path):
    from pmppbench.results.resultfile import load

    mine = HERE / "vecadd_mine.cu"
    out = tmp_path / "mine.csv"
    code, stdout, err = run_cli("vecadd", "1000003", "10", "--kernel", f"{mine}:my_add", "--like", "scalar",
                                "--out", str(out))
    assert code == 0, err
    rows = {r.variant: r for r in load(out)[0]}
    assert list(rows) == ["scalar", "float4", "grid_stride", "my_add"]
    assert rows["my_add"].check == "PASS" and rows["my_add"].median_ms and rows["my_add"].speedup_vs == "scalar"
    assert rows["my_add"].registers and rows["my_add"].bytes == rows["scalar"].bytes
    out2 = tmp_path / "first.csv"
    code, _, _ = run_cli("vecadd", "1000003", "10", "--kernel", f"{mine}:first_call_only", "--like", "scalar",
                         "--out", str(out2))
    rows = {r.variant: r for r in load(out2)[0]}
    assert code == 1 and rows["first_call_only"].check == "FAIL" and rows["first_call_only"].median_ms is None
    assert all(rows[v].check == "PASS" and rows[v].median_ms for v in ("scalar", "float4", "grid_stride"))
    out3 = tmp_path / "broken.csv"
    code, _, _ = run_cli("vecadd", "1000003", "10", "--kernel", f"{HERE / 'broken.cu'}:my_add", "--like", "scalar",
                         "--out", str(out3))
    rows = {r.variant: r for r in load(out3)[0]}
    assert code == 1 and rows["my_add"].check == "ERROR" and "broken.cu(4)" in rows["my_add"].error
    assert all(rows[v].check == "PASS" for v in ("scalar", "float4", "grid_stride"))


def test_the_like_variants_kernel_is_compiled_even_when_variants_leaves_it_out():
    """`gemm --variants cublas --kernel mine.cu:k --like naive`: the learner's job is naive's
    with the kernel swapped, so naive's kernel must be loaded with the shape (the H200 run of
    the gaming tests: every such row was ERROR, KeyError 'naive')."""
    from dataclasses import replace

    from pmppbench import workloads
    from pmppbench.engine.worker.pipeline import kernel_unit

    w = workloads.get("gemm")
    mine = replace(w.variant("naive"), name="mine", kernel="k", source="mine.cu", like="naive")
    shape = {"m": 64, "n": 64, "k": 64}
    assert kernel_unit(w, shape, [w.variant("cublas"), mine])[1] == ("naive",)
    assert kernel_unit(w, shape, [w.variant("cublas")])[1] == ()


# ---- the standard headers --------------------------------------------------------------------

HEADERS = Path(__file__).parent / "learner" / "headers.cu"


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"])
def test_a_kernel_including_the_cuda_headers_compiles_for_every_target(arch):
    """<cuda_fp16.h>, <cuda_bf16.h>, <mma.h>, <cooperative_groups.h>, <cuda/pipeline> and
    <cuda/barrier>, found in NVIDIA's wheels (or a local toolkit) as nvcc would find them."""
    from pmppbench.hardware.compile import compile_unit

    unit = compile_unit("vecadd", ["round_trips"], arch, source=HEADERS, use_cache=False)
    assert list(unit.lowered) == ["round_trips"]


def test_a_header_that_is_missing_is_named_with_the_package_that_brings_it(tmp_path):
    from pmppbench.errors import CompileError
    from pmppbench.hardware.compile import compile_unit
    from pmppbench.hardware.gpu import header_dirs

    source = tmp_path / "mine.cu"
    source.write_text('#include <cuda/no_such_header>\nextern "C" __global__ void k() {}\n')
    with pytest.raises(CompileError) as info:
        compile_unit("vecadd", ["k"], "sm_90", source=source, use_cache=False)
    assert str(info.value).endswith(
        f"cuda/no_such_header was not found among the CUDA headers here ({', '.join(header_dirs())}); it comes "
        "with the nvidia-cuda-cccl wheel (CUDA 13; nvidia-cuda-cccl-cu12 for CUDA 12) or a CUDA toolkit: "
        "pip install nvidia-cuda-cccl")
    assert f"{source}(1): catastrophic error: cannot open source file \"cuda/no_such_header\"" in str(info.value)
