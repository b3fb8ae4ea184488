"""wgmma's missed-mbarrier-wait mutant (tests/test_gemm_tc.py) checked at several shapes, each
three times in one process: PASS means the check did not see the missing wait. Each shape is
checked as it is, then with every multiprocessor's shared memory scribbled with 0xFF bytes (NaN
in BF16) just before the checked run: if the missed wait reads stale tiles, those are NaN."""
import sys
from pathlib import Path

sys.path.insert(0, "tests")
from test_gemm_tc import MUTATIONS, mutated_source  # noqa: E402

from pmppbench import workloads  # noqa: E402
from pmppbench.runner import run_shape  # noqa: E402
from pmppbench.workloads.base import Variant  # noqa: E402

W = workloads.get("gemm")
from pmppbench.gpu import cupy  # noqa: E402

cp = cupy()
SMEM = 227 * 1024
scribble = cp.RawKernel(r"""
extern "C" __global__ void scribble(int words) {
    extern __shared__ unsigned int s[];
    for (int i = threadIdx.x; i < words; i += blockDim.x) s[i] = 0xFFFFFFFFu;
    __syncthreads();
    if (s[(threadIdx.x * 7) % words] == 1u) s[0] = 0u;  // keep the stores
}""", "scribble")
scribble.max_dynamic_shared_size_bytes = SMEM
kernel, old, new = MUTATIONS["wgmma_missed_mbarrier_wait"]
src = mutated_source(Path("/tmp/m"), old, new)
mutant = Variant("mutant", kernel, "missed wait", source=str(src), like="wgmma")
shapes = [tuple(int(x) for x in s.split("x")) for s in (sys.argv[1] if len(sys.argv) > 1 else
          "512x384x1024,4096x4096x4096,8192x8192x1024,132x256x8192").split(",")]
class Scribbled(type(W)):
    def job(self, variant, shape, ctx):
        job = super().job(variant, shape, ctx)
        poison = job.poison

        def poisoned():
            poison()
            scribble((132 * 4,), (1024,), (cp.int32(SMEM // 4),), shared_mem=SMEM)
        job.poison = poisoned
        return job


for m, n, k in shapes:
    for i in range(int(sys.argv[2]) if len(sys.argv) > 2 else 3):
        for name, w in (("as is", W), ("scribbled", Scribbled())):
            rows = run_shape(w, {"m": m, "n": n, "k": k, "precision": "bf16"}, protocol=W.protocol, check_only=True,
                             seed=10 + i, variants=[mutant])
            r = rows[0]
            print(f"{m}x{n}x{k} #{i} {name}: {r.check} {r.check_detail or r.error}", flush=True)
