"""The transpose's study forms as a workload, `transpose_forms`: the coarsened forms docs/transpose.md
measured beside the ones `best` picks and that no table runs. Each is an instantiation of a shipped
template (kernels_cu/transpose_sector.cuh, transpose_tma.cuh) or one of the two kernels of
studies/forms/transpose_forms.cu, launched as the shipped forms are (transpose.coarsened_launch).

    PYTHONPATH=studies/forms PMPPBENCH_KERNEL_PATH=studies/forms \\
    PMPPBENCH_WORKLOADS=transpose_forms=transpose_forms pmppbench transpose_forms 4097 4097

Every form is checked bit for bit against A^T, as the shipped ones.
"""

from __future__ import annotations

import numpy as np

from pmppbench.hardware import tma
from pmppbench.workloads import transpose as tr
from pmppbench.workloads.base import Launch, Unavailable, Variant

TILE, WIDE = tr.COARSENED_TILE, tr.WIDE_ROWS
LINES_GROUP, LINES_COLS = 32, 96  # coarsened_sector_tma_lines: A's rows a row of its maps; a box row (three lines)

FORMS = (
    Variant("coarsened_tma_store", f"coarsened_tma_store<{TILE}, false>",
            "coarsened_tma with B's tile stored by TMA too (two swizzled 32-column boxes)", needs="sm_90"),
    Variant("coarsened_tma_store_ef", f"coarsened_tma_store<{TILE}, true>",
            "coarsened_tma_store with an L2 evict-first policy on the engine's stores", needs="sm_90"),
    Variant("coarsened_tma_store_wide_ef", f"coarsened_tma_store<{WIDE}, true>",
            "coarsened_tma_store_wide with an L2 evict-first policy on the engine's stores", needs="sm_90"),
    tr.sector_form(TILE, False),  # coarsened_sector
    tr.sector_form(WIDE, False),  # coarsened_sector_tall
    tr.sector_form(WIDE, True),  # coarsened_sector_tall_vec
    *(Variant(f"coarsened_sector_tma_any_p{p}", f"coarsened_sector_tma_any<{TILE}, false>",
              f"coarsened_sector_tma_any through a map with {p or 'no'}-byte L2 promotion (the shipped maps': 256)",
              needs="sm_90") for p in (128, 0)),
    Variant("coarsened_sector_bulk", f"coarsened_sector_bulk<{TILE}, false>",
            "coarsened_sector's pieces of B, A's tile rows loaded by one bulk copy each (272 bytes from 16), every "
            "row at its 128-byte lines' offset in shared memory: any N, made for N not a multiple of 4", needs="sm_90"),
    Variant("coarsened_sector_bulk_sec", f"coarsened_sector_bulk<{TILE}, true>",
            "coarsened_sector_bulk with each copy 288 bytes from the 32-byte sector at or before the row (whole "
            "sectors at both ends)", needs="sm_90"),
    Variant("coarsened_sector_tma_lines", f"coarsened_sector_tma_lines<{TILE}>",
            "coarsened_sector_bulk's layout (each tile row at its 128-byte lines' offset) filled by 32 TMA boxes of "
            "96 columns through a map of A's rows 32 at a time (a pitch of whole lines): any N, made for N not a "
            "multiple of 4", needs="sm_90"),
)
PROMOTION = {"coarsened_sector_tma_any_p128": 128, "coarsened_sector_tma_any_p0": 0}  # the map's L2 promotion


def sector_tma_lines_unavailable(m: int, n: int) -> str | None:
    """Why coarsened_sector_tma_lines cannot run at M x N, or None where it can: its maps have floor(M / 32)
    rows of 32N elements (TMA's coordinates are int32)."""
    if m < LINES_GROUP or max(m, LINES_GROUP * n) >= 1 << 31:
        return (f"needs M >= {LINES_GROUP} and {LINES_GROUP}N below 2^31, M too (its maps have floor(M / "
                f"{LINES_GROUP}) rows of {LINES_GROUP}N elements; TMA's coordinates are int32)")
    return None


def rows_of_32_maps(a, m: int, n: int) -> tuple[tma.TensorMap, tma.TensorMap]:
    """coarsened_sector_tma_lines' maps of A (M x N FP32, row-major): 32N contiguous elements (A's rows
    32k .. 32k + 31) by floor(M / 32) rows, a row stride of 128N bytes (whole lines at any N), boxes of
    96 columns x 2 and x 3 such rows, no swizzle (384-byte box rows), zeros past the edges; A's last
    M % 32 rows are not in them (the kernel loads them)."""
    return tuple(tma.TensorMap("fp32", a.data.ptr, (LINES_GROUP * n, m // LINES_GROUP), (4 * LINES_GROUP * n,),
                               (LINES_COLS, height), swizzle=False) for height in (2, 3))


class TransposeForms(tr.Transpose):
    name = "transpose_forms"
    title = "Matrix transpose: the study forms"
    about = "The coarsened transpose's forms measured beside best's and not shipped (studies/forms/transpose_forms.cu)."
    variants = (*(v for v in tr.Transpose.variants if v.name in ("coarsened", "memcpy")), *FORMS)
    baseline = "coarsened"

    def variants_for(self, shape):
        return self.variants

    def job(self, variant, shape, ctx, index=None):
        if variant.name not in {v.name for v in FORMS}:
            return super().job(variant, shape, ctx, index)
        m, n = shape["m"], shape["n"]
        a, b = ctx["a"], ctx["b"]
        geometry = self.geometry(variant, shape)
        if variant.kernel.startswith("coarsened_sector_tma_lines"):
            why = sector_tma_lines_unavailable(m, n) or ("needs A on 16 bytes (a tensor map's address)"
                                                         if a.data.ptr % 16 else None)
            if why:
                raise Unavailable(f"{variant.name} {why}")
            two, three = tr.cached(ctx, ("rows of 32 maps", a.data.ptr), lambda: rows_of_32_maps(a, m, n))
            launch = Launch(ctx.kernels[variant.kernel], *geometry, (two.arg, three.arg, a, b, np.uint64(m),
                                                                         np.uint64(n)))
        elif variant.kernel.startswith("coarsened_sector_bulk") and a.data.ptr % 16:
            raise Unavailable(f"{variant.name} needs A on 16 bytes (its bulk copies start on 16 bytes)")
        else:
            launch = tr.coarsened_launch(variant, shape, ctx, geometry, PROMOTION.get(variant.name, tma.PROMOTION))
        return tr.output_job(launch, b.reshape((n, m)), ctx, launch=launch, transposed=True)


WORKLOAD = TransposeForms()
