"""GEMM's tensor-core precisions (--precision tf32,bf16,fp16): rounding, the check rule and
what it catches, the tables, the kernels' compile, and (marked gpu) every rung against the
float64 reference on odd shapes, mutated kernels that must FAIL, and a learner's kernel
--like mma_sync."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from pmppbench import workloads
from pmppbench.check import compare
from pmppbench.compile import NeedsNewerArch, compile_unit, shipped_kernels_dir
from pmppbench.errors import UsageError
from pmppbench.workloads.gemm import check as gemm_check
from pmppbench.workloads.gemm import precision as prec
from pmppbench.workloads.gemm import tensor
from pmppbench.workloads.gemm.model import traffic as model_traffic
from pmppbench.workloads.gemm.workload import LADDER

W = workloads.get("gemm")


def shape(m, n, k, p=None):
    return {"m": m, "n": n, "k": k, **({"precision": p} if p else {})}


# ---- rounding ----------------------------------------------------------------------------

def test_rounding_to_nearest_even_by_hand():
    u8, u11 = 2.0 ** -7, 2.0 ** -10  # the spacing of BF16 and of TF32 / FP16 just above 1
    x = np.array([1 + u8 / 2, 1 + 3 * u8 / 2, 1 + u8 / 2 + 2 ** -20, -(1 + 3 * u11 / 2), 3.0], dtype=np.float32)
    assert prec.rounded(x, "bf16").tolist() == [1.0, 1 + 2 * u8, 1 + u8, -1.0, 3.0]
    assert prec.rounded(x, "tf32").tolist() == [1 + u8 / 2, 1 + 3 * u8 / 2, 1 + u8 / 2, -(1 + 2 * u11), 3.0]
    assert prec.rounded(x, "fp16").tolist() == prec.rounded(x, "tf32").tolist()  # same mantissa, in range
    assert prec.rounded(x, "fp32") is x


@pytest.mark.parametrize("p", prec.TENSOR)
def test_rounded_values_are_the_precision_and_stored_words_hold_them(p):
    x = np.random.default_rng(3).standard_normal(4096, dtype=np.float32)
    r = prec.rounded(x, p)
    assert np.array_equal(prec.rounded(r, p), r)  # idempotent: already in the precision
    low = (r.view(np.uint32) & ((1 << (23 - prec.MANTISSA_BITS[p])) - 1))
    assert not low.any()  # the dropped mantissa bits are zero
    assert np.max(np.abs(r - x) / np.abs(x)) <= prec.unit_roundoff(p)
    s = prec.stored(r, p)
    back = {"bf16": lambda: (s.astype(np.uint32) << 16).view(np.float32), "fp16": lambda: s.astype(np.float32),
            "tf32": lambda: s}[p]()
    assert s.dtype == {"bf16": np.uint16, "fp16": np.float16, "tf32": np.float32}[p]
    assert np.array_equal(back, r)


def test_inputs_are_rounded_and_fp32_inputs_unchanged():
    fp32 = W.make_inputs(shape(64, 48, 40), np.random.default_rng(1))
    bf16 = W.make_inputs(shape(64, 48, 40, "bf16"), np.random.default_rng(1))
    assert np.array_equal(bf16["a"], prec.rounded(fp32["a"], "bf16"))
    assert not np.array_equal(bf16["a"], fp32["a"])
    assert np.array_equal(W.make_inputs(shape(64, 48, 40, "fp32"), np.random.default_rng(1))["b"], fp32["b"])


# ---- the check ---------------------------------------------------------------------------

def test_tolerance_fp32_unchanged_and_tensor_doubled():
    assert W.tolerance_for(shape(8, 8, 4096)).rtol == gemm_check.rtol_for_k(4096)
    for p in prec.TENSOR:
        assert W.tolerance_for(shape(8, 8, 4096, p)).rtol == 2 * 16 * 2.0 ** -24 * 64
    assert W.tolerance_for(shape(8, 8, 4096, "fp32")).rtol == gemm_check.rtol_for_k(4096)


def _products(p, m=64, n=64, k=1024, seed=5):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    ra, rb = prec.rounded(a, p), prec.rounded(b, p)
    return a, b, ra, rb, gemm_check.reference(ra, rb, None)


def _sum_truncated(ra, rb):
    """FP32 accumulation with every addition truncated toward zero (the tensor cores' worst case)."""
    acc = np.zeros((ra.shape[0], rb.shape[1]), dtype=np.float32)
    for k in range(ra.shape[1]):
        exact = acc.astype(np.float64) + np.outer(ra[:, k], rb[k, :]).astype(np.float64)  # exact products
        near = exact.astype(np.float32)
        over = np.abs(near.astype(np.float64)) > np.abs(exact)
        acc = np.where(over, np.nextafter(near, np.float32(0)), near)
    return acc


@pytest.mark.parametrize("p", prec.TENSOR)
def test_the_bound_passes_truncated_fp32_sums_and_fails_what_is_wrong(p):
    a, b, ra, rb, ref = _products(p)
    rule = W.tolerance_for(shape(64, 64, 1024, p))
    assert compare(_sum_truncated(ra, rb), ref, rule).passed
    # the unrounded product: the check sees that the inputs were not the precision's
    assert not compare((a.astype(np.float64) @ b).astype(np.float32), ref, rule).passed
    # an FP16 accumulator instead of FP32
    half = np.zeros((64, 64), dtype=np.float16)
    for k in range(0, 1024, 16):
        half = (half + (ra[:, k:k + 16].astype(np.float64) @ rb[k:k + 16]).astype(np.float16)).astype(np.float16)
    assert not compare(half.astype(np.float32), ref, rule).passed
    # a dropped k-tile (k 512..543) and a transposed 16 x 16 fragment of A
    assert not compare((ra[:, :512] @ rb[:512] + ra[:, 544:] @ rb[544:]).astype(np.float32), ref, rule).passed
    ta = ra.copy()
    ta[16:32, 32:48] = ra[16:32, 32:48].T
    assert not compare((ta.astype(np.float64) @ rb).astype(np.float32), ref, rule).passed


# ---- the tables ----------------------------------------------------------------------------

def test_tables_per_precision():
    assert W.variants_for(shape(64, 64, 64)) == LADDER
    assert W.variants_for(shape(64, 64, 64, "fp32")) == LADDER
    assert [(v.name, v.kernel) for v in W.variants_for(shape(64, 64, 64, "bf16"))] == [
        ("wmma", "wmma_tc<1>"), ("mma_sync", "mma_tc<1, true, 128, 3>"), ("mma_wide", "mma_tc<1, true, 256, 4>"), ("cublas", None)]
    assert [(v.name, v.kernel) for v in W.variants_for(shape(64, 64, 64, "fp16"))] == [
        ("wmma", "wmma_tc<2>"), ("mma_sync", "mma_tc<2, true, 128, 3>"), ("mma_wide", "mma_tc<2, true, 256, 4>"), ("cublas", None)]
    assert [(v.name, v.kernel) for v in W.variants_for(shape(64, 64, 64, "tf32"))] == [
        ("wmma", "wmma_tc<0>"), ("cublas", None)]
    assert all(v.needs == "sm_80" for v in tensor.TENSOR_RUNGS)
    assert tensor.kernel_for(tensor.MMA_SYNC, "fp16", shape(7, 8, 12)) == "mma_tc<2, false, 128, 3>"
    assert tensor.kernel_for(tensor.MMA_SYNC, "fp16", shape(7, 12, 16)) == "mma_tc<2, false, 128, 3>"
    assert tensor.kernel_for(tensor.MMA_SYNC, "fp16", shape(7, 8, 16)) == "mma_tc<2, true, 128, 3>"


def test_labels_fp32_unchanged():
    assert W.label(shape(4096, 4096, 4096)) == "4096x4096x4096"
    assert W.label(shape(4096, 4096, 4096, "bf16")) == "4096x4096x4096 precision=bf16"


def test_geometry_and_traffic_of_the_tensor_rungs():
    assert W.geometry(tensor.WMMA, shape(129, 4097, 7, "bf16")) == ((65, 3), (128,))
    assert W.geometry(tensor.MMA_SYNC, shape(129, 4097, 7, "bf16")) == ((33, 2), (256,))
    assert W.geometry(tensor.MMA_WIDE, shape(129, 4097, 7, "bf16")) == ((17, 2), (256,))
    m, n, k = 512, 256, 1024
    t = W.traffic(shape(m, n, k, "bf16"), tensor.MMA_SYNC)
    assert t.bytes == 2 * (m * k + k * n) + 4 * m * n and t.flops == 2 * m * n * k
    assert t.extra["model_bytes"] == 2 * (m * k * 2 + k * n * 4) + 4 * m * n
    assert W.traffic(shape(m, n, k, "tf32"), W.variant("cublas")).bytes == 4 * (m * k + k * n + m * n)
    assert W.traffic(shape(m, n, k), W.variant("cublas")) == model_traffic(m, n, k, None)  # FP32: 4 B each
    assert W.device_bytes(shape(m, n, k, "fp16")) == 2 * (m * k + k * n) + 4 * m * n


def test_wrong_precision_for_a_rung_is_a_usage_error():
    with pytest.raises(UsageError, match="runs on the tensor cores; give --precision"):
        W.job(tensor.WMMA, shape(8, 8, 8), {"device": None})
    with pytest.raises(UsageError, match="naive is an FP32 rung; with --precision bf16 choose from wmma, mma_sync"):
        W.job(W.variant("naive"), shape(8, 8, 8, "bf16"), {"device": None})
    with pytest.raises(UsageError, match="mma_sync has no tf32 kernel"):
        W.job(tensor.MMA_SYNC, shape(8, 8, 8, "tf32"), {"device": None})
    with pytest.raises(UsageError, match="precision must be one of"):
        W.validate(shape(8, 8, 8, "int8"))


@pytest.mark.parametrize("args", [("64", "64", "64", "--precision", "int8"),
                                  ("64", "64", "64", "--precision", "bf16,"),
                                  ("64", "64", "64", "--precision", "")])
def test_cli_bad_precision_is_one_line_exit_2(run_cli, args):
    code, _, err = run_cli("gemm", *args)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and "--precision" in err


# ---- NVRTC ---------------------------------------------------------------------------------

@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_tensor_kernels_compile_without_spills(arch):
    names = tensor.kernel_names()
    assert len(names) == 11  # wmma x 3 precisions, mma_sync and mma_wide x 2 precisions x 2 load paths
    unit = compile_unit("gemm", names, arch)
    for name in names:
        r = unit.ptxas[name]
        assert 0 < r.registers <= 255 and r.spill_stores == 0 and r.spill_loads == 0, f"{name}: {r}"
    # wmma: one stage of A and B, padded, or C's 64 x 68 floats: the larger (17,408 B)
    assert unit.ptxas["wmma_tc<1>"].static_smem == 64 * 68 * 4
    assert unit.ptxas["mma_tc<1, true, 128, 3>"].static_smem == 0  # dynamic: tensor.mma_smem
    assert (tensor.mma_smem("mma_sync"), tensor.mma_smem("mma_wide")) == (56832, 108544)


def test_tensor_kernels_need_sm_80():
    with pytest.raises(NeedsNewerArch) as info:
        compile_unit("gemm", ["mma_tc<1, true, 128, 3>"], "sm_75", use_cache=False)
    assert info.value.arch == "sm_80"


# ---- mutations (compiled here; run on the GPU below) ---------------------------------------

def mutated_source(tmp_path: Path, old: str, new: str) -> Path:
    """gemm.cu with gemm_tc.cuh inlined and one piece of it replaced (the mutation)."""
    tc = (shipped_kernels_dir() / "gemm_tc.cuh").read_text()
    assert tc.count(old) == 1, old
    text = (shipped_kernels_dir() / "gemm.cu").read_text().replace('#include "gemm_tc.cuh"', tc.replace(old, new))
    path = tmp_path / "gemm_mutant.cu"
    path.write_text(text)
    return path


MUTATIONS = {  # name -> (kernel, old text, new text)
    "dropped_k_tile": ("mma_tc<1, true, 128, 3>", "        if (next < KT)\n",
                       "        if (next < KT && next != 3)\n"),
    "transposed_fragment": ("mma_tc<1, true, 256, 4>", "const int a_row = lane % 16, a_col = (lane / 16) * 8;",
                            "const int a_row = (lane / 16) * 8 + lane % 8, a_col = ((lane / 8) % 2) * 8;"),
    "wrong_stage": ("mma_tc<2, true, 128, 3>", "As = stage_a(kt % MT_STAGES);",
                    "As = stage_a((kt + 1) % MT_STAGES);"),
    "wrong_swizzle": ("wmma_tc<1>", "As[r * LDA + c] = (m0", "As[r * LDA + (c ^ 8)] = (m0"),
}


@pytest.mark.parametrize("name", MUTATIONS)
def test_mutants_compile(name, tmp_path):
    kernel, old, new = MUTATIONS[name]
    unit = compile_unit("gemm", [kernel], "sm_90", source=mutated_source(tmp_path, old, new), use_cache=False)
    assert kernel in unit.lowered


# ---- on the GPU ----------------------------------------------------------------------------

ODD = (1, 7, 129, 4095, 4097)


@pytest.mark.gpu
@pytest.mark.parametrize("p", prec.TENSOR)
def test_every_rung_passes_odd_shapes(p):
    from gpu_helpers import assert_all_pass, check_rows  # noqa: PLC0415

    shapes = [shape(m, n, k, p) for m, n, k in (
        (1, 1, 1), (7, 7, 7), (129, 129, 129), (129, 7, 4097), (7, 4097, 129), (4095, 129, 7), (4097, 4095, 1),
        (1, 4097, 4095), (256, 512, 4096), (4097, 4097, 4097))]
    rows = check_rows("gemm", shapes)
    assert {r.variant for r in rows} == {v.name for v in W.variants_for(shape(1, 1, 1, p))}
    assert_all_pass(rows)


@pytest.mark.gpu
@pytest.mark.parametrize("name", MUTATIONS)
def test_mutants_fail(name, tmp_path):
    from pmppbench.runner import run_shape  # noqa: PLC0415

    kernel, old, new = MUTATIONS[name]
    src = mutated_source(tmp_path, old, new)
    like = {"128": "mma_sync", "256": "mma_wide"}[kernel.split(", ")[-2]] if kernel.startswith("mma_tc") else "wmma"
    p = "fp16" if "<2" in kernel else "bf16"
    from pmppbench.workloads.base import Variant  # noqa: PLC0415

    mutant = Variant("mutant", kernel, f"{name}", source=str(src), like=like)
    rows = run_shape(W, shape(512, 384, 1024, p), protocol=W.protocol, check_only=True, seed=2, variants=[mutant])
    assert [r.check for r in rows] == ["FAIL"], rows[0].check_detail or rows[0].error


@pytest.mark.gpu
def test_learner_kernel_like_mma_sync_passes(tmp_path):
    """The shipped mma_tc source as a learner's file, run --like mma_sync (dynamic shared memory opted in)."""
    from pmppbench.runner import run_shape  # noqa: PLC0415
    from pmppbench.workloads.base import Variant  # noqa: PLC0415

    src = mutated_source(tmp_path, "mma_tc(const unsigned short*", "mma_tc(const unsigned short*")
    mine = Variant("mine", "mma_tc<1, true, 128, 3>", "mine", source=str(src), like="mma_sync")
    rows = run_shape(W, shape(1024, 1024, 1024, "bf16"), protocol=replace(W.protocol, reps=2, batches=2, warmup=1),
                     seed=4, variants=[mine])
    assert rows[0].check == "PASS" and rows[0].median_ms > 0, rows[0].error


@pytest.mark.gpu
def test_cublas_rows_pass_and_are_fast():
    from gpu_helpers import assert_all_pass, check_rows  # noqa: PLC0415

    rows = check_rows("gemm", [shape(2048, 2048, 2048, p) for p in prec.TENSOR], variants=["cublas"])
    assert_all_pass(rows)
    assert [r.variant for r in rows] == ["cublas"] * 3
    assert all(math.isfinite(r.max_rel_err) and r.max_rel_err > 0 for r in rows)  # a real FP32 sum, not exact


# ---- the roofline and the implausible-rate warning know each precision's peak --------------

def test_tensor_rows_are_measured_against_their_precisions_peak():
    from pmppbench.derive import speed_of_light  # noqa: PLC0415
    from pmppbench.noise import diagnose  # noqa: PLC0415
    from pmppbench.roofline import COMPUTE_BOUND, Ceilings  # noqa: PLC0415
    from pmppbench.row import Result  # noqa: PLC0415

    roofs = [Ceilings("theoretical", 4800.0, 66900.0, tensor_gflops={"bf16": 989_400.0, "tf32": 494_700.0}),
             Ceilings("measured", 4000.0, 51000.0)]
    m = n = k = 4096
    t = W.traffic(shape(m, n, k, "bf16"), W.variant("cublas"))
    ms = t.flops / 800e12 * 1e3  # 800 TFLOP/s
    row = Result("gemm", "cublas", "x", dims=shape(m, n, k, "bf16"), check="PASS", median_ms=ms, bytes=t.bytes,
                 flops=t.flops)
    sol = speed_of_light(row, roofs)
    assert sol["bound"] == COMPUTE_BOUND and sol["ridge_flop_per_byte"] == pytest.approx(989_400 / 4800)
    assert sol["sol_pct_theoretical"] == pytest.approx(100 * 800_000 / 989_400)
    assert "sol_pct_measured" not in sol  # no measured tensor roof: no % of the FP32 one
    row.sol_pct_theoretical = sol["sol_pct_theoretical"]
    assert not [w for w in diagnose(row) if "implausible" in w]
    fp32 = replace(row, dims=shape(m, n, k))  # the same rate read as FP32 is implausible
    fp32.sol_pct_theoretical = speed_of_light(fp32, roofs)["sol_pct_theoretical"]
    assert [w for w in diagnose(fp32) if "implausible" in w]
