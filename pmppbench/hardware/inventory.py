"""Which GPUs a run uses (`--devices all`, `--devices 0,2`) and how each is identified.

A GPU is named by its index among the visible devices, its UUID, its name and its PCI bus
id; the UUID is what a worker is pinned with (CUDA_VISIBLE_DEVICES accepts it, and it stays
right when CUDA_VISIBLE_DEVICES already narrowed what this process sees). Every result row
records the device it ran on.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from pmppbench.hardware import gpu
from pmppbench.errors import UsageError


@dataclass(frozen=True)
class DeviceId:
    index: int
    name: str
    uuid: str  # "GPU-8f2c...", or "" when the runtime does not report one
    pci_bus_id: str  # "0000:19:00.0"
    host: str = ""  # the machine, for GPUs of a Ray fleet
    arch: str = ""  # "sm_90": what NVRTC compiles for (compile.Prefetch)

    @property
    def pin(self) -> str:
        """The CUDA_VISIBLE_DEVICES value that shows a worker this GPU only."""
        return self.uuid or str(self.index)

    @property
    def label(self) -> str:
        where = f"{self.host} " if self.host else ""
        return f"{where}GPU {self.index} ({self.name}, {self.pci_bus_id})"


def norm_bus_id(bus_id) -> str:
    """'0000:1E:00.0' and '00000000:1e:00.0' name the same device: compare without padding."""
    text = bus_id.decode() if isinstance(bus_id, bytes) else str(bus_id)
    domain, rest = text.strip().lower().split(":", 1)
    return f"{int(domain, 16):x}:{rest}"


def _uuid(raw) -> str:
    try:
        data = raw.encode("latin-1") if isinstance(raw, str) else bytes(raw or b"")
    except (TypeError, ValueError):  # a runtime that reports it in another form: no UUID
        return ""
    data = data[:16]
    if len(data) != 16 or not any(data):
        return ""
    h = data.hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _nvml_uuids() -> dict[str, str]:
    """PCI bus id -> UUID from NVML (the `nvml` extra), or {} without it. CuPy's device
    properties carry the UUID as a C string, cut at its first zero byte, so they cannot be
    trusted for it; NVML reports it whole, as nvidia-smi prints it."""
    try:
        import pynvml  # noqa: PLC0415 (optional: nvidia-ml-py; without it CuPy's UUID is used)

        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 -- no NVML: the UUID comes from CUDA where it can
        return {}
    out = {}
    try:
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            uuid = pynvml.nvmlDeviceGetUUID(h)
            out[norm_bus_id(pynvml.nvmlDeviceGetPciInfo(h).busId)] = uuid.decode() if isinstance(uuid, bytes) else uuid
    except Exception:  # noqa: BLE001
        pass
    return out


def visible() -> list[DeviceId]:
    """The GPUs this process can see, in CUDA's order (needs a GPU)."""
    count = gpu.require_device()
    rt = gpu.cupy().cuda.runtime
    by_bus = _nvml_uuids()
    out = []
    for i in range(count):
        props = rt.getDeviceProperties(i)
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        bus = [int(props.get(k, 0) or 0) for k in ("pciDomainID", "pciBusID", "pciDeviceID")]
        pci = f"{bus[0]:04x}:{bus[1]:02x}:{bus[2]:02x}.0"
        uuid = by_bus.get(norm_bus_id(pci)) or _uuid(props.get("uuid"))
        arch = f"sm_{props['major']}{props['minor']}" if "major" in props else ""
        out.append(DeviceId(i, name, uuid, pci, arch=arch))
    return out


def parse(spec: str, count: int) -> list[int]:
    """`all` or a comma list of indices into the visible devices, each once, in order."""
    if spec.strip() == "all":
        return list(range(count))
    parts = [p.strip() for p in spec.split(",")]
    if not spec.strip() or any(not p.isdigit() for p in parts):
        raise UsageError(f"--devices takes all or comma-separated device indices such as 0,2, got {spec!r}")
    chosen = list(dict.fromkeys(int(p) for p in parts))
    bad = [i for i in chosen if i >= count]
    if bad:
        raise UsageError(f"--devices {spec}: device {bad[0]} does not exist; this machine shows {count} "
                         f"(0 to {count - 1}; see nvidia-smi and CUDA_VISIBLE_DEVICES)")
    return chosen


def first_run_line(gpu_id: DeviceId, skips: list[str], seen: Path) -> str | None:
    """The one line a run prints the first time it meets a GPU (by name and arch, recorded in
    `seen`, a JSON list): the GPU, its arch, and the variants of the plan it skips and why.
    None for a GPU met before. A record that cannot be read or written costs only the line's
    being printed again next time."""
    key = f"{gpu_id.name} {gpu_id.arch}"
    try:
        known = json.loads(seen.read_text())
        known = known if isinstance(known, list) else []
    except (OSError, ValueError):
        known = []
    if key in known:
        return None
    try:
        seen.parent.mkdir(parents=True, exist_ok=True)
        tmp = seen.with_name(f"{seen.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps([*known, key]))
        os.replace(tmp, seen)
    except OSError:
        pass
    what = f"skips {'; '.join(skips)}" if skips else "runs every variant of this plan"
    return f"first run on {gpu_id.name} ({gpu_id.arch or 'arch unknown'}): {what}"
