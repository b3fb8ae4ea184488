"""Whether a float32 scan repeats bit for bit from call to call (docs/scan.md, "Reproducible?").

    python3 studies/scan_repeat.py [N] [CALLS]

For each variant of the scan at N float32 elements (inclusive), CALLS calls on the same input
and buffers: how many distinct outputs they left, how many elements differ from the first
call's at most, and the largest relative error against the exact prefix sums (every call is
checked against the workload's bound). Look-back adds a tile's predecessors in the order their
status words happen to be seen, so its float result may differ between calls; every other
variant's order is fixed by its geometry.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pmppbench import workloads  # noqa: E402
from pmppbench.measure.check import compare, device_copy  # noqa: E402
from pmppbench.hardware.gpu import cupy  # noqa: E402
from pmppbench.engine.worker.pipeline import prepared  # noqa: E402


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 1 << 26
    calls = int(argv[1]) if len(argv) > 1 else 20
    cp = cupy()
    w = workloads.get("scan")
    shape = {"n": n, "dtype": "f32", "kind": "inclusive"}
    variants = [v for v in w.variants if v.name != "memcpy"]
    print(f"# scan N={n} f32 inclusive, {calls} calls per variant on one input")
    print(f"{'variant':<14} {'distinct':>8} {'max elems != call 0':>20} {'max rel err':>12} {'bound':>10}  check")
    with prepared(w, shape, variants, seed=7) as (inputs, ctx):
        ref = device_copy(w.reference(shape, inputs, variants[0]))
        for v in variants:
            try:
                job = w.job(v, shape, ctx)
            except Exception as exc:  # a peer that cannot run here
                print(f"{v.name:<14} SKIP {exc}")
                continue
            tol = w.tolerance_of(shape, v)
            outputs, worst, failed, differ = [], 0.0, 0, 0
            for _ in range(calls):
                job.poison()
                job.run()
                out = job.output().copy()
                result = compare(out, ref, tol)
                failed += not result.passed
                worst = max(worst, result.max_rel_err)
                if outputs:
                    differ = max(differ, int(cp.count_nonzero(out.view(cp.uint32) != outputs[0].view(cp.uint32))))
                if not any(bool(cp.array_equal(out.view(cp.uint32), o.view(cp.uint32))) for o in outputs):
                    outputs.append(out)
            status = "PASS" if not failed else f"FAIL in {failed} calls"
            print(f"{v.name:<14} {len(outputs):>8} {differ:>20} {worst:>12.3e} {tol.rtol:>10.3e}  {status}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
