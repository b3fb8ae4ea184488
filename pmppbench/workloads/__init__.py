"""The registry: workload name -> Workload instance, in the order `all` runs them."""

from __future__ import annotations

import importlib
import os

from pmppbench.errors import UsageError
from pmppbench.workloads.base import Workload, missing

# name -> module; each module exposes WORKLOAD. Modules are imported on first use, so a
# command touching one workload does not pay for the others.
_MODULES = {
    "vecadd": "pmppbench.workloads.vecadd",
    "transpose": "pmppbench.workloads.transpose",
    "gemm": "pmppbench.workloads.gemm",
    "stencil": "pmppbench.workloads.stencil",
    "conv2d": "pmppbench.workloads.conv2d",
    "stencil3d": "pmppbench.workloads.stencil3d",
    "stream": "pmppbench.workloads.stream",
    "reduce": "pmppbench.workloads.reduce",
    "histogram": "pmppbench.workloads.histogram",
    "scan": "pmppbench.workloads.scan",
}


def _extra() -> dict[str, str]:
    """Workloads from outside the package: PMPPBENCH_WORKLOADS="name=module,..." (each module
    importable and exposing WORKLOAD; its kernels found through PMPPBENCH_KERNEL_PATH). The
    GPU tests use it for kernels that fault and hang; worker processes inherit it."""
    out = {}
    for item in filter(None, os.environ.get("PMPPBENCH_WORKLOADS", "").split(",")):
        name, _, module = item.partition("=")
        out[name.strip()] = module.strip()
    return out


def _modules() -> dict[str, str]:
    return {**_MODULES, **_extra()}


def names() -> list[str]:
    return list(_modules())


def builtin_names() -> list[str]:
    """The workloads pmppbench ships (without PMPPBENCH_WORKLOADS' extras), in `all`'s order."""
    return list(_MODULES)


def get(name: str) -> Workload:
    modules = _modules()
    if name not in modules:
        raise UsageError(f"unknown workload {name!r}; choose from {', '.join(modules)}")
    workload = importlib.import_module(modules[name]).WORKLOAD
    lacking = missing(workload)
    if lacking:  # a workload from outside the package that does not keep the contract
        raise UsageError(f"workload {name!r} ({modules[name]}) does not declare {', '.join(lacking)}; "
                         "see docs/adding-a-workload.md")
    return workload
