"""wgmma's missed-mbarrier-wait mutant (tests/test_gemm_tc.py) checked at several shapes, each
three times in one process: PASS means the check did not see the missing wait."""
import sys
from pathlib import Path

sys.path.insert(0, "tests")
from test_gemm_tc import MUTATIONS, mutated_source  # noqa: E402

from pmppbench import workloads  # noqa: E402
from pmppbench.runner import run_shape  # noqa: E402
from pmppbench.workloads.base import Variant  # noqa: E402

W = workloads.get("gemm")
kernel, old, new = MUTATIONS["wgmma_missed_mbarrier_wait"]
src = mutated_source(Path("/tmp/m"), old, new)
mutant = Variant("mutant", kernel, "missed wait", source=str(src), like="wgmma")
shapes = [tuple(int(x) for x in s.split("x")) for s in (sys.argv[1] if len(sys.argv) > 1 else
          "512x384x1024,4096x4096x4096,8192x8192x1024,132x256x8192").split(",")]
for m, n, k in shapes:
    for i in range(int(sys.argv[2]) if len(sys.argv) > 2 else 3):
        rows = run_shape(W, {"m": m, "n": n, "k": k, "precision": "bf16"}, protocol=W.protocol, check_only=True,
                         seed=10 + i, variants=[mutant])
        r = rows[0]
        print(f"{m}x{n}x{k} #{i}: {r.check} {r.check_detail or r.error}", flush=True)
