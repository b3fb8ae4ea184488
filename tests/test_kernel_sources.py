"""kernels_cu/ holds the code that ships, and only that: every preprocessor conditional in it asks
about the target (__CUDA_ARCH__, __CUDACC__), an include guard or a compile-time parameter a
workload passes (ELEM, EXCLUSIVE, BINS, RADIUS: its compile_sets); a study's knob, a profiling
build or a test's mutation is no switch of a shipped file (the study forms are studies/forms/'s,
the mutations edit a copy: tests/mutants.py). And each kernel file is short enough to read: at
most MAX_LINES lines, one family of kernels, the book's rungs apart from the rungs beyond them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pmppbench import workloads
from pmppbench.hardware.compile import shipped_kernels_dir

MAX_LINES = 700
TARGET = {"__CUDA_ARCH__", "__CUDACC__", "__CUDACC_RTC__", "defined"}
CONDITIONAL = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif)\b(.*)$")
SOURCES = sorted(p for p in shipped_kernels_dir().iterdir() if p.suffix in (".cu", ".cuh"))
# Files whose split into kernel families is still to come, each with what it breaks today: a strict
# xfail, so the mark must go the moment the file holds.
PENDING: set[tuple[str, str]] = set()  # (file, check) still to be brought within the rules


def parameters() -> set[str]:
    """The defines the shipped workloads build their kernels with (every compile set's keys)."""
    return {k for name in workloads.builtin_names() for s in workloads.get(name).compile_sets() for k in s}


def cases(check: str):
    return [pytest.param(p, id=p.name, marks=[pytest.mark.xfail(strict=True, reason=f"{p.name}: not split yet")]
                         if (p.name, check) in PENDING else []) for p in SOURCES]


def switches(text: str, allowed: set[str]) -> list[str]:
    """The conditionals of `text` that name anything but `allowed` and include guards (*_CUH)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    bad = []
    for line in text.splitlines():
        m = CONDITIONAL.match(line)
        if m:
            names = set(re.findall(r"[A-Za-z_]\w*", m.group(2).split("//")[0]))
            if names - allowed - {n for n in names if n.endswith("_CUH")}:
                bad.append(line.strip())
    return bad


def test_the_workloads_parameters_are_the_ones_the_kernels_ask_about():
    assert parameters() >= {"ELEM", "EXCLUSIVE", "BINS", "RADIUS"}
    assert len(SOURCES) >= 10 and {p.name for p in SOURCES} >= {"scan.cu", "histogram.cu", "transpose.cu"}


@pytest.mark.parametrize("source", cases("switches"))
def test_no_study_profile_or_mutation_switch(source):
    assert switches(source.read_text(), TARGET | parameters()) == []


def test_the_switch_test_sees_each_kind_of_switch():
    """A knob, a profiling build and a mutation are each caught; the target and a parameter are not."""
    allowed = TARGET | {"BINS"}
    assert switches("#ifndef LB_ROWS\n#if LB_PROFILE\n#ifdef MUTATE_DROP  // a test\n#if PRIVATE_RING && BINS == 7\n",
                    allowed) == ["#ifndef LB_ROWS", "#if LB_PROFILE", "#ifdef MUTATE_DROP  // a test",
                                 "#if PRIVATE_RING && BINS == 7"]
    assert switches("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n#ifndef SCAN_TILE_CUH\n#if BINS == 7\n"
                    "# ifdef __CUDACC__\n/* #ifdef MUTATE_X */\n", allowed) == []


@pytest.mark.parametrize("source", cases("lines"))
def test_each_kernel_file_is_at_most_700_lines(source):
    assert len(source.read_text().splitlines()) <= MAX_LINES
