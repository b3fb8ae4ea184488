"""The shape of the code: a small workload contract, packages that are the layers, and the
architecture page that names them (docs/architecture.md, docs/adding-a-workload.md)."""

from __future__ import annotations

import configparser
import inspect
import re
from pathlib import Path

import pytest

from pmppbench import workloads
from pmppbench.errors import UsageError
from pmppbench.measure.check import Tolerance
from pmppbench.workloads.base import REQUIRED, Sizes, Traffic, Variant, Workload, missing

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pmppbench"
MAX_REQUIRED, MAX_OWN_METHODS, MAX_TOP_MODULES, MAX_LAYERS = 8, 12, 8, 10


def own_methods(cls: type) -> list[str]:
    """The functions a workload class defines itself (properties and static methods included)."""
    return sorted(name for name, value in vars(cls).items() if not name.startswith("__")
                  and (inspect.isfunction(value) or isinstance(value, (property, staticmethod, classmethod))))


def test_the_contract_requires_at_most_eight_members():
    assert len(REQUIRED) <= MAX_REQUIRED
    assert REQUIRED == ("name", "variants", "sizes", "tolerance", "make_inputs", "reference", "job", "traffic")


class Declared(Workload):
    name = "declared"
    variants = (Variant("one", None, "a copy"),)
    sizes = Sizes(default={"n": 4}, checks=({"n": 1},))
    tolerance = Tolerance("exact")

    def make_inputs(self, shape, rng):
        return {}

    def reference(self, shape, inputs, variant):
        return None

    def job(self, variant, shape, ctx):
        return None

    def traffic(self, shape, variant, device=None):
        return Traffic(bytes=0)


def test_a_workload_that_declares_the_eight_lacks_nothing():
    assert missing(Declared()) == []


@pytest.mark.parametrize("member", REQUIRED)
def test_each_required_member_left_out_is_named(member):
    attrs = {member: Workload.__dict__.get(member)} if member in Workload.__dict__ else {}
    lacking = type("Lacking", (Declared,), {**attrs, "name": "" if member == "name" else "lacking"})
    if member in ("make_inputs", "reference", "job", "traffic"):
        lacking = type("Lacking", (Workload,), {k: v for k, v in vars(Declared).items()
                                                 if k != member and not k.startswith("__")})
    assert member in missing(lacking())


def test_the_registry_refuses_a_workload_that_lacks_a_member(tmp_path, monkeypatch):
    (tmp_path / "half_workload.py").write_text(
        "from pmppbench.workloads.base import Variant, Workload\n"
        "class Half(Workload):\n"
        "    name = 'half'\n"
        "    variants = (Variant('one', None, 'a copy'),)\n"
        "WORKLOAD = Half()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PMPPBENCH_WORKLOADS", "half=half_workload")
    with pytest.raises(UsageError) as info:
        workloads.get("half")
    assert str(info.value) == ("workload 'half' (half_workload) does not declare sizes, tolerance, make_inputs, "
                               "reference, job, traffic; see docs/adding-a-workload.md")


@pytest.mark.parametrize("name", workloads.builtin_names())
def test_every_workload_keeps_the_contract_with_few_methods_of_its_own(name):
    w = workloads.get(name)
    assert missing(w) == []
    methods = own_methods(type(w))
    assert len(methods) <= MAX_OWN_METHODS, f"{name} defines {len(methods)} methods: {methods}"


def test_vecadd_is_the_model_workload_in_at_most_80_lines():
    source = (PACKAGE / "workloads" / "vecadd.py").read_text()
    assert len(source.splitlines()) <= 80


def test_adding_a_workload_shows_vecadd_whole():
    page = (ROOT / "docs" / "adding-a-workload.md").read_text()
    shown = re.search(r"<!-- vecadd:begin -->.*?```python\n(.*?)```", page, re.S).group(1)
    assert shown == (PACKAGE / "workloads" / "vecadd.py").read_text()


# ---- the packages are the layers -------------------------------------------------------------

def modules() -> set[str]:
    """Every module of the package, as a path below pmppbench/ ("engine/plan.py")."""
    return {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
            if p.name != "__init__.py" and "__pycache__" not in p.parts}


def test_at_most_eight_modules_at_the_top_and_ten_layers():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, top
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    layers = [line for line in config["importlinter:contract:layers"]["layers"].split("\n") if line.strip()]
    assert len(layers) <= MAX_LAYERS
    packages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    named = {part.strip() for line in layers for part in line.split("|")}
    assert packages <= named, f"packages missing from .importlinter: {packages - named}"


def test_the_architecture_page_names_every_module_and_only_those():
    page = (ROOT / "docs" / "architecture.md").read_text()
    tree = page[page.index("```\npmppbench/"):]
    tree = tree[:tree.index("\n```", 4)]
    named, folders = set(), []
    for line in tree.split("\n")[1:]:
        m = re.match(r"( *)([\w.]+/?)", line)
        if not m or not m.group(2).strip():
            continue
        depth = (len(m.group(1)) - 2) // 2
        if depth < 0:
            continue
        folders = folders[:depth]
        entry = m.group(2)
        if entry.endswith("/"):
            folders.append(entry)
            if entry == "export/":  # one line for the package's formats
                named |= {f"{''.join(folders)}{p.name}" for p in (PACKAGE / "".join(folders)).glob("*.py")
                          if p.name != "__init__.py"}
        elif entry.endswith(".py"):
            named.add("".join(folders) + entry)
    workload_modules = {m for m in modules() if m.startswith("workloads/")}  # the page names the package
    assert named == modules() - workload_modules


def test_the_wheel_carries_every_package():
    """pyproject.toml lists the packages setuptools puts in the wheel: each folder of the
    package must be there, or an installed pmppbench cannot import it."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {".".join(("pmppbench", *p.parent.relative_to(PACKAGE).parts)) for p in PACKAGE.rglob("__init__.py")}
    assert folders <= listed, f"missing from pyproject.toml: {sorted(folders - listed)}"
