// The decoupled look-backs (beyond the book's chapter 11): `lookback` and `lookback_staged`,
// included by kernels_cu/scan.cu after the register tile scan and the status words (scan_tile.cuh).
// Their device code (the asks of L2, the ticket, the walk back) is scan_lookback_parts.cuh's.
#ifndef SCAN_LOOKBACK_CUH
#define SCAN_LOOKBACK_CUH

#include "scan_tile.cuh"
#include "scan_lookback_parts.cuh"
#include "mbarrier.cuh"

// lookback's tile, LB_THREADS threads x LB_ROWS 16-byte vectors (pmppbench/workloads/scan.py
// mirrors them as LOOKBACK_ROWS, LOOKBACK_THREADS): 8192 elements, domino's tile. 63 registers,
// so 4 blocks (128 KB of loads) per SM. Larger tiles (fewer look-backs per byte) were no faster
// once the tile is prefetched (docs/scan.md): 12 rows at 3 blocks per SM gained about 2% but need
// the 80-register cap, under which the int build spills.
#define LB_ROWS 8
#define LB_THREADS 256
#define LB_MIN_BLOCKS 1  // blocks per SM the launch bound asks the register count to allow

// lookback: decoupled look-back (Merrill and Garland, "Single-pass Parallel Prefix Scan with
// Decoupled Look-back", NVIDIA 2016), one block per tile. A tile publishes its AGGREGATE as soon
// as its own scan has its total, before it knows anything of its predecessors, then looks back
// (look_back). No tile waits for a predecessor's look-back to finish, only for its scan: the
// chain of domino's L2 round trips becomes a few reads. The shipped `lookback` (its persistent
// form below was slower).
//
// `ahead` (the host's: a quarter wave of resident blocks, pmppbench/workloads/scan.py; 0 turns it
// off): once a block has its tile, thread 0 also asks L2 for the tile `ahead` places further on,
// one a later block will take. The copy engine then reads later tiles from DRAM while this wave
// scans, waits in its look-back and stores, and a block's own loads meet L2 (a short latency)
// instead of DRAM: fewer of the DRAM bytes in flight wait on the registers of resident blocks.
// The first `ahead` blocks, whose tiles nobody fetched ahead, ask for their own as before. Too far
// ahead the tiles leave L2 before their blocks come and are read twice, so the host keeps `ahead`
// under a wave of resident blocks (scan.py's LOOKBACK_AHEAD_WAVES; the distances measured:
// docs/scan.md).
extern "C" __global__ void __launch_bounds__(LB_THREADS, LB_MIN_BLOCKS)
lookback(const T* __restrict__ in, T* __restrict__ out, unsigned long long* __restrict__ status,
         unsigned long long* __restrict__ ticket, unsigned long long n, unsigned long long tiles,
         unsigned long long ahead) {
    typedef Tile<LB_ROWS, LB_THREADS> LTile;
    __shared__ T warps[LTile::WARPS];
    __shared__ unsigned long long s_tile;
    __shared__ unsigned s_epoch;
    __shared__ T s_prefix;
    LTile tile;
    if (threadIdx.x == 0) {
        ticket_prefetched(in, ticket, tiles, n, LTile::SIZE, ahead, &s_tile, &s_epoch);
    }
    __syncthreads();
    const unsigned long long id = s_tile;
    const unsigned long long base = id * LTile::SIZE;
    tile.load(in, base, n);
    tile.scan(warps);
    const unsigned epoch = s_epoch;
    if (threadIdx.x < 32) {
        const T prefix = look_back(status, id, epoch, LTile::warps_before(warps, LTile::WARPS));
        if (threadIdx.x == 0) s_prefix = prefix;
    }
    __syncthreads();
    tile.store(out, base, n, s_prefix, warps);
}

// ---- the look-back with its tile staged in shared memory (the variant lookback_staged) ---------
// lookback holds its scanned tile in registers through the look-back's wait, more than half a
// block's life (docs/scan.md), and at 63 registers an SM holds 4 of its blocks: what an SM has in
// flight is bounded by the registers of blocks that mostly wait. lookback_staged keeps the tile
// in shared memory instead, brought there by the copy engine (sm_90's cp.async.bulk, one
// instruction from thread 0, counted on an mbarrier), sums it there, publishes its aggregate,
// scans it in place during the look-back and stores it from there, so a thread holds one vector
// at a time and the SM's shared memory, not its registers, sets the blocks per SM: 7 tiles of
// 28 KB (LS_ROWS 7 x LS_THREADS 256 x 4 elements) on the H200. The tile's layout, row scan and
// walk back are lookback's. Two things shorten a block's life further (docs/scan.md): its tile is
// its block index, as CUB numbers its tiles, so the copy leaves before the ticket's atomic returns
// (the atomic then only tells the call's epoch and runs under the copy; it trusts blocks to start in
// index order: CUDA does not promise it, PMPP 11.6 takes a ticket for that reason and domino keeps
// one, but every NVIDIA GPU dispatches a grid's blocks so, CUB's scan relies on it, and a hang would
// be one ERROR row, the worker's timeout), and a ninth warp walks back while the copy is in flight.
// The tile fetched ahead is kept in L2 until its block copies it (evict_last, then the copy's
// evict_first), so the prefetch runs further ahead, and the first wave's copies leave on a ramp,
// about in tile order. Before sm_90 the threads copy the tile themselves. The forms measured beside
// it (the ticket's tile, no looker, no hints, no ramp, other tiles) are studies/forms/scan_lookback.cu's;
// those measured slower and removed (the scan before the look-back, a copy per warp's part,
// copy-engine stores; a looker that reads 2 or 4 words a lane, takes the epoch's ticket itself, reads
// several windows a round trip or polls one word first; the first wave's prefetches skipped; a
// two-level look-back over groups of 32 tiles): docs/scan.md.
#define LS_ROWS 7
#define LS_THREADS 256
#define LS_BLOCKS 7  // the launch bound's blocks per SM (registers: 32 a thread); 228 KB hold 7 tiles of 28 KB
// The looker: the block has a ninth warp that looks back from the moment the block
// knows its tile, while the tile's bytes are still on their way; thread 0 publishes the AGGREGATE
// once the sum is done and hands the total to the looker on an mbarrier, the looker publishes the
// PREFIX, and warps 0-7 each scan their own part. Where the walk back ends before the tile lands,
// the PREFIX goes out right after the sum (warp 0 looking back once the tile is summed was slower).
#define LS_BLOCK (LS_THREADS + 32)  // the block's threads: the tile's warps and the looker
// LS_RAMP: the first wave's blocks (block index below `ramped`, the host's count of the
// blocks resident at once, or 0 where the whole grid is one wave) send their copy out LS_RAMP SM cycles
// per block index after they start, so that the wave's tiles land about in index order. Without it the
// first wave's tiles all start together and land in DRAM's order, so no tile finds its prefix until
// nearly all of the wave's bytes are in, and the wave's chain then runs with few bytes moving while
// the next wave waits for its slots (docs/scan.md, the look-back's timeline). 10 cycles (5 ns at 1980 MHz)
// is faster than DRAM brings a tile and its prefetch, so the ramp costs no bandwidth. A grid of one wave
// has no next wave to let in early, and there the ramp only delays (measured: docs/scan.md).
#define LS_RAMP 10

// The launch bound: LS_BLOCKS blocks per SM, fewer where shared memory holds fewer tiles (staged_bound).
extern "C" __global__ void __launch_bounds__(LS_BLOCK, staged_bound(LS_BLOCKS))
lookback_staged(const T* __restrict__ in, T* __restrict__ out, unsigned long long* __restrict__ status,
                unsigned long long* __restrict__ ticket, unsigned long long n, unsigned long long tiles,
                unsigned long long ahead, unsigned long long ramped) {
    typedef Tile<LS_ROWS, LS_THREADS> STile;
    constexpr unsigned VECS = STile::SIZE / 4;
    __shared__ __align__(128) V stage[VECS];
    __shared__ T warps[STile::WARPS];
    __shared__ unsigned long long s_tile;
    __shared__ unsigned s_epoch;
    __shared__ T s_prefix;
    __shared__ __align__(8) unsigned long long bar;
    __shared__ T s_total;  // the tile's total, thread 0 to the looker
    __shared__ __align__(8) unsigned long long handoff;  // its barrier (sm_90); before sm_90, a flag
    const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
    if (t == 0) {
        if (blockIdx.x < ramped) {  // the first wave's ramp: this block's copy leaves index x LS_RAMP cycles in
            const long long until = clock64() + (long long)blockIdx.x * LS_RAMP;
            while (clock64() < until) {
            }
        }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        mbar_init(&handoff, 1);  // made visible by the first barrier (the looker only waits on it)
#else
        handoff = 0ull;  // a block that ran here before left it set
#endif
        const unsigned long long at = blockIdx.x * STile::SIZE;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if (at + STile::SIZE <= n) {  // a whole tile: the copy engine; the last one: the threads, below
            mbar_init(&bar, 1);
            mbar_init_fence();
            bulk_load_hinted(stage, in + at, STile::SIZE * sizeof(T), &bar, l2_policy<false>());
        }
#endif
        if (ahead) prefetch_tile<true>(in, blockIdx.x + ahead, n, STile::SIZE);
        s_tile = blockIdx.x;
        s_epoch = unsigned(atomicAdd(ticket, 1ull) / tiles);
    }
    __syncthreads();
    const unsigned long long id = s_tile, base = id * STile::SIZE;
    const unsigned epoch = s_epoch;
    const bool whole = base + STile::SIZE <= n;
    // Thread t's vector of row r: warp w's part is rows w * LS_ROWS .. of 32 vectors, as Tile's.
    const unsigned mine = warp * LS_ROWS * 32 + lane;
    const unsigned long long g = base + 4ull * mine;  // its first element
    if (warp < STile::WARPS) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (whole) {
        mbar_wait(&bar, 0);
    } else
#endif
    {
        const int have = STile::remaining(g, n);
#pragma unroll
        for (int r = 0; r < LS_ROWS; ++r) {
            V v;
            if (whole) {
                v = __ldg(reinterpret_cast<const V*>(in + g + 128 * r));
            } else {  // Tile::load_part written out: through the helper the sm_90 code differs
                const T* e = in + g + 128 * r;
                v.x = 128 * r < have ? e[0] : T(0);
                v.y = 128 * r + 1 < have ? e[1] : T(0);
                v.z = 128 * r + 2 < have ? e[2] : T(0);
                v.w = 128 * r + 3 < have ? e[3] : T(0);
            }
            stage[mine + 32 * r] = v;  // read back by this thread only: no barrier
        }
    }
    // The warps' totals first, by a reduction (no scan on the way to the aggregate), so the tile's
    // AGGREGATE is published as soon as its bytes land; warp 0 then looks back while the other
    // warps scan the parts in place, warp 1 also warp 0's part after its own.
    {
        T sum = STile::rows_sum(stage + mine);
        sum = warp_sum(sum);
        if (lane == 0) warps[warp] = sum;
    }
        asm volatile("bar.sync 1, %0;" ::"r"(LS_THREADS) : "memory");  // warps 0-7: the warps' totals
        if (t == 0) {
            const T total = STile::warps_before(warps, STile::WARPS);
            publish(status, id, epoch, id ? AGGREGATE : PREFIX, total);
            s_total = total;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
            mbar_arrive(&handoff);  // a release: s_total, and the AGGREGATE before the looker's PREFIX
#else
            __threadfence();
            *reinterpret_cast<volatile unsigned long long*>(&handoff) = 1ull;
#endif
        }
        scan_part<LS_ROWS, LS_THREADS>(stage + mine);
    } else {  // the looker
        const T prefix = id ? walk_back(status, id, epoch, lane) : T(0);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        mbar_wait(&handoff, 0);  // an acquire
#else
        while (!*reinterpret_cast<volatile unsigned long long*>(&handoff)) {
        }
        __threadfence_block();
#endif
        if (lane == 0) {
            if (id) publish(status, id, epoch, PREFIX, prefix + *reinterpret_cast<volatile T*>(&s_total));
            s_prefix = prefix;
        }
    }
    __syncthreads();
    if (warp == STile::WARPS) return;  // the stores are warps 0-7's
    const T left = s_prefix + STile::warps_before(warps, warp);
    const int have = STile::remaining(g, n);
#pragma unroll
    for (int r = 0; r < LS_ROWS; ++r) {
        const V v = stage[mine + 32 * r];
        V y;
        y.x = left + v.x; y.y = left + v.y; y.z = left + v.z; y.w = left + v.w;
        T* e = out + g + 128 * r;
        if (whole) {
            __stcs(reinterpret_cast<V*>(e), y);
        } else {  // Tile::store_part written out, as the load above
            if (128 * r < have) e[0] = y.x;
            if (128 * r + 1 < have) e[1] = y.y;
            if (128 * r + 2 < have) e[2] = y.z;
            if (128 * r + 3 < have) e[3] = y.w;
        }
    }
}

#endif  // SCAN_LOOKBACK_CUH
