"""Warning rules on synthetic batch data (issue: measurement fidelity)."""

from __future__ import annotations

from pmppbench.measure.clocks import reason_names
from pmppbench.measure.noise import diagnose, largest_spread, stability_line
from pmppbench.row import Result


def row(means, **kw):
    med = sorted(means)[len(means) // 2]
    spread = 100 * (max(means) - min(means)) / med
    return Result("gemm", "tiled32", "1024x1024x1024", median_ms=med, min_ms=min(means), max_ms=max(means),
                  spread_pct=spread, batch_means_ms=list(means), **kw)


def test_quiet_measurement_has_no_warnings():
    assert diagnose(row([1.00, 1.01, 0.99, 1.00, 1.00])) == []


def test_untimed_row_has_no_warnings():
    assert diagnose(Result("gemm", "naive", "1x1x1", check="FAIL")) == []


def test_spread_above_threshold_warns_with_advice():
    (w,) = diagnose(row([1.0, 1.0, 1.2, 1.0, 0.95]))
    assert "spread" in w and "--batches" in w


def test_short_kernel_warns():
    ws = diagnose(row([0.004, 0.004, 0.004, 0.004, 0.004]))
    assert any("launch overhead" in w and "larger shape" in w for w in ws)


def test_slow_first_batch_asks_for_more_warmup():
    ws = diagnose(row([1.5, 1.0, 1.0, 1.01, 0.99]))
    assert any("first batch" in w and "--warmup" in w for w in ws)


def test_clock_sag_and_throttle_reasons_warn():
    ws = diagnose(row([1.0] * 5, clocks={"sm_mhz_min": 1400.0, "sm_mhz_max_supported": 1980.0,
                                         "throttle_reasons": "software power cap"}))
    assert any("1400 MHz" in w for w in ws) and any("software power cap" in w for w in ws)
    assert diagnose(row([1.0] * 5, clocks={"sm_mhz_min": 1950.0, "sm_mhz_max_supported": 1980.0,
                                           "throttle_reasons": ""})) == []


def test_reason_bits_ignore_idle_and_sync_boost():
    assert reason_names(0x1 | 0x10) == []
    assert reason_names(0x4 | 0x40) == ["software power cap", "hardware thermal slowdown"]


def test_bus_ids_match_across_cuda_and_nvml_spellings():
    from pmppbench.measure.clocks import _handle_for
    from pmppbench.hardware.inventory import norm_bus_id

    assert norm_bus_id("0000:1E:00.0") == norm_bus_id(b"00000000:1e:00.0")

    class FakeNvml:
        ids = [b"00000000:0A:00.0", b"00000000:1E:00.0"]

        def nvmlDeviceGetCount(self):
            return 2

        def nvmlDeviceGetHandleByIndex(self, i):
            return i

        def nvmlDeviceGetPciInfo(self, h):
            return type("Info", (), {"busId": self.ids[h]})

    assert _handle_for(FakeNvml(), "0000:1e:00.0") == 1


def test_largest_spread_ignores_short_and_untimed_rows():
    steady = row([1.00, 1.01, 0.99, 1.00, 1.00])
    wobbly = row([0.50, 0.52, 0.49, 0.50, 0.51])
    short = row([0.005, 0.009, 0.005, 0.005, 0.005])  # 80% spread, but under 0.1 ms
    untimed = Result("gemm", "naive", "1x1x1", check="FAIL")
    assert largest_spread([steady, short, wobbly, untimed]) is wobbly
    line = stability_line([steady, short, wobbly, untimed])
    assert line.startswith("largest batch spread of calls >= 100 us: 6.00%") and "tiled32" in line
    assert largest_spread([short, untimed]) is None and stability_line([untimed]) is None


class FakeWatch:
    """A ClockWatch stand-in returning scripted samples."""

    max_sm_mhz = 1980.0

    def __init__(self, sm_mhz):
        self._sm = iter(sm_mhz)

    def sample(self):
        return {"sm_mhz": next(self._sm), "mem_mhz": 3201.0, "temp_c": 40.0, "reasons": 0}


def test_clock_observer_keeps_the_start_sample_apart_from_the_batches():
    from pmppbench.measure.clocks import ClockObserver
    from pmppbench.measure.protocol import Protocol, measure

    class OneMs:
        def batch_ms(self, fn, reps):
            return 1.0

    observer = ClockObserver(FakeWatch([1200.0, 1980.0, 1965.0, 1980.0]))
    measure({"k": lambda: None}, Protocol(warmup=1, batches=3, reps=1), timer=OneMs(), observer=observer)
    clocks = observer.summary("k")
    assert clocks["sm_mhz_start"] == 1200.0  # sampled once, before the first batch
    assert (clocks["sm_mhz_min"], clocks["sm_mhz_max"]) == (1965.0, 1980.0)  # the batches only
    row = Result("gemm", "tiled32", "s", median_ms=1.0, min_ms=1.0, max_ms=1.0, spread_pct=0.0,
                 batch_means_ms=[1.0, 1.0, 1.0], clocks=clocks)
    assert diagnose(row) == []  # a low clock before the batches is not a sag during them
