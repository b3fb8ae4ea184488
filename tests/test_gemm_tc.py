"""GEMM's tensor-core precisions (--precision tf32,bf16,fp16): rounding, the check rule and
what it catches, the tables, the kernels' compile, and (marked gpu) every rung against the
float64 reference on odd shapes, mutated kernels that must FAIL, and a learner's kernel
--like mma_sync."""

from __future__ import annotations

import math
from dataclasses import replace
from types import SimpleNamespace
from pathlib import Path

import numpy as np
import pytest

from pmppbench.cli import tools
from pmppbench import workloads
from pmppbench.measure.check import compare
from pmppbench.hardware.compile import NeedsNewerArch, compile_unit, device_target, shipped_kernels_dir, target_meets
from pmppbench.errors import UsageError
from pmppbench.workloads.gemm import check as gemm_check
from pmppbench.workloads.gemm import precision as prec
from pmppbench.hardware import tma
from pmppbench.workloads.gemm import tensor, tensor_best
from pmppbench.workloads.gemm.tensor_best import TcConfig
from pmppbench.workloads.base import Context
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


# ---- mma_sync's TF32 fragments, emulated ----------------------------------------------------
# gemm_tc.cuh mma_tf32_tc feeds mma.sync.m16n8k8 .tf32 from 32-bit words: A through ldmatrix.b16
# (no .trans), B through LDS.128 with the warp's columns dealt to its n8 tiles as 4 nu + j, C
# stored in that order. Here one warp's 64 x 32 tile over one k8 step, every instruction by its
# PTX definition (the lanes' fragment elements), on integers (exact sums): the kernel's maps give
# A B, and a map the kernel's comment rules out FAILs the check.

def _tf32_warp_tile(a, b, lane_map, deal, store):
    """C (64 x 32) of one warp from A (64 x 8) and B (8 x 32) in shared memory (row-major, any
    pad), as mma_tf32_tc's k8 step computes it with these lane maps."""
    lanes = np.arange(32)
    g, t = lanes // 4, lanes % 4
    lm_row, lm_k = lane_map(lanes)
    c = np.zeros((64, 32))
    for i in range(4):
        # ldmatrix.x4.b16: matrix q's 8 rows from lanes 8q..8q+7; lane l gets the b16 pair
        # 2(l % 4), 2(l % 4) + 1 of row l / 4: one word
        rows, cols = 16 * i + lm_row, lm_k
        frag = np.array([[a[rows[8 * q + l // 4], cols[8 * q + l // 4] + l % 4] for q in range(4)] for l in lanes])
        for j in range(4):
            # LDS.128 at k rows t, t + 4, columns 4g .. 4g + 3: word j is tile j's b0 / b1
            b0, b1 = b[t, deal(g, j)], b[t + 4, deal(g, j)]
            # mma.m16n8k8 .tf32: A[g][t] = a0, A[g + 8][t] = a1, A[g][t + 4] = a2, A[g + 8][t + 4] = a3;
            # B[t][g] = b0, B[t + 4][g] = b1; D[g][2t], D[g][2t + 1], D[g + 8][2t], D[g + 8][2t + 1]
            fa, fb = np.zeros((16, 8)), np.zeros((8, 8))
            fa[g, t], fa[g + 8, t], fa[g, t + 4], fa[g + 8, t + 4] = frag.T
            fb[t, g], fb[t + 4, g] = b0, b1
            d = fa @ fb
            for h in range(2):
                for e in range(2):
                    c[16 * i + g + 8 * h, store(t, j, e)] = d[g + 8 * h, 2 * t + e]
    return c


KERNEL_LANES = lambda lane: (lane % 16, (lane // 16) * 4)  # noqa: E731 (lm_row, lm_k)
KERNEL_DEAL = lambda g, j: 4 * g + j  # noqa: E731 (tile j's column nu)
KERNEL_STORE = lambda t, j, e: 8 * t + 4 * e + j  # noqa: E731 (c0 / c1 of tile j: nu = 2t + e)


@pytest.mark.parametrize("mutant", [None, "transposed_fragment", "k_half", "consecutive_deal"])
def test_mma_sync_tf32_fragment_maps(mutant):
    rng = np.random.default_rng(8)
    a = rng.integers(-8, 9, (64, 8)).astype(np.float64)
    b = rng.integers(-8, 9, (8, 32)).astype(np.float64)
    lanes, deal, store = KERNEL_LANES, KERNEL_DEAL, KERNEL_STORE
    if mutant == "transposed_fragment":  # the GPU mutant's ldmatrix lanes: registers 1 and 2 swapped
        lanes = lambda lane: ((lane // 16) * 8 + lane % 8, ((lane // 8) % 2) * 4)  # noqa: E731
    elif mutant == "k_half":  # lanes 16-31 read k 0-3 again
        lanes = lambda lane: (lane % 16, 0 * lane)  # noqa: E731
    elif mutant == "consecutive_deal":  # B dealt as 8j + nu (LDS.32s), C still stored as 4 nu + j
        deal = lambda g, j: 8 * j + g  # noqa: E731
    c = _tf32_warp_tile(a, b, lanes, deal, store)
    result = compare(c.astype(np.float32), a @ b, W.tolerance_for(shape(64, 32, 8, "tf32")))
    assert result.passed is (mutant is None)
    if mutant is None:
        assert np.array_equal(c, a @ b)


# ---- the tables ----------------------------------------------------------------------------

def test_tables_per_precision():
    assert W.variants_for(shape(64, 64, 64)) == LADDER
    assert W.variants_for(shape(64, 64, 64, "fp32")) == LADDER
    assert [(v.name, v.kernel) for v in W.variants_for(shape(64, 64, 64, "bf16"))] == [
        ("wmma", "wmma_tc<1>"), ("mma_sync", "mma_tc<1, true, 128, 3>"), ("mma_wide", "mma_tc<1, true, 256, 4>"),
        ("wgmma", "wgmma_tc<1, true>"), ("wgmma_ws", "wgmma_ws_tc<1, true>"),
        ("wgmma_persist", "wgmma_ws_tc<1, true, true>"), ("best", "wgmma_ws_tc<1, true, true>"), ("cublas", None)]
    assert [(v.name, v.kernel) for v in W.variants_for(shape(64, 64, 64, "fp16"))] == [
        ("wmma", "wmma_tc<2>"), ("mma_sync", "mma_tc<2, true, 128, 3>"), ("mma_wide", "mma_tc<2, true, 256, 4>"),
        ("wgmma", "wgmma_tc<2, true>"), ("wgmma_ws", "wgmma_ws_tc<2, true>"),
        ("wgmma_persist", "wgmma_ws_tc<2, true, true>"), ("best", "wgmma_ws_tc<2, true, true>"), ("cublas", None)]
    assert [(v.name, v.kernel) for v in W.variants_for(shape(64, 64, 64, "tf32"))] == [
        ("wmma", "wmma_tc<0>"), ("mma_sync", "mma_tf32_tc<true>"), ("wgmma", "wgmma_tc<0, true>"), ("wgmma_ws", "wgmma_ws_tc<0, true>"),
        ("wgmma_persist", "wgmma_ws_tc<0, true, true>"), ("best", "wgmma_ws_tc<0, true, true>"), ("cublas", None)]
    assert [v.needs for v in tensor.TENSOR_RUNGS] == ["sm_80", "sm_80", "sm_80", "sm_90a", "sm_90a", "sm_90a"]
    assert tensor.kernel_for(tensor.WGMMA_PERSIST, "bf16", shape(7, 8, 12)) == "wgmma_ws_tc<1, false, true>"
    assert tensor.kernel_for(tensor.WGMMA, "bf16", shape(7, 8, 12)) == "wgmma_tc<1, false>"
    assert tensor.kernel_for(tensor.WGMMA, "fp16", shape(7, 8, 16)) == "wgmma_tc<2, true>"
    assert tensor.kernel_for(tensor.WGMMA_WS, "fp16", shape(7, 8, 12)) == "wgmma_ws_tc<2, false>"
    assert tensor.kernel_for(tensor.WGMMA_WS, "tf32", shape(7, 8, 12)) == "wgmma_ws_tc<0, false>"
    assert tensor.kernel_for(tensor.WGMMA, "tf32", shape(7, 8, 16)) == "wgmma_tc<0, true>"
    assert tensor.kernel_for(tensor.MMA_SYNC, "fp16", shape(7, 8, 12)) == "mma_tc<2, false, 128, 3>"
    assert tensor.kernel_for(tensor.MMA_SYNC, "fp16", shape(7, 12, 16)) == "mma_tc<2, false, 128, 3>"
    assert tensor.kernel_for(tensor.MMA_SYNC, "fp16", shape(7, 8, 16)) == "mma_tc<2, true, 128, 3>"
    assert tensor.kernel_for(tensor.MMA_SYNC, "tf32", shape(7, 8, 16)) == "mma_tf32_tc<true>"
    assert tensor.kernel_for(tensor.MMA_SYNC, "tf32", shape(7, 12, 16)) == "mma_tf32_tc<false>"
    assert tensor.kernels_of("mma_sync") == ["mma_tf32_tc<true>", "mma_tf32_tc<false>", *(
        f"mma_tc<{p}, {a}, 128, 3>" for p in (1, 2) for a in ("true", "false"))]  # both load paths, no more
    assert not [k for k in tensor.kernels_of("mma_wide") if "tf32" in k or k.startswith("mma_tc<0")]


def test_labels_fp32_unchanged():
    assert W.label(shape(4096, 4096, 4096)) == "4096x4096x4096"
    assert W.label(shape(4096, 4096, 4096, "bf16")) == "4096x4096x4096 precision=bf16"


def test_geometry_and_traffic_of_the_tensor_rungs():
    assert W.geometry(tensor.WMMA, shape(129, 4097, 7, "bf16")) == ((65, 3), (128,))
    assert W.geometry(tensor.MMA_SYNC, shape(129, 4097, 7, "bf16")) == ((33, 2), (256,))
    assert W.geometry(tensor.MMA_WIDE, shape(129, 4097, 7, "bf16")) == ((17, 2), (256,))
    assert W.geometry(tensor.WGMMA, shape(129, 4097, 7, "bf16")) == ((17, 2), (256,))
    assert W.geometry(tensor.WGMMA_WS, shape(129, 4097, 7, "bf16")) == ((17, 2), (384,))  # + the producer
    # persistent: a block per SM, or per tile when there are fewer (34 here); one per tile without the SM count
    assert W.geometry(tensor.WGMMA_PERSIST, shape(129, 4097, 7, "bf16")) == ((34,), (384,))
    assert tensor.persistent_grid(shape(4096, 4096, 1024), 132) == (132,)
    assert tensor.persistent_grid(shape(129, 4097, 7), 132) == (34,)
    # TF32 turns the wgmma rungs' tile to 256 x 128 (gemm_wgmma.cuh wg_tile_tf32)
    assert W.geometry(tensor.WGMMA, shape(129, 4097, 7, "tf32")) == ((33, 1), (256,))
    assert W.geometry(tensor.WGMMA_WS, shape(257, 4097, 7, "tf32")) == ((33, 2), (384,))
    assert tensor.persistent_grid(shape(257, 4097, 7, "tf32"), 132) == (66,)
    assert W.geometry(tensor.WMMA, shape(129, 4097, 7, "tf32")) == ((65, 3), (128,))  # wmma's own tile
    m, n, k = 512, 256, 1024
    t = W.traffic(shape(m, n, k, "bf16"), tensor.MMA_SYNC)
    assert t.bytes == 2 * (m * k + k * n) + 4 * m * n and t.flops == 2 * m * n * k
    assert t.extra["model_bytes"] == 2 * (m * k * 2 + k * n * 4) + 4 * m * n
    # wgmma's 128 x 256 tiles: A read N / 256 times, B M / 128 times
    assert W.traffic(shape(m, n, k, "bf16"), tensor.WGMMA).extra["model_bytes"] == 2 * (m * k * 1 + k * n * 4) + 4 * m * n
    assert W.traffic(shape(m, n, k, "tf32"), W.variant("cublas")).bytes == 4 * (m * k + k * n + m * n)
    # TF32's 256 x 128 tiles: A read N / 128 times, B M / 256 times
    assert W.traffic(shape(m, n, k, "tf32"), tensor.WGMMA_WS).extra["model_bytes"] == 4 * (m * k * 2 + k * n * 2) + 4 * m * n
    assert W.traffic(shape(m, n, k), W.variant("cublas")) == model_traffic(m, n, k, None)  # FP32: 4 B each
    assert W.device_bytes(shape(m, n, k, "fp16")) == 2 * (m * k + k * n) + 4 * m * n


def test_wrong_precision_for_a_rung_is_a_usage_error():
    with pytest.raises(UsageError, match="runs on the tensor cores; give --precision"):
        W.job(tensor.WMMA, shape(8, 8, 8), Context({}, None))
    with pytest.raises(UsageError, match="naive is an FP32 rung; with --precision bf16 choose from wmma, mma_sync"):
        W.job(W.variant("naive"), shape(8, 8, 8, "bf16"), Context({}, None))
    with pytest.raises(UsageError, match="mma_wide has no tf32 kernel; with --precision tf32 choose from wmma, mma_sync"):
        W.job(tensor.MMA_WIDE, shape(8, 8, 8, "tf32"), Context({}, None))
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

@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_90a"])
def test_tensor_kernels_compile_without_spills(arch):
    # wmma x 3 precisions, mma_sync x 3 precisions and mma_wide x 2 x 2 load paths, wgmma,
    # wgmma_ws and wgmma_persist x 3 precisions x 2 load paths, best's 128 x 192 and 128 x 128
    # tiles x 2 precisions x (persistent or not); the wgmma kernels only for sm_90a
    names = [k for k in tensor.kernel_names() if target_meets(arch, "sm_90a") or not k.startswith("wgmma")]
    assert len(names) == (39 if arch == "sm_90a" else 13)
    # read from the unit the other suites build for this target (every GEMM kernel it can
    # hold: test_gemm, test_compile, test_portability_compile), so a run compiles it once
    unit = compile_unit("gemm", [k for k in W.kernel_names() if k not in tools.skipped_on(W, arch)[1]], arch)
    for name in names:
        r = unit.ptxas[name]
        assert 0 < r.registers <= 255 and r.spill_stores == 0 and r.spill_loads == 0, f"{name}: {r}"
    # wmma: one stage of A and B, padded, or C's 64 x 68 floats: the larger (17,408 B)
    assert unit.ptxas["wmma_tc<1>"].static_smem == 64 * 68 * 4
    assert unit.ptxas["mma_tc<1, true, 128, 3>"].static_smem == 0  # dynamic: tensor.mma_smem
    assert (tensor.mma_smem("mma_sync"), tensor.mma_smem("mma_wide")) == (56832, 108544)
    # mma_sync's TF32 kernel: the same dynamic bytes (3 stages of 128 x 20 + 16 x 136 words) and
    # registers for 2 blocks of 256 threads an SM, as the 16-bit one
    assert 3 * (128 * 20 + 16 * 136) * 4 == tensor.mma_smem("mma_sync")
    for aligned in ("true", "false"):
        r = unit.ptxas[f"mma_tf32_tc<{aligned}>"]
        assert r.static_smem == 0 and r.registers <= 128, r
    # wgmma: 4 stages of 16 + 32 KB, 1 KB to align them, 4 barriers (8 with warp specialization):
    # within Hopper's 227 KB opt-in
    assert tensor.smem_bytes("wgmma") == 4 * 49152 + 1024 + 32 <= 227 * 1024
    assert tensor.smem_bytes("wgmma_ws") == 4 * 49152 + 1024 + 64 <= 227 * 1024
    if arch == "sm_90a":
        # ptxas serializes wgmma when other instructions write its registers while MMAs are in
        # flight (C7513 input registers, C7515 accumulators): no kernel may be built that way
        assert "C7513" not in unit.log and "C7515" not in unit.log and "serialized" not in unit.log
        assert unit.ptxas["wgmma_tc<1, true>"].static_smem == 0
        # the register cap of 384 threads in one block (65536 / 384, in 8s): what setmaxnreg redistributes
        assert unit.ptxas["wgmma_ws_tc<1, true>"].registers <= 168


def test_kernels_are_built_for_the_gpus_own_target_and_wgmma_only_for_sm_90a():
    assert [device_target(a) for a in ("sm_75", "sm_89", "sm_90", "sm_90a", "sm_120")] == [
        "sm_75", "sm_89", "sm_90a", "sm_90a", "sm_120"]
    from pmppbench.workloads.base import arch_meets  # noqa: PLC0415

    for arch in ("sm_80", "sm_90", "sm_100"):
        skipped, not_built = tools.skipped_on(W, arch)
        assert [v.name for v in skipped] == ["wgmma", "wgmma_ws", "wgmma_persist"]
        assert not_built == {f"{t}<{p}, {a}{more}>" for t, more in (("wgmma_tc", ""), ("wgmma_ws_tc", ""),
                                                                    ("wgmma_ws_tc", ", true"))
                             for p in (0, 1, 2) for a in ("true", "false")} | {
            f"wgmma_ws_tc<{p}, true, {persist}, {bn}>" for p in (1, 2) for persist in ("false", "true")
            for bn in (192, 128)}  # best's narrower tiles (tensor_best.py)
    assert tools.skipped_on(W, "sm_90a") == ([], set())
    assert arch_meets("9.0", "sm_90a") and not arch_meets("10.0", "sm_90a") and not arch_meets("8.9", "sm_90a")


def test_wgmma_needs_sm_90a_plain_sm_90_refuses_it():
    with pytest.raises(Exception, match="wgmma"):
        compile_unit("gemm", ["wgmma_tc<1, true>"], "sm_90", use_cache=False)


GROUP_M = "return WgElem<P>::GROUP_M;"  # gemm_wgmma.cuh wg_group_m: a copy with another G is a tile-order study


def test_the_grouped_tile_order_builds_for_sm_90a(tmp_path):
    """A copy of the kernels with another tile-order group G (studies/gemm_tile_order.py builds
    such copies beside the shipped kernels): every wgmma kernel compiles with it, without
    spills or serialized wgmma."""
    names = [k for k in tensor.kernel_names() if k.startswith("wgmma")]
    unit = compile_unit("gemm", names, "sm_90a", source=mutated_source(tmp_path, GROUP_M, "return 8;"), use_cache=False)
    for name in names:
        r = unit.ptxas[name]
        assert 0 < r.registers <= 255 and r.spill_stores == 0 and r.spill_loads == 0, f"{name}: {r}"
    assert "C7513" not in unit.log and "C7515" not in unit.log and "serialized" not in unit.log


# ---- best on the tensor cores (tensor_best.py) ---------------------------------------------

def test_tensor_best_names_and_kernels():
    """A configuration's name reads back (a config file or --variants runs it by name), its
    kernel is wgmma_ws_tc's (the rungs' own build where the tile is 128 x 256 or TF32's)."""
    for p in prec.TENSOR:
        for cfg in tensor_best.candidates(p):
            assert tensor_best.parse(cfg.name) == cfg and W.variant(cfg.name).name == cfg.name
    assert TcConfig(256, True).expression("bf16") == "wgmma_ws_tc<1, true, true>"  # wgmma_persist's
    assert TcConfig(256, False).expression("fp16") == "wgmma_ws_tc<2, true>"  # wgmma_ws's
    assert TcConfig(192, True).expression("bf16") == "wgmma_ws_tc<1, true, true, 192>"
    assert TcConfig(128, False).expression("fp16") == "wgmma_ws_tc<2, true, false, 128>"
    assert TcConfig(128, True).expression("tf32") == "wgmma_ws_tc<0, true, true>"  # TF32's one tile
    assert [c.bn for c in tensor_best.candidates("tf32")] == [128, 128]
    assert tensor_best.parse("tc_persist_n64") is None and tensor_best.parse("tc_persist_n192_x") is None
    with pytest.raises(UsageError, match="tc_persist_n192 has no tf32 kernel; tf32's tiles are 256 x 128"):
        W.job(W.variant("tc_persist_n192"), shape(64, 64, 64, "tf32"), Context({}, SimpleNamespace(sm_count=132)))
    assert W.kernels_of(W.variant("tc_persist_n192")) == tensor.kernels_of("wgmma_ws")
    assert "wgmma_ws_tc<1, true, true, 192>" in tensor.kernels_of("wgmma_ws")  # built where wgmma_ws is
    assert {"pad_copy<unsigned short>", "pad_copy<unsigned int>"} <= set(W.kernel_names())


def test_tensor_best_rule_by_the_last_wave():
    """The tile whose waves finish first on 132 SMs, weighed by a tile's work and TILE_SPEED;
    ties to the wider tile; persistent where the tiles are more than the SMs."""
    def pick(m, n, k, p="bf16", sms=132):
        return tensor_best.choose(p, m, n, k, sms).name

    assert pick(8192, 8192, 8192) == "tc_persist_n256"  # 2048 tiles: 15.5 waves run as 16
    assert pick(4096, 4096, 4096) == "tc_persist_n256"  # 512 tiles: 3.9 waves
    # 3000^3: 24 x 12 = 288 tiles of 128 x 256 (2.2 waves run as 3) against 24 x 16 = 384 of
    # 128 x 192 (2.9 waves run as 3, each tile 3/4 the work)
    assert tensor_best.tiles("bf16", 256, 3000, 3000) == 288 and tensor_best.tiles("bf16", 192, 3000, 3000) == 384
    assert pick(3000, 3000, 3000) == pick(3000, 3000, 3000, "fp16") == "tc_persist_n192"
    # 4095 x 4097: 17 tile columns of 256, the last one column wide (544 tiles, 5 waves); 33 of
    # 128 give 1056 tiles, 8 waves of half the work
    assert pick(4095, 4097, 4095) == "tc_persist_n128"
    assert pick(2048, 2048, 2048) == "tc_ws_n256"  # 128 tiles: one wave, one tile a block
    assert pick(1000, 1000, 1000) == "tc_ws_n128"  # 32 or 64 tiles: the GPU is not filled either way
    assert pick(3000, 3000, 3000, "tf32") == "tc_persist_n128"  # TF32 has one tile: 256 x 128
    assert tensor_best.wave_cost("bf16", 256, 4096, 4096, 132) == 4
    assert tensor_best.wave_cost("bf16", 192, 3000, 3000, 132) == pytest.approx(3 * 0.75 / tensor_best.TILE_SPEED[192])


def test_tensor_best_copies_only_what_tma_cannot_read():
    """TMA's row strides are multiples of 16 bytes: 8 elements of BF16 / FP16, 4 TF32 words.
    Where K or N is not, best copies that operand into rows padded to it, once a call."""
    assert tensor_best.needs_copy("bf16", 4096, 4096) == (False, False)
    assert tensor_best.needs_copy("bf16", 4095, 4096) == (True, False)  # A's rows are K long
    assert tensor_best.needs_copy("fp16", 4096, 4097) == (False, True)  # B's rows are N long
    assert tensor_best.needs_copy("tf32", 1004, 1012) == (False, False)  # 4 words are 16 bytes
    assert tensor_best.needs_copy("tf32", 1003, 1001) == (True, True)
    assert tensor_best.copied_elements("bf16", 100, 4097, 4095) == 100 * 4096 + 4095 * 4104
    assert tensor_best.copied_elements("tf32", 100, 64, 1003) == 100 * 1004
    m, n, k = 100, 4097, 4095
    assert W.device_bytes(shape(m, n, k, "bf16")) == 2 * (m * k + k * n + 100 * 4096 + 4095 * 4104) + 4 * m * n
    assert W.device_bytes(shape(64, 64, 64, "bf16")) == 2 * (2 * 64 * 64) + 4 * 64 * 64  # no copy


def test_tensor_best_launches(monkeypatch):
    """tensor_best.launches on the CPU (NumPy arrays, fake kernels, fake maps): the copies
    first, then wgmma_ws_tc on a persistent or 2-D grid with the maps of what it reads."""
    from pmppbench.hardware import compile as comp  # noqa: PLC0415

    made = []

    def fake_maps(precision, a, b, m, n, k, lda, ldb):
        made.append((a.shape, b.shape, lda, ldb))
        return tma.NoMap(), tma.NoMap()

    monkeypatch.setattr(tensor_best, "cupy", lambda: np)
    monkeypatch.setattr(tensor_best, "padded_maps", fake_maps)
    monkeypatch.setattr(comp.Kernel, "allow_dynamic_smem", lambda self, nbytes: None)

    def ctx_for(m, n, k, dtype=np.uint16):
        kernels = {e: comp.Kernel(name=e, function=None, registers=168, static_smem=0, local_bytes=0, max_threads=384,
                                  spill_bytes=0) for e in W.kernel_names()}
        return Context(kernels, None, a=np.zeros((m, k), dtype), b=np.zeros((k, n), dtype),
                       c=np.zeros((m, n), np.float32))

    ctx = ctx_for(4095, 4097, 4095)
    calls = tensor_best.launches(TcConfig(128, True), "bf16", shape(4095, 4097, 4095, "bf16"), ctx, 132)
    pad_a, pad_b, gemm = calls
    assert pad_a.kernel.name == pad_b.kernel.name == "pad_copy<unsigned short>"
    assert pad_a.grid == (2, 4095) and pad_a.args[2:] == (4095, 4095, 4096)  # 4096 / 8 threads: 2 blocks
    assert pad_b.grid == (3, 4095) and pad_b.args[2:] == (4095, 4097, 4104)
    assert made == [((4095, 4096), (4095, 4104), 4096, 4104)]
    assert gemm.kernel.name == "wgmma_ws_tc<1, true, true, 128>" and gemm.grid == (132,) and gemm.block == (384,)
    assert gemm.args[2] is pad_a.args[1] and gemm.args[3] is pad_b.args[1] and gemm.args[4] is ctx["c"]
    assert tuple(int(x) for x in gemm.args[5:]) == (4095, 4097, 4095)
    assert gemm.dynamic_smem == tensor.smem_bytes("wgmma_ws")  # the same stages at every width
    # aligned: no copy, the inputs themselves; one tile a block: the 2-D grid
    ctx = ctx_for(1000, 1000, 1000)
    (gemm,) = tensor_best.launches(TcConfig(128, False), "fp16", shape(1000, 1000, 1000, "fp16"), ctx, 132)
    assert gemm.grid == (8, 8) and gemm.args[2] is ctx["a"] and gemm.args[3] is ctx["b"]
    ctx = ctx_for(600, 1001, 1003, np.float32)  # TF32: 4-word rows
    pad_a, pad_b, gemm = tensor_best.launches(TcConfig(128, True), "tf32", shape(600, 1001, 1003, "tf32"), ctx, 132)
    assert pad_a.kernel.name == "pad_copy<unsigned int>" and pad_a.args[4] == 1004 and pad_b.args[4] == 1004
    assert gemm.kernel.name == "wgmma_ws_tc<0, true, true>" and gemm.grid == (24,)  # 3 x 8 tiles of 256 x 128


def test_tensor_best_row_and_model():
    """Each tensor precision's table has a best row before cuBLAS; it needs sm_90a, and its
    model is the tiles `choose` names for the GPU (without the GPU's facts: no model)."""
    for p in prec.TENSOR:
        names = [v.name for v in W.variants_for(shape(64, 64, 64, p))]
        assert names[-2:] == ["best", "cublas"]
        assert W.variants_for(shape(64, 64, 64, p))[-2].needs == "sm_80"  # mma_sync's, where wgmma is not
    m, n, k = 3000, 3000, 3000
    hopper = SimpleNamespace(sm_count=132, compute_capability="9.0")
    row = W.traffic(shape(m, n, k, "bf16"), W.variant("best"), hopper)  # 128 x 192 tiles
    assert row.extra["model_bytes"] == 2 * (m * k * math.ceil(n / 192) + k * n * math.ceil(m / 128)) + 4 * m * n
    assert "model_bytes" not in W.traffic(shape(m, n, k, "bf16"), W.variant("best")).extra
    # a GPU without wgmma (an A100, an RTX 4090, sm_100): best is mma_sync, its fastest rung
    for cc in ("8.0", "8.9", "10.0"):
        gpu = SimpleNamespace(sm_count=108, compute_capability=cc)
        assert tensor_best.config_for("best", shape(m, n, k, "bf16"), gpu) is None
        assert W.traffic(shape(m, n, k, "bf16"), W.variant("best"), gpu) == W.traffic(shape(m, n, k, "bf16"),
                                                                                      tensor.MMA_SYNC, gpu)


# ---- TMA maps (encoded by the driver on the GPU; their layout here) --------------------------

def test_tma_layouts_are_the_kernels_boxes():
    assert tma.a_layout(4096, 1024, "bf16") == ((1024, 4096), (2048,), (64, 128))  # K inner, M rows; 128 B rows
    assert tma.b_layout(1024, 264, "fp16") == ((264, 1024), (528,), (64, 64))  # N inner, K rows
    # TF32 in FP32 words: 32 of them a 128-byte row (the k-tile), B in boxes of 32 x 32
    assert tma.a_layout(4096, 1024, "tf32") == ((1024, 4096), (4096,), (32, 256))  # TF32's tile: 256 rows
    assert tma.b_layout(1024, 264, "tf32") == ((264, 1024), (1056,), (32, 32))
    for p in ("bf16", "tf32"):
        for layout in (tma.a_layout(7, 8, p), tma.b_layout(8, 4104, p)):
            tma.check_layout(*layout, p)
    with pytest.raises(ValueError, match="multiples of 16"):
        tma.check_layout(*tma.a_layout(64, 12, "bf16"), "bf16")  # K = 12: 24-byte rows
    with pytest.raises(ValueError, match="too large"):
        tma.check_layout((128, 8), (256,), (128, 8), "fp16")  # 256-byte box rows: past the swizzle's 128
    with pytest.raises(ValueError, match="too large"):
        tma.check_layout((128, 8), (512,), (64, 8), "tf32")  # 64 FP32 words: 256 bytes


def test_wgmma_takes_the_maps_first_and_zero_maps_off_the_tma_path():
    ctx = {"a": "A", "b": "B", "c": "C"}  # the device arrays only pass through here
    args = tensor.kernel_args("wgmma", "bf16", shape(7, 9, 12, "bf16"), ctx)
    assert len(args) == 8 and args[2:5] == ("A", "B", "C") and [int(x) for x in args[5:]] == [7, 9, 12]
    assert [a.ptr for a in args[:2]] == [mp.words.ctypes.data for mp in ctx["tma_maps"]]
    assert all(not mp.words.any() and mp.words.nbytes == tma.MAP_BYTES for mp in ctx["tma_maps"])
    assert [a.ptr for a in tensor.kernel_args("wgmma_ws", "bf16", shape(7, 9, 12, "bf16"), ctx)[:2]] == [
        a.ptr for a in args[:2]]  # the same maps
    assert tensor.kernel_args("mma_sync", "bf16", shape(7, 9, 12, "bf16"), {"a": 1, "b": 2, "c": 3})[:3] == (1, 2, 3)


def test_tensor_kernels_need_sm_80():
    with pytest.raises(NeedsNewerArch) as info:
        compile_unit("gemm", ["mma_tc<1, true, 128, 3>"], "sm_75", use_cache=False)
    assert info.value.arch == "sm_80"


# ---- mutations (compiled here; run on the GPU below) ---------------------------------------

def mutated_source(tmp_path: Path, old: str, new: str) -> Path:
    """gemm.cu with gemm_tc.cuh and gemm_wgmma.cuh inlined and one piece of them replaced (the mutation)."""
    wg = (shipped_kernels_dir() / "gemm_wgmma.cuh").read_text()
    tc = (shipped_kernels_dir() / "gemm_tc.cuh").read_text().replace('#include "gemm_wgmma.cuh"', wg)
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
    # wgmma: a k-tile's MMAs skipped; A's descriptors naming the 64-byte swizzle the TMA boxes
    # are not in (B's too would read past the stages: an illegal address, not a FAIL); tiles
    # stored unswizzled on the path without TMA; no wait for the copies
    "wgmma_dropped_k_tile": ("wgmma_tc<1, true>", "            wg_tile<P>(d, stage_a(s), stage_b(s), wg);\n",
                             "            if (kt != 3) wg_tile<P>(d, stage_a(s), stage_b(s), wg);\n"),
    "wgmma_wrong_swizzle": ("wgmma_tc<2, true>", "wg_desc(As + wg * 64 * 128 + kk * 32, 16, 1024)",
                            "(wg_desc(As + wg * 64 * 128 + kk * 32, 16, 1024) ^ (3ull << 62))"),
    "wgmma_unswizzled_store": ("wgmma_tc<1, false>", "(((cb >> 4) ^ (r & 7)) << 4)", "((cb >> 4) << 4)"),
    "wgmma_missed_mbarrier_wait": ("wgmma_tc<1, true>", "mbar_wait(&full[s], (kt / WG_STAGES) & 1);  // tile kt",
                                   "// no wait: tile kt"),
    # TF32 (C^T = B^T A^T, B^T's fragments loaded by the threads): fragment registers 1 and 2
    # swapped (rows for k), and the k8 step's upper four k read as its lower four
    "wgmma_tf32_transposed_fragment": ("wgmma_tc<0, true>", "f[kk][h + 2 * kh] =", "f[kk][2 * h + kh] ="),
    "wgmma_tf32_k_half": ("wgmma_ws_tc<0, true>", "wg_swizzle(kk * 8 + t + 4 * kh, cb)", "wg_swizzle(kk * 8 + t, cb)"),
    # mma_sync's TF32 kernel (mma_tf32_tc): a k-tile never loaded, A's ldmatrix lanes giving
    # fragment registers 1 and 2 swapped (on the path without cp.async), b1 read at k rows t
    # instead of t + 4
    "tf32_dropped_k_tile": ("mma_tf32_tc<true>", "        if (ahead < tiles)\n",
                            "        if (ahead < tiles && ahead != 3)\n"),
    "tf32_transposed_fragment": ("mma_tf32_tc<false>", "const int lm_row = lane % 16, lm_k = (lane / 16) * 4;",
                                 "const int lm_row = (lane / 16) * 8 + lane % 8, lm_k = ((lane / 8) % 2) * 4;"),
    "tf32_b_k_half": ("mma_tf32_tc<true>", "Bs + (kk + t + 4) * MF_LDB", "Bs + (kk + t) * MF_LDB"),
    # persistent blocks: the consumers' walk over the tiles off the producer's (C stored one tile
    # column over); a walk that waits for tiles never loaded would hang, not FAIL
    "wgmma_persist_wrong_origin": ("wgmma_ws_tc<1, true, true>",
                                   "n0 = tn * BN;\n            float d[E::ACC];",
                                   "n0 = (tn + 1) % tiles_n * BN;\n            float d[E::ACC];"),
}
# Not kept: wgmma_ws's consumers without their wait on `full` faulted on the H200 (unspecified
# launch failure): caught, but as a dead context, not
# as a FAIL row, and a fault takes every later test of the process with it.


def mutant_like(kernel: str) -> str:
    """The rung whose job a mutated kernel runs in."""
    if kernel.startswith("mma_tf32_tc"):
        return "mma_sync"
    if kernel.startswith("mma_tc"):
        return {"128": "mma_sync", "256": "mma_wide"}[kernel.split(", ")[-2]]
    if kernel.endswith(", true>") and kernel.startswith("wgmma_ws_tc"):
        return "wgmma_persist"
    return {"wgmma_tc": "wgmma", "wgmma_ws_tc": "wgmma_ws"}.get(kernel.split("<")[0], "wmma")


@pytest.mark.parametrize("name", MUTATIONS)
def test_mutants_compile(name, tmp_path):
    kernel, old, new = MUTATIONS[name]
    unit = compile_unit("gemm", [kernel], device_target("sm_90"), source=mutated_source(tmp_path, old, new),
                        use_cache=False)
    assert kernel in unit.lowered


# ---- on the GPU ----------------------------------------------------------------------------

ODD = (1, 7, 129, 4095, 4097)


@pytest.mark.gpu
@pytest.mark.parametrize("p", prec.TENSOR)
def test_every_rung_passes_odd_shapes(p):
    from gpu_helpers import assert_all_pass, check_rows  # noqa: PLC0415

    shapes = [shape(m, n, k, p) for m, n, k in (
        (1, 1, 1), (7, 7, 7), (129, 129, 129), (129, 7, 4097), (7, 4097, 129), (4095, 129, 7), (4097, 4095, 1),
        (1, 4097, 4095), (256, 512, 4096), (4097, 4097, 4097),
        # K and N multiples of 8 (mma_tc's cp.async, wgmma's TMA): partial tiles on every edge
        (1, 8, 8), (7, 8, 4096), (129, 264, 136), (4095, 4104, 1032), (4097, 520, 4104))]
    rows = check_rows("gemm", shapes)
    assert {r.variant for r in rows} == {v.name for v in W.variants_for(shape(1, 1, 1, p))}
    from pmppbench.hardware import device  # noqa: PLC0415
    from pmppbench.workloads.base import arch_meets  # noqa: PLC0415

    gpu = device.current()
    absent = {v.name: v.needs for v in W.variants_for(shape(1, 1, 1, p)) if not arch_meets(gpu.compute_capability, v.needs)}
    skips = [r for r in rows if r.variant in absent]  # wgmma off Hopper: SKIP rows that say why
    assert all(r.check == "SKIP" and r.check_detail.startswith(f"needs {absent[r.variant]}") for r in skips)
    assert_all_pass([r for r in rows if r.variant not in absent])


@pytest.mark.gpu
@pytest.mark.parametrize("p", prec.TENSOR)
def test_every_tensor_best_configuration_passes_odd_shapes(p):
    """Every configuration tensor_best.choose may name, on partial tiles at every edge, with
    A and / or B copied for TMA (K or N off 16 bytes), persistent blocks walking several
    tiles each (528 and 272 tiles on the GPU's SMs) and one tile a block."""
    from gpu_helpers import assert_all_pass  # noqa: PLC0415

    from pmppbench.engine.worker.pipeline import run_shape  # noqa: PLC0415

    variants = [W.variant(c.name) for c in tensor_best.candidates(p)]
    shapes = ((1, 1, 1), (129, 7, 4097), (4095, 129, 7), (4097, 4095, 129), (129, 264, 136), (7, 4104, 1032),
              (2000, 4097, 1003), (300, 40000, 72))
    rows = []
    for i, (m, n, k) in enumerate(shapes):
        rows += run_shape(W, shape(m, n, k, p), protocol=W.protocol, check_only=True, seed=11 + i, variants=variants)
    assert len(rows) == len(shapes) * len(variants)
    assert_all_pass(rows)


@pytest.mark.gpu
@pytest.mark.parametrize("p", ["bf16", "tf32"])
def test_the_grouped_tile_order_covers_every_tile(p, tmp_path):
    """The wgmma rungs built from a copy with the group G = 3 pass where the tile rows are no
    multiple of 3 (a short last group), where there are fewer rows than a group (each grid of
    more than one wave, so that it is walked in groups) and on a grid of one wave (row-major):
    a tile the order missed keeps its poison and FAILs, one it visited twice races."""
    from gpu_helpers import assert_all_pass  # noqa: PLC0415

    from pmppbench.engine.worker.pipeline import run_shape  # noqa: PLC0415
    from pmppbench.workloads.base import Variant  # noqa: PLC0415

    src = str(mutated_source(tmp_path, GROUP_M, "return 3;"))
    rungs = [Variant(f"{n}_g3", tensor.kernel_for(W.variant(n), p), "G = 3", source=src, like=n)
             for n in ("wgmma", "wgmma_ws", "wgmma_persist")]
    rows = []
    # tile rows (BF16's 128 / TF32's 256): 32 / 16, 8 / 4, 2 / 1 in grids of 300-1300 tiles; then 2 x 2
    for i, (m, n, k) in enumerate(((4000, 4104, 264), (1000, 40000, 136), (200, 40000, 64), (129, 264, 136))):
        rows += run_shape(W, shape(m, n, k, p), protocol=W.protocol, check_only=True, seed=3 + i, variants=rungs)
    assert len(rows) == 12
    assert_all_pass(rows)


# On the H200 wgmma's missed wait still computes the right C at the mutants' shape, even with
# the shared memory scribbled before the run (the copies land
# before the tensor cores read), so no check can FAIL it there; compute-sanitizer's synccheck
# reports it ("Missing wait"), and the test below holds it to that.
SEEN_BY_SYNCCHECK = ("wgmma_missed_mbarrier_wait",)

# One checked run of a learner's kernel (argv: FILE.cu, NAME) in wgmma's job, for the sanitizer.
SYNCCHECK_DRIVER = """
import sys
from pmppbench import workloads
from pmppbench.engine.worker.pipeline import run_shape
from pmppbench.workloads.base import Variant
W = workloads.get("gemm")
v = Variant("mutant", sys.argv[2], "under synccheck", source=sys.argv[1], like="wgmma")
rows = run_shape(W, {"m": 512, "n": 384, "k": 1024, "precision": "bf16"}, protocol=W.protocol,
                 check_only=True, seed=5, variants=[v])
print("ROW", rows[0].check, rows[0].check_detail or rows[0].error)
"""


@pytest.mark.gpu
@pytest.mark.parametrize("name", [n for n in MUTATIONS if n not in SEEN_BY_SYNCCHECK])
def test_mutants_fail(name, tmp_path):
    from pmppbench.engine.worker.pipeline import run_shape  # noqa: PLC0415

    kernel, old, new = MUTATIONS[name]
    src = mutated_source(tmp_path, old, new)
    p = "tf32" if kernel.startswith("mma_tf32_tc") else {"0": "tf32", "1": "bf16", "2": "fp16"}[kernel.split("<")[1][0]]
    from pmppbench.workloads.base import Variant  # noqa: PLC0415

    mutant = Variant("mutant", kernel, f"{name}", source=str(src), like=mutant_like(kernel))
    k = 1020 if "false" in kernel else 1024  # the path without TMA: K not a multiple of 8
    # each mutant its own inputs: a missed wait reads whatever the stage held, and the shared
    # memory left by the previous mutant's run of the same inputs would be the right tiles
    seed = 2 + list(MUTATIONS).index(name)
    rows = run_shape(W, shape(512, 384, k, p), protocol=W.protocol, check_only=True, seed=seed, variants=[mutant])
    assert [r.check for r in rows] == ["FAIL"], rows[0].check_detail or rows[0].error


@pytest.mark.gpu
@pytest.mark.parametrize("name", SEEN_BY_SYNCCHECK)
def test_a_missed_mbarrier_wait_is_reported_by_synccheck(name, tmp_path):
    """The mutant under compute-sanitizer's synccheck reports a missing wait; the shipped
    kernel, run the same way, reports no error and PASSes."""
    import os  # noqa: PLC0415
    import shutil  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    tool = shutil.which("compute-sanitizer")
    if tool is None:
        pytest.skip("compute-sanitizer is not on PATH (it comes with the CUDA toolkit)")
    kernel, old, new = MUTATIONS[name]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    out = {}
    for label, replacement in (("mutant", new), ("shipped", old)):
        (tmp_path / label).mkdir()
        src = mutated_source(tmp_path / label, old, replacement)
        run = subprocess.run([tool, "--tool", "synccheck", "--report-api-errors", "no", sys.executable, "-c",
                              SYNCCHECK_DRIVER, str(src), kernel], capture_output=True, text=True, env=env, timeout=300)
        out[label] = run.stdout + run.stderr
    assert "Missing wait" in out["mutant"], out["mutant"][-2000:]
    assert "ROW PASS" in out["shipped"] and "ERROR SUMMARY: 0 errors" in out["shipped"], out["shipped"][-2000:]

@pytest.mark.gpu
@pytest.mark.parametrize("p, kernel, signature", [("bf16", "mma_tc<1, true, 128, 3>", "mma_tc(const unsigned short*"),
                                                  ("tf32", "mma_tf32_tc<true>", "mma_tf32_tc(const unsigned*")])
def test_learner_kernel_like_mma_sync_passes(tmp_path, p, kernel, signature):
    """The shipped mma_tc source as a learner's file, run --like mma_sync (dynamic shared memory opted in)."""
    from pmppbench.engine.worker.pipeline import run_shape  # noqa: PLC0415
    from pmppbench.workloads.base import Variant  # noqa: PLC0415

    src = mutated_source(tmp_path, signature, signature)
    mine = Variant("mine", kernel, "mine", source=str(src), like="mma_sync")
    rows = run_shape(W, shape(1024, 1024, 1024, p), protocol=replace(W.protocol, reps=2, batches=2, warmup=1),
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
    from pmppbench.results.derive import speed_of_light  # noqa: PLC0415
    from pmppbench.measure.noise import diagnose  # noqa: PLC0415
    from pmppbench.measure.roofline import COMPUTE_BOUND, Ceilings  # noqa: PLC0415
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


def test_the_docs_picks_are_the_rules():
    """docs/gemm-shapes.md's table of picks is what the two rules name on 132 SMs for every
    shape of configs/gemm_shapes.toml (so a changed rule fails here until the page follows)."""
    from pmppbench.cli import config  # noqa: PLC0415
    from pmppbench.workloads.gemm.best import CHOICES, choose  # noqa: PLC0415

    names = {id(v): k for k, v in CHOICES.items()}
    page = (Path(__file__).resolve().parent.parent / "docs" / "gemm-shapes.md").read_text()
    rows = {}
    for line in page.split("## The picks on 132 SMs")[1].split("\n## ")[0].splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 4 and " x " in cells[0]:
            rows[tuple(int(x) for x in cells[0].split(" x "))] = cells[1:]
    shapes = {(s["m"], s["n"], s["k"]) for s in config.load("gemm_shapes").sections[0].shapes}
    assert set(rows) == shapes and len(shapes) >= 20
    assert all(any(d % 128 for d in s) for s in shapes)  # each off the tile in some dimension
    for (m, n, k), (fp32, tf32, half) in rows.items():
        def named(p):
            return tensor_best.choose(p, m, n, k, 132).name + (" + copies" if any(tensor_best.needs_copy(p, k, n)) else "")

        assert (fp32, tf32, half) == (names[id(choose(m, n, k, 132))], named("tf32"), named("bf16")), (m, n, k)
        assert named("fp16") == named("bf16")
