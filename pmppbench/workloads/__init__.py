"""The registry: workload name -> Workload instance, in the order `all` runs them."""

from __future__ import annotations

import importlib

from pmppbench.errors import UsageError
from pmppbench.workloads.base import Workload

# name -> module; each module exposes WORKLOAD.
_MODULES = {
    "vecadd": "pmppbench.workloads.vecadd",
    "transpose": "pmppbench.workloads.transpose",
    "gemm": "pmppbench.workloads.gemm",
    "stencil": "pmppbench.workloads.stencil",
    "stream": "pmppbench.workloads.stream",
}


def names() -> list[str]:
    return [n for n in _MODULES if _available(n)]


def _available(name: str) -> bool:
    try:
        importlib.import_module(_MODULES[name])
    except ModuleNotFoundError:
        return False
    return True


def get(name: str) -> Workload:
    if name not in _MODULES or not _available(name):
        raise UsageError(f"unknown workload {name!r}; choose from {', '.join(names())}")
    return importlib.import_module(_MODULES[name]).WORKLOAD
