"""histogram: references, axes and geometry on the CPU; every variant on edge sizes, the 64-bit
path and a race mutation on the GPU."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from gpu_helpers import assert_all_pass, check_rows, mutant_check
from mutants import Edit, machine_code, mutated_copy, source_of
from pmppbench import workloads
from pmppbench.hardware.compile import compile_unit
from pmppbench.cli.planning import shapes_for
from pmppbench.workloads import histogram as hist

W = workloads.get("histogram")
STUDY = "histogram_private"  # thread_private's study forms: studies/forms/histogram_private.cu

# The mutations, each an edit of a copy of the source (tests/mutants.py) that must FAIL.
MUTATIONS = {
    # shared_private: a plain read-modify-write of a shared bin
    "race": [Edit("histogram.cu", "        const unsigned b = bin_of(data[i]);\n        if (b != NONE) atomicAdd(&s[b], 1u);",
                  "        const unsigned b = bin_of(data[i]);\n        if (b != NONE) s[b] += 1u;")],
    # thread_private, 256 bins: two lanes sharing a column, counted by plain loads and stores (the
    # counters' template parameter ATOMIC false)
    "race_256": [Edit("histogram_private_parts.cuh", "bool ATOMIC = true", "bool ATOMIC = false"),
                 Edit("histogram_private.cuh", "reinterpret_cast<unsigned char*>(region + lane);",
                      "reinterpret_cast<unsigned char*>(region + (lane & ~1u));")],
    # thread_private: the length % 16 last bytes left out
    "drop": [Edit("histogram_private_parts.cuh",
                  "    if (tail < length) {\n        unsigned even = 0, odd = 0;\n        count_letters<",
                  "    if (false) {\n        unsigned even = 0, odd = 0;\n        count_letters<"),
             Edit("histogram_private.cuh", "            if (tail < length) count_byte(col, data[tail]);", "")],
    # the 7-bin letter test letting '{' and '|' into bin 6
    "range": [Edit("histogram_private_parts.cuh", "    return shift & ~w & ~ge_brace & 0x80808080u;",
                   "    return shift & ~w & 0x80808080u;")],
    # a bit-sliced tree that drops its carry of weight 16
    "sliced_carry": [Edit("histogram_private_parts.cuh", "    add_sliced(cnt, csa(st.eights, e[0], e[1]), 16);",
                          "    csa(st.eights, e[0], e[1]);")],
    # the study's ring counted once more after the last step, slots that were never loaded
    "ring": [Edit("histogram_private.cu", "        p += V * stride;\n    }\n}\n",
                  "        p += V * stride;\n    }\n    unsigned even = 0, odd = 0;\n"
                  "    for (int k = 0; k < V; ++k) count_letters(v[k], even, odd);\n    add_lanes(cnt, even, odd);\n}\n")],
}


def test_letter_reference_counts_a_to_z_in_bins_of_four():
    text = np.frombuffer(b"programming massively parallel processors", dtype=np.uint8)
    ref = W.reference({"n": text.size, "bins": 7, "input": "uniform"}, {"text": text}, W.variant("warp_vec"))
    # the book's example (PMPP 9.1): a-d 5, e-h 5, i-l 6, m-p 10, q-t 10, u-x 1, y-z 1
    assert ref.dtype == np.uint32 and ref.tolist() == [5, 5, 6, 10, 10, 1, 1]


def test_byte_reference_and_inputs():
    rng = np.random.default_rng(0)
    shape = {"n": 100000, "bins": 256, "input": "uniform"}
    text = W.make_inputs(shape, rng)["text"]
    ref = W.reference(shape, {"text": text}, W.variant("cub"))
    assert ref.sum() == 100000 and (ref > 0).sum() == 256
    letters = W.make_inputs({"n": 1000, "bins": 7, "input": "uniform"}, rng)["text"]
    assert letters.min() >= ord("a") and letters.max() <= ord("z")
    one = W.make_inputs({"n": 1000, "bins": 7, "input": "one_letter"}, rng)["text"]
    assert np.all(one == ord("a"))


def test_read_roof_reference_places_tail_bytes_in_their_word():
    text = np.arange(1, 7, dtype=np.uint8)  # words 0x04030201 and 0x00000605
    ref = W.reference({"n": 6, "bins": 7, "input": "uniform"}, {"text": text}, W.variant("read"))
    assert ref[0] == 0x04030201 ^ 0x0605


def test_axes_default_to_both_values_each():
    shapes = shapes_for(W, {"n": 1000}, {"bins": None, "input": None}, check_only=False)
    assert sorted((s["bins"], s["input"]) for s in shapes) == [
        (7, "one_letter"), (7, "uniform"), (256, "one_letter"), (256, "uniform")]


def test_bad_bins_is_one_line(run_cli):
    code, _out, err = run_cli("histogram", "1000", "--bins", "9")
    assert code == 2 and "histogram: --bins takes 7 or 256, got 9" in err


def test_geometry_and_index_path():
    shape = {"n": 1000003, "bins": 7, "input": "uniform"}
    assert W.geometry(W.variant("global_atomic"), shape) == ((3907,), (256,))
    assert W.geometry(W.variant("coarsened_interleaved"), shape) == ((123,), (256,))
    assert hist.index_type_of(shape) == "int"
    assert hist.index_type_of({**shape, "n": hist.LARGE_CHECK}) == "long long"


def test_every_kernel_compiles_for_both_bin_counts():
    for bins in hist.BINS:
        unit = compile_unit("histogram", W.kernel_names(), "sm_90", {"BINS": bins})
        for name, report in unit.ptxas.items():
            assert (report.spill_stores, report.stack_bytes) == (0, 0), (bins, name)


# ---- on the GPU -------------------------------------------------------------------------------

@pytest.mark.gpu
def test_every_variant_passes_on_edge_sizes():
    shapes = [s for s in W.check_shapes() if s["n"] != hist.LARGE_CHECK]
    assert_all_pass([r for r in check_rows("histogram", shapes) if r.check != "SKIP"])


@pytest.mark.gpu
def test_the_64_bit_path():
    shapes = [{"n": hist.LARGE_CHECK, "bins": 7, "input": "uniform"}]
    variants = [v.name for v in W.variants if v.name not in ("global_atomic", "privatized")]
    assert_all_pass([r for r in check_rows("histogram", shapes, variants) if r.check != "SKIP"])


@pytest.mark.parametrize("mutation, bins, kernel", [
    ("race", 7, "shared_private<int>"), ("race_256", 256, "thread_private"), ("drop", 7, "thread_private"),
    ("drop", 256, "thread_private"), ("range", 7, "thread_private"), ("sliced_carry", 7, "thread_private"),
])
def test_each_mutation_changes_the_machine_code(mutation, bins, kernel, tmp_path):
    """A mutation that compiled to the same code could never FAIL."""
    plain = compile_unit("histogram", [kernel], "sm_90", {"BINS": bins}).cubin
    mutated = compile_unit("histogram", [kernel], "sm_90", {"BINS": bins},
                           source=mutated_copy(tmp_path, "histogram", MUTATIONS[mutation])).cubin
    assert plain != mutated


@pytest.mark.gpu
def test_a_race_on_a_bin_fails(tmp_path):
    shape = {"n": 1000003, "bins": 7, "input": "one_letter"}
    rows = mutant_check("histogram", MUTATIONS["race"], shape, "shared_private", tmp_path)
    assert [r.check for r in rows] == ["FAIL"], rows[0].check_detail


@pytest.mark.parametrize("bins", hist.BINS)
def test_cub_prebuild_asks_for_the_build_the_job_uses(monkeypatch, bins):
    """The prebuild on the worker's build thread asks cuda.compute with the job's key (the
    sample and counter types, the levels, the sample count), so the job finds the build done."""
    from test_reduce import FakeCompute, fake_cupy

    from pmppbench.workloads import cub

    compute, alone = FakeCompute(), FakeCompute()
    monkeypatch.setattr(cub, "compute_module", lambda: compute)
    monkeypatch.setattr(hist, "cupy", fake_cupy)
    shape = {"n": 1000, "bins": bins, "input": "uniform"}

    def job():
        ctx = {"text": np.zeros(1000, dtype=np.uint8), "histo": np.zeros(bins, dtype=np.uint32), "peers": {}}
        W.job(W.variant("cub"), shape, ctx)

    W.prebuild(shape, list(W.variants))
    job()
    assert len(compute.keys) == 1  # the job found the prebuild's object (cub.built)
    levels = dict(compute.keys[0][1])
    assert levels["h_num_output_levels"] == ("int32", [bins + 1]) and levels["num_samples"] == ("int", "1000")
    W.prebuild({**shape, "n": hist.LARGE_CHECK}, list(W.variants))  # past 2^31 samples cub is a SKIP: no build
    assert len(compute.keys) == 1
    monkeypatch.setattr(cub, "compute_module", lambda: alone)
    job()
    assert alone.keys == compute.keys  # what the job alone would have built


def test_check_only_takes_the_64_bit_path_for_each_bin_count():
    """As every workload's --check-only does, one shape past 2^31 bytes per compile unit (BINS)."""
    large = [s for s in W.check_shapes() if s["n"] > 2**31 - 1]
    assert [(s["bins"], hist.index_type_of(s)) for s in large] == [(7, "long long"), (256, "long long")]
    assert all(hist.index_type_of(s) == "int" for s in W.check_shapes() if s not in large)


@pytest.mark.gpu
def test_cub_built_ahead_on_another_thread_serves_the_job():
    """The worker's build thread runs prebuild; the job on the main thread then uses that build."""
    import threading

    pytest.importorskip("cuda.compute")
    shapes = [{"n": 1000003, "bins": b, "input": "uniform"} for b in hist.BINS]
    builder = threading.Thread(target=lambda: [W.prebuild(s, [W.variant("cub")]) for s in shapes])
    builder.start()
    builder.join()
    assert_all_pass(check_rows("histogram", shapes, ["cub"]))


# ---- thread_private's arithmetic on the CPU ----------------------------------------------------
# The kernel file compiles as C++ with CUDA's few names stood in for; the harness calls
# thread_private's own helpers on every byte value in every position and on random text, and
# compares with NumPy's count, so the SWAR letter test, the lane layout and the 256-bin columns
# are checked exactly without a GPU (the GPU tests then check the whole kernel).

HARNESS = r"""
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
struct uint4 { unsigned x, y, z, w; };
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }
struct Index { unsigned x, y, z; };
static Index threadIdx, blockIdx, blockDim, gridDim;
inline void __syncthreads() {}
inline void __syncwarp() {}
inline void __threadfence() {}
inline unsigned atomicAdd(unsigned* p, unsigned v) { unsigned old = *p; *p += v; return old; }
inline unsigned atomicXor(unsigned* p, unsigned v) { unsigned old = *p; *p ^= v; return old; }
inline unsigned atomicExch(unsigned* p, unsigned v) { unsigned old = *p; *p = v; return old; }
inline unsigned __shfl_down_sync(unsigned, unsigned v, int) { return v; }
inline unsigned __activemask() { return 0xffffffffu; }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline unsigned __umulhi(unsigned a, unsigned b) { return unsigned((uint64_t(a) * b) >> 32); }
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
    return unsigned(((uint64_t(hi) << 32 | lo) << (s & 31)) >> 32);
}
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
    const uint64_t both = uint64_t(y) << 32 | x;
    unsigned r = 0;
    for (int i = 0; i < 4; ++i) r |= unsigned((both >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}
using std::min;
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#include KERNELS

int main() {  // harness < bytes (a multiple of 16) > counts (BINS unsigned)
    std::vector<unsigned char> text;
    int c;
    while ((c = std::getchar()) != EOF) text.push_back((unsigned char)c);
    std::vector<unsigned> out(BINS, 0);
#if BINS == 7 && defined(SLICED)
    // count_sliced over groups of 4 vectors, the rest by count_letters, then finish_sliced
    std::vector<uint4> vecs(text.size() / 16);
    std::memcpy(vecs.data(), text.data(), 16 * vecs.size());
    unsigned cnt[7] = {0, 0, 0, 0, 0, 0, 0};
    Sliced st;
    size_t j = 0;
    for (; j + 4 <= vecs.size(); j += 4) count_sliced(&vecs[j], st, cnt);
    for (; j < vecs.size(); ++j) {
        unsigned even = 0, odd = 0;
        count_letters(vecs[j], even, odd);
        add_lanes(cnt, even, odd);
    }
    finish_sliced(st, cnt);
    for (int b = 0; b < 7; ++b) out[b] = cnt[b];
#elif BINS == 7
#ifndef STRIDE
#define STRIDE 1
#endif
    // every thread me < STRIDE of a grid of STRIDE threads, through the ring (count_thread)
    std::vector<uint4> vecs(text.size() / 16);
    std::memcpy(vecs.data(), text.data(), 16 * vecs.size());
    for (unsigned long long me = 0; me < STRIDE; ++me) {
        unsigned cnt[7] = {0, 0, 0, 0, 0, 0, 0};
        count_thread(vecs.data(), vecs.size(), me, STRIDE, cnt);
        for (int b = 0; b < 7; ++b) out[b] += cnt[b];
    }
#else
    static unsigned region[4096];
    const unsigned lane = 5;
    unsigned char* col = reinterpret_cast<unsigned char*>(region + lane);
    for (size_t j = 0; j < text.size(); j += 16) {
        uint4 v;
        std::memcpy(&v, &text[j], 16);
        count_vec(col, v);
    }
    for (int b = 0; b < 256; ++b) {  // counter (b, lane): half b / 128 of word (b % 128) * 32 + lane
        unsigned short half;
        std::memcpy(&half, col + (b % 128) * 128 + (b / 128) * 2, 2);
        out[b] = half;
    }
    for (int w = 0; w < 4096; ++w)  // no other lane's column was touched
        if (w % 32 != lane && region[w] != 0) return 4;
#endif
    std::fwrite(out.data(), sizeof(unsigned), out.size(), stdout);
}
"""


def build_harness(tmp_path, bins, *defines, unit="histogram", mutation=None):
    """The CPU harness around kernels_cu/histogram.cu (or the study's file, `unit`), with a
    mutation's edits made to a copy of it."""
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ to build the CPU harness of thread_private")
    source, binary = tmp_path / "harness.cpp", tmp_path / f"harness{bins}"
    source.write_text(HARNESS)
    kernels = mutated_copy(tmp_path / "mutant", unit, MUTATIONS[mutation]) if mutation else source_of(unit)
    shipped = Path(hist.__file__).resolve().parents[2] / "kernels_cu"
    subprocess.run([cxx, "-std=c++17", "-O1", "-w", f"-I{shipped}", f"-DBINS={bins}", *(f"-D{d}" for d in defines),
                    f'-DKERNELS="{kernels}"', str(source), "-o", str(binary)], check=True, capture_output=True,
                   text=True)
    return binary


def harness_counts(binary, text: np.ndarray) -> np.ndarray:
    run = subprocess.run([str(binary)], input=text.tobytes(), capture_output=True, check=True)
    return np.frombuffer(run.stdout, dtype=np.uint32)


def every_byte_everywhere() -> np.ndarray:
    """Each byte value 0-255 once in each of the 16 positions of a vector, the rest of the vector
    'a', then random bytes of every value and a run of one value long enough to fill a lane."""
    vectors = np.full((256 * 16, 16), ord("a"), dtype=np.uint8)
    for value in range(256):
        for pos in range(16):
            vectors[value * 16 + pos, pos] = value
    rng = np.random.default_rng(7)
    return np.concatenate([vectors.ravel(), rng.integers(0, 256, 16 * 1000, dtype=np.uint8),
                           np.full(16 * 40, ord("z"), dtype=np.uint8), np.full(16 * 40, 200, dtype=np.uint8)])


@pytest.mark.parametrize("bins", hist.BINS)
def test_thread_private_counts_every_byte_value_on_the_cpu(tmp_path, bins):
    text = every_byte_everywhere()
    ref = W.reference({"n": text.size, "bins": bins, "input": "uniform"}, {"text": text}, W.variant("thread_private"))
    # 7 bins: the shipped loop's counts (count_sliced, the rest by count_letters); 256: count_vec
    np.testing.assert_array_equal(harness_counts(build_harness(tmp_path, bins, *(("SLICED",) if bins == 7 else ())),
                                                 text), ref)
    if bins == 7:  # and the study's ring (one thread over every vector)
        np.testing.assert_array_equal(harness_counts(build_harness(tmp_path, bins, unit=STUDY), text), ref)


def test_the_bit_sliced_count_is_exact_on_the_cpu(tmp_path):
    """count_sliced (one-hot bytes by a byte-permute lookup, a Harley-Seal tree of carry-save
    adders, popcounts of its weight-16 carry) on every byte value in every position, random bytes
    and long runs of one letter (which carry through every level of the tree); a tree that drops
    its top carry must FAIL."""
    text = every_byte_everywhere()
    text = np.concatenate([text, np.full(16 * 4 * 300, ord("q"), dtype=np.uint8)])
    ref = W.reference({"n": text.size, "bins": 7, "input": "uniform"}, {"text": text}, W.variant("thread_private"))
    np.testing.assert_array_equal(harness_counts(build_harness(tmp_path, 7, "SLICED"), text), ref)
    got = harness_counts(build_harness(tmp_path, 7, "SLICED", mutation="sliced_carry"), text)
    assert not np.array_equal(got, ref)


@pytest.mark.parametrize("stride", [1, 7, 37, 1000, 6000])
def test_the_ring_counts_each_vector_once_on_the_cpu(tmp_path, stride):
    """The study's count_thread (PRIVATE_RING) for every thread of a grid of `stride` threads over 5,176 vectors:
    one step or many, a partial first step or none (stride 1: 647 full steps of 8), and threads with
    no vector at all (stride 6000); the 4-slot ring too."""
    text = every_byte_everywhere()
    ref = W.reference({"n": text.size, "bins": 7, "input": "uniform"}, {"text": text}, W.variant("thread_private"))
    np.testing.assert_array_equal(harness_counts(build_harness(tmp_path, 7, f"STRIDE={stride}", unit=STUDY), text), ref)
    if stride == 37:
        np.testing.assert_array_equal(
            harness_counts(build_harness(tmp_path, 7, f"STRIDE={stride}", "PRIVATE_VECS=4", unit=STUDY), text), ref)


def test_counting_the_ring_once_more_fails_on_the_cpu(tmp_path):
    """The mutation `ring` counts the study ring's slots once more after the last step; those were never loaded
    (on the CPU they hold 'a's), so bin 0 comes out too high and the exact check must see it."""
    text = every_byte_everywhere()
    ref = W.reference({"n": text.size, "bins": 7, "input": "uniform"}, {"text": text}, W.variant("thread_private"))
    got = harness_counts(build_harness(tmp_path, 7, "STRIDE=37", unit=STUDY, mutation="ring"), text)
    assert got[0] > ref[0] and np.array_equal(got[1:], ref[1:])


def test_letting_the_two_bytes_past_z_into_a_bin_fails_on_the_cpu(tmp_path):
    """The mutation `range` counts '{' and '|' (the two byte values that share y-z's group of four) in
    bin 6: the exact check must see it."""
    text = every_byte_everywhere()
    ref = W.reference({"n": text.size, "bins": 7, "input": "uniform"}, {"text": text}, W.variant("thread_private"))
    got = harness_counts(build_harness(tmp_path, 7, "SLICED", mutation="range"), text)
    past_z = int(np.isin(text, np.frombuffer(b"{|", dtype=np.uint8)).sum())
    assert past_z >= 32 and got[6] == ref[6] + past_z and np.array_equal(got[:6], ref[:6])


@pytest.mark.parametrize("bins", hist.BINS)
def test_thread_private_geometry(bins):
    shape = {"n": 1 << 28, "bins": bins, "input": "uniform"}

    class H200:
        sm_count = 132

    grid, block = W.geometry(W.variant("thread_private"), shape, H200)
    assert (grid, block) == (((5 * 132,), (256,)) if bins == 7 else ((4 * 132,), (96,)))
    assert W.geometry(W.variant("thread_private"), {**shape, "n": 100}, H200) == ((1,), block)


@pytest.mark.gpu
@pytest.mark.parametrize("mutation, bins, text", [
    ("drop", 7, "uniform"), ("drop", 256, "uniform"),  # the length % 16 last bytes left out
    ("race_256", 256, "one_letter"),  # two lanes share a column with plain stores: a raced bin
])
def test_thread_private_mutations_fail(mutation, bins, text, tmp_path):
    rows = mutant_check("histogram", MUTATIONS[mutation], {"n": 1000003, "bins": bins, "input": text}, "thread_private",
                        tmp_path)
    assert [r.check for r in rows] == ["FAIL"], rows[0].check_detail


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 31, 1000003, (1 << 24) + 7])
def test_the_ring_of_loads_passes_at_the_edges(n):
    """The study's ring of loads (histogram_private's thread_private_ring): exact at the edge sizes, both
    inputs."""
    from pmppbench.engine.worker.pipeline import run_shape
    from pmppbench.hardware.compile import kernels_from

    forms = study_forms().WORKLOAD
    for text in ("uniform", "one_letter"):
        with kernels_from(source_of(STUDY).parent):
            rows = run_shape(forms, {"n": n, "bins": 7, "input": text}, protocol=forms.protocol, check_only=True,
                             variants=[forms.variant("thread_private_ring")])
        assert [r.check for r in rows] == ["PASS"], rows[0].check_detail


def study_forms():
    """studies/forms/histogram_forms.py, thread_private's study workload (imported by path, as
    PMPPBENCH_WORKLOADS would with studies/forms on the path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("histogram_forms", source_of(STUDY).parent / "histogram_forms.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_study_forms_compile_without_spills_and_the_knob_free_one_is_the_shipped_code():
    """Every form of thread_private's study workload builds for sm_90 with no local memory, as the
    shipped kernel does (bulk_private with its ring in shared memory); built without knobs, the study
    file's thread_private is the shipped machine code, for both bin counts."""
    forms = study_forms()
    study = source_of(STUDY)
    for name, (kernel, knobs, bins_of) in forms.FORMS.items():
        for bins in bins_of:
            report = compile_unit(STUDY, [kernel], "sm_90", {"BINS": bins, **knobs}, source=study).ptxas[kernel]
            assert (report.spill_stores, report.stack_bytes) == (0, 0), (name, bins)
            if kernel == "bulk_private":  # 8 warps x 2 stages x (2 KB + its barrier), the block's counts
                assert 8 * 2 * (2048 + 8) <= report.static_smem < 8 * 2 * (2048 + 8) + 128 + 28
            elif bins == 256:
                assert report.static_smem == 16384 * 3
    for bins in hist.BINS:
        shipped = compile_unit("histogram", ["thread_private"], "sm_90a", {"BINS": bins})
        own = compile_unit(STUDY, ["thread_private"], "sm_90a", {"BINS": bins}, source=study)
        assert machine_code(shipped, "thread_private") == machine_code(own, "thread_private"), bins
