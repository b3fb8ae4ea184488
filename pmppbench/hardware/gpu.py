"""Lazy access to CuPy and the CUDA device, with errors that say what to install.

Nothing else in pmppbench imports cupy at module level: `pmppbench --help`, `compile`,
`compare`, `report` and the CPU tests work on machines without a GPU or without CuPy.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

from pmppbench.errors import EnvironmentProblem

CUDA_SUCCESS, CUDA_ERROR_NOT_SUPPORTED = 0, 801  # CUresult codes (cuda.h)
INSTALL_HINT = "pip install 'pmppbench[cuda13]' (or [cuda12] for a CUDA 12 driver)"


def cupy():
    """Import CuPy or say how to get it."""
    try:
        import cupy as cp  # noqa: PLC0415 (CuPy, deliberately lazy: the module doc says why)
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise EnvironmentProblem(f"CuPy is not installed ({exc}); {INSTALL_HINT}") from exc
    return cp


def nvrtc():
    """CuPy's NVRTC binding, or a message naming the wheel that provides libnvrtc."""
    try:
        from cupy_backends.cuda.libs import nvrtc as lib  # noqa: PLC0415 (CuPy, lazily, as above)
        lib.getVersion()
    except ImportError as exc:
        raise EnvironmentProblem(f"CuPy is not installed ({exc}); {INSTALL_HINT}") from exc
    except Exception as exc:  # the shared library itself is missing
        raise EnvironmentProblem(
            f"NVRTC (the CUDA runtime compiler) could not be loaded ({exc}); "
            f"{INSTALL_HINT} brings it as the nvidia-cuda-nvrtc wheel, "
            "or install the CUDA toolkit"
        ) from exc
    return lib


# The CUDA headers a course's nvcc line finds, by the component that ships them: the runtime's
# device headers (cuda_fp16.h, cuda_bf16.h, mma.h, cooperative_groups.h), the compiler's crt/
# headers they include (crt/mma.h: beside the runtime's in the wheels' layout) and CCCL's
# libcu++ (<cuda/pipeline>, <cuda/barrier>); the pip package of each for a CUDA 13 / 12 install.
HEADER_COMPONENTS = {"cudart": ("nvidia-cuda-runtime", "nvidia-cuda-runtime-cu12"),
                     "crt": ("nvidia-cuda-crt", "nvidia-cuda-nvcc-cu12"),
                     "cccl": ("nvidia-cuda-cccl", "nvidia-cuda-cccl-cu12")}
SEARCHED = ("cudart", "nvcc", "cccl")  # cuda.pathfinder's names; CUDA 13's crt/ lies in cudart's folder, 12's in nvcc's


@functools.lru_cache(maxsize=1)
def header_dirs() -> tuple[str, ...]:
    """The include folders of HEADER_COMPONENTS found here: in NVIDIA's wheels (what the cuda13
    and cuda12 extras install) or a local toolkit (CUDA_PATH / CUDA_HOME), on Linux's and
    Windows' layouts alike, through cuda.pathfinder (CuPy's own way to find CUDA)."""
    try:
        from cuda import pathfinder  # noqa: PLC0415 -- comes with CuPy, which is optional here
    except ImportError:
        return ()
    found = []
    for component in SEARCHED:
        try:
            folder = pathfinder.find_nvidia_header_directory(component)
        except Exception:  # noqa: BLE001 -- a component pathfinder cannot look for is simply absent
            folder = None
        if folder:
            found.append(str(folder))
    return tuple(found)


@functools.lru_cache(maxsize=1)
def _libcuda():
    """libcuda, the driver library CuPy itself runs on, through ctypes; None where none loads."""
    for name in filter(None, ("libcuda.so.1", "libcuda.so", "nvcuda.dll", ctypes.util.find_library("cuda"))):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


@functools.lru_cache(maxsize=None)
def driver_function(name: str, argtypes: tuple, restype=ctypes.c_int):
    """The driver API's function `name` (a CUresult-returning one by default), typed once; None where
    the driver library or the function is missing. pmppbench calls the driver only for what CuPy does
    not bind (the tensor maps, the L2's persisting lines, reset before every variant's timing)."""
    fn = getattr(_libcuda(), name, None)
    if fn is not None:
        fn.argtypes, fn.restype = argtypes, restype
    return fn


def _driver_library_present() -> bool:
    return _libcuda() is not None or ctypes.util.find_library("cuda") is not None


def reset_persisting_l2() -> None:
    """Give every L2 line that a kernel marked persisting (an evict_last policy, or an access
    policy window) normal priority again, so that ordinary stores can evict it.

    Why: the L2 keeps such lines ahead of lines written with ordinary stores, so a scratch fill
    (the settle, --flush-l2) leaves them in place, and a variant that read with an evict_last
    policy handed its lines to the variant timed after it (docs/transpose.md).
    The driver's reset acts on the current context and is not ordered on any stream: the GPU is
    synchronized first, so that no kernel still running marks lines after it.
    """
    reset = driver_function("cuCtxResetPersistingL2Cache", ())
    if reset is None:
        raise EnvironmentProblem("the NVIDIA driver has no cuCtxResetPersistingL2Cache (CUDA 11 or newer has it)")
    cupy().cuda.runtime.deviceSynchronize()
    result = reset()
    # a GPU without persisting L2 lines (before sm_80) has nothing to reset
    if result not in (CUDA_SUCCESS, CUDA_ERROR_NOT_SUPPORTED):
        raise EnvironmentProblem(f"cuCtxResetPersistingL2Cache failed (CUresult {result})")


@functools.lru_cache(maxsize=1)
def require_device() -> int:
    """Make sure one CUDA device is usable; return the device count.

    Tells apart: no NVIDIA driver at all, a driver too old for CuPy's CUDA runtime,
    and a driver with no visible GPU.
    """
    cp = cupy()
    runtime = cp.cuda.runtime
    try:
        count = runtime.getDeviceCount()
    except runtime.CUDARuntimeError as exc:
        text = str(exc)
        if not _driver_library_present():
            raise EnvironmentProblem(
                "no NVIDIA driver found (libcuda is missing): pmppbench needs an NVIDIA GPU; "
                "without one, `pmppbench compile --arch sm_90` still checks that every kernel compiles"
            ) from exc
        if "InsufficientDriver" in text:
            raise EnvironmentProblem(
                f"the NVIDIA driver is too old for CuPy's CUDA {_runtime_major(cp)} runtime; "
                "update the driver, or install the CuPy build for your driver's CUDA major "
                "(pmppbench[cuda12] for a CUDA 12 driver)"
            ) from exc
        raise EnvironmentProblem(
            f"no usable CUDA device ({text}); check `nvidia-smi` and CUDA_VISIBLE_DEVICES"
        ) from exc
    if count == 0:
        raise EnvironmentProblem(
            "no CUDA device visible; check `nvidia-smi` and CUDA_VISIBLE_DEVICES"
        )
    return count


def _runtime_major(cp) -> str:
    try:
        return str(cp.cuda.runtime.runtimeGetVersion() // 1000)
    except Exception:
        return "?"


def has_device() -> bool:
    """True when a CUDA device is usable (used by the GPU test marker)."""
    try:
        require_device()
    except EnvironmentProblem:
        return False
    return True
