"""From the words of a command to a Plan of Steps: sizes, counts and lists parsed with one
wording for every mistake, variants and a learner's kernel looked up, protocols with the
user's overrides, the shapes a command runs (explicit sizes, check shapes, or a config's).
The Steps and the Plan are the engine's (pmppbench/engine/plan.py).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional

from pmppbench.cli import config as configs
from pmppbench.hardware import inventory
from pmppbench import paths, workloads
from pmppbench.errors import UsageError
from pmppbench.measure.protocol import Protocol
from pmppbench.engine.plan import Plan, Step
from pmppbench.results.export import files
from pmppbench.workloads import learner
from pmppbench.workloads.base import Shape, Variant, Workload


# The largest count the command line takes: 2^64 - 1, what any size or seed can be on the
# 64-bit machines the GPUs sit in (a size that large is then refused for the memory it needs).
LARGEST = 2**64 - 1
# --timeout is a wait the system measures: past about 292 years its clock overflows.
LONGEST_TIMEOUT_S = 10**6


def count(name: str, text: Optional[str], minimum: int = 1, largest: int = LARGEST) -> Optional[int]:
    """A size or count from the command line, with one wording for 0, -1 and abc alike, and
    its own for a number past `largest` (a 5,000-digit --seed)."""
    if text is None:
        return None
    text = str(text)
    what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
    if text.startswith("-") and not text[1:].isdigit():  # -x, --nope: a misspelt option, not a size
        raise UsageError(f"no such option {paths.cut(text, 40)} (see --help)")
    digits = text.strip().lstrip("+")
    if digits.isdigit() and (len(digits) > len(str(largest)) or int(digits) > largest):
        raise UsageError(f"{name} {paths.cut(text.strip(), 40)} is too large: it takes at most {largest:,}")
    try:
        value = int(text)
    except (TypeError, ValueError):
        raise UsageError(f"{name} must be {what}, got {paths.quoted(text)}") from None
    if value < minimum:
        raise UsageError(f"{name} must be {what}, got {value}")
    return value


def counts(name: str, text: Optional[str], minimum: int = 1) -> Optional[list[int]]:
    if text is None:
        return None
    parts = text.split(",")
    if not text.strip() or any(not p.strip() for p in parts):
        raise UsageError(f"{name} takes comma-separated integers such as 2,32, got {paths.quoted(text)}")
    return [count(name, p.strip(), minimum) for p in parts]


def words(axis, text: Optional[str]):
    """A named axis's value from the command line: one of its choices, or (many) a list of them."""
    if text is None:
        return None
    parts = [p.strip() for p in str(text).split(",")]
    if not str(text).strip() or any(not p for p in parts) or (len(parts) > 1 and not axis.many):
        raise UsageError(f"{axis.option} takes {'comma-separated names' if axis.many else 'one name'} from "
                         f"{', '.join(axis.choices)}, got {paths.quoted(text)}")
    for p in parts:
        if p not in axis.choices:
            raise UsageError(f"{axis.option}: unknown value {paths.quoted(p)}; choose from {', '.join(axis.choices)}")
    return parts if axis.many else parts[0]


def axis_value(axis, text: Optional[str]):
    """An axis option's value: names for a named axis, integers otherwise."""
    if axis.choices:
        return words(axis, text)
    return (counts if axis.many else count)(axis.option, text, axis.minimum)


def pick_variants(workload, spec: Optional[str]):
    if spec is None:
        return None
    parts = [p.strip() for p in spec.split(",")]
    if not spec.strip() or any(not p for p in parts):
        raise UsageError(f"--variants takes comma-separated names such as {','.join(workload.variant_names()[:2])}, "
                         f"got {paths.quoted(spec)}")
    seen: set[str] = set()
    for p in parts:
        if p in seen:
            shown = f" {spec}" if len(spec) <= 60 else ""  # a long list is not echoed: the name says it
            raise UsageError(f"--variants{shown}: {paths.cut(p, 40)} is named twice; name each variant once")
        seen.add(p)
    chosen = []
    for p in parts:
        try:
            chosen.append(workload.variant(p))
        except UsageError as exc:
            if len(p) <= 40:
                raise
            raise UsageError(f"{workload.name}: unknown variant {paths.quoted(p, 40)}; choose from "
                             f"{', '.join(workload.variant_names())}") from exc
    return chosen


KERNEL_NAME = re.compile(r"[A-Za-z_]\w*(<[^<>:]*(<[^<>:]*>[^<>:]*)*>)?")  # a function, or a template's instantiation


def learner_variant(workload, spec: Optional[str], like: Optional[str]):
    """--kernel FILE.cu:NAME --like V: NAME from the learner's file, run as V is run."""
    if spec is None and like is None:
        return None
    if spec is None or like is None:
        raise UsageError("--kernel and --like go together: --kernel my.cu:my_kernel --like "
                         f"{(learner.likeable(workload) or workload.variants)[0].name}")
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not KERNEL_NAME.fullmatch(name):
        raise UsageError(f"--kernel takes FILE.cu:NAME (NAME a __global__ function in FILE), got {paths.quoted(spec)}")
    kind = paths.kind(Path(path), "--kernel")
    if kind == paths.FOLDER:
        raise UsageError(f"--kernel {spec}: {path} is a folder; give the .cu file that defines {name}")
    if kind == paths.SPECIAL:
        raise UsageError(f"--kernel {spec}: {path} is {paths.special_name(Path(path))}, not a file; give the .cu file "
                         f"that defines {name}")
    if kind != paths.FILE:
        raise UsageError(f"--kernel {spec}: no such file {path}")
    paths.open_capped(Path(path), "kernel source", f"--kernel {path}").close()  # a file NVRTC can take whole
    learner.like(workload, like)  # one that declares what a learner's kernel is given (Variant.starter)
    if name in workload.variant_names():
        raise UsageError(f"--kernel {spec}: {name!r} is already a variant's name; rename your kernel")
    return Variant(name, name, f"your kernel from {path}, run as {like}", source=str(Path(path).resolve()), like=like)


def protocol_for(workload, reps=None, warmup=None, batches=None, flush_l2=False, counters=False):
    """The workload's declared protocol with the user's overrides."""
    protocol = workload.protocol.with_reps(reps)
    if counters:  # --counters: one more untimed run per variant under ncu (counters.py)
        protocol = replace(protocol, counters=True)
    if warmup is not None:
        protocol = replace(protocol, warmup=warmup)
    if batches is not None:
        protocol = replace(protocol, batches=batches)
    if flush_l2:
        if protocol.timer != "events":
            raise UsageError(f"--flush-l2 does not apply to {workload.name}: its timing already includes host transfers")
        protocol = replace(protocol, timer="cold")
    return protocol


def shapes_for(workload, dims: dict, axes: dict, check_only: bool) -> list[dict]:
    """Explicit sizes win; otherwise --check-only uses the check shapes, timing the default.
    A swept axis (the stencil's radius) makes one shape per value."""
    given = {k: v for k, v in dims.items() if v is not None}
    checks = check_only and not given
    shapes = workload.check_shapes() if checks else [{**workload.default_shape(), **given}]
    for axis in workload.axes:
        value = axes.get(axis.name)
        if value is None and axis.default and not checks:  # the command's default sweep (both dtypes)
            value = list(axis.default)
        if value is None:
            continue
        if axis.sweep:
            shapes = [{**s, axis.name: v} for v in value for s in shapes]
            shapes = list({tuple(sorted(s.items())): s for s in shapes}.values())
        else:
            shapes = [{**s, axis.name: tuple(value) if axis.many else value} for s in shapes]
    for shape in shapes:
        workload.validate(shape)
        addressable(workload, shape)
    return shapes


# NVIDIA GPUs since Pascal address 49 bits of virtual memory: no buffer of a shape that needs
# more can exist on any of them, so such a shape is bad input on every machine, found before
# the GPU is looked for (a workload's own limits, such as gemm's 2^30, come first).
ADDRESS_BITS = 49


def addressable(workload, shape: dict) -> None:
    try:
        need = workload.device_bytes(shape)
    except NotImplementedError:  # a workload that does not model its memory
        return
    if need > 2 ** ADDRESS_BITS:
        raise UsageError(f"{workload.name} {workload.label(shape)}: needs {need:.3g} B of device memory, more than "
                         f"any GPU can address (2^{ADDRESS_BITS} B); choose smaller sizes")


def run_options(kw: dict) -> dict:
    """--out, --timeout, --devices and --ray of a run, checked before any GPU work: an empty
    value is refused (not taken for "not given"), and --devices' form is checked here, so a
    malformed one is exit 2 on a machine without a GPU too (which indices exist is checked
    once the GPUs are known)."""
    spec, ray = kw["devices"], kw["ray"]
    if spec is not None:
        if not spec.strip():
            raise UsageError("--devices was given an empty value; give all or indices such as 0,2, or leave it out")
        if len(spec) > 60:  # no machine has that many GPUs to name: not echoed whole
            raise UsageError(f"--devices takes all or comma-separated device indices such as 0,2, got {paths.quoted(spec)}")
        if spec.strip() != "all":
            inventory.parse(spec, 1 << 62)  # the form only: indices (which exist is known with the GPUs)
    if ray is not None and len(ray) > 200:
        raise UsageError(f"--ray takes auto or a cluster's address such as ray://head:10001, got {paths.quoted(ray)}")
    if ray is not None and not ray.strip():
        raise UsageError("--ray was given an empty value; give auto or a cluster's address such as "
                         "ray://head:10001, or leave it out")
    if ray is not None and spec is not None:
        raise UsageError("--devices and --ray: choose one (with --ray every GPU of the cluster runs the plan)")
    outs = [paths.given("--out", p) for p in kw["out"] or []]
    _not_inputs(outs, kw)
    files.check_outputs(outs, kw["force"])  # before the GPU is looked for (the session checks again)
    return {"out": outs, "timeout_s": count("--timeout", kw["timeout"], largest=LONGEST_TIMEOUT_S),
            "devices": spec, "ray": ray}


def _not_inputs(outs: list[Path], kw: dict) -> None:
    """No --out may be the same file as the run's config or --kernel source (through links too):
    the run would write its results over what it reads."""
    inputs = {}
    if kw.get("config"):
        inputs["--config"] = configs.resolve(kw["config"])
    if kw.get("kernel") and ":" in kw["kernel"]:
        inputs["--kernel"] = Path(kw["kernel"].rpartition(":")[0])
    for out in outs:
        for label, source in inputs.items():
            if paths.same_file(out, source):
                raise UsageError(f"--out {paths.shown(out)} is the same file as {label} {paths.shown(source)}; writing "
                                 "it would replace the run's own input: choose another --out")


def workload_plan(w, kw: dict) -> tuple[Plan, dict]:
    """A workload command's Plan (shape i gets seed + i) and its protocol, from its keywords."""
    dims = {d: count(d.upper(), kw[d]) for d in w.dims}
    axes = {a.name: axis_value(a, kw[a.name]) for a in w.axes}
    protocol = protocol_for(w, count("REPS", kw["reps"]), count("--warmup", kw["warmup"], 0),
                            count("--batches", kw["batches"]), kw["flush_l2"], kw["counters"])
    chosen = pick_variants(w, kw["variants"])
    mine = learner_variant(w, kw["kernel"], kw["like"])
    if mine:
        chosen = [*(chosen or w.variants), mine]
    seed = count("--seed", kw["seed"], 0)
    shapes = shapes_for(w, dims, axes, kw["check_only"])
    steps = [Step(w, s, protocol, seed + i, tuple(chosen or ())) for i, s in enumerate(shapes)]
    return Plan(tuple(steps), kw["check_only"], uuid.uuid4().hex[:8]), {w.name: protocol}


def config_plan(kw: dict) -> tuple[Plan, dict, Any]:
    """`all`'s Plan from a config (the bundled default unless --config), its protocols and the config."""
    only = kw["only"]
    if kw["config"] is not None:  # empty, a folder, or a path the system cannot look up
        if paths.kind(paths.given("--config", kw["config"]), "--config") == paths.FOLDER:
            raise UsageError(f"--config {kw['config']} is a folder; give a TOML file or the name of a bundled config")
    cfg = configs.load(kw["config"], None if only is None else [x.strip() for x in only.split(",") if x.strip()] or [""])
    seed = cfg.seed if kw["seed"] is None else count("--seed", kw["seed"], 0)
    protocols, steps = {}, []
    for p in cfg.sections:
        w = workloads.get(p.name)
        protocols[p.name] = protocol_for(w, p.reps, p.warmup, p.batches, kw["flush_l2"] and w.protocol.timer == "events",
                                         kw["counters"])
        chosen = tuple(w.variant(v) for v in p.variants) if p.variants else ()
        # Shape i of a workload gets seed + i, as in the workload commands.
        steps += [Step(w, s, protocols[p.name], seed + i, chosen) for i, s in enumerate(p.shapes)]
    return Plan(tuple(steps), kw["check_only"], uuid.uuid4().hex[:8]), protocols, cfg
