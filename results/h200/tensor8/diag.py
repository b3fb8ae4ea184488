"""Where wgmma_tc's output comes from, on one 128 x 256 x 64 tile (FP16: small integers exact).

With A[m, k] = 1 where k = m % 64, C[m, n] = B[m % 64, n]: B holding its own row index (then
its column index) shows which element of B each C element read. With B[k, n] = 1 where
k = n % 64, C[m, n] = A[m, n % 64]: A holding its row (then column) index shows A's side.
Prints the first disagreements of each path (TMA and the stores) and exits 1 if any."""

from __future__ import annotations

import sys

import numpy as np

from pmppbench.compile import load_kernels
from pmppbench.gpu import cupy
from pmppbench.workloads.gemm import tensor, tma

cp = cupy()
M, N, K = 128, 256, 64
eye_a = np.zeros((M, K), np.float32)
eye_a[np.arange(M), np.arange(M) % K] = 1
eye_b = np.zeros((K, N), np.float32)
eye_b[np.arange(N) % K, np.arange(N)] = 1
rows_b, cols_b = np.meshgrid(np.arange(K), np.arange(N), indexing="ij")
rows_a, cols_a = np.meshgrid(np.arange(M), np.arange(K), indexing="ij")
cases = {"B rows": (eye_a, rows_b), "B cols": (eye_a, cols_b), "A rows": (rows_a, eye_b), "A cols": (cols_a, eye_b)}
bad = 0
for aligned in (True, False):
    name = f"wgmma_tc<2, {'true' if aligned else 'false'}>"
    kernel = load_kernels("gemm", [name])[name]
    kernel.allow_dynamic_smem(tensor.WGMMA_SMEM)
    for case, (a, b) in cases.items():
        da, db = cp.asarray(a.astype(np.float16)), cp.asarray(b.astype(np.float16))
        c = cp.full((M, N), -1.0, dtype=cp.float32)
        maps = tma.maps("fp16", da, db, M, N, K) if aligned else (tma.NoMap(), tma.NoMap())
        kernel((1, 1), (256,), (maps[0].arg, maps[1].arg, da, db, c, np.int32(M), np.int32(N), np.int32(K)),
               shared_mem=tensor.WGMMA_SMEM)
        got = cp.asnumpy(c)
        want = a.astype(np.float64) @ b.astype(np.float64)
        wrong = np.argwhere(got != want)
        print(f"{name} {case}: {len(wrong)} of {M * N} wrong", flush=True)
        for m, n in wrong[:12]:
            print(f"   C[{m},{n}] = {got[m, n]:g}, want {want[m, n]:g}")
        bad += len(wrong)
sys.exit(1 if bad else 0)
