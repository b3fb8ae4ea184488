"""What every result file records about the run: device, software, revision, command, time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from pmppbench.measure import clocks, roofline
from pmppbench.hardware import device
from pmppbench.errors import EnvironmentProblem
from pmppbench.hardware.gpu import nvrtc
from pmppbench.row import now_iso


def nvrtc_version() -> str:
    """NVRTC's version as 'major.minor' (registers and spills depend on it), or '' if absent."""
    try:
        major, minor = nvrtc().getVersion()
    except EnvironmentProblem:
        return ""
    return f"{major}.{minor}"


def git_revision() -> str:
    """The checkout's short revision (+ '-dirty'), or '' for an installed package."""
    top = Path(__file__).resolve().parent.parent
    if not (top / ".git").exists():
        return ""
    try:
        rev = subprocess.run(["git", "-C", str(top), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=5).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(top), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return f"{rev}-dirty" if rev and dirty else rev


def run_meta(seed: int, gpu_required: bool = True, **extra: Any) -> dict[str, Any]:
    """The metadata of a run on the current device (needs a GPU, unless `gpu_required` is off:
    a Ray driver, whose rows record the GPUs of the fleet)."""
    run = {"nvrtc": nvrtc_version(), "timestamp": now_iso(), "git_revision": git_revision(),
           "command": "pmppbench " + " ".join(sys.argv[1:]), "seed": seed, **extra}
    try:
        dev = device.current()
    except EnvironmentProblem:
        if gpu_required:
            raise
        return run
    watch = clocks.watch()
    return {**dev.metadata(), "ceilings": roofline.ceilings_meta(roofline.ceilings_for(dev)),
            "nvml": "available" if watch.available else f"unavailable ({watch.reason})",
            "nvidia_driver": watch.driver_version, **run}
