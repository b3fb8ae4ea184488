"""What `pmppbench template` and `pmppbench compile WORKLOAD --kernel FILE.cu:NAME --like V` print
(the CLI only parses): a starter file for a learner's kernel, and that kernel compiled without a
GPU, with what it will be given (workloads/learner.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from pmppbench import workloads
from pmppbench.cli import planning
from pmppbench.cli.tools import supported_arch
from pmppbench.errors import CheckFailed, CompileError, UsageError
from pmppbench.hardware import device
from pmppbench.hardware.compile import compile_unit, device_target, target_meets
from pmppbench.results.metadata import nvrtc_version
from pmppbench.workloads import learner


def template(workload: str, variant: Optional[str]) -> str:
    """The starter .cu for a learner's kernel --like `variant` (the workload's first likeable one
    when None)."""
    w = workloads.get(workload)
    return learner.template(w, learner.like(w, variant))


def compile_learner(console, names: list[str] | None, spec: Optional[str], like: Optional[str],
                    arch: Optional[str], use_cache: bool) -> None:
    """Compile the learner's NAME from FILE as it would run --like `like`: once per set of the
    shape's defines the command's default shapes give (RADIUS, ELEM, BINS), one line each with
    ptxas's resources; NVRTC's errors with file and line are CompileError (exit 1)."""
    if not names or len(names) != 1:
        raise UsageError("compile --kernel FILE.cu:NAME --like VARIANT takes one workload, e.g. "
                         "pmppbench compile transpose --kernel my.cu:my_kernel --like padded33")
    w = workloads.get(names[0])
    mine = planning.learner_variant(w, spec, like)
    path = Path(spec.rpartition(":")[0])  # as the learner named it: NVRTC's errors name it so
    base = w.variant(mine.like)
    given = arch is not None
    if arch is None:
        arch = device_target(device.current().arch)
    arch = supported_arch(arch, "" if given else f"this GPU ({arch})")
    if not target_meets(arch, base.needs):
        raise UsageError(f"--like {base.name} needs {base.needs} or newer; choose --arch {base.needs} or newer")
    console.print(f"NVRTC {nvrtc_version()}, {arch}", highlight=False)
    failures = 0
    for defines in w.compile_sets():
        given_defines = {**dict(base.defines), **defines}
        tag = " ".join(f"{k}={v}" for k, v in given_defines.items()) or "(no defines)"
        try:
            unit = compile_unit(w.name, [mine.kernel], arch, given_defines, use_cache=use_cache, source=path)
        except CompileError as exc:
            failures += 1
            console.print(f"[red]FAIL[/] {mine.kernel} {tag}", highlight=False)
            console.print(str(exc), markup=False, highlight=False)
            continue
        rep = unit.ptxas[mine.kernel]
        console.print(f"[green]OK[/]  {mine.kernel}  {tag}  {rep.registers} regs, {rep.static_smem} B smem, "
                      f"{rep.stack_bytes} B stack, {rep.spill_stores + rep.spill_loads} B spills", highlight=False)
    if failures:
        raise CheckFailed(f"{mine.kernel} from {path} did not compile (above)")
