#!/usr/bin/env bash
# The H200 run behind README's "What the hardware says" (docs/hardware_counters.md):
# `pmppbench all --config hardware --counters` (every variant checked, timed, then run once
# more, untimed, under Nsight Compute), the counters' GPU tests, and the shared-memory
# instructions of each kernel's SASS (cuobjdump), which explain the wavefronts per request.
# ncu's own CSV logs are kept (PMPPBENCH_COUNTERS_LOGS) and tarred.
# usage: bash studies/counters_h200.sh OUTDIR
set -u
out=${1:?usage: counters_h200.sh OUTDIR}
mkdir -p "$out/ncu"
export PMPPBENCH_COUNTERS_LOGS="$out/ncu"
{ command -v ncu; ncu --version; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } \
    > "$out/env.txt" 2>&1
set -o pipefail
t0=$(date +%s)
timeout 330 python3 -m pmppbench all --config hardware --counters --out "$out/hardware.json" 2>&1 | tee "$out/hardware.txt"
echo "exit $?; $(( $(date +%s) - t0 )) s wall" | tee -a "$out/hardware.txt"
timeout 150 python3 -m pytest -q -m gpu tests/test_counters.py 2>&1 | tee "$out/gpu-tests.txt"
# Shared-memory loads and stores in each kernel's SASS, as this machine's NVRTC compiles them.
timeout 60 python3 - > "$out/sass-shared.txt" 2>&1 <<'PY'
import collections, re, subprocess, tempfile
from pmppbench import device, workloads
from pmppbench.compile import compile_unit
arch = device.current().arch
for name in ("transpose", "gemm", "stencil"):
    w = workloads.get(name)
    shape = w.default_shape()
    for defines in ([{"RADIUS": 2}, {"RADIUS": 32}] if name == "stencil" else [{}]):
        kernels = [v.kernel for v in w.variants_for(shape) if v.kernel]
        unit = compile_unit(name, kernels, arch, defines)
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(unit.cubin)
            f.flush()
            sass = subprocess.run(["cuobjdump", "-sass", f.name], capture_output=True, text=True).stdout
        mangled = {m: n for n, m in unit.lowered.items()}
        for fn in re.split(r"\n\s*Function : ", sass)[1:]:
            m = fn.split("\n", 1)[0].strip()
            ops = collections.Counter(re.findall(r"\b((?:LDS|STS|LDSM|LDGSTS)[.\w]*)", fn))
            print(f"{name} {defines or ''} {mangled.get(m, m)}: {dict(sorted(ops.items()))}")
PY
cat "$out/sass-shared.txt"
tar -C "$out" -czf "$out/ncu.tgz" ncu && rm -rf "$out/ncu"
ls -la "$out"
