"""Configs for `pmppbench all`: which workloads, shapes and protocol overrides to run.

    [transpose]
    shapes = [[4096, 4096], [1024, 1024]]     # positional: the CLI's size arguments, in order
    reps = 20                                  # optional: warmup, batches, reps, variants

    [stencil]
    shapes = [{n = 4194304, radius = 2}]       # or tables naming the shape's keys

Keys a shape may name are those of the workload's default shape; missing ones take the
default. Everything is validated before any GPU work; each problem is one line naming the
file, the key and what is expected (exit 2).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from pmppbench import paths, workloads
from pmppbench.errors import UsageError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

WORKLOAD_KEYS = {"shapes", "reps", "warmup", "batches", "variants"}


@dataclass
class Section:
    """One workload's [section] of a config: its shapes and protocol overrides."""

    name: str
    shapes: list[dict]
    reps: int | None = None
    warmup: int | None = None
    batches: int | None = None
    variants: list[str] | None = None


@dataclass
class ConfigFile:
    """A config as loaded: where it came from, its hash (the run metadata records both), its
    sections in file order and its seed."""

    path: Path
    sha256: str
    sections: list[Section] = field(default_factory=list)
    seed: int = 0


def configs_dir() -> Path:
    checkout = Path(__file__).resolve().parent.parent / "configs"
    if checkout.is_dir():
        return checkout
    return Path(resources.files("pmppbench.configs"))  # a regular package: a real folder


def bundled() -> list[str]:
    """Names of the configs that come with pmppbench (`--config quick`)."""
    return sorted(x.stem for x in configs_dir().glob("*.toml"))


def default_config_path() -> Path:
    return configs_dir() / "default.toml"


def resolve(path: str | Path | None) -> Path:
    """A config path, or the name of a bundled one (`quick` -> configs/quick.toml)."""
    if path is None:
        return default_config_path()
    p = Path(path)
    if not p.exists() and not p.suffix and (configs_dir() / f"{p}.toml").is_file():
        return configs_dir() / f"{p}.toml"
    return p


def load(path: str | Path | None, only: list[str] | None = None) -> ConfigFile:
    p = resolve(path)
    kind = paths.kind(p, "--config")
    if kind in (paths.MISSING, paths.DANGLING):
        raise UsageError(f"--config {paths.shown(path)}: no such file; give a TOML file or a bundled config "
                         f"({', '.join(bundled())})")
    if kind == paths.FOLDER:
        raise UsageError(f"--config {paths.shown(path)} is a folder; give a TOML file or the name of a bundled config")
    raw = paths.read_capped(p, "config", f"--config {paths.shown(p)}")
    try:
        data = tomllib.loads(raw.decode())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{paths.shown(p)}: not valid TOML ({exc})") from None
    except RecursionError:
        raise UsageError(f"{paths.shown(p)}: nested too deeply to be a config (arrays or tables within each other "
                         "hundreds of times); a config's shapes are lists of numbers") from None
    except MemoryError:
        raise UsageError(f"{paths.shown(p)}: too large to read as a config") from None
    try:
        return parse(data, p, hashlib.sha256(raw).hexdigest(), only)
    except RecursionError:  # a value nested deeply where a name or a number belongs, echoed in a message
        raise UsageError(f"{paths.shown(p)}: a value nested too deeply to be a config's") from None


def parse(data: dict, path: Path, sha: str = "", only: list[str] | None = None) -> ConfigFile:
    where = str(path)
    known = workloads.names()
    seed = data.get("seed", 0)
    if not _is_int(seed) or seed < 0:
        raise UsageError(f"{where}: seed: expected a non-negative integer, got {paths.quoted(seed)}")
    if only:
        for name in only:
            if name not in known:
                raise UsageError(f"--only {paths.cut(name, 40)}: unknown workload; choose from {', '.join(known)}")
    cfg = ConfigFile(path, sha, seed=seed)
    for name, section in data.items():
        if name == "seed":
            continue
        if name not in known:
            raise UsageError(f"{where}: [{name}]: unknown workload; expected one of {', '.join(known)}")
        if not isinstance(section, dict):
            raise UsageError(f"{where}: {name}: expected a table [{name}], got {type(section).__name__}")
        if only and name not in only:
            continue
        cfg.sections.append(_section(name, section, where))
    if not cfg.sections:
        raise UsageError(f"{where}: no workloads to run" + (f" (after --only {','.join(only)})" if only else ""))
    return cfg


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _section(name: str, section: dict, where: str) -> Section:
    w = workloads.get(name)
    for key in section:
        if key not in WORKLOAD_KEYS:
            raise UsageError(f"{where}: [{name}] {key}: unknown key; expected one of {', '.join(sorted(WORKLOAD_KEYS))}")
    out = Section(name, [])
    for key in ("reps", "warmup", "batches"):
        if key in section:
            v = section[key]
            low = 0 if key == "warmup" else 1
            if not _is_int(v) or v < low:
                raise UsageError(f"{where}: [{name}] {key}: expected an integer >= {low}, got {paths.quoted(v)}")
            setattr(out, key, v)
    if "variants" in section:
        v = section["variants"]
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise UsageError(f"{where}: [{name}] variants: expected a list of names, got {paths.quoted(v)}")
        for i, x in enumerate(v):
            try:
                w.variant(x)  # the lookup --variants uses, so stream's streams=7 is a name here too
            except UsageError:
                raise UsageError(f"{where}: [{name}] variants: unknown variant {paths.quoted(x)}; "
                                 f"expected some of {', '.join(w.variant_names())}") from None
            if x in v[:i]:
                raise UsageError(f"{where}: [{name}] variants: {x} is named twice; name each variant once")
        out.variants = v
    shapes = section.get("shapes")
    if not isinstance(shapes, list) or not shapes:
        raise UsageError(f"{where}: [{name}] shapes: expected a non-empty list of shapes such as "
                         f"[[{', '.join(d.upper() for d in w.dims)}]]")
    default = w.default_shape()
    for i, entry in enumerate(shapes):
        key = f"[{name}] shapes[{i}]"
        if isinstance(entry, list):
            if len(entry) != len(w.dims) or not all(_is_int(x) for x in entry):
                raise UsageError(f"{where}: {key}: expected {len(w.dims)} integers "
                                 f"({', '.join(w.dims)}), got {paths.quoted(entry)}")
            shape = {**default, **dict(zip(w.dims, entry))}
        elif isinstance(entry, dict):
            known = [*default, *(a.name for a in w.axes if a.name not in default)]  # an axis may be optional
            for k in entry:
                if k not in known:
                    raise UsageError(f"{where}: {key}: unknown key {paths.quoted(k)}; expected some of {', '.join(known)}")
            shape = {**default, **entry}
            shape = {k: tuple(v) if isinstance(v, list) else v for k, v in shape.items()}
        else:
            raise UsageError(f"{where}: {key}: expected a list of integers or a table, got {paths.quoted(entry)}")
        try:
            w.validate(shape)
        except UsageError as exc:
            raise UsageError(f"{where}: {key}: {exc}") from exc
        out.shapes.append(shape)
    return out
