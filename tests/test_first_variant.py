"""A variant's median does not depend on where it stands in --variants (docs/measurement.md).

On a GPU, as a user runs it (one command per order, so each run allocates its buffers the
same way): transpose 8192^2 and vecadd 2^26, every variant >= 50 us per call, each variant
alone, in the declared order and in the reverse order, so every variant is timed first, in
the middle and last.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from pmppbench.results import resultfile
from pmppbench import workloads

TOLERANCE = 0.005  # 0.5% between the fastest and slowest position of one variant


def medians(tmp_path, args: list[str], variants: list[str]) -> dict[str, float]:
    out = tmp_path / f"run{len(list(tmp_path.iterdir()))}.json"
    proc = subprocess.run([sys.executable, "-m", "pmppbench", *args, "--variants", ",".join(variants),
                           "--quiet", "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows, _meta = resultfile.load(out)
    assert all(r.check == "PASS" for r in rows), [(r.variant, r.check, r.error) for r in rows]
    return {r.variant: r.median_ms for r in rows}


@pytest.mark.gpu
@pytest.mark.parametrize("args,shape", [(["transpose", "8192", "8192", "20"], {"m": 8192, "n": 8192}),
                                        (["vecadd", "67108864", "100"], {"n": 1 << 26})])
def test_a_variants_median_does_not_depend_on_its_position(tmp_path, args, shape):
    declared = [v.name for v in workloads.get(args[0]).variants_for(shape)]
    orders = {"declared": declared, "reversed": declared[::-1], **{f"{v} alone": [v] for v in declared}}
    seen: dict[str, list[tuple[str, float]]] = {v: [] for v in declared}
    for label, variants in orders.items():
        for variant, ms in medians(tmp_path, args, variants).items():
            seen[variant].append((label, ms))
    problems = []
    for variant, runs in seen.items():
        values = [ms for _, ms in runs]
        if min(values) < 0.050:
            continue  # the promise is for calls of 50 us and more
        if max(values) / min(values) - 1 > TOLERANCE:
            problems.append(f"{variant}: {max(values) / min(values) - 1:.2%} between positions: " +
                            ", ".join(f"{label} {ms:.5f} ms" for label, ms in runs))
    assert not problems, "\n".join(problems)
