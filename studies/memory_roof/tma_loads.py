"""What the copy engine's loads of a transpose tile cost by themselves (docs/transpose.md).

ncu has coarsened_sector_tma_any's engine loads at 2.6 times the L2 read requests of
coarsened_sector_tma's at 8192^2 (454 against 173 a tile, 1.8 sectors a request against 4), the same
shape and the same write phase, 5 points of memcpy apart. This study times the loads alone: every
block takes one tile in coarsened's order, loads A's 72 rows of it (y0 - 8 .. y0 + 63, as the sector
forms do) into shared memory in one of these layouts, waits for them, and exits:

  swz32      8 boxes of 32 columns x 18 rows of four, the 128-byte swizzle (coarsened_sector_tma's; N % 4 == 0)
  flat32     the same boxes without the swizzle (rows of 128 bytes on 128 bytes in shared memory)
  flat64     4 boxes of 64 columns x 18, no swizzle (rows of 256 bytes; N % 4 == 0)
  flat68     4 boxes of 68 columns, started d_p floats early, no swizzle (coarsened_sector_tma_any's; any N)
  flat96     4 boxes of 96 columns, started d_p floats early, no swizzle (rows of 384 bytes; any N)
  bulk       one 1-D bulk copy a row (272 bytes from the 16 bytes before the row's first float), rows 68
             floats apart in shared memory: the dense layout of flat68 without a map (any N)
  bulk_line  the same copies, each row put at its global address's offset within 128 bytes, rows 128
             floats apart: shared memory's 128-byte lines and the global lines fall together (any N)
  bulk_sec   bulk_line's placement, each copy 288 bytes from the 32-byte sector at or before the row's first
             float (whole sectors at both ends)
  bulk_lines3 one copy a row of the three whole 128-byte lines from the one at or before the row's first
             float (384 bytes, 1.4 times the bytes), rows 128 floats apart (any N)
  read4      no engine: the threads read the tile's floats (streaming loads, 72 rows of 64): a read roof

Every form has the same static shared memory a block (36,928 bytes and an 8-byte barrier: 6 blocks
an SM), so that what differs is the layout. Printed: ms a call (the benchmark's protocol: the L2
settled, 3 warmup calls, median of 5 batches of 20) and GB/s of A's 4MN bytes. Under ncu (`--once`:
one call of each) the L2 read requests and sectors say how the engine split each layout.

    python3 studies/memory_roof/tma_loads.py [M N ...] [--once]
"""

from __future__ import annotations

import sys
from pathlib import Path

import cupy as cp
import numpy as np

from pmppbench.hardware.compile import load_kernels
from pmppbench.measure.protocol import Protocol, measure
from pmppbench.hardware import tma

SOURCE = Path(__file__).with_suffix(".cu")  # the kernels, extern "C", one a layout
FORMS = ("swz32", "flat32", "flat64", "flat68", "flat96", "bulk", "bulk_line", "bulk_sec", "bulk_lines3", "read4")
NEEDS_N4 = {"swz32", "flat32", "flat64"}  # boxes at pN + x0: on 16 bytes only where N % 4 == 0
BOX = {"swz32": (32, True), "flat32": (32, False), "flat64": (64, False), "flat68": (68, False), "flat96": (96, False)}
PROTOCOL = Protocol(warmup=3, batches=5, reps=20)  # the benchmark's (the L2 settled before each layout)


def time_ms(launch) -> float:
    """Median ms a call under the harness's own protocol and event timer (pmppbench.measure.protocol.measure)."""
    return measure({"x": launch}, PROTOCOL)["x"].median_ms


def main(argv: list[str]) -> None:
    once = "--once" in argv
    dims = [int(x) for x in argv if not x.startswith("--")] or [8192, 8192, 8193, 8193]
    kernels = load_kernels("tma_loads", list(FORMS), source=SOURCE)
    for m, n in zip(dims[::2], dims[1::2]):
        a = cp.random.random(m * n + 256, dtype=cp.float32)  # 1 KB past the end: the copies' last rows
        sink = cp.zeros(1, dtype=cp.float32)
        grid = ((n + 63) // 64, (m + 8 + 63) // 64)
        for name in FORMS:
            if name in NEEDS_N4 and n % 4:
                print(f"{m}x{n} {name:10s} skip (N % 4)")
                continue
            kernel = kernels[name]
            args: tuple
            if name in BOX:
                cols, swizzle = BOX[name]
                amap = tma.TensorMap("fp32", a.data.ptr, (4 * n, m // 4), (16 * n,), (cols, 18), swizzle=swizzle)
                args = (amap.arg, sink, np.int32(m), np.int32(n))
            else:
                args = (a, sink, np.int32(m), np.int32(n))

            def launch(kernel=kernel, args=args):
                kernel(grid, (256,), args)

            if once:
                launch()
                cp.cuda.Device().synchronize()
                continue
            ms = time_ms(launch)
            print(f"{m}x{n} {name:10s} {ms:8.4f} ms {4 * m * n / ms / 1e6:8.1f} GB/s", flush=True)
        if not once:  # the copy of the same 4MN bytes (read and written: twice the bytes moved)
            b = cp.empty_like(a)
            ms = time_ms(lambda: b.data.copy_from_device_async(a.data, 4 * m * n))
            print(f"{m}x{n} {'memcpy':10s} {ms:8.4f} ms {8 * m * n / ms / 1e6:8.1f} GB/s (read + written)", flush=True)
            del b


if __name__ == "__main__":
    main(sys.argv[1:])
