"""Your own kernel, from the declarations: which variants a learner's kernel may run --like
(those that declare a Starter), what it is compiled with, the starter file `pmppbench template`
prints, and the rows of docs/your-own-kernel.md's table (pmppbench/workloads/tables.py).

Everything here is made from Variant.defines, Variant.starter and the workload's own geometry
and defines, so a new workload is covered by declaring those on its variants."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

from pmppbench import workloads
from pmppbench.errors import UsageError
from pmppbench.workloads.base import Shape, Variant, Workload

# The geometry's block at the default shape, for a grid sized by the SMs (fixed grids): a GPU of
# 132 SMs. Only the block is shown from it, and no likeable variant's block depends on the SMs.
STAND_IN_GPU = SimpleNamespace(sm_count=132, compute_capability="9.0", l2_bytes=50 << 20)


def likeable(workload: Workload) -> list[Variant]:
    """The variants a learner's kernel may run --like: those that declare a Starter."""
    return [v for v in workload.variants if v.starter is not None and v.kernel and not v.source]


def like(workload: Workload, name: str | None) -> Variant:
    """The variant `name` (the first likeable one when None), or one line of UsageError: an unknown
    name, or a variant whose call is a library's, several launches or arguments no learner's
    kernel could take."""
    choices = ", ".join(v.name for v in likeable(workload)) or "none"
    if name is None:
        if not likeable(workload):
            others = [n for n in workloads.builtin_names() if likeable(workloads.get(n))]
            raise UsageError(f"{workload.name}: none of its variants takes a learner's kernel (--like); choose one of "
                             f"{', '.join(others)}")
        return likeable(workload)[0]
    variant = workload.variant(name)  # an unknown name: its own one line
    if variant.kernel is None:
        raise UsageError(f"--like {name}: it calls a library, not a kernel; choose one of {choices}")
    if variant.starter is None:
        raise UsageError(f"--like {name}: it takes no learner's kernel (its call is several launches, or its kernel "
                         f"or arguments change with the GPU, shape or precision); choose one of {choices}")
    return variant


def defines_for(workload: Workload, like: Variant, shape: Shape) -> dict[str, Any]:
    """What a learner's kernel --like `like` is compiled with: the defines `like`'s own kernel is
    built with (Variant.defines) and the shape's (Workload.defines: RADIUS, ELEM, BINS)."""
    return {**dict(like.defines), **workload.defines(shape)}


def kernel_name(variant: Variant) -> str:
    """The starter's kernel: my_<variant> ("my_padded33")."""
    return "my_" + variant.name


def file_name(workload: Workload, variant: Variant) -> str:
    return f"my_{workload.name}_{variant.name}.cu"


def shape_defines(workload: Workload) -> dict[str, list[Any]]:
    """The shape's defines (Workload.defines) by name, with every value the command's default
    shapes give them: {"ELEM": ["float", "int"]}."""
    values: dict[str, list[Any]] = {}
    for defines in workload.compile_sets():
        for k, v in defines.items():
            if v not in values.setdefault(k, []):
                values[k].append(v)
    return values


def block_of(workload: Workload, variant: Variant) -> tuple[int, ...]:
    """The block of `variant`'s launch at the default shape."""
    return tuple(workload.geometry(variant, workload.default_shape(), STAND_IN_GPU)[1])


def signature(variant: Variant, name: str | None = None) -> str:
    return f'extern "C" __global__ void {name or kernel_name(variant)}({variant.starter.params})'


def defines_text(workload: Workload, variant: Variant) -> str:
    """`BLOCK_DIM = 1024, COARSE_FACTOR = 8; the shape's ELEM = float | int`."""
    own = ", ".join(f"{k} = {v}" for k, v in variant.defines)
    shapes = ", ".join(f"{k} = {' | '.join(map(str, vs))}" for k, vs in shape_defines(workload).items())
    return "; ".join(filter(None, [own, f"the shape's {shapes}" if shapes else ""])) or "none"


def block_text(workload: Workload, variant: Variant) -> str:
    """`32 x 32 = 1024 threads (TILE_DIM x TILE_DIM)`: the block at the default shape, with the
    defines that give it."""
    block = block_of(workload, variant)
    dims = " x ".join(map(str, block)) + (f" = {math.prod(block)}" if len(block) > 1 else "")
    named = " x ".join(variant.starter.block)
    return f"{dims} threads" + (f" ({named})" if named else "")


def run_command(workload: Workload, variant: Variant) -> str:
    return (f"pmppbench {workload.name} --kernel {file_name(workload, variant)}:{kernel_name(variant)} "
            f"--like {variant.name}")


def compile_command(workload: Workload, variant: Variant) -> str:
    return (f"pmppbench compile {workload.name} --kernel {file_name(workload, variant)}:{kernel_name(variant)} "
            f"--like {variant.name}")


def _comment(label: str, text: str, width: int = 100) -> list[str]:
    """`// label: text`, wrapped at `width` with the continuation indented."""
    lines, line = [], f"// {label}: " if label else "// "
    for word in text.split(" "):
        if len(line) + len(word) > width and line.strip() not in ("//", f"// {label}:"):
            lines.append(line.rstrip())
            line = "//     "
        line += word + " "
    return lines + [line.rstrip()]


def template(workload: Workload, variant: Variant) -> str:
    """The .cu file `pmppbench template WORKLOAD VARIANT` prints: what the kernel is given and
    must do, in comments, and a simple correct body that PASSes as given."""
    s = variant.starter
    head = [
        f"// Your own kernel for `pmppbench {workload.name}`, run --like {variant.name}: {workload.title}.",
        *_comment(variant.name, variant.about),
        "//",
        f"// Run it:     {run_command(workload, variant)}",
        f"// Compile it: {compile_command(workload, variant)}  (no GPU needed; --arch sm_XX)",
        "//",
        *_comment("Defines (-D, as the variant's own kernel is built)", defines_text(workload, variant)),
        *_comment("Grid", s.grid),
        *_comment("Block (at the default shape)", block_text(workload, variant)),
        *(_comment("Before each call", s.reset) if s.reset else []),
        *_comment("A call must leave", s.leaves),
        *_comment("Checked", "against the same CPU reference as the variant, then again on fresh inputs after "
                  "the timed batches"),
        "//",
        "// The body below is simple and correct (it PASSes as given): replace it with yours.",
        "",
    ]
    helpers = [s.helpers] if s.helpers else []
    return "\n".join(head) + "\n" + "\n".join(helpers) + ("\n" if helpers else "") + \
        f"{signature(variant)} {{\n{s.body}}}\n"


def table(workload: Workload) -> list[str]:
    """docs/your-own-kernel.md's table of `workload`: one row per likeable variant."""
    if not likeable(workload):
        return [f"No variant of {workload.name} takes a learner's kernel: every call is several launches or a "
                "library's, or takes arguments no learner's kernel is given a contract for."]
    out = ["| `--like` | signature | defines | grid | block | before each call | a call must leave |",
           "|---|---|---|---|---|---|---|"]
    for v in likeable(workload):
        cells = [f"`{v.name}`", f"`({v.starter.params})`", defines_text(workload, v), v.starter.grid,
                 block_text(workload, v), v.starter.reset or "nothing", v.starter.leaves]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return out
