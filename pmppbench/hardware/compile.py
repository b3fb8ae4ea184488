"""kernels_cu/<workload>.cu -> NVRTC (through CuPy's binding) -> cached cubin -> kernels.

One compile path serves both uses:
- `compile_unit` needs no GPU: the target arch is given, NVRTC produces a cubin and ptxas's
  resource report (registers, static shared memory, stack and spills). `pmppbench compile`
  and the CPU tests use it directly.
- `load_kernels` compiles for the current device's own target (device_target: sm_90a on
  Hopper), or takes the cubin from the disk cache, and loads it, giving launchable kernels
  that also know their resources.

Options are the course's nvcc line translated for NVRTC: -std=c++17, -arch=sm_XX, -lineinfo,
plus -D defines (e.g. RADIUS) and C++ template instantiations by name (`tiled<33>`).
The shipped device helpers (kernels_cu/*.cuh) are given to NVRTC as headers, so a kernel
file -- shipped, a study's or a learner's -- includes them by name (`#include "vector_io.cuh"`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import multiprocessing
import os
import re
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import wait as wait_for
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from pmppbench.hardware import device
from pmppbench.hardware.archs import capability
from pmppbench.errors import CompileError, UsageError
from pmppbench.hardware.gpu import HEADER_COMPONENTS, cupy, header_dirs, nvrtc

BASE_OPTIONS = ("-std=c++17", "-lineinfo", "-Xptxas=-v")


def kernels_dir() -> Path:
    """Where the .cu sources are: $PMPPBENCH_KERNELS, the source checkout, or the installed package."""
    env = os.environ.get("PMPPBENCH_KERNELS")
    if env:
        return Path(env)
    return shipped_kernels_dir()


def shipped_kernels_dir() -> Path:
    """pmppbench's own kernels_cu: the source checkout's, or the installed package's."""
    checkout = Path(__file__).resolve().parent.parent / "kernels_cu"
    if checkout.is_dir():
        return checkout
    return Path(resources.files("pmppbench.kernels_cu"))  # a regular package: a real folder


def shared_headers() -> dict[str, str]:
    """The shipped device helpers every kernel file may include: file name -> text."""
    return {p.name: p.read_text() for p in sorted(shipped_kernels_dir().glob("*.cuh"))}


@contextmanager
def kernels_from(folder: Path) -> Iterator[None]:
    """While inside, kernels_dir() is `folder` (the studies compile the course's listings and
    study kernels through the same NVRTC options and cache; the cache key has the source)."""
    before = os.environ.get("PMPPBENCH_KERNELS")
    os.environ["PMPPBENCH_KERNELS"] = str(folder)
    try:
        yield
    finally:
        if before is None:
            del os.environ["PMPPBENCH_KERNELS"]
        else:
            os.environ["PMPPBENCH_KERNELS"] = before


def source_path(workload: str) -> Path:
    """<workload>.cu in kernels_dir(), else in a folder of $PMPPBENCH_KERNEL_PATH (os.pathsep-separated)."""
    folders = [kernels_dir()] + [Path(p) for p in os.environ.get("PMPPBENCH_KERNEL_PATH", "").split(os.pathsep) if p]
    for folder in folders:
        if (folder / f"{workload}.cu").is_file():
            return folder / f"{workload}.cu"
    raise UsageError(f"no kernel source for workload {workload!r} at {folders[0] / (workload + '.cu')}")


def cache_dir() -> Path:
    env = os.environ.get("PMPPBENCH_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pmppbench"


@dataclass(frozen=True)
class PtxasReport:
    """ptxas's resource report for one kernel (needs no GPU)."""

    registers: int
    static_smem: int
    stack_bytes: int
    spill_stores: int
    spill_loads: int


@dataclass
class CompiledUnit:
    """One NVRTC program: a .cu file compiled with one set of defines for one arch."""

    source: Path
    arch: str
    defines: dict[str, Any]
    cubin: bytes
    lowered: dict[str, str]  # name expression -> mangled symbol
    log: str
    ptxas: dict[str, PtxasReport] = field(default_factory=dict)  # by name expression
    from_cache: bool = False


# Counts how often NVRTC actually ran in this process (the cache test reads it).
STATS = {"nvrtc_runs": 0, "cache_hits": 0}


def _options(arch: str, defines: dict[str, Any]) -> list[str]:
    opts = [*BASE_OPTIONS, f"-arch={arch}"]
    opts += [f"-I{folder}" for folder in header_dirs()]  # <cuda_fp16.h>, <mma.h>, <cuda/pipeline> ...
    opts += [f"-D{k}={v}" for k, v in sorted(defines.items())]
    return opts


def target_meets(arch: str, needs: str | None) -> bool:
    """Whether a build for `arch` ("sm_89", "sm_90a") can hold a variant that `needs` one
    (Variant.needs): a plain arch builds for that arch and every newer one; an arch-specific
    one (sm_90a: wgmma, TMA) only for itself -- a plain sm_90 build cannot take it."""
    if needs is None:
        return True
    if needs.endswith("a"):
        return arch == needs
    return capability(arch) >= capability(needs)


def device_target(arch: str) -> str:
    """What the kernels are built for on a GPU of `arch` ("sm_90"): sm_90a on Hopper (compute
    capability 9.0), where the wgmma rungs need that arch-specific target; a cubin for sm_90a
    runs on 9.0 alone, the GPU it is loaded on, and the plain kernels' code is the one of
    sm_90. Every other GPU builds for its own arch: no variant needs the 'a' targets of later
    GPUs, and the CPU tests build every kernel for exactly those archs."""
    return "sm_90a" if arch == "sm_90" else arch


class NeedsNewerArch(CompileError):
    """Every error NVRTC gave is a PTX feature the target arch lacks (cp.async below sm_80):
    the source is right, the --arch (or the GPU) is too old for it. `arch` is the oldest that has
    every feature named."""

    def __init__(self, message: str, arch: str):
        super().__init__(message)
        self.arch = arch

    def __reduce__(self):  # raised in `compile`'s child processes, rebuilt whole in the parent
        return (type(self), (str(self), self.arch))


_NEEDS = re.compile(r"Feature '([^']+)' requires \.target (sm_\d+)\w* or higher")


def program_log(raw: str) -> str:
    """NVRTC's log as text: the C string's terminating NUL bytes dropped (they would reach the
    terminal), surrounding blank lines stripped."""
    return raw.replace("\x00", "").strip()


def _compile_failure(display_name: str, arch: str, where: str, exc: Exception, log: str) -> CompileError:
    errors = [line for line in log.splitlines() if re.search(r"\berror\s+:", line)]
    needs = [_NEEDS.search(line) for line in errors]
    if errors and all(needs):
        features = list(dict.fromkeys(m.group(1) for m in needs))
        oldest = max((m.group(2) for m in needs), key=lambda a: int(a[3:]))
        return NeedsNewerArch(f"{display_name}{where}: {', '.join(features)} need {oldest} or newer, so it cannot "
                              f"be built for {arch}; choose --arch {oldest} or newer (or run on such a GPU)", oldest)
    missing = _MISSING_HEADER.search(log)
    if missing:
        header = missing.group(1) or missing.group(2)
        component = ("cccl" if header.startswith(("cuda/", "cub/", "thrust/", "nv/")) else
                     "crt" if header.startswith("crt/") else "cudart")
        cu13, cu12 = HEADER_COMPONENTS[component]
        log += (f"\n{header} was not found among the CUDA headers here ({', '.join(header_dirs()) or 'none found'}); "
                f"it comes with the {cu13} wheel (CUDA 13; {cu12} for CUDA 12) or a CUDA toolkit: "
                f"pip install {cu13}")
    return CompileError(f"NVRTC could not compile {display_name} for {arch}{where} ({exc}):\n{log}")


_MISSING_HEADER = re.compile(r'cannot open source file "([^"]+)"|could not open source file "([^"]+)"')


_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_REGS = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")


def parse_ptxas_log(log: str) -> dict[str, PtxasReport]:
    """Map mangled kernel name -> PtxasReport from an NVRTC log compiled with -Xptxas=-v."""
    reports: dict[str, PtxasReport] = {}
    current: str | None = None
    stack = (0, 0, 0)
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            current, stack = m.group(1), (0, 0, 0)
        elif current and (m := _STACK.search(line)):
            stack = tuple(int(x) for x in m.groups())
        elif current and (m := _REGS.search(line)):
            smem = _SMEM.search(line)
            reports[current] = PtxasReport(
                registers=int(m.group(1)),
                static_smem=int(smem.group(1)) if smem else 0,
                stack_bytes=stack[0],
                spill_stores=stack[1],
                spill_loads=stack[2],
            )
            current = None
    return reports


@functools.lru_cache(maxsize=1)
def nvrtc_identity() -> str:
    """The loaded NVRTC library's build: its GNU build ID and size where the OS tells which file
    it is (Linux), else "".

    Part of the cache key beside NVRTC's (major, minor): two installs that report the same
    version but ship different builds (a toolkit's and a PyPI wheel's, say) generate different
    code, and one's cubins must not be served to the other. The build ID (the linker's hash of
    the library) names the build wherever it is installed, so two venvs with the same NVRTC
    wheel share their cubins (CI's venvs do); a library without one is named by its file
    (path, size, mtime) instead."""
    try:
        with open("/proc/self/maps") as maps:
            found = next((line.split()[-1] for line in maps if "libnvrtc.so" in line), None)
        if found:
            st = os.stat(found)
            build = elf_build_id(found)
            return f"build-id {build}:{st.st_size}" if build else f"{found}:{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        pass
    return ""


def elf_build_id(path: str) -> str | None:
    """The NT_GNU_BUILD_ID note of a 64-bit little-endian ELF file, in hex, or None."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:  # ELFCLASS64, little-endian
            return None
        phoff, phentsize, phnum = (int.from_bytes(head[0x20:0x28], "little"),
                                   int.from_bytes(head[0x36:0x38], "little"), int.from_bytes(head[0x38:0x3A], "little"))
        f.seek(phoff)
        table = f.read(phentsize * phnum)
        for i in range(phnum):
            entry = table[i * phentsize:(i + 1) * phentsize]
            if int.from_bytes(entry[0:4], "little") != 4:  # PT_NOTE
                continue
            offset, size = int.from_bytes(entry[8:16], "little"), int.from_bytes(entry[32:40], "little")
            f.seek(offset)
            notes, at = f.read(min(size, 1 << 16)), 0
            while at + 12 <= len(notes):
                namesz, descsz, kind = (int.from_bytes(notes[at + k:at + k + 4], "little") for k in (0, 4, 8))
                name_end = at + 12 + namesz
                desc_at = at + 12 + (-(-namesz // 4) * 4)
                if kind == 3 and notes[at + 12:name_end] == b"GNU\0":  # NT_GNU_BUILD_ID
                    return notes[desc_at:desc_at + descsz].hex() or None
                at = desc_at + (-(-descsz // 4) * 4)
    return None


def _cubin_path(text: str, headers: dict[str, str], names: list[str], options: list[str]) -> Path:
    """Where the cache keeps the cubin of `text` (with the shipped `headers`) built with `options`."""
    key = _cache_key("\0".join([text, *(f"{n}\0{t}" for n, t in headers.items())]), names, options,
                     (nvrtc().getVersion(), nvrtc_identity()))
    return cache_dir() / "kernels" / f"{key}.cubin"


def is_cached(unit: "Unit", arch: str) -> bool:
    """Whether the disk cache already holds `unit` built for `arch` (nothing is compiled)."""
    workload, names, defines = unit
    try:
        cubin = _cubin_path(source_path(workload).read_text(), shared_headers(), list(names),
                            _options(arch, dict(defines)))
    except Exception:  # noqa: BLE001 -- not known to be cached: the pool tries it and the step says why
        return False
    return cubin.is_file() and cubin.with_suffix(".json").is_file()


def _cache_key(text: str, names: list[str], options: list[str], nvrtc_version) -> str:
    h = hashlib.sha256()
    keyed = [f"-I{header_identity(o[2:])}" if o.startswith("-I") else o for o in options]
    for part in (text, "\0".join(names), "\0".join(keyed), repr(nvrtc_version)):
        h.update(part.encode())
        h.update(b"\1")
    return h.hexdigest()[:32]


VERSION_HEADERS = ("cuda_runtime_api.h", "crt/host_config.h", "cuda/std/version", "fatbinary_section.h")


@functools.lru_cache(maxsize=None)
def header_identity(folder: str) -> str:
    """An include folder in a cache key by what it holds, not where it lies: the version headers
    it has, hashed. Two venvs with the same header wheels share their cubins (CI's do), and a
    header wheel of another version is another key."""
    h = hashlib.sha256()
    for name in VERSION_HEADERS:
        try:
            h.update(name.encode() + b"\0" + (Path(folder) / name).read_bytes())
        except OSError:
            continue
    return h.hexdigest()[:16]


def compile_unit(
    workload: str, names: list[str], arch: str, defines: dict[str, Any] | None = None,
    use_cache: bool = True, source: Path | None = None,
) -> CompiledUnit:
    """Compile kernels_cu/<workload>.cu (or `source`, a learner's own file) for `arch`,
    instantiating `names` (e.g. "tiled<33>")."""
    defines = dict(defines or {})
    if not re.fullmatch(r"sm_\d+[a-z]?", arch):
        raise UsageError(f"--arch must look like sm_90 (got {arch!r})")
    path = Path(source) if source else source_path(workload)
    text = path.read_text()
    headers = shared_headers()
    lib = nvrtc()
    options = _options(arch, defines)
    cubin_path = _cubin_path(text, headers, names, options)
    meta_path = cubin_path.with_suffix(".json")
    if use_cache and cubin_path.is_file() and meta_path.is_file():
        try:
            meta = json.loads(meta_path.read_text())
            STATS["cache_hits"] += 1
            return _unit(path, arch, defines, cubin_path.read_bytes(), meta["lowered"], meta["log"], True)
        except (OSError, ValueError, KeyError):
            pass  # a damaged cache entry is simply rebuilt

    display_name = str(source) if source else _display_path(path)  # a learner's file as they named it
    prog = lib.createProgram(text, display_name, [t.encode() for t in headers.values()], [n.encode() for n in headers])
    try:
        for name in names:
            lib.addNameExpression(prog, name)
        try:
            lib.compileProgram(prog, options)
        except lib.NVRTCError as exc:
            log = program_log(lib.getProgramLog(prog))
            where = f" with {' '.join(f'-D{k}={v}' for k, v in defines.items())}" if defines else ""
            raise _compile_failure(display_name, arch, where, exc, log) from exc
        STATS["nvrtc_runs"] += 1
        log = program_log(lib.getProgramLog(prog))
        lowered = {}
        for name in names:
            try:
                lowered[name] = lib.getLoweredName(prog, name)
            except lib.NVRTCError as exc:
                raise CompileError(f"{display_name}: no kernel instantiation named {name!r} ({exc})") from exc
        cubin = _whole_elf(lib.getCUBIN(prog))
    finally:
        lib.destroyProgram(prog)

    if use_cache:
        try:
            cubin_path.parent.mkdir(parents=True, exist_ok=True)
            # Each file whole or not at all (a prefetching process may compile the same unit at
            # once), and the meta last: a reader that finds it finds a complete cubin.
            write_whole(cubin_path, cubin)
            write_whole(meta_path, json.dumps({"lowered": lowered, "log": log}).encode())
        except OSError:
            pass  # an unwritable cache only costs a recompile next time
    return _unit(path, arch, defines, cubin, lowered, log, False)


def write_whole(path: Path, data: bytes) -> None:
    """`data` into `path` whole or not at all (through a temporary file beside it)."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


# ---- compiling apart, so that Ctrl-C stops at once ---------------------------------------

def compile_apart(jobs: list[tuple], workers: int | None = None):
    """compile_unit(*job) for every (workload, names, arch, defines, use_cache[, source]) job,
    each in a child process, yielding (job, unit or the exception it raised) in the order given.

    Why processes: NVRTC runs inside one C call that holds the GIL for seconds (a GEMM unit
    takes about 6 s) and its LLVM handles SIGINT itself, so in-process a Ctrl-C waits for the
    unit, or is lost. Here the parent only waits, and a Ctrl-C reaches it at once: it stops
    the children (Pool.terminate) and raises KeyboardInterrupt within a fraction of a second."""
    if not jobs:
        return
    count = workers or max(1, min(len(jobs), (os.cpu_count() or 2) // 2))
    pool = multiprocessing.get_context("spawn").Pool(count)
    try:
        pending = [(job, pool.apply_async(_compile_job, job)) for job in jobs]
        for job, result in pending:
            while True:
                try:
                    unit = result.get(timeout=0.1)
                except multiprocessing.TimeoutError:
                    continue
                except Exception as exc:  # noqa: BLE001 -- the caller reports each unit's failure
                    unit = exc
                break
            yield job, unit
        pool.close()
    finally:
        pool.terminate()  # at once: a Ctrl-C, or a caller that stopped early, leaves no NVRTC running
        pool.join()


def _compile_job(workload: str, names: list[str], arch: str, defines: dict[str, Any], use_cache: bool,
                 source: Path | None = None):
    return compile_unit(workload, names, arch, defines, use_cache=use_cache, source=source)


# ---- compiling a run's kernels ahead of it -----------------------------------------------

Unit = tuple[str, tuple[str, ...], tuple[tuple[str, Any], ...]]  # (workload, names, sorted defines)


def _compile_quietly(unit: Unit, arch: str) -> None:
    workload, names, defines = unit
    try:
        compile_unit(workload, list(names), arch, dict(defines))
    except Exception:  # noqa: BLE001 -- the step that needs the unit compiles it again and reports why
        pass


class Prefetch:
    """NVRTC runs for a whole plan in a pool of processes, started before the first step:
    each unit lands in the disk cache, where the worker finds it when its step comes (or
    compiles it itself if it gets there first). NVRTC holds the GIL in CuPy's binding, so
    threads would compile one unit at a time; processes compile one per core. Cold, the
    default plan's units take about as long together as the largest one alone."""

    def __init__(self, jobs: list[tuple[Unit, str]], workers: int | None = None):
        """(unit, arch) jobs, each compiled once, in the order given (largest first keeps the
        pool's last unit short): several archs for the every-target build of the tests."""
        self._pool, self._by_job = None, {}
        # A warm run starts no pool: spawning the processes (each imports CuPy) would cost the
        # worker's start-up CPU time for nothing.
        todo = [job for job in dict.fromkeys(jobs) if not is_cached(*job)]
        if not todo:
            return
        count = workers or max(1, min(len(todo), (os.cpu_count() or 2) // 2))
        self._pool = ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("spawn"))
        self._by_job = {job: self._pool.submit(_compile_quietly, *job) for job in todo}

    @classmethod
    def for_gpu(cls, units: list[Unit], arch: str, workers: int | None = None) -> Prefetch:
        """A run's units for a GPU of `arch`, built as load_kernels builds them (device_target)."""
        target = device_target(arch)
        return cls([(unit, target) for unit in units], workers)

    @property
    def futures(self) -> list:
        return list(self._by_job.values())

    def wait(self, unit: Unit, arch: str) -> None:
        """Until the pool is done with `unit` for `arch` (in the cache then, or failed: its
        step compiles it again and says why); at once for a unit it was not given. A step
        that waits never compiles a unit a second time beside the pool."""
        future = self._by_job.get((unit, arch))
        if future is not None:
            wait_for([future])

    def close(self, wait: bool = True) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=wait, cancel_futures=not wait)
            self._pool = None


def _whole_elf(cubin: bytes) -> bytes:
    """CuPy's getCUBIN drops the cubin's last byte (a zero); restore the size the ELF header gives.

    The driver loads the short image anyway, but cuobjdump and nvdisasm reject the cached file.
    """
    cubin = bytes(cubin)
    if cubin[:4] != b"\x7fELF" or len(cubin) < 64:
        return cubin
    phoff, shoff = int.from_bytes(cubin[0x20:0x28], "little"), int.from_bytes(cubin[0x28:0x30], "little")
    phentsize, phnum = int.from_bytes(cubin[0x36:0x38], "little"), int.from_bytes(cubin[0x38:0x3A], "little")
    shentsize, shnum = int.from_bytes(cubin[0x3A:0x3C], "little"), int.from_bytes(cubin[0x3C:0x3E], "little")
    size = max(phoff + phentsize * phnum, shoff + shentsize * shnum)
    return cubin + b"\0" * (size - len(cubin)) if 0 < size - len(cubin) <= 8 else cubin


def _display_path(path: Path) -> str:
    """kernels_cu/transpose.cu rather than an absolute path in compiler messages."""
    return f"{path.parent.name}/{path.name}"


def _unit(path, arch, defines, cubin, lowered, log, from_cache) -> CompiledUnit:
    by_mangled = parse_ptxas_log(log)
    ptxas = {name: by_mangled[m] for name, m in lowered.items() if m in by_mangled}
    return CompiledUnit(path, arch, defines, bytes(cubin), lowered, log, ptxas, from_cache)


@dataclass
class Kernel:
    """A loaded kernel with the resources the driver reports for it."""

    name: str  # the name expression from the .cu file, e.g. "tiled<33>"
    function: Any  # cupy.cuda.function.Function
    registers: int
    static_smem: int
    local_bytes: int
    max_threads: int
    spill_bytes: int

    def __call__(self, grid, block, args, shared_mem: int = 0, stream=None):
        self.function(grid, block, args, shared_mem=shared_mem, stream=stream)

    def allow_dynamic_smem(self, nbytes: int) -> None:
        """Raise the kernel's dynamic shared memory limit (needed above 48 KB)."""
        drv = cupy().cuda.driver
        drv.funcSetAttribute(self.function.ptr, drv.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes)


_LOADED: dict[tuple, dict[str, Kernel]] = {}


def load_kernels(workload: str, names: list[str], defines: dict[str, Any] | None = None,
                 source: Path | None = None) -> dict[str, Kernel]:
    """Compile (or fetch from cache) for the current device and load: name expression -> Kernel.

    Loaded modules are kept for the life of the process, so a second shape of the same
    workload neither recompiles nor reloads.
    """
    memo_key = (workload, str(source or ""), tuple(names), tuple(sorted((defines or {}).items())))
    if memo_key in _LOADED:
        return _LOADED[memo_key]

    unit = compile_unit(workload, names, device_target(device.current().arch), defines, source=source)
    cp = cupy()
    module = cp.cuda.function.Module()
    module.load(unit.cubin)
    drv = cp.cuda.driver
    kernels = {}
    for name, mangled in unit.lowered.items():
        fn = module.get_function(mangled)

        def attr(a, fn=fn):
            return int(drv.funcGetAttribute(a, fn.ptr))

        report = unit.ptxas.get(name)
        kernels[name] = Kernel(
            name=name,
            function=fn,
            registers=attr(drv.CU_FUNC_ATTRIBUTE_NUM_REGS),
            static_smem=attr(drv.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
            local_bytes=attr(drv.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES),
            max_threads=attr(drv.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
            spill_bytes=(report.spill_stores + report.spill_loads) if report else 0,
        )
    _LOADED[memo_key] = kernels
    return kernels
