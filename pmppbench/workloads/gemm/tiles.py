"""GEMM's tile parameters: one table for every rung, every sweep candidate and every
configuration `best` may choose (kernels_cu/gemm.cu, struct Tiles; docs/gemm.md)."""

from __future__ import annotations

from dataclasses import dataclass

# streamk and pipelined keep their two stages in dynamic shared memory past 48 KB; 99 KB is
# the per-block opt-in of sm_86 / sm_89, the smallest of the GPUs with cp.async (sm_80 and later).
STREAMK_SMEM_LIMIT = 99 * 1024
STATIC_SMEM_LIMIT = 48 * 1024


@dataclass(frozen=True)
class Tiles:
    """A BM x BN tile of C per block, BK of K per step; one warp per WM x WN warp tile, which
    its 32 lanes cover in WNITER steps along N (and as many as needed along M), TM x TN per
    lane per step."""

    bm: int
    bn: int
    bk: int
    wm: int
    wn: int
    wniter: int
    tm: int
    tn: int

    @property
    def threads(self) -> int:
        return 32 * (self.bm // self.wm) * (self.bn // self.wn)

    def kernel(self, template: str) -> str:
        """The NVRTC name expression, e.g. double_buffer<128, 128, 8, 32, 64, 2, 4, 4>."""
        return (f"{template}<{self.bm}, {self.bn}, {self.bk}, {self.wm}, {self.wn}, {self.wniter}, "
                f"{self.tm}, {self.tn}>")

    def tag(self) -> str:
        return f"{self.bm}x{self.bn}x{self.bk}_w{self.wm}x{self.wn}_i{self.wniter}_t{self.tm}x{self.tn}"

    def problems(self, template: str) -> list[str]:
        """The static_asserts of struct Tiles and of `template`'s shared stages, as sentences
        (tests/test_gemm.py runs every table entry through it)."""
        bad = []
        if self.bm % self.wm or self.bn % self.wn:
            bad.append("the warp tile WM x WN must divide the block tile BM x BN")
            return bad
        if self.threads > 1024:
            bad.append(f"{self.threads} threads per block: at most 32 warp tiles in a block tile")
        per_lane = 32 * self.tm * self.tn * self.wniter
        wmiter = self.wm * self.wn // per_lane
        lane_cols = self.wn // self.wniter // self.tn if self.wn % self.wniter == 0 else 0
        if wmiter < 1 or wmiter * per_lane != self.wm * self.wn:
            bad.append("WM x WN must be 32 lanes x TM x TN x WNITER x (a whole number of M steps)")
        elif lane_cols < 1 or self.wn % (self.wniter * self.tn) or 32 % lane_cols \
                or (32 // lane_cols) * self.tm * wmiter != self.wm:
            bad.append("the 32 lanes must exactly cover a WM/WMITER x WN/WNITER sub-tile with TM x TN each")
        if self.tm % 4 or self.tn % 4 or self.bk % 4:
            bad.append("TM, TN and BK must be multiples of 4 (float4 fragments and loads)")
        if (self.bm * self.bk // 4) % self.threads or (self.bk * self.bn // 4) % self.threads:
            bad.append("BM*BK/4 and BK*BN/4 must be multiples of the thread count (whole float4 per thread)")
        if template in ("streamk", "pipelined"):
            if self.smem_bytes(2) > STREAMK_SMEM_LIMIT:
                bad.append(f"2 shared stages must fit in {STREAMK_SMEM_LIMIT // 1024} KB of dynamic shared memory")
            return bad
        stages = {"double_buffer": 2, "cp_async": 3}.get(template, 1)
        if self.smem_bytes(stages) > STATIC_SMEM_LIMIT:
            bad.append(f"{stages} shared stage(s) must fit in 48 KB of static shared memory")
        return bad

    def smem_bytes(self, stages: int) -> int:
        """Shared memory of `stages` stages: A transposed (BK rows of BM + 4) and B (BK x BN)."""
        return stages * 4 * (self.bk * (self.bm + 4) + self.bk * self.bn)


@dataclass(frozen=True)
class Cover:
    """How a variant covers C: a BM x BN tile of C per block of `block` threads. `reuse` is
    False for kernels that read every operand from global memory for every FMA (naive)."""

    bm: int
    bn: int
    block: tuple[int, ...]
    reuse: bool = True

    @classmethod
    def of(cls, tiles: Tiles) -> "Cover":
        return cls(tiles.bm, tiles.bn, (tiles.threads,))


def tile_count(t: Tiles | Cover, m: int, n: int) -> int:
    """Tiles of C an M x N product has for this tile (partial ones included)."""
    return -(-m // t.bm) * -(-n // t.bn)
