"""GEMM C = A*B, FP32 row-major (PMPP 5.3-5.6 and 6.1-6.3): the workload's declaration.

C[M,N] = A[M,K] B[K,N]. The table climbs the book's ladder -- naive, tiled16/32, coarsened,
register tiling, corner turning, dynamic shared memory -- then the rungs towards cuBLAS:
2D block tiling with 8x8 per thread, warp tiling, double buffering, a cp.async pipeline,
the tuned tile, and `best`, a configuration per shape (best.py). `cublas` is `cupy.matmul`
on the same FP32 data and is the "% of" column's reference. Each rung is described in
docs/gemm.md; every kernel is in kernels_cu/gemm.cu.

`--precision tf32,bf16,fp16` runs the tensor-core table instead (tensor.py, kernels_cu/gemm_tc.cuh,
docs/tensor_cores.md): the inputs rounded to the precision, C in FP32, the rungs wmma,
mma_sync, mma_wide, wgmma, wgmma_ws, wgmma_persist (sm_90a) and cuBLAS of the same precision. A shape without the key is FP32, as before.

The check is normwise against a float64 product of the same inputs (check.py); products
above FULL_CHECK_MAX_MNK multiply-adds are checked exactly on whole sampled rows and columns
of C instead of all of it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from pmppbench.measure.check import Tolerance
from pmppbench.errors import UsageError
from pmppbench.hardware.gpu import cupy
from pmppbench.measure.protocol import Protocol
from pmppbench.workloads.base import Axis, Job, Launch, Sizes, Workload
from pmppbench.workloads.gemm import check, tensor, tensor_best
from pmppbench.workloads.gemm import precision as prec
from pmppbench.workloads.gemm.best import BEST, CHOICES, PIPELINED_TILES, choose
from pmppbench.workloads.gemm.configs import Config, padding_for, parse
from pmppbench.workloads.gemm.ladder import COVERS, CUBLAS, DYNAMIC_TILE, MIN_TILE_ROWS, RUNGS
from pmppbench.workloads.gemm.launch import PAD_KERNEL, config_launches, dynamic_tile_depth
from pmppbench.workloads.gemm.model import traffic
from pmppbench.workloads.gemm.tiles import Cover
from pmppbench.workloads.helpers import (
    SAMPLE, check_row_tiles, checked_indices, device_context, grid_2d, launches_job, loaded, output_job,
    random_array, upload_sample,
)

LADDER = (*RUNGS, BEST, CUBLAS)  # the default table, in its order
MAX_DIM = 1 << 30  # kernels index with int and step by a tile: keep K + tile far from 2^31
# Each tensor-core rung launches its kernel for each precision it runs (and mma_tc's unaligned
# load path): every one of them, as tensor.kernel_labels() lists them.
TENSOR = tuple(replace(v, kernels=tuple(tensor.kernels_of(v.name))) for v in tensor.TENSOR_RUNGS)
# What compile builds beyond the table's kernels: every kernel best may choose (with
# pipelined_padded's copies, pad_rows), the tensor best's copies, every tensor-core kernel.
EXTRA = (*dict.fromkeys(c.expression for c in CHOICES.values()), PAD_KERNEL,
         *dict.fromkeys(tensor_best.PAD_KERNEL.values()), *tensor.kernel_names())


def _labels() -> dict[str, str]:
    """compile's names for the kernels best chooses from (the choices' keys) and the tensor kernels."""
    uses: dict[str, list[str]] = {}
    for key, cfg in CHOICES.items():
        uses.setdefault(cfg.expression, []).append(key)
    labels = {kernel: ", ".join([*(v.name for v in (*LADDER, *TENSOR) if v.kernel == kernel and v.name != "best"),
                                 f"best ({', '.join(keys)})"]) for kernel, keys in uses.items()}
    return {**labels, **tensor.kernel_labels()}


def sampled(shape) -> bool:
    """Whether the product is checked on sampled rows and columns (above FULL_CHECK_MAX_MNK)."""
    return shape["m"] * shape["n"] * shape["k"] > check.FULL_CHECK_MAX_MNK


def config(variant, shape, device) -> Config | None:
    """The configuration `variant` runs on `shape` on a GPU with `device`'s facts: best's
    choice for its SM count (None without the facts), or the configuration a variant's name
    names (Config.variant(); the studies run them). One rule for the job and the traffic model."""
    if variant.name == BEST.name:
        return None if device is None else choose(shape["m"], shape["n"], shape["k"], device.sm_count)
    return parse(variant.name)


class Gemm(Workload):
    name = "gemm"
    title = "GEMM C = A*B (FP32, row-major)"
    about = ("FP32 GEMM C = A*B: the PMPP ladder from naive to register tiling, with cuBLAS beside it; "
             "--precision tf32,bf16,fp16 for the tensor-core rungs.")
    dims = ("m", "n", "k")
    dim_help = {"m": "Rows of C and A.", "n": "Columns of C and B.", "k": "Columns of A, rows of B."}
    axes = (Axis("precision", "Input precisions, comma-separated: fp32 (the CUDA-core ladder, the default), "
                 "tf32, bf16, fp16 (the tensor-core rungs and cuBLAS of that precision; C is FP32).",
                 many=True, sweep=True, choices=prec.PRECISIONS),)
    protocol = Protocol(warmup=3, batches=5, reps=20)
    variants = LADDER + TENSOR
    extra_kernels = EXTRA
    kernel_labels = _labels()
    covers = COVERS  # variant name -> how its fixed launch covers C (a study adds its own)
    baseline = "naive"
    roof = "cublas"
    rate = "GFLOP/s"

    # ---- shapes ----------------------------------------------------------------------
    # The course's sizes; its K = 18 tail; a K % 4 != 0 that also breaks every tile edge; one
    # column; one element; K % 4 == 0 but not % 8 with partial 128x128 tiles on both edges (the
    # float4 paths at the edges); a tiny all-partial float4 case.
    sizes = Sizes(default={"m": 1024, "n": 1024, "k": 1024}, checks=tuple({"m": m, "n": n, "k": k} for m, n, k in (
        (512, 512, 512), (1024, 1024, 1024), (513, 257, 18), (1000, 999, 17), (33, 1, 65), (1, 1, 1),
        (257, 260, 36), (7, 4, 12))))

    def variant(self, name):
        """A variant of the table, or any configuration by its Config.name (the studies' and
        `--variants`' way to time one beside best, e.g. pl_128x256x16_w64x64_i4_t4x4_chk_nf)."""
        try:
            return super().variant(name)
        except UsageError:
            cfg, tc = parse(name), tensor_best.parse(name)
            if cfg is None and tc is None:
                raise
            if cfg is not None:
                return cfg.variant()
            return replace(tensor_best.config_variant(tc), kernels=tuple(tensor.kernels_of("wgmma_ws")))

    def variants_for(self, shape):
        p = prec.of(shape)
        if p != "fp32":  # the precision's rungs, each with its kernel for it, its best, cuBLAS
            return (*tensor.variants_for(p, CUBLAS)[:-1], tensor_best.variant(p), CUBLAS)
        return LADDER

    def call_note(self, shape):
        """best's call is two or three launches where it picks pipelined_padded (a shape with
        K % 16 != 0 or N % 4 != 0 that fills the GPU with 128 x 256 tiles): say so."""
        m, n, k = shape["m"], shape["n"], shape["k"]
        pad = padding_for(PIPELINED_TILES, m, n, k)
        if prec.of(shape) != "fp32" or not pad.b:
            return ""
        copies = "A and B" if pad.a else "B"
        return (f"best, where its kernel is pipelined_padded: {1 + pad.a + pad.b} launches a call (pad_rows copies "
                f"{copies} into zero-padded buffers, then the GEMM kernel)")

    def tolerance_for(self, shape):
        return Tolerance("normwise", rtol=check.rtol_for(shape["k"], prec.of(shape)))

    def validate(self, shape):
        super().validate(shape)
        check_row_tiles(self.name, shape["m"], MIN_TILE_ROWS)
        for d in ("n", "k"):
            if shape[d] > MAX_DIM:
                raise UsageError(f"gemm: {d.upper()} = {shape[d]} is above the kernels' limit of {MAX_DIM} (2^30)")

    def device_bytes(self, shape):
        m, n, k = shape["m"], shape["n"], shape["k"]
        p = prec.of(shape)
        if p != "fp32":  # A, B, the copies best may make of them for TMA, C (FP32)
            return prec.ELEMENT_BYTES[p] * (m * k + k * n + tensor_best.copied_elements(p, m, n, k)) + 4 * m * n
        pad = padding_for(PIPELINED_TILES, m, n, k)  # the zero-padded copies best may make (pipelined_padded)
        return 4 * (m * k + 2 * k * n + m * n + pad.a_floats + pad.b_floats)  # A, B, B column-major, C, copies

    # ---- data ------------------------------------------------------------------------
    def make_inputs(self, shape, rng):
        m, n, k = shape["m"], shape["n"], shape["k"]
        p = prec.of(shape)  # the inputs as rounded to the precision: what the reference multiplies
        inputs = {"a": prec.rounded(random_array((m, k), rng), p), "b": prec.rounded(random_array((k, n), rng), p)}
        if sampled(shape):
            rows = checked_indices(m, check.SAMPLE_LINES, rng, check.SAMPLE_EDGE)
            inputs[SAMPLE] = (rows, checked_indices(n, check.SAMPLE_LINES, rng, check.SAMPLE_EDGE))
        return inputs

    def reference(self, shape, inputs, variant):
        # corner_turning reads a column-major copy of the same B: the same product, one reference.
        return check.reference(inputs["a"], inputs["b"], inputs.get(SAMPLE))

    def setup(self, shape, inputs, kernels):
        cp = cupy()
        p = prec.of(shape)
        if p != "fp32":  # the precision's words; no column-major B (corner_turning is FP32 only)
            ctx = device_context(kernels, a=cp.asarray(prec.stored(inputs["a"], p)),
                                 b=cp.asarray(prec.stored(inputs["b"], p)),
                                 c=cp.empty((shape["m"], shape["n"]), dtype=cp.float32))
            return upload_sample(inputs, ctx)
        a, b = cp.asarray(inputs["a"]), cp.asarray(inputs["b"])
        ctx = device_context(kernels, a=a, b=b, b_colmajor=cp.ascontiguousarray(b.T),  # N x K row-major
                             c=cp.empty((shape["m"], shape["n"]), dtype=cp.float32))
        return upload_sample(inputs, ctx)

    # ---- kernels ---------------------------------------------------------------------
    def geometry(self, variant, shape, device=None):
        """A rung's 2-D grid: one block of its cover's threads per BM x BN tile of C (a
        persistent rung: a block per SM, tensor.persistent_grid)."""
        cover = self.covers.get(variant.name)
        if cover is None:
            raise ValueError(f"gemm: {variant.name} is launched by its configuration, not by a fixed geometry")
        if variant.name in tensor.COVERS:
            cover = tensor.cover(variant.name, prec.of(shape))  # the wgmma rungs' TF32 tile is 256 x 128
        if variant.name in tensor.PERSISTENT:
            return tensor.persistent_grid(shape, None if device is None else device.sm_count), cover.block
        return grid_2d(shape["n"], shape["m"], cover.bn, cover.bm), cover.block

    def job(self, variant, shape, ctx) -> Job:
        cp = cupy()
        m, n, k = shape["m"], shape["n"], shape["k"]
        p = prec.of(shape)
        if p != "fp32" or variant.name in tensor.COVERS or tensor_best.parse(variant.name):
            return tensor_job(self, variant, shape, ctx, p)
        a, b, c = ctx["a"], ctx["b"], ctx["c"]
        device = ctx.device
        if variant.kernel is None:  # cublas: CuPy picks the SGEMM and its launch
            return output_job(lambda: cp.matmul(a, b, out=c), c, ctx)
        if variant.name not in self.covers:
            cfg = config(variant, shape, device)
            if cfg is None:
                raise UsageError(f"gemm: unknown variant {variant.name!r}")
            return launches_job(config_launches(cfg, shape, ctx, device.sm_count), c, ctx)
        kernel = ctx.kernels[variant.kernel]
        grid, block = self.geometry(variant, shape, device)
        args = (a, ctx["b_colmajor"] if variant.name == "corner_turning" else b, c,
                np.int32(m), np.int32(n), np.int32(k))
        smem = 0
        if variant.name == "dynamic_smem":
            tk, smem = dynamic_tile_depth(k, DYNAMIC_TILE, device.max_threads_per_sm, device.smem_per_sm,
                                          device.smem_per_block_optin)
            if smem > device.smem_per_block:
                kernel.allow_dynamic_smem(smem)  # above 48 KB needs the opt-in
            args += (np.int32(tk),)
        launch = Launch(kernel, grid, block, args, dynamic_smem=smem)
        return output_job(launch, c, ctx, launch=launch)

    # ---- model -----------------------------------------------------------------------
    def traffic(self, shape, variant, device=None):
        """model.traffic with the variant's cover of C: a rung's own, a configuration's
        tiles (for best, those `choose` names for `device`; without the GPU's facts best's
        row has the compulsory bytes and FLOPs and no model columns). cuBLAS has no model."""
        m, n, k = shape["m"], shape["n"], shape["k"]
        p = prec.of(shape)
        if p != "fp32":
            cfg = tensor_best.config_for(variant.name, shape, device)
            if variant.name == BEST.name and cfg is None and device is not None:
                variant = tensor.MMA_SYNC
            cover = (tensor.cover(variant.name, p) if variant.name in tensor.COVERS
                     else cfg.cover(p) if cfg is not None else None)
            return traffic(m, n, k, cover, prec.ELEMENT_BYTES[p])
        if variant.kernel is None:
            return traffic(m, n, k, None)
        cover, padding = self.covers.get(variant.name), None
        if cover is None:
            cfg = config(variant, shape, device)
            cover = None if cfg is None else Cover.of(cfg.tiles)
            padding = padding_for(cfg.tiles, m, n, k) if cfg is not None and cfg.padded else None
        return traffic(m, n, k, cover, padding=padding)


def tensor_job(w, variant, shape, ctx, p: str) -> Job:
    """A row of a tensor precision's table: cuBLAS of that precision, or a rung's kernel
    for it (loaded on first use when --variants named the rung: its kernel is per precision)."""
    m, n, k = shape["m"], shape["n"], shape["k"]
    cfg = tensor_best.config_for(variant.name, shape, ctx.device) if p != "fp32" else None
    if cfg is not None and cfg.bn not in tensor_best.WIDTHS[p]:
        raise UsageError(f"gemm: {cfg.name} has no {p} kernel; {p}'s tiles are "
                         f"{', '.join(f'{tensor_best.TILE_BM[p]} x {w}' for w in tensor_best.WIDTHS[p])}")
    if cfg is not None:
        return launches_job(tensor_best.launches(cfg, p, shape, ctx, ctx.device.sm_count), ctx["c"], ctx)
    if variant.name == BEST.name and p != "fp32":
        variant = tensor.MMA_SYNC  # a GPU without wgmma: its fastest rung (tensor_best.py)
    if variant.name not in tensor.COVERS and variant.kernel is not None:
        raise UsageError(f"gemm: {variant.name} is an FP32 rung; with --precision {p} choose from "
                         f"{', '.join(v.name for v in w.variants_for(shape))}")
    if p == "fp32":
        raise UsageError(f"gemm: {variant.name} runs on the tensor cores; give --precision tf32, bf16 or fp16")
    if variant.name not in [v.name for v in w.variants_for(shape)]:
        raise UsageError(f"gemm: {variant.name} has no {p} kernel; with --precision {p} choose from "
                         f"{', '.join(v.name for v in w.variants_for(shape))}")
    a, b, c = ctx["a"], ctx["b"], ctx["c"]
    if variant.kernel is None:
        return output_job(tensor.cublas_call(p, a, b, c, m, n, k), c, ctx)
    kernel = loaded(ctx, w.name, tensor.kernel_for(variant, p, shape))
    grid, block = w.geometry(variant, shape, ctx.device)
    smem = tensor.smem_bytes(variant.name)
    if smem:
        kernel.allow_dynamic_smem(smem)  # 3 or 4 stages: above the 48 KB without the opt-in
    launch = Launch(kernel, grid, block, tensor.kernel_args(variant.name, p, shape, ctx), dynamic_smem=smem)
    return output_job(launch, c, ctx, launch=launch)


WORKLOAD = Gemm()
