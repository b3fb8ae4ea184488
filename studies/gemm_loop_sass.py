"""Where the K loop's global loads sit in the SASS of pipelined's interior path and of
pipelined_padded (no GPU): compiles both for sm_90 through pmppbench's NVRTC path and
disassembles the cubin with nvdisasm (the CUDA toolkit's, or the nvidia-cuda-nvdisasm wheel's:
NVDISASM=path). For each kernel: its registers, the barriers, the last 12 global loads (LDG)
and shared stores (STS) by instruction index; then the loop (barrier to barrier) of
pipelined_padded against pipelined's interior loop, opcode by opcode.

A loop whose next-tile loads sit right after the barrier hides their latency behind the
tile's 2048 FFMAs per thread; loads sunk to just before their shared stores do not
(docs/gemm_ladder.md, "Odd shapes"; the FRAGS form of sweep 3 lost the same way).

    NVDISASM=/path/to/nvdisasm python3 studies/gemm_loop_sass.py
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pmppbench.hardware.compile import compile_unit, nvrtc  # noqa: E402
from pmppbench.workloads.gemm.best import CHOICES, PADDED  # noqa: E402

PIPELINED = CHOICES["pipelined"].expression


def instructions(body: str) -> list[str]:
    return [re.sub(r"/\*[0-9a-f]+\*/", "", line).strip() for line in body.splitlines()
            if re.search(r"/\*[0-9a-f]{4,}\*/", line)]


def opcode(line: str) -> str:
    return re.sub(r"^@!?U?P\d+\s+", "", line).split()[0]


def main() -> int:
    tool = os.environ.get("NVDISASM") or shutil.which("nvdisasm")
    if not tool:
        raise SystemExit("no nvdisasm: set NVDISASM (the nvidia-cuda-nvdisasm wheel has one)")
    names = [PIPELINED, PADDED.expression]
    unit = compile_unit("gemm", names, "sm_90", use_cache=False)
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(unit.cubin)
        f.flush()
        sass = subprocess.run([tool, "-c", f.name], capture_output=True, text=True, check=True).stdout
    print(f"NVRTC {'.'.join(map(str, nvrtc().getVersion()))}, sm_90")
    parts = re.split(r"\n\.text\.(\S+):\n", sass)
    bodies = {parts[i]: instructions(parts[i + 1]) for i in range(1, len(parts), 2)}
    loops = {}
    for name in names:
        mangled = unit.lowered[name]
        ins = bodies[mangled]
        at = {op: [j for j, line in enumerate(ins) if op in line] for op in ("BAR.SYNC", "LDG", "STS")}
        print(f"{name}: {unit.ptxas[name].registers} registers, {len(ins)} instructions, barriers at {at['BAR.SYNC']}, "
              f"last LDG {at['LDG'][-12:]}, last STS {at['STS'][-12:]}")
        bar = at["BAR.SYNC"]
        # pipelined: the checked path's loop comes first, the interior loop between the last two barriers
        loops[name] = ins[bar[-2]:bar[-1] + 1]
    a, b = ([opcode(line) for line in loops[n]] for n in names)
    moved = sum(x != y for x, y in zip(a, b))
    print(f"loop (barrier to barrier): pipelined interior {len(a)} instructions, pipelined_padded {len(b)}; "
          f"opcode counts {'the same' if Counter(a) == Counter(b) else 'differ'}; {moved} positions hold another opcode")
    for n, ops in zip(names, (a, b)):
        print(f"  {n}: LDG at loop positions {[j for j, op in enumerate(ops) if op.startswith('LDG')]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
