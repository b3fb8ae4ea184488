"""The stream workload: reference, tolerance, overlap model, validation, compile, CLI; and on
a GPU every configuration and the event dependency, plus the release of streams and pinned
memory when setup fails halfway."""

from __future__ import annotations

import gc
import math
import weakref

import numpy as np
import pytest

from pmppbench.measure.check import compare
from pmppbench.errors import UsageError
from pmppbench.workloads import stream as mod
from pmppbench.workloads.stream import (ATOL_PER_TERM, EVENT, MAX_TERMS, WORKLOAD, pipeline_bound_ms,
                                        predicted_pipeline_ms, stage_layouts, synthesize_reference)


def shape(**kw):
    return {**WORKLOAD.default_shape(), **kw}


def phases(n, seed=0):
    return np.random.default_rng(seed).uniform(0, 2 * math.pi, n).astype(np.float32)


def kernel_in_fp32(x, terms):
    """What synthesize computes, in FP32 on the CPU: fl(k*x), sin, /k, running sum."""
    total = np.zeros_like(x)
    for k in range(1, terms + 1):
        total = total + np.sin(np.float32(k) * x) / np.float32(k)
    return total


# ---- reference --------------------------------------------------------------------

def test_reference_one_term_is_sin():
    x = phases(1000)
    np.testing.assert_allclose(synthesize_reference(x, 1), np.sin(x.astype(np.float64)), rtol=0, atol=1e-15)


def test_reference_two_terms_by_hand():
    # sin(1) + sin(2)/2 and sin(0.5) + sin(1)/2, evaluated by hand from tables of sin.
    x = np.array([1.0, 0.5], dtype=np.float32)
    np.testing.assert_allclose(synthesize_reference(x, 2), [1.2961196982207373, 0.9001610310081513],
                               rtol=0, atol=1e-15)


def test_reference_matches_direct_sum_and_sawtooth_limit():
    x = phases(2000, seed=3)
    x64 = x.astype(np.float64)
    direct = sum(np.sin(k * x64) / k for k in range(1, 65))
    np.testing.assert_allclose(synthesize_reference(x, 64, block=128), direct, rtol=0, atol=1e-13)
    # The series converges to the sawtooth (pi - x) / 2 on (0, 2*pi); away from the jump the
    # remainder after 1024 terms is below 1 / (1024 * sin(x/2)).
    inner = np.array([1.0, 2.0, 3.0, 4.0, 5.0], dtype=np.float32)
    np.testing.assert_allclose(synthesize_reference(inner, 1024), (math.pi - inner.astype(np.float64)) / 2,
                               atol=2e-3)


# ---- tolerance --------------------------------------------------------------------

@pytest.mark.parametrize("terms", [1, 2, 64, 1024])
def test_fp32_kernel_passes_and_wrong_term_count_fails(terms):
    x = phases(4096, seed=terms)
    ref = synthesize_reference(x, terms)
    tolerances = (WORKLOAD.tolerance_for(shape(terms=terms)), WORKLOAD.tolerance_for(shape(terms=MAX_TERMS)))
    for tol in tolerances:
        assert compare(kernel_in_fp32(x, terms), ref, tol).passed
        one_short = synthesize_reference(x, terms - 1).astype(np.float32)
        one_over = synthesize_reference(x, terms + 1).astype(np.float32)
        assert not compare(one_short, ref, tol).passed
        assert not compare(one_over, ref, tol).passed


def test_tolerance_scales_with_terms_and_covers_every_allowed_shape():
    assert WORKLOAD.tolerance_for(shape(terms=64)).atol == pytest.approx(64 * ATOL_PER_TERM)
    assert WORKLOAD.tolerance_for(shape(terms=MAX_TERMS)).atol == pytest.approx(MAX_TERMS * ATOL_PER_TERM)
    assert MAX_TERMS * ATOL_PER_TERM < 1 / MAX_TERMS  # a missing last term stays visible


# ---- overlap model: the prediction --------------------------------------------------

BOTH = pytest.mark.parametrize("copy_runs", [True, False])


@BOTH
def test_one_stream_is_serial(copy_runs):
    assert predicted_pipeline_ms(3, 1, 1.0, 2.0, 0.5, copy_runs) == pytest.approx(3 * 3.5)
    assert predicted_pipeline_ms(7, 1, 0.1, 0.2, 0.3, copy_runs) == pytest.approx(7 * 0.6)


@BOTH
@pytest.mark.parametrize("h, k, d", [(1, 1, 1), (1, 3, 1), (3, 1, 1), (1, 1, 3), (2, 1, 3), (0.2, 0.7, 0.4)])
@pytest.mark.parametrize("chunks", [2, 3, 5])
def test_stream_per_chunk_reaches_the_pipeline_bound(h, k, d, chunks, copy_runs):
    predicted = predicted_pipeline_ms(chunks, chunks, h, k, d, copy_runs)
    assert predicted == pytest.approx(h + k + d + (chunks - 1) * max(h, k, d))
    assert predicted == pytest.approx(pipeline_bound_ms(chunks, h, k, d))


@BOTH
def test_two_streams_three_chunks_by_hand(copy_runs):
    # Stream 0 holds chunks 0 and 2 in the order h0 h2 k0 k2 d0 d2, stream 1 holds h1 k1 d1.
    # Interleaved, unit stages: h0 0-1, h1 1-2, h2 2-3, k1 2-3, k0 3-4, d1 3-4, k2 4-5,
    # d0 5-6, d2 6-7. With copy runs: h0 0-1, h2 1-2, h1 2-3, k0 2-3, k1 3-4 (submitted
    # before k2), k2 4-5, d1 4-5, d0 5-6, d2 6-7. Both end at 7.
    assert predicted_pipeline_ms(3, 2, 1.0, 1.0, 1.0, copy_runs) == pytest.approx(7.0)


def test_two_streams_eight_chunks_by_hand():
    # The layout in units (h = d = 1, k = 1.2); stream 0 holds the even chunks.
    # Interleaved (the course's assumption): the uploads go in submission order h0..h7
    # (h6 ends at 7, h7 at 8), so stream 0's k0 waits for its h6 and starts at 7; the
    # kernels alternate between the streams (k_c ends at 7 + 1.2 * (c + 1)), so stream 0's
    # d0 waits for k6 (ends at 15.4) and the eight downloads run back to back: 23.4.
    assert predicted_pipeline_ms(8, 2, 1.0, 1.2, 1.0, copy_runs=False) == pytest.approx(23.4)
    # Copy runs (the H200): stream 0's uploads go first (h6 ends at 4), its kernels run
    # 4-8.8 while stream 1's uploads end at 8, then its downloads 8.8-12.8 while stream 1's
    # kernels run 8.8-13.6; stream 1's downloads end at 13.6 + 4 = 17.6.
    assert predicted_pipeline_ms(8, 2, 1.0, 1.2, 1.0) == pytest.approx(17.6)


def test_more_streams_never_slower_in_the_course_model():
    for stages in [(1, 1, 1), (0.3, 1.2, 0.3), (2, 0.5, 1)]:
        times = [predicted_pipeline_ms(6, s, *stages, copy_runs=False) for s in range(1, 7)]
        assert times[0] == pytest.approx(6 * sum(stages))
        assert all(t <= times[0] + 1e-12 for t in times)


# ---- overlap model: the bound -----------------------------------------------------------

def test_bound_is_the_busiest_engine_plus_fill_and_drain():
    # Kernel-bound: one upload before the first kernel, one download after the last.
    assert pipeline_bound_ms(8, 0.312, 0.376, 0.312) == pytest.approx(0.312 + 8 * 0.376 + 0.312)
    # Upload-bound: every upload, then the last chunk's kernel and download.
    assert pipeline_bound_ms(4, 2.0, 0.5, 1.0) == pytest.approx(4 * 2.0 + 0.5 + 1.0)
    # Download-bound: the first upload and kernel, then every download.
    assert pipeline_bound_ms(4, 0.1, 0.5, 1.0) == pytest.approx(0.1 + 0.5 + 4 * 1.0)
    # One chunk: nothing overlaps.
    assert pipeline_bound_ms(1, 0.3, 0.4, 0.2) == pytest.approx(0.9)


@pytest.mark.parametrize("stages", [(1, 1, 1), (0.312, 0.376, 0.312), (2, 0.5, 1), (0.1, 0.5, 1.0), (1, 3, 1)])
@pytest.mark.parametrize("chunks", [1, 2, 3, 5, 8, 13])
def test_no_prediction_beats_the_bound(stages, chunks):
    # Every FIFO schedule is one of the schedules the bound covers, so none may be faster;
    # with a stream per chunk the prediction reaches it.
    bound = pipeline_bound_ms(chunks, *stages)
    for copy_runs in (True, False):
        for streams in range(1, chunks + 2):
            assert predicted_pipeline_ms(chunks, streams, *stages, copy_runs) >= bound - 1e-9
        assert predicted_pipeline_ms(chunks, chunks, *stages, copy_runs) == pytest.approx(bound)


def test_bound_grows_with_every_stage():
    base = pipeline_bound_ms(6, 0.3, 0.4, 0.3)
    for i in range(3):
        stages = [0.3, 0.4, 0.3]
        stages[i] += 0.01
        assert pipeline_bound_ms(6, *stages) > base


def test_stage_layouts_cap_at_the_chunks():
    assert stage_layouts(8, (1, 2, 3, 4)) == [1, 2, 3, 4]
    assert stage_layouts(3, (3,)) == [1, 3]
    assert stage_layouts(3, (4, 2, 9)) == [1, 2, 3]  # 4 and 9 streams lay 3 chunks out as 3
    assert stage_layouts(1, (1, 3)) == [1]


# ---- shapes, variants, traffic ---------------------------------------------------

def test_default_shape_label_and_variants():
    s = WORKLOAD.default_shape()
    assert s == {"chunk": 1048576, "terms": 64, "chunks": 3, "streams": (1, 3)}
    assert WORKLOAD.label(s) == "1048576x64 chunks=3"
    assert [v.name for v in WORKLOAD.variants_for(s)] == ["streams=1", "streams=3", "event_dependency"]
    assert WORKLOAD.variant_names() == ["streams=1", "streams=3", "event_dependency"]
    assert WORKLOAD.baseline == "streams=1"


def test_variants_follow_the_shape():
    names = [v.name for v in WORKLOAD.variants_for(shape(streams=(4, 2, 4)))]
    assert names == ["streams=4", "streams=2", "event_dependency"]
    assert WORKLOAD.variant("streams=7").name == "streams=7"
    assert WORKLOAD.variant("event_dependency") is EVENT
    for bad in ["streams=0", "streams=-1", "streams=", "streams=\u00b2", "3 streams", "naive"]:
        with pytest.raises(UsageError, match="unknown variant"):
            WORKLOAD.variant(bad)


def test_kernel_names_cover_the_source():
    assert WORKLOAD.kernel_names() == ["synthesize", "add_one"]
    assert {v.kernel for v in WORKLOAD.variants} == set(WORKLOAD.kernel_names())


def test_check_shapes_include_chunks_off_the_block_size():
    shapes = WORKLOAD.check_shapes()
    for s in shapes:
        WORKLOAD.validate(s)
    assert any(s["chunk"] % 256 for s in shapes)
    assert any(s["chunk"] == 1 for s in shapes)
    assert any(s["terms"] == 1 for s in shapes)
    assert any(s["chunks"] % count for s in shapes for count in s["streams"])  # c % S wraps unevenly
    # 8 chunks on every count from 1 to 4 streams: more chunks than streams, as in the reference run
    assert any(s["chunks"] == 8 and set(s["streams"]) >= {1, 2, 3, 4} for s in shapes)


def test_traffic_and_device_bytes():
    s = shape(chunk=1000, terms=64, chunks=3)
    t = WORKLOAD.traffic(s, WORKLOAD.variant("streams=3"))
    assert t.bytes == 8 * 3000  # upload + download of every element
    assert t.flops == 4 * 64 * 3000
    assert WORKLOAD.traffic(s, WORKLOAD.variant("streams=1")) == t  # same work in every configuration
    e = WORKLOAD.traffic(s, EVENT)
    assert (e.bytes, e.flops) == (16 * 1000, 2 * 1000)
    assert WORKLOAD.device_bytes(s) == 4 * (2 * 3000 + 3 * 1000)


def test_inputs_are_modest_phases():
    x = WORKLOAD.make_inputs(shape(chunk=1000, chunks=3), np.random.default_rng(0))["x"]
    assert x.dtype == np.float32 and x.shape == (3000,)
    assert x.min() >= 0 and x.max() <= np.float32(2 * math.pi) and np.count_nonzero(x) == x.size


def test_event_reference_is_input_plus_two():
    x = phases(10)
    s = shape(chunk=4, chunks=3)
    ref = WORKLOAD.reference(s, {"x": x}, EVENT)
    np.testing.assert_array_equal(ref, (x[:4] + np.float32(1)) + np.float32(1))


# ---- validation ---------------------------------------------------------------------

@pytest.mark.parametrize("bad, word", [
    ({"chunk": 0}, "CHUNK"), ({"chunk": -5}, "CHUNK"), ({"terms": 0}, "TERMS"), ({"terms": -1}, "TERMS"),
    ({"terms": MAX_TERMS + 1}, "at most"), ({"chunks": 0}, "--chunks"), ({"chunks": True}, "--chunks"),
    ({"streams": ()}, "--streams"), ({"streams": (0,)}, "--streams"), ({"streams": (1, -2)}, "--streams"),
    ({"streams": (1, 2.5)}, "--streams"), ({"streams": 3}, "--streams"), ({"chunk": 1.5}, "CHUNK"),
])
def test_validate_rejects(bad, word):
    with pytest.raises(UsageError, match=word) as info:
        WORKLOAD.validate(shape(**bad))
    assert "\n" not in str(info.value)


def test_validate_accepts_lists_and_defaults():
    WORKLOAD.validate({"chunk": 1, "terms": MAX_TERMS})  # chunks and streams default
    WORKLOAD.validate(shape(chunks=4, streams=[1, 2, 4]))  # as a TOML config gives it


def test_validate_refuses_more_streams_than_chunks():
    WORKLOAD.validate(shape(chunks=4, streams=(4,)))
    with pytest.raises(UsageError, match=r"--streams 5 is more streams than chunks \(4\)"):
        WORKLOAD.validate(shape(chunks=4, streams=(1, 5)))


def test_pinned_failure_is_a_usage_error_and_releases_what_was_taken(monkeypatch):
    pytest.importorskip("cupy")
    import cupy as cp

    taken, seen = [], []

    def alloc(n):  # the first buffer succeeds, the second one fails like cudaHostAlloc would
        if taken:
            raise cp.cuda.runtime.CUDARuntimeError(2)  # cudaErrorMemoryAllocation
        taken.append(np.empty(n, np.float32))
        return taken[-1]

    real_close = mod.StreamContext.close

    def spy(ctx):
        seen.append(ctx)
        real_close(ctx)

    monkeypatch.setattr(mod, "alloc_pinned", alloc)
    monkeypatch.setattr(mod.StreamContext, "close", spy)
    s = shape(chunk=1000, chunks=3)
    with pytest.raises(UsageError, match=r"12000 bytes .* pinned host memory for the output") as info:
        WORKLOAD.setup(s, {"x": phases(3000)}, kernels={})
    assert "cudaErrorMemoryAllocation" in str(info.value) and "\n" not in str(info.value)
    (ctx,) = seen
    assert ctx.h_in is None and ctx.h_out is None and ctx.streams == []


# ---- compile and CLI ------------------------------------------------------------------

def test_nvrtc_compiles_every_kernel_without_spills():
    from pmppbench.hardware.compile import compile_unit

    unit = compile_unit("stream", WORKLOAD.kernel_names(), "sm_90")
    for name in WORKLOAD.kernel_names():
        rep = unit.ptxas[name]
        assert rep.registers > 0
        assert rep.spill_stores == rep.spill_loads == 0


@pytest.mark.parametrize("args, word", [
    (["stream", "0"], "CHUNK"),
    (["stream", "1024", "0"], "TERMS"),
    (["stream", "--streams", "0"], "--streams"),
    (["stream", "--streams", "1,x"], "--streams"),
    (["stream", "--chunks", "0"], "--chunks"),
    (["stream", "1024", str(MAX_TERMS + 1)], "at most"),
    (["stream", "--variants", "streams=0"], "unknown variant"),
])
def test_cli_bad_input_exits_2(run_cli, args, word):
    code, out, err = run_cli(*args)
    assert code == 2
    assert word in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


# ---- GPU ----------------------------------------------------------------------------

@pytest.mark.gpu
def test_every_configuration_passes_on_the_check_shapes():
    from gpu_helpers import assert_all_pass, check_rows

    rows = check_rows("stream", WORKLOAD.check_shapes())
    assert_all_pass(rows)
    assert {r.variant for r in rows} == {"streams=1", "streams=2", "streams=3", "streams=4", "event_dependency"}


@pytest.mark.gpu
@pytest.mark.parametrize("chunk", [1, 255, 257, 100003])
def test_odd_chunks_on_many_streams_pass(chunk):
    from gpu_helpers import assert_all_pass, check_rows

    # Seven chunks on one stream up to one stream each (more streams than chunks is refused).
    assert_all_pass(check_rows("stream", [shape(chunk=chunk, chunks=7, streams=(1, 2, 4, 7))]))


@pytest.mark.gpu
def test_event_dependency_passes():
    from gpu_helpers import assert_all_pass, check_rows

    rows = check_rows("stream", [shape(chunk=1 << 22, chunks=1, streams=(1,))], variants=["event_dependency"])
    assert [r.variant for r in rows] == ["event_dependency"]
    assert_all_pass(rows)


@pytest.mark.gpu
def test_timed_run_fills_the_overlap_model():
    from pmppbench.measure.protocol import Protocol
    from pmppbench.engine.worker.pipeline import run_shape

    rows = run_shape(WORKLOAD, shape(chunk=1 << 18), protocol=Protocol(1, 3, 1, alternate=True, timer="host"))
    by = {r.variant: r for r in rows}
    assert all(r.check == "PASS" for r in rows)
    assert all(r.median_ms > 0 for r in rows if r.variant != "event_dependency")
    assert by["event_dependency"].median_ms is None  # a demonstration: checked, never timed
    keys = {"h2d_ms", "kernel_ms", "d2h_ms", "bound_ms", "pct_of_bound", "predicted_ms", "pct_of_predicted"}
    for name in ("streams=1", "streams=3"):
        m = by[name].model
        assert keys <= set(m)
        assert min(m["h2d_ms"], m["kernel_ms"], m["d2h_ms"]) > 0
        assert m["pct_of_bound"] == pytest.approx(100 * by[name].median_ms / m["bound_ms"])
        assert m["pct_of_predicted"] == pytest.approx(100 * by[name].median_ms / m["predicted_ms"])
    one, three = by["streams=1"].model, by["streams=3"].model
    stages = (one["h2d_ms"], one["kernel_ms"], one["d2h_ms"])
    assert one["predicted_ms"] == pytest.approx(3 * sum(stages))
    assert one["bound_ms"] == three["bound_ms"] == pytest.approx(pipeline_bound_ms(3, *stages))
    assert three["predicted_ms"] < one["predicted_ms"]
    assert by["streams=3"].speedup_vs == "streams=1"
    assert by["event_dependency"].speedup is None and "bound_ms" not in by["event_dependency"].model


@pytest.mark.gpu
@pytest.mark.parametrize("chunk, chunks, streams", [(1 << 20, 8, (1, 2, 3, 4, 8)), (1 << 22, 3, (1, 3)),
                                                    (1 << 16, 6, (1, 4, 6))])
def test_no_configuration_beats_the_bound(chunk, chunks, streams):
    # The bound is a bound: every configuration, timed under the stream protocol, takes at
    # least bound_ms, also where the hardware reaches it (a stream per chunk).
    from pmppbench.engine.worker.pipeline import run_shape

    rows = run_shape(WORKLOAD, shape(chunk=chunk, chunks=chunks, streams=streams), protocol=WORKLOAD.protocol)
    timed = [r for r in rows if r.median_ms]
    assert len(timed) == len(streams) and all(r.check == "PASS" for r in rows)
    for r in timed:
        assert r.median_ms >= r.model["bound_ms"], (r.variant, r.median_ms, r.model)


@pytest.mark.gpu
def test_setup_failing_halfway_releases_streams_and_pinned_memory(monkeypatch):
    import cupy as cp

    rt = cp.cuda.runtime
    pinned, streams = [], []
    real_alloc = mod.alloc_pinned

    def alloc(n):
        a = real_alloc(n)
        assert rt.pointerGetAttributes(a.ctypes.data).type == rt.memoryTypeHost  # really pinned
        pinned.append(a.ctypes.data)
        return a

    class Tracked(cp.cuda.Stream):  # a Python subclass can be weakly referenced
        pass

    def stream():
        if streams:
            raise cp.cuda.runtime.CUDARuntimeError(2)  # the second stream fails
        s = Tracked(non_blocking=True)
        streams.append(weakref.ref(s))
        return s

    monkeypatch.setattr(mod, "alloc_pinned", alloc)
    monkeypatch.setattr(mod, "new_stream", stream)
    s = shape(chunk=1 << 16)
    with pytest.raises(cp.cuda.runtime.CUDARuntimeError):
        WORKLOAD.setup(s, WORKLOAD.make_inputs(s, np.random.default_rng(0)), kernels={})
    gc.collect()
    assert len(pinned) == 2 and len(streams) == 1
    assert all(rt.pointerGetAttributes(p).type == rt.memoryTypeUnregistered for p in pinned)  # cudaFreeHost ran
    assert streams[0]() is None  # cudaStreamDestroy ran
