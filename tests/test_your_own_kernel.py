"""Your own kernel, from the declarations (workloads/learner.py): every variant a learner's kernel
may run --like declares the defines its own kernel is built with (held here to kernels_cu and to
the variant's geometry, so the declaration cannot drift) and a starter that compiles for every
target the variant supports; docs/your-own-kernel.md's tables are what the declarations make."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pmppbench import workloads
from pmppbench.errors import UsageError
from pmppbench.hardware.compile import compile_unit, target_meets
from pmppbench.workloads import learner, tables

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")
# kernels_cu's one-letter names, given to a learner under readable ones (a one-letter define would
# rename every T or C in the learner's file and in the CUDA headers it includes)
READABLE = {"T": "TILE_WIDTH", "CF": "COARSE_FACTOR", "R": "REG_TILE", "C": "COARSE_C", "B": "BLOCK_DIM",
            "TX": "BEST_TX", "ROWS": "BEST_ROWS", "BY": "BEST_Y", "ZCHUNK": "BEST_ZCHUNK"}

LIKEABLE = [(name, v.name) for name in workloads.builtin_names() for v in learner.likeable(workloads.get(name))]


def _with_includes(path: Path) -> str:
    """The text of kernels_cu's `path` with the local headers it includes ("gemm_warptile.cuh") after it."""
    text = path.read_text()
    return text + "".join(_with_includes(path.parent / name) for name in re.findall(r'^#include "([^"]+)"', text, re.M))


def _template_params(source: str, family: str, count: int) -> list[str] | None:
    """The parameter names of the kernel template `family` with `count` parameters in `source`."""
    for m in re.finditer(r"template\s*<([^>]*)>\s*__global__", source):
        head = source[m.end():source.index("{", m.end())]
        params = [p.split("=")[0].split()[-1] for p in m.group(1).split(",")]
        if re.search(rf"\b{family}\s*\(", head) and len(params) == count:
            return params
    return None


def _source_value(source: str, kernel: str, name: str) -> str | None:
    """What kernels_cu gives `name` (or the one-letter name it stands for): the template argument
    of `kernel` ("tiled<16>") in that parameter's place, else a #define or a constexpr."""
    names = {name} | {short for short, long in READABLE.items() if long == name}
    family, _, args = kernel.partition("<")
    values = [a.strip() for a in args.rstrip(">").split(",")] if args else []
    params = _template_params(source, family, len(values)) or []
    found = next((value for param, value in zip(params, values) if param in names), None)
    if found is not None:
        return found
    for n in names:
        m = re.search(rf"^\s*#define {n} (\S+)", source, re.M) or \
            re.search(rf"^constexpr [^=]*?\b{n} = ([^,;]+)[,;]|^constexpr .*, {n} = ([^,;]+)[,;]", source, re.M)
        if m:
            return next(g for g in m.groups() if g is not None).strip()
    return None


@pytest.mark.parametrize("workload, variant", LIKEABLE)
def test_each_declared_define_is_the_shipped_kernels(workload, variant):
    w = workloads.get(workload)
    v = w.variant(variant)
    source = _with_includes(ROOT / "kernels_cu" / f"{workload}.cu")
    for name, value in v.defines:
        assert _source_value(source, v.kernel, name) == str(value), (workload, variant, name)


@pytest.mark.parametrize("workload, variant", LIKEABLE)
def test_the_block_defines_are_the_variants_geometry(workload, variant):
    w = workloads.get(workload)
    v = w.variant(variant)
    given = dict(v.defines)
    assert all(n in given for n in v.starter.block), v.starter.block
    if v.starter.block:
        assert tuple(given[n] for n in v.starter.block) == learner.block_of(w, v)


# Where a copy of the shipped file is a learner's start: the workloads whose blocks and tiles are
# macros, as in the book. transpose's, gemm's and stencil's tiles are template parameters that
# the shipped headers share (TILE, BM, THREADS), which the same names as -D would rename; a
# learner there starts from `pmppbench template`, whose file takes the defines.
COPYABLE = ("vecadd", "reduce", "histogram", "scan", "conv2d", "stencil3d")


def _copy_groups() -> list[tuple[str, tuple, str, tuple[str, ...]]]:
    """(workload, a learner's defines, the arch needed, the shipped kernels --like variants given those defines)."""
    groups: dict[tuple, list[str]] = {}
    for name, variant in LIKEABLE:
        if name not in COPYABLE:
            continue
        w = workloads.get(name)
        v = w.variant(variant)
        defines = tuple(sorted(learner.defines_for(w, v, w.default_shape()).items()))
        groups.setdefault((name, defines, v.needs or ""), []).append(v.kernel)
    return [(name, defines, needs, tuple(kernels)) for (name, defines, needs), kernels in groups.items()]


@pytest.mark.parametrize("workload, defines, needs, kernels", _copy_groups(),
                         ids=lambda x: x if isinstance(x, str) else None)
def test_a_copy_of_the_shipped_file_compiles_as_a_learners(workload, defines, needs, kernels, tmp_path):
    """A learner who starts from the shipped rung (a copy of kernels_cu's file) gets the rung's
    own defines with -D: the file's blocks and tiles are macros of the same values, so they
    agree, and no template parameter or constant shares a define's name."""
    source = tmp_path / f"my_{workload}.cu"
    source.write_text((ROOT / "kernels_cu" / f"{workload}.cu").read_text())
    unit = compile_unit(workload, list(kernels), needs if needs.endswith("a") else "sm_90", dict(defines), source=source)
    assert set(unit.lowered) == set(kernels)


def test_a_learner_gets_the_variants_defines_and_the_shapes():
    w = workloads.get("reduce")
    shape = {**w.default_shape(), "dtype": "i32"}
    assert learner.defines_for(w, w.variant("coarsened"), shape) == {"BLOCK_DIM": 1024, "COARSE_FACTOR": 8, "ELEM": "int"}
    s = workloads.get("stencil")
    assert learner.defines_for(s, s.variant("shared"), {"n": 1000, "radius": 3}) == {"BLOCK_DIM": 256, "RADIUS": 3}
    g = workloads.get("gemm")
    assert learner.defines_for(g, g.variant("tiled16"), g.default_shape()) == {"TILE_WIDTH": 16}


@pytest.mark.parametrize("workload, variant", LIKEABLE)
def test_every_template_compiles_for_every_target_and_names_its_kernel(workload, variant, tmp_path):
    w = workloads.get(workload)
    v = w.variant(variant)
    text = learner.template(w, v)
    name = learner.kernel_name(v)
    assert f'extern "C" __global__ void {name}({v.starter.params}) {{' in text
    assert f"--kernel {learner.file_name(w, v)}:{name} --like {variant}" in text
    source = tmp_path / learner.file_name(w, v)
    source.write_text(text)
    targets = [t for t in TARGETS if target_meets(t, v.needs)]
    assert targets
    for defines in w.compile_sets():
        for arch in targets:
            unit = compile_unit(w.name, [name], arch, {**dict(v.defines), **defines}, source=source)
            assert list(unit.lowered) == [name] and unit.ptxas[name].registers > 0, (arch, defines)


def test_which_variants_a_learner_may_be_like():
    names = {w: [v.name for v in learner.likeable(workloads.get(w))] for w in workloads.builtin_names()}
    assert names["vecadd"] == ["scalar", "float4", "grid_stride"]
    assert names["transpose"] == ["copy", "naive", "shared32", "padded33", "coarsened"]
    assert names["reduce"] == ["segmented", "coarsened"] and names["stream"] == [] and names["scan"] == []
    assert "best" not in names["gemm"] and "wmma" not in names["gemm"] and names["gemm"][:2] == ["naive", "tiled16"]


@pytest.mark.parametrize("workload, name, message", [
    ("reduce", "shared", "--like shared: it takes no learner's kernel (its call is several launches, or its kernel "
                         "or arguments change with the GPU, shape or precision); choose one of segmented, coarsened"),
    ("gemm", "wmma", "--like wmma: it takes no learner's kernel (its call is several launches, or its kernel or "
                     "arguments change with the GPU, shape or precision); choose one of naive, tiled16, tiled32, "
                     "coarsened, regtile2x2, regtile4x4, corner_turning, dynamic_smem, blocktile8x8, warptile, "
                     "double_buffer, cp_async, tuned"),
    ("reduce", "cub", "--like cub: it calls a library, not a kernel; choose one of segmented, coarsened"),
    ("reduce", "nope", "reduce: unknown variant 'nope'; choose from simple, convergent, shared, segmented, coarsened, "
                       "warp_vec, cub, cupy_cub, read"),
])
def test_a_variant_that_cannot_be_a_like_is_one_line(workload, name, message):
    with pytest.raises(UsageError) as info:
        learner.like(workloads.get(workload), name)
    assert str(info.value) == message


def test_the_docs_tables_are_what_the_declarations_make():
    text = (ROOT / "docs" / "your-own-kernel.md").read_text()
    for name, make in tables.DOC_TABLES.items():
        assert tables.region(text, name) == make(), \
            f"docs/your-own-kernel.md's {name} table is stale: run python -m pmppbench.workloads.tables"
    assert set(tables.DOC_TABLES) == {f"like {w}" for w in workloads.builtin_names()}


# ---- the commands ----------------------------------------------------------------------------

def test_template_prints_the_starter(run_cli):
    w = workloads.get("transpose")
    code, out, err = run_cli("template", "transpose", "padded33")
    assert code == 0 and err == "" and out == learner.template(w, w.variant("padded33"))
    assert out.startswith("// Your own kernel for `pmppbench transpose`, run --like padded33: Matrix transpose B = "
                          "A^T (FP32).\n")
    assert "\n// Defines (-D, as the variant's own kernel is built): TILE_DIM = 32, TILE_STRIDE = 33\n" in out
    assert "\n// Block (at the default shape): 32 x 32 = 1024 threads (TILE_DIM x TILE_DIM)\n" in out
    assert out.endswith('extern "C" __global__ void my_padded33(const float* a, float* b, int m, int n) {\n'
                        "    int x = blockIdx.x * TILE_DIM + threadIdx.x;  // A's column\n"
                        "    int y = blockIdx.y * TILE_DIM + threadIdx.y;  // A's row\n"
                        "    if (x < n && y < m) b[x * m + y] = a[y * n + x];  // reads coalesced, writes strided by m\n"
                        "}\n")
    code, out, _ = run_cli("template", "reduce")  # the first variant that takes a learner's kernel
    assert code == 0 and "run --like segmented" in out.split("\n")[0]
    assert "\n// Before each call: *out zeroed (add each block's sum into it with one atomicAdd)\n" in out


@pytest.mark.parametrize("args, message", [
    (["template", "nope"], "unknown workload 'nope'; choose from vecadd, transpose, gemm, stencil, conv2d, stencil3d, "
                           "stream, reduce, histogram, scan"),
    (["template", "vecadd", "nope"], "vecadd: unknown variant 'nope'; choose from scalar, float4, grid_stride"),
    (["template", "reduce", "shared"], "--like shared: it takes no learner's kernel (its call is several launches, "
                                       "or its kernel or arguments change with the GPU, shape or precision); choose "
                                       "one of segmented, coarsened"),
    (["template", "gemm", "cublas"], "--like cublas: it calls a library, not a kernel; choose one of naive, tiled16, "
                                     "tiled32, coarsened, regtile2x2, regtile4x4, corner_turning, dynamic_smem, "
                                     "blocktile8x8, warptile, double_buffer, cp_async, tuned"),
    (["template", "scan"], "scan: none of its variants takes a learner's kernel (--like); choose one of vecadd, "
                           "transpose, gemm, stencil, conv2d, stencil3d, reduce, histogram"),
    (["compile", "vecadd", "stencil", "--kernel", "x.cu:k", "--like", "scalar"],
     "compile --kernel FILE.cu:NAME --like VARIANT takes one workload, e.g. pmppbench compile transpose --kernel "
     "my.cu:my_kernel --like padded33"),
    (["compile", "reduce", "--kernel", "x.cu:k"], "--kernel and --like go together: --kernel my.cu:my_kernel --like "
                                                  "segmented"),
    (["compile", "reduce", "--kernel", "nofile.cu:k", "--like", "coarsened"], "--kernel nofile.cu:k: no such file "
                                                                              "nofile.cu"),
])
def test_bad_input_is_one_line_exit_2(run_cli, args, message):
    code, out, err = run_cli(*args)
    assert code == 2 and out == "" and err == f"pmppbench: {message}\n"


def test_compile_of_a_learners_file_prints_its_resources_per_define_set(run_cli, tmp_path):
    w = workloads.get("stencil")
    mine = tmp_path / "mine.cu"
    mine.write_text(learner.template(w, w.variant("shared")))
    code, out, err = run_cli("compile", "stencil", "--kernel", f"{mine}:my_shared", "--like", "shared",
                             "--arch", "sm_90")
    lines = out.rstrip("\n").split("\n")
    assert code == 0 and err == "" and lines[0].endswith(", sm_90") and lines[0].startswith("NVRTC ")
    assert [re.sub(r"\d+ regs", "N regs", line) for line in lines[1:]] == [
        f"OK  my_shared  BLOCK_DIM=256 RADIUS={r}  N regs, 0 B smem, 0 B stack, 0 B spills" for r in (1, 2, 32, 64)]
    code, _, err = run_cli("compile", "stencil", "--kernel", f"{mine}:my_shared", "--like", "coarsened",
                           "--arch", "sm_75")
    assert code == 2 and err == "pmppbench: --like coarsened needs sm_80 or newer; choose --arch sm_80 or newer\n"


def test_a_syntax_error_exits_1_naming_file_and_line(run_cli, tmp_path):
    mine = tmp_path / "mine.cu"
    mine.write_text('extern "C" __global__ void my_scalar(const float* a, const float* b, float* c, int n) {\n'
                    "    int i = blockIdx.x * blockDim.x + threadIdx.x\n"
                    "    if (i < n) c[i] = a[i] + b[i];\n}\n")
    code, out, err = run_cli("compile", "vecadd", "--kernel", f"{mine}:my_scalar", "--like", "scalar", "--arch", "sm_90")
    assert code == 1 and f"{mine}(3): error: expected a \";\"" in out
    assert "FAIL my_scalar (no defines)" in out and err == f"pmppbench: my_scalar from {mine} did not compile (above)\n"


EXAMPLES = sorted((ROOT / "docs" / "your-own-kernel").glob("*.cu"))


def test_every_workload_that_takes_a_learners_kernel_has_a_worked_example():
    assert sorted({p.stem.split("_", 1)[0] for p in EXAMPLES}) == sorted({w for w, _ in LIKEABLE})


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_worked_example_compiles_for_every_target(path):
    """docs/your-own-kernel/<workload>_<variant>.cu: my_<variant>, run --like <variant> (its first line)."""
    workload, variant = path.stem.split("_", 1)
    w = workloads.get(workload)
    v = learner.like(w, variant)
    name = learner.kernel_name(v)
    assert path.read_text().startswith(f"// pmppbench {workload} --kernel {path.name}:{name} --like {variant}\n")
    for defines in w.compile_sets():
        for arch in (t for t in TARGETS if target_meets(t, v.needs)):
            unit = compile_unit(w.name, [name], arch, {**dict(v.defines), **defines}, source=path)
            assert list(unit.lowered) == [name], (arch, defines)


@pytest.mark.gpu
@pytest.mark.parametrize("workload, variant", [(w, v.name) for w in workloads.builtin_names()
                                               for v in learner.likeable(workloads.get(w))])
def test_every_template_passes_as_given(tmp_path, workload, variant):
    """The starter `pmppbench template` prints, run as a learner's kernel --like its variant on
    the workload's two smallest check shapes: it PASSes before the student changes a line."""
    from pmppbench.cli.planning import learner_variant
    from pmppbench.engine.worker import pipeline

    w = workloads.get(workload)
    v = w.variant(variant)
    source = tmp_path / learner.file_name(w, v)
    source.write_text(learner.template(w, v))
    mine = learner_variant(w, f"{source}:{learner.kernel_name(v)}", variant)
    for shape in sorted(w.check_shapes(), key=w.device_bytes)[:2]:
        rows = pipeline.run_shape(w, shape, protocol=w.protocol, check_only=True, variants=[mine])
        assert [r.check for r in rows] == ["PASS"], (w.label(shape), rows[0].error or rows[0].check_detail)
