"""Mutations of a copy of a kernel file. A test that a check catches a bug (a dropped element, a
raced bin, a missing barrier) builds the kernel from a copy of its source with one edit, never from
a switch in the shipped file: kernels_cu/ carries only the code that ships.

An edit names the file it changes, the text it replaces (which must be there: a mutation that no
longer matches the source fails loudly instead of testing nothing) and the text put in its place.
An edit of a header (kernels_cu/*.cuh) is made to the header's text, which then stands in the copy
in place of its #include line; the header's include guard keeps the shipped one out after it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pmppbench.hardware.compile import shipped_kernels_dir

ROOT = Path(__file__).resolve().parent.parent
STUDY_FORMS = ROOT / "studies" / "forms"


@dataclass(frozen=True)
class Edit:
    file: str  # "scan_tile.cuh", "scan.cu"
    old: str  # the text replaced: each of its occurrences
    new: str


def source_of(unit: str) -> Path:
    """kernels_cu/<unit>.cu, or a study's studies/forms/<unit>.cu."""
    shipped = shipped_kernels_dir() / f"{unit}.cu"
    return shipped if shipped.is_file() else STUDY_FORMS / f"{unit}.cu"


def _edited(text: str, edits: list[Edit], name: str) -> str:
    for e in (e for e in edits if e.file == name):
        assert e.old in text, f"mutation of {name}: {e.old!r} is no longer in it"
        text = text.replace(e.old, e.new)
    return text


def mutated_copy(folder: Path, unit: str, edits: list[Edit]) -> Path:
    """<unit>.cu written into `folder` with `edits` made (its edited headers inlined); the folder
    then serves as PMPPBENCH_KERNELS (compile.kernels_from) or the source of compile_unit."""
    source = source_of(unit)
    text = _edited(source.read_text(), edits, source.name)
    for header in sorted({e.file for e in edits if e.file.endswith(".cuh")}):
        include = f'#include "{header}"'
        assert include in text, f"{source.name} does not include {header}"
        body = _edited((shipped_kernels_dir() / header).read_text(), edits, header)
        text = text.replace(include, body, 1)
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{unit}.cu"
    out.write_text(text)
    return out


def machine_code(unit, kernel: str) -> bytes:
    """The machine code of `kernel` in a compiled unit (compile.CompiledUnit): its .text section's
    bytes, the same for two sources that differ only in where their code sits."""
    import struct

    cubin, symbol = unit.cubin, unit.lowered[kernel]
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    entsize, count, names_at = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", cubin, shoff + i * entsize) for i in range(count)]
    names = headers[names_at][4]
    for name, _, _, _, offset, size in headers:
        if cubin[names + name:cubin.index(b"\0", names + name)].decode() == f".text.{symbol}":
            return cubin[offset:offset + size]
    raise AssertionError(f"no .text.{symbol} in the cubin")
