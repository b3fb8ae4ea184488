"""SM / memory clocks, temperature and throttle reasons through NVML, read around batches.

Read only: pmppbench never changes clocks. NVML comes from the optional nvidia-ml-py package
(`pip install 'pmppbench[nvml]'`); without it rows simply carry no clock data.
"""

from __future__ import annotations

from functools import cache

from pmppbench.hardware.inventory import norm_bus_id
from pmppbench.hardware.gpu import cupy

# NVML clock-event (throttle) reason bits that mean "the GPU was held back". Idle, application
# clock settings and sync boost are not slowdowns of a running kernel.
SLOWDOWN_REASONS = {
    0x4: "software power cap",
    0x8: "hardware slowdown",
    0x20: "software thermal slowdown",
    0x40: "hardware thermal slowdown",
    0x80: "power brake",
}


def reason_names(bits: int) -> list[str]:
    return [name for bit, name in SLOWDOWN_REASONS.items() if bits & bit]


def _handle_for(nv, bus_id):
    """The NVML handle whose PCI bus id is the CUDA device's (NVML and CUDA may order GPUs differently)."""
    want = norm_bus_id(bus_id)
    for i in range(nv.nvmlDeviceGetCount()):
        h = nv.nvmlDeviceGetHandleByIndex(i)
        if norm_bus_id(nv.nvmlDeviceGetPciInfo(h).busId) == want:
            return h
    raise LookupError(f"no NVML device with PCI bus id {bus_id}")


class ClockWatch:
    """NVML handle for the current CUDA device; `available` is False (with `reason`) without NVML."""

    def __init__(self):
        self.available = False
        self.reason = ""
        self.driver_version = ""
        try:
            import pynvml  # noqa: PLC0415 (optional: nvidia-ml-py; its absence is one of the reasons)

            pynvml.nvmlInit()
            self._h = _handle_for(pynvml, cupy().cuda.Device().pci_bus_id)
            self._nv = pynvml
            self.max_sm_mhz = float(pynvml.nvmlDeviceGetMaxClockInfo(self._h, pynvml.NVML_CLOCK_SM))
            self._reasons = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
                pynvml.nvmlDeviceGetCurrentClocksThrottleReasons
            version = pynvml.nvmlSystemGetDriverVersion()  # the kernel driver's, e.g. "580.95.05"
            self.driver_version = version.decode() if isinstance(version, bytes) else str(version)
            self.available = True
        except Exception as exc:  # no NVML library, no permission, a MIG slice...
            self.available = False
            self.reason = f"{type(exc).__name__}: {exc}"

    def sample(self) -> dict:
        nv, h = self._nv, self._h
        return {
            "sm_mhz": float(nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)),
            "mem_mhz": float(nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM)),
            "temp_c": float(nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)),
            "reasons": int(self._reasons(h)),
        }


@cache
def watch() -> ClockWatch:
    """One NVML handle per process (the runner's observers and the run's metadata share it)."""
    return ClockWatch()


class ClockObserver:
    """Samples clocks when a variant's timing starts (after its warmup was queued, so the GPU
    is busy, not idling at its lowest clock) and after every timed batch (a `measure` observer).

    The sag and throttle warnings read only the batch samples; the start sample is kept so a
    row shows how the clock and temperature moved over its measurement.
    """

    def __init__(self, watch: ClockWatch):
        self.watch = watch
        self.samples: dict[str, list[dict]] = {}
        self.start: dict[str, dict] = {}

    def before(self, name: str) -> None:
        self.start[name] = self.watch.sample()

    def after(self, name: str) -> None:
        self.samples.setdefault(name, []).append(self.watch.sample())

    def discard_last(self, name: str) -> None:
        """The batch just sampled is being timed again (--discard-on-throttle): its sample leaves
        the row's clocks and warnings with it, as its time leaves the batches."""
        if self.samples.get(name):
            self.samples[name].pop()

    def throttled(self, name: str, min_fraction: float = 0.90) -> str:
        """Why the batch just sampled counts as throttled ('' when it does not): NVML's slowdown
        reasons at its end, or an SM clock under `min_fraction` of the maximum (measure gives
        protocol.MIN_CLOCK_FRACTION; --discard-on-throttle retimes such a batch). NVML's
        reasons are its current ones, read as the batch ends, when the GPU is still busy."""
        s = self.samples.get(name)
        if not s:
            return ""
        last = s[-1]
        why = reason_names(last["reasons"])
        if last["sm_mhz"] < min_fraction * self.watch.max_sm_mhz:
            why.append(f"SM clock {last['sm_mhz']:.0f} MHz < {100 * min_fraction:g}% of {self.watch.max_sm_mhz:.0f}")
        return ", ".join(why)

    def summary(self, name: str) -> dict:
        s = self.samples.get(name)
        if not s:
            return {}
        bits = 0
        for x in s:
            bits |= x["reasons"]
        start = self.start.get(name)
        return {
            **({"sm_mhz_start": start["sm_mhz"], "temp_c_start": start["temp_c"]} if start else {}),
            "sm_mhz_min": min(x["sm_mhz"] for x in s),
            "sm_mhz_max": max(x["sm_mhz"] for x in s),
            "sm_mhz_max_supported": self.watch.max_sm_mhz,
            "mem_mhz_min": min(x["mem_mhz"] for x in s),
            "temp_c_max": max(x["temp_c"] for x in s),
            "throttle_reasons": ", ".join(reason_names(bits)),
        }
