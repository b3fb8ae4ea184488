"""The GEMM tile sweep (docs/gemm.md, "Tuning"): the register- and warp-tiled rungs at
other tiles, beside the rungs they were tuned from and cuBLAS. A study workload, outside the
shipped table; run it from the repository root with

    PMPPBENCH_WORKLOADS=gemm_tuning=tuning PYTHONPATH=studies/gemm PMPPBENCH_KERNEL_PATH=studies/gemm \\
        pmppbench all --config studies/gemm/tuning.toml --out gemm_sweep.csv

A candidate's name spells its parameters: <kernel>_<BM>x<BN>x<BK>_w<WM>x<WN>_i<WNITER>_t<TM>x<TN>,
kernel db = double_buffer, ca = cp_async, wt = warptile. To try another point, add one line to
SWEEP_TILES and its name to tuning.toml; tests/test_gemm.py compiles every point (no spills,
< 255 registers) and its GPU tests check each on edge shapes. The kernels are the shipped
templates (gemm_tuning.cu includes gemm_warptile.cuh).
"""

from __future__ import annotations

from pmppbench.workloads.base import Variant
from pmppbench.workloads.gemm.ladder import COVERS, CUBLAS, RUNGS
from pmppbench.workloads.gemm.tiles import Cover, Tiles
from pmppbench.workloads.gemm.workload import Gemm

# Each keeps registers < 255 with no spills (tests/test_gemm.py checks).
SWEEP_TILES = (
    ("double_buffer", Tiles(128, 128, 8, 64, 32, 2, 4, 4)),
    ("double_buffer", Tiles(128, 128, 16, 32, 64, 2, 4, 4)),
    ("double_buffer", Tiles(128, 64, 16, 32, 32, 1, 4, 4)),
    ("double_buffer", Tiles(64, 128, 8, 32, 64, 2, 4, 4)),
    ("double_buffer", Tiles(64, 64, 8, 32, 32, 1, 4, 4)),
    ("warptile", Tiles(128, 128, 16, 64, 64, 4, 8, 4)),  # the worklog's A6000 kernel 10, 128 threads
    ("cp_async", Tiles(128, 128, 8, 64, 32, 2, 4, 4)),
    ("cp_async", Tiles(64, 128, 8, 32, 64, 2, 4, 4)),
    ("cp_async", Tiles(64, 64, 8, 32, 32, 1, 4, 4)),
)
PREFIX = {"warptile": "wt", "double_buffer": "db", "cp_async": "ca"}

SWEEP = tuple(
    Variant(f"{PREFIX[template]}_{tiles.tag()}", tiles.kernel(template),
            f"sweep: {template} with BMxBNxBK {tiles.bm}x{tiles.bn}x{tiles.bk}, warp tile "
            f"{tiles.wm}x{tiles.wn} (x{tiles.wniter} along N), {tiles.tm}x{tiles.tn} per lane step")
    for template, tiles in SWEEP_TILES)
TUNED_FROM = ("warptile", "double_buffer", "cp_async", "tuned")  # the rungs of the same templates


class GemmTuning(Gemm):
    """gemm's FP32 job, model and check on the sweep's table: cuBLAS, the rungs the sweep tuned
    (their kernels are all in gemm_warptile.cuh) and the candidates."""

    name = "gemm_tuning"
    title = "GEMM tile sweep (FP32): tile candidates beside the rungs they were tuned from"
    about = "The GEMM tile sweep: double_buffer, cp_async and warptile at other tiles, beside cuBLAS."
    axes = ()  # FP32 only
    variants = (CUBLAS, *(v for v in RUNGS if v.name in TUNED_FROM), *SWEEP)
    baseline = "warptile"
    covers = {**{n: c for n, c in COVERS.items() if n in TUNED_FROM},
              **{v.name: Cover.of(t) for v, (_, t) in zip(SWEEP, SWEEP_TILES)}}

    extra_kernels = ()  # the table's own kernels: none of best's or the tensor cores'
    kernel_labels = {}

    def variants_for(self, shape):
        return self.variants


WORKLOAD = GemmTuning()
