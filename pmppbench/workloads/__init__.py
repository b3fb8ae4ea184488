"""The registry: workload name -> Workload instance, in the order `all` runs them."""

from __future__ import annotations

import importlib

from pmppbench.errors import UsageError
from pmppbench.workloads.base import Workload

# name -> module; each module exposes WORKLOAD. Modules are imported on first use, so a
# command touching one workload does not pay for the others.
_MODULES = {
    "vecadd": "pmppbench.workloads.vecadd",
    "transpose": "pmppbench.workloads.transpose",
    "gemm": "pmppbench.workloads.gemm",
    "stencil": "pmppbench.workloads.stencil",
    "stream": "pmppbench.workloads.stream",
}


def names() -> list[str]:
    return list(_MODULES)


def get(name: str) -> Workload:
    if name not in _MODULES:
        raise UsageError(f"unknown workload {name!r}; choose from {', '.join(_MODULES)}")
    return importlib.import_module(_MODULES[name]).WORKLOAD
