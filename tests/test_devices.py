"""--devices on the CPU: every GPU runs the same plan concurrently, host-link work one GPU at
a time, rows tagged with their GPU, workers pinned with CUDA_VISIBLE_DEVICES; the health view
names a GPU that is slower beyond the noise; compare keeps GPUs of one name apart."""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest

from fake_workload import Copy2D
from pmppbench.engine.driver import session
from pmppbench.results.compare import compare_results
from pmppbench.hardware.inventory import DeviceId, _uuid, parse
from pmppbench.errors import UsageError
from pmppbench.results.health import health
from pmppbench.engine.plan import Plan, Step
from pmppbench.row import Result
from pmppbench.engine.driver.supervisor import Lane, Supervisor
from pmppbench.engine.messages import Rows, Stop

GPUS = [DeviceId(i, "NVIDIA H200", f"GPU-{i:08x}-0000-0000-0000-000000000000", f"0000:{16 + i:02x}:00.0")
        for i in range(3)]


def test_parse_devices():
    assert parse("all", 3) == [0, 1, 2] and parse("2,0,2", 3) == [2, 0]
    for bad, words in (("0,5", "device 5 does not exist; this machine shows 3"), ("x", "--devices takes all"),
                       ("", "--devices takes all"), ("1,", "--devices takes all")):
        with pytest.raises(UsageError, match=words):
            parse(bad, 3)


def test_uuid_format():
    assert _uuid(bytes(range(16))) == "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f"
    assert _uuid(b"\0" * 16) == "" and _uuid(None) == ""


class HostLink(Copy2D):
    name = "hostlink"
    shares_host_link = True


def lanes_recording(spans, lock, seconds=0.3):
    def make(device):
        def run(step, progress=None):
            t0 = time.monotonic()
            time.sleep(seconds)
            with lock:
                spans.append((step.workload.name, device.index, t0, time.monotonic()))
            return [Result(step.workload.name, v.name, step.workload.label(step.shape), check="PASS",
                           median_ms=1.0 + device.index) for v in step.variants[:1]]
        return Lane(run, device)
    return [make(d) for d in GPUS[:2]]


def overlap(spans, name):
    (_, _, a0, a1), (_, _, b0, b1) = [s for s in spans if s[0] == name]
    return a0 < b1 and b0 < a1


@pytest.mark.parametrize("parallel", [False, True])
def test_every_gpu_runs_the_plan_concurrently_and_host_link_work_one_at_a_time(parallel):
    spans, lock = [], threading.Lock()
    w, link = Copy2D(), HostLink()
    plan = Plan([Step(w, w.default_shape(), w.protocol, 0), Step(link, link.default_shape(),
                                                                                         link.protocol, 1)])
    out = session.run(plan, lanes=lanes_recording(spans, lock), host_link_parallel=parallel)
    assert overlap(spans, "copy2d")  # the GPUs work at once
    assert overlap(spans, "hostlink") == parallel  # host-link work waits for the other GPU unless asked
    assert sorted((r.workload, r.device_uuid) for r in out.rows) == sorted(
        (n, d.uuid) for n in ("copy2d", "hostlink") for d in GPUS[:2])
    assert {r.device_pci for r in out.rows} == {"0000:10:00.0", "0000:11:00.0"}


def test_one_gpus_failure_stays_on_that_gpu():
    w = Copy2D()

    def ok(step, progress=None):
        return [Result(step.workload.name, "rows", "16x8", check="PASS", median_ms=1.0)]

    def broken(step, progress=None):
        raise RuntimeError("cudaErrorECCUncorrectable: uncorrectable ECC error encountered")

    lanes = [Lane(ok, GPUS[0]), Lane(broken, GPUS[1])]
    out = session.run(Plan([Step(w, w.default_shape(), w.protocol, 0, [w.variant("rows")])]),
                      lanes=lanes)
    by = {r.device_uuid: r for r in out.rows}
    assert by[GPUS[0].uuid].check == "PASS" and by[GPUS[1].uuid].check == "ERROR"
    assert "ECC" in by[GPUS[1].uuid].error


def pinned_serve(conn, quiet_stderr=True):
    while True:
        step = conn.recv()
        if isinstance(step, Stop):
            return
        conn.send(Rows([Result(step.workload.name, v.name, "16x8", check="PASS",
                               error=os.environ.get("CUDA_VISIBLE_DEVICES", "")) for v in step.variants], {}))


def test_workers_are_pinned_by_uuid_and_the_parent_env_is_kept(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2")
    monkeypatch.setenv("PMPPBENCH_WORKLOADS", "copy2d=fake_workload")  # the step reaches the worker by name
    w = Copy2D()
    for d in GPUS[:2]:
        with Supervisor(timeout_s=5, target=pinned_serve, pin=d.pin) as sup:
            (row,) = sup.run(Step(w, w.default_shape(), w.protocol, 0, [w.variant("rows")]))
        assert row.error == d.uuid
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "0,1,2"


def timed(variant, device, median, lo, hi):
    return Result("transpose", variant, "4096x4096", check="PASS", median_ms=median, min_ms=lo, max_ms=hi,
                  device="NVIDIA H200", device_uuid=device.uuid, device_pci=device.pci_bus_id)


def test_health_names_the_gpu_slower_beyond_the_noise():
    rows = [timed("naive", GPUS[0], 1.00, 0.99, 1.01), timed("naive", GPUS[1], 1.01, 1.00, 1.02),
            timed("naive", GPUS[2], 1.10, 1.09, 1.11),
            timed("copy", GPUS[0], 0.50, 0.49, 0.52), timed("copy", GPUS[1], 0.51, 0.48, 0.53),
            timed("copy", GPUS[2], 0.515, 0.50, 0.53)]
    h = health(rows)
    assert h.ratios[("transpose", "naive", "4096x4096")][GPUS[2].uuid] == pytest.approx(1.10 / 1.01)
    (slow,) = h.slow
    assert slow.device == GPUS[2].uuid and [name for name, _ in slow.rows] == ["transpose naive 4096x4096"]


def test_compare_keeps_gpus_of_one_name_apart():
    base = [timed("naive", d, 1.0, 0.99, 1.01) for d in GPUS[:2]]
    new = [timed("naive", GPUS[0], 1.0, 0.99, 1.01), timed("naive", GPUS[1], 1.5, 1.49, 1.51)]
    rep = compare_results(base, new, fail_on_slower_pct=10)
    assert [(c.new.device_uuid, c.verdict) for c in rep.matched] == [(GPUS[0].uuid, "SAME"), (GPUS[1].uuid, "SLOWER")]
    assert rep.exit_code == 1


def test_visible_reads_the_runtimes_properties(monkeypatch):
    """The default run names its GPU too; a runtime without a UUID still works."""
    import types

    from pmppbench.hardware import gpu, inventory

    monkeypatch.setitem(sys.modules, "pynvml", None)  # no NVML: the UUID comes from CUDA
    props = [{"name": b"NVIDIA H200", "uuid": bytes(range(16)), "pciDomainID": 0, "pciBusID": 0x19, "pciDeviceID": 0,
              "major": 9, "minor": 0},
             {"name": "Other GPU", "pciBusID": 0x3b}]
    runtime = types.SimpleNamespace(getDeviceProperties=lambda i: props[i])
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime))
    monkeypatch.setattr(gpu, "require_device", lambda: 2)
    monkeypatch.setattr(gpu, "cupy", lambda: fake)
    a, b = inventory.visible()
    assert (a.name, a.uuid, a.pci_bus_id, a.pin) == ("NVIDIA H200", "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f",
                                                     "0000:19:00.0", a.uuid)
    assert (b.name, b.uuid, b.pci_bus_id, b.pin) == ("Other GPU", "", "0000:3b:00.0", "1")
    assert (a.arch, b.arch) == ("sm_90", "")


def test_visible_takes_the_uuid_from_nvml(monkeypatch):
    """CuPy hands the UUID over as a C string, cut at its first zero byte; NVML's is whole."""
    import types

    from pmppbench.hardware import gpu, inventory

    props = [{"name": b"NVIDIA H200", "uuid": b"\x8f\x2c", "pciDomainID": 0, "pciBusID": 0x19, "pciDeviceID": 0,
              "major": 9, "minor": 0}]
    runtime = types.SimpleNamespace(getDeviceProperties=lambda i: props[i])
    monkeypatch.setattr(gpu, "require_device", lambda: 1)
    monkeypatch.setattr(gpu, "cupy", lambda: types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime)))
    whole = "GPU-8f2c0000-1111-2222-3333-444455556666"
    nvml = types.SimpleNamespace(
        nvmlInit=lambda: None, nvmlDeviceGetCount=lambda: 2, nvmlDeviceGetHandleByIndex=lambda i: i,
        nvmlDeviceGetUUID=lambda h: [b"GPU-other", whole.encode()][h],
        nvmlDeviceGetPciInfo=lambda h: types.SimpleNamespace(busId=[b"00000000:3B:00.0", b"00000000:19:00.0"][h]))
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    (a,) = inventory.visible()
    assert (a.uuid, a.pin, a.pci_bus_id) == (whole, whole, "0000:19:00.0")


def test_a_gpu_the_machine_cannot_use_costs_only_its_rows():
    from pmppbench.errors import EnvironmentProblem

    w = Copy2D()

    def ok(step, progress=None):
        return [Result(step.workload.name, "rows", "16x8", check="PASS", median_ms=1.0)]

    def gone(step, progress=None):
        raise EnvironmentProblem("no usable CUDA device (cudaErrorNoDevice)")

    out = session.run(Plan([Step(w, w.default_shape(), w.protocol, 0, [w.variant("rows")])]),
                      lanes=[Lane(ok, GPUS[0]), Lane(gone, GPUS[1])])
    by = {r.device_uuid: r for r in out.rows}
    assert by[GPUS[0].uuid].check == "PASS" and by[GPUS[1].uuid].check == "ERROR"
    assert "no usable CUDA device" in by[GPUS[1].uuid].error
