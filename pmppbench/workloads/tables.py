"""The tables made from the declarations: README's (the commands with their variants and
defaults, each workload's protocol) and docs/your-own-kernel.md's (per workload, what a learner's
kernel --like each variant is given and must do: workloads/learner.py). tests/test_readme_tables.py
and tests/test_your_own_kernel.py hold the files to them; after changing a declaration,
`python -m pmppbench.workloads.tables` rewrites the marked regions of both (between
`<!-- generated: NAME -->` and `<!-- end: NAME -->`; with a path, README's in that file)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from pmppbench import workloads
from pmppbench.workloads import learner
from pmppbench.workloads.base import Workload


def _shipped() -> list[Workload]:
    return [workloads.get(name) for name in workloads.builtin_names()]


def _value(v) -> str:
    return ",".join(map(str, v)) if isinstance(v, (tuple, list)) else str(v)


def usage(w: Workload) -> str:
    """`pmppbench gemm [M] [N] [K] [REPS]`, options for the axes after it."""
    words = ["pmppbench", w.name, *(f"[{d.upper()}]" for d in w.dims), "[REPS]"]
    words += [f"[{a.option} {a.name.upper()}{',...' if a.many else ''}]" for a in w.axes]
    return " ".join(words)


def commands_table() -> list[str]:
    out = ["| command | workload | variants (the default table, in order) | defaults |", "|---|---|---|---|"]
    for w in _shipped():
        shape = w.default_shape()
        names = ", ".join(f"`{v.name}`" for v in w.variants_for(shape))
        swept = {a.name: a.default for a in w.axes if a.default}  # the command's default sweep (both dtypes)
        values = {**shape, **swept}
        defaults = ", ".join([*(f"{k.upper()} = {_value(v)}" for k, v in values.items()), f"REPS = {w.protocol.reps}"])
        out.append(f"| `{usage(w)}` | {w.title} | {names} | {defaults} |")
    return out


def _protocol_cells(w: Workload) -> tuple[str, str, str]:
    p = w.protocol
    if p.timer == "host":
        return (f"{p.warmup} runs per configuration",
                f"{p.batches} batches of REPS complete runs (default {p.reps})"
                + (", configuration order alternated" if p.alternate else ""),
                "median over batches of each batch's median run (host clock)")
    return (f"{p.warmup} calls per variant",
            f"{p.batches} batches of REPS calls (default {p.reps})"
            + (", variant order alternated between batches" if p.alternate else ""),
            "median over batches of (batch time / REPS)")


def protocol_table() -> list[str]:
    rows: dict[tuple[str, str, str], list[str]] = {}
    for w in _shipped():
        rows.setdefault(_protocol_cells(w), []).append(w.name)
    out = ["| workload | warmup | timed | reported |", "|---|---|---|---|"]
    out += [f"| {', '.join(names)} | {' | '.join(cells)} |" for cells, names in rows.items()]
    return out


def likes_table() -> list[str]:
    """Per workload, the variants a learner's kernel may run --like (docs/your-own-kernel.md has the rest)."""
    out = ["| workload | `--like` (each has a template: `pmppbench template WORKLOAD VARIANT`) |", "|---|---|"]
    for w in _shipped():
        names = ", ".join(f"`{v.name}`" for v in learner.likeable(w)) or "none: every call is several launches or " \
                                                                         "takes arguments no learner's kernel is given"
        out.append(f"| {w.name} | {names} |")
    return out


TABLES = {"workload commands": commands_table, "protocols": protocol_table, "your own kernel": likes_table}


def like_table(name: str):
    return lambda: learner.table(workloads.get(name))


DOC_TABLES = {f"like {name}": like_table(name) for name in workloads.builtin_names()}
FILES = {"README.md": TABLES, "docs/your-own-kernel.md": DOC_TABLES}


def region(text: str, name: str) -> list[str] | None:
    """The lines of README's region `name`, or None when it has no such region."""
    m = re.search(rf"<!-- generated: {re.escape(name)} -->\n(.*?)<!-- end: {re.escape(name)} -->", text, re.S)
    return None if m is None else m.group(1).rstrip("\n").split("\n")


def rewrite(text: str, tables: dict | None = None) -> str:
    for name, make in (TABLES if tables is None else tables).items():
        head, tail = f"<!-- generated: {name} -->\n", f"<!-- end: {name} -->"
        if region(text, name) is None:
            raise SystemExit(f"no region {name!r}: put {head.strip()} and {tail} around it")
        start = text.index(head) + len(head)
        text = text[:start] + "\n".join(make()) + "\n" + text[text.index(tail, start):]
    return text


if __name__ == "__main__":
    chosen = {sys.argv[1]: TABLES} if len(sys.argv) > 1 else FILES
    for file, made in chosen.items():
        path = Path(file)
        path.write_text(rewrite(path.read_text(), made))
