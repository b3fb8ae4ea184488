// The look-back's study forms (studies/forms/scan_lookback.py, the workload `scan_lookback`):
// kernels_cu/scan_lookback.cuh's two look-backs with every knob the measurements of docs/scan.md
// turned, and the persistent look-back, which no table runs. Each knob's default is the shipped
// kernel's choice, so a build without defines is the shipped code; the register tile scan, the
// warp scans and the status words are the shipped ones (scan_tile.cuh).
//
// lookback: LB_ROWS, LB_THREADS (the tile), LB_MIN_BLOCKS (the launch bound), LB_PREFETCH (the tile
// asked of L2 before the ticket), LB_TICKET (0: the tile is the block index), LB_BACKOFF (a sleep
// in the walk's spin), LB_WIDE (the look-back by the whole block), LB_PROFILE (where a block's time
// goes, to words after the status words). lookback_staged: LS_ROWS, LS_THREADS, LS_BLOCKS, LS_TICKET,
// LS_LOOKER, LS_HINT, LS_CONTROL (no walk: the data movement alone, wrong sums), LS_RAMP.
// lookback_persistent: LP_ROWS, LP_THREADS, LP_BLOCKS.
//
// The asks of L2, the ticket, the walk back, the look-back by warp 0, and the staged tile's part scan
// and launch bound are the shipped ones, from kernels_cu/scan_lookback_parts.cuh (which brings no
// shipped kernel along): LB_PREFETCH is the ticket's template parameter, and LB_BACKOFF and
// LB_PROFILE's count of windows are StudyWalk's, the walk back's.

#include "scan_tile.cuh"
#include "mbarrier.cuh"
#include "scan_lookback_parts.cuh"

// lookback's tile, LB_THREADS threads x LB_ROWS 16-byte vectors (pmppbench/workloads/scan.py
// mirrors them as LOOKBACK_ROWS, LOOKBACK_THREADS): 8192 elements, domino's tile. 63 registers,
// so 4 blocks (128 KB of loads) per SM. Larger tiles (fewer look-backs per byte) were no faster
// once the tile is prefetched (docs/scan.md): 12 rows at 3 blocks per SM gained about 2% but need
// the 80-register cap, under which the int build spills.
#ifndef LB_ROWS
#define LB_ROWS 8
#endif
#ifndef LB_THREADS
#define LB_THREADS 256
#endif
#ifndef LB_MIN_BLOCKS
#define LB_MIN_BLOCKS 1  // blocks per SM the launch bound asks the register count to allow
#endif
// LB_PREFETCH: thread 0 asks L2 for the tile its block index would get (cp.async.bulk.prefetch,
// one instruction, no registers) before it takes its ticket, so DRAM's latency runs under the
// ticket's atomic instead of after it; blocks start in about index order, so the guess is
// mostly right, and a wrong one costs a second read of a tile that another block will read
// from L2 soon after. Hopper (sm_90) on; older targets have no bulk prefetch and skip it.
#ifndef LB_PREFETCH
#define LB_PREFETCH 1
#endif
// LB_TICKET 0 (studies/scan_lookback.py only): the tile is the block index, as CUB numbers its
// tiles, trusting that blocks start in index order (CUDA does not promise it; PMPP 11.6 takes a
// ticket for that reason). The ticket then only tells the call's epoch.
#ifndef LB_TICKET
#define LB_TICKET 1
#endif
// LB_BACKOFF: nanoseconds a look-back warp sleeps before it reads a window again that still had
// an unwritten word (0: it reads again at once), so that spinning warps leave L2's bandwidth to
// the tiles' loads and stores.
#ifndef LB_BACKOFF
#define LB_BACKOFF 0
#endif

// LB_PROFILE (studies/scan_lookback.py --profile only): each tile's thread 0 writes where its
// block's time went, in SM clocks, to LB_STAMPS words after the tiles' status words (the study
// allocates them): the ticket, the load and tile scan, the look-back's wait, the stores' issue,
// the global timer at the block's start and at its end, and the windows its walk back read.
#ifndef LB_PROFILE
#define LB_PROFILE 0
#endif
#define LB_STAMPS 7
#if LB_PROFILE
__shared__ unsigned lb_windows;  // walk_back's windows (steps of 32 predecessors) in this block
#endif

// The walk back's knobs (walk_back's and look_back's template parameter): LB_PROFILE counts the
// windows read, LB_BACKOFF sleeps before a window is read again.
struct StudyWalk {
    static __device__ __forceinline__ void window(unsigned lane) {
#if LB_PROFILE
        if (lane == 0) ++lb_windows;
#endif
    }
    static __device__ __forceinline__ void reread() {
#if LB_BACKOFF
        __nanosleep(LB_BACKOFF);
#endif
    }
};

// A tile's LB_STAMPS words: the clocks of the ticket, the load and tile scan (or sum), the
// look-back's wait and the stores' issue, then the global timer at the block's start and end, and
// the walk's windows.
__device__ __forceinline__ void write_stamps(unsigned long long* stamp, long long c0, long long c1, long long c2,
                                             long long c3, unsigned long long t0) {
    stamp[0] = c1 - c0;
    stamp[1] = c2 - c1;
    stamp[2] = c3 - c2;
    stamp[3] = clock64() - c3;
    stamp[4] = t0;
#if LB_PROFILE
    unsigned long long t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    stamp[5] = t1;
    stamp[6] = lb_windows;
#endif
}

// LS_HINT: L2 eviction priorities for lookback_staged's input lines. 1 (shipped): the prefetch ahead
// marks them evict_last and the block's copy evict_first, so a prefetched tile stays in L2 until its
// block reads it and is the first to go after, and the prefetch can run further ahead (scan.py's
// STAGED_AHEAD_WAVES) without its tiles leaving L2 first. Study knobs: 0, no hint; 2, the copy's
// evict_first alone; 3, the prefetch's evict_last alone (docs/scan.md).
#ifndef LS_HINT
#define LS_HINT 1
#endif
// LS_CONTROL (a study control, never a variant: its sums are wrong): the looker skips the walk back,
// so the build times lookback_staged's copies, sums and stores without the chain between tiles.
#ifndef LS_CONTROL
#define LS_CONTROL 0
#endif

#define LS_HINT_PREFETCH (LS_HINT == 1 || LS_HINT == 3)  // the prefetch's evict_last
#define LS_HINT_COPY (LS_HINT == 1 || LS_HINT == 2)      // the copy's evict_first

// LB_WIDE 1 (a study knob; the default 0 is look_back, warp 0 alone): the look-back by the whole
// block, LB_THREADS predecessors' words a step instead of 32. Warps 1-7 would otherwise wait at
// the barrier while warp 0 looks back, and a tile's nearest PREFIX is about as far back as the
// tiles that started during one look-back, so the walk might have been the wait; measured, it is
// not (1-5% slower at most shapes: docs/scan.md). Every thread reads one word; the block waits
// until none is unwritten (a barrier that ORs the flags), finds the nearest PREFIX from the warps'
// ballots in shared memory, and adds the words up to it (warp sums, then the warps' in a fixed
// order): the same sum, the words added in another grouping. The barriers are block-uniform:
// every thread takes the same number of steps.
#ifndef LB_WIDE
#define LB_WIDE 0
#endif
__device__ __forceinline__ T look_back_wide(unsigned long long* status, unsigned long long id, unsigned epoch, T total) {
    constexpr unsigned WARPS = LB_THREADS / 32;
    __shared__ unsigned s_done[WARPS];
    __shared__ T s_sum[WARPS];
    const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
    if (id == 0) {
        if (t == 0) publish(status, 0, epoch, PREFIX, total);
        return T(0);
    }
    if (t == 0) publish(status, id, epoch, AGGREGATE, total);
    T prefix = T(0);
    long long nearest = (long long)id - 1;  // the window's first predecessor
    while (true) {
        const long long j = nearest - t;
        unsigned long long word = 0ull;  // tiles before 0 read as a PREFIX of 0
        unsigned flag = PREFIX;
        if (j >= 0) {
            word = peek(status, j);
            flag = flag_of(word, epoch);
        }
        while (__syncthreads_or(flag == 0u)) {
            if (flag == 0u) {
                word = peek(status, j);
                flag = flag_of(word, epoch);
            }
        }
        const unsigned done = __ballot_sync(FULL, flag == PREFIX);
        if (lane == 0) s_done[warp] = done;
        __syncthreads();
        unsigned upto = LB_THREADS;  // the nearest PREFIX's thread: the words of threads 0 .. upto count
#pragma unroll
        for (int w = WARPS - 1; w >= 0; --w)
            if (s_done[w]) upto = 32 * w + __ffs(s_done[w]) - 1;
        const T part = warp_sum(t <= upto ? value_of(word) : T(0));
        if (lane == 0) s_sum[warp] = part;
        __syncthreads();
#pragma unroll
        for (unsigned w = 0; w < WARPS; ++w) prefix += s_sum[w];
        if (upto < LB_THREADS) break;
        nearest -= LB_THREADS;
    }
    if (t == 0) publish(status, id, epoch, PREFIX, prefix + total);
    return prefix;
}

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
#if LB_PROFILE
    long long c0 = clock64(), c1 = 0, c2 = 0, c3 = 0;
    unsigned long long t0 = 0;
    if (threadIdx.x == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
        lb_windows = 0;
    }
#endif
#if LB_TICKET
    if (threadIdx.x == 0) {
        ticket_prefetched<LB_PREFETCH>(in, ticket, tiles, n, LTile::SIZE, ahead, &s_tile, &s_epoch);
#if LB_PROFILE
        c1 = clock64();
#endif
    }
    __syncthreads();
    const unsigned long long id = s_tile;
    const unsigned long long base = id * LTile::SIZE;
    tile.load(in, base, n);
    tile.scan(warps);
#else
    const unsigned long long id = blockIdx.x;
    const unsigned long long base = id * LTile::SIZE;
    tile.load(in, base, n);
    if (threadIdx.x == 0) s_epoch = unsigned(atomicAdd(ticket, 1ull) / tiles);  // seen after scan's barrier
    tile.scan(warps);
#endif
    const unsigned epoch = s_epoch;
#if LB_PROFILE
    if (threadIdx.x == 0) c2 = clock64();
#endif
#if LB_WIDE
    const T prefix = look_back_wide(status, id, epoch, LTile::warps_before(warps, LTile::WARPS));
#if LB_PROFILE
    if (threadIdx.x == 0) c3 = clock64();
#endif
    tile.store(out, base, n, prefix, warps);
#else
    if (threadIdx.x < 32) {
        const T prefix = look_back<StudyWalk>(status, id, epoch, LTile::warps_before(warps, LTile::WARPS));
        if (threadIdx.x == 0) s_prefix = prefix;
    }
#if LB_PROFILE
    if (threadIdx.x == 0) c3 = clock64();
#endif
    __syncthreads();
    tile.store(out, base, n, s_prefix, warps);
#endif
#if LB_PROFILE
    if (threadIdx.x == 0) write_stamps(status + tiles + LB_STAMPS * id, c0, c1, c2, c3, t0);
#endif
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
// its block index, so the copy leaves before the ticket's atomic returns (LS_TICKET), and a ninth
// warp walks back while the copy is in flight (LS_LOOKER). The tile fetched ahead is kept in L2
// until its block copies it (LS_HINT), so the prefetch runs further ahead, and the first
// wave's copies leave on a ramp, about in tile order (LS_RAMP). Before sm_90
// the threads copy the tile themselves. LS_ROWS, LS_THREADS, LS_BLOCKS, LS_TICKET, LS_LOOKER, LS_HINT,
// LS_CONTROL and LS_RAMP are studies/scan_lookback.py's knobs (SKNOBS); the forms measured slower and removed
// (the scan before the look-back, a copy per warp's part, copy-engine stores; the block index's tile
// copied before the ticket; a looker that reads 2 or 4 words a lane, takes the epoch's ticket
// itself, reads several windows a round trip or polls one word first; the first wave's prefetches
// skipped; a two-level look-back over groups of 32 tiles): docs/scan.md.
#ifndef LS_ROWS
#define LS_ROWS 7
#endif
#ifndef LS_THREADS
#define LS_THREADS 256
#endif
#ifndef LS_BLOCKS
#define LS_BLOCKS 7  // the launch bound's blocks per SM (registers: 32 a thread); 228 KB hold 7 tiles of 28 KB
#endif
// LS_TICKET: 0 (shipped) numbers the tiles by block index, as CUB does, so that thread 0 sends the
// copy out at once; the ticket's atomic then only tells the call's epoch and runs under the copy.
// It trusts blocks to start in index order: CUDA does not promise it (PMPP 11.6 takes a ticket for
// that reason, and domino keeps one), but every NVIDIA GPU dispatches a grid's blocks so, CUB's scan
// relies on it, and a hang would be one ERROR row (the worker's timeout), not a frozen run. 1: the
// tile from the ticket, lookback's numbering: the tile's copy waits for the atomic's L2 round trip,
// 1.0-1.2 us of a block's 13.5 (docs/scan.md: 2-6 points of memcpy's rate).
#ifndef LS_TICKET
#define LS_TICKET 0
#endif
// LS_LOOKER: 1 (shipped) gives the block a ninth warp that looks back from the moment the block
// knows its tile, while the tile's bytes are still on their way; thread 0 publishes the AGGREGATE
// once the sum is done and hands the total to the looker on an mbarrier, the looker publishes the
// PREFIX, and warps 0-7 each scan their own part. Where the walk back ends before the tile lands,
// the PREFIX goes out right after the sum. 0: warp 0 looks back once the tile is summed.
#ifndef LS_LOOKER
#define LS_LOOKER 1
#endif
#define LS_BLOCK (LS_THREADS + 32 * LS_LOOKER)  // the block's threads
// LS_RAMP: the first wave's blocks (block index below `ramped`, the host's count of the
// blocks resident at once, or 0 where the whole grid is one wave) send their copy out LS_RAMP SM cycles
// per block index after they start, so that the wave's tiles land about in index order. Without it the
// first wave's tiles all start together and land in DRAM's order, so no tile finds its prefix until
// nearly all of the wave's bytes are in, and the wave's chain then runs with few bytes moving while
// the next wave waits for its slots (docs/scan.md, the look-back's timeline). 10 cycles (5 ns at 1980 MHz)
// is faster than DRAM brings a tile and its prefetch, so the ramp costs no bandwidth. A grid of one wave
// has no next wave to let in early, and there the ramp only delays (measured: docs/scan.md).
// 0 turns it off (studies/scan_lookback.py's knob `ramp`).
#ifndef LS_RAMP
#define LS_RAMP 10
#endif

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
#if LS_LOOKER
    __shared__ T s_total;  // the tile's total, thread 0 to the looker
    __shared__ __align__(8) unsigned long long handoff;  // its barrier (sm_90); before sm_90, a flag
#endif
    const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
#if LB_PROFILE
    long long c0 = clock64(), c1 = 0, c2 = 0, c3 = 0;
    unsigned long long t0 = 0;
    if (t == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
        lb_windows = 0;
    }
#endif
    if (t == 0) {
#if LS_RAMP
        if (blockIdx.x < ramped) {  // the first wave's ramp: this block's copy leaves index x LS_RAMP cycles in
            const long long until = clock64() + (long long)blockIdx.x * LS_RAMP;
            while (clock64() < until) {
            }
        }
#endif
#if LS_LOOKER && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        mbar_init(&handoff, 1);  // made visible by the first barrier (the looker only waits on it)
#elif LS_LOOKER
        handoff = 0ull;  // a block that ran here before left it set
#endif
#if LS_TICKET
        const unsigned long long k = ticket_prefetched<LB_PREFETCH>(in, ticket, tiles, n, STile::SIZE, ahead, &s_tile, &s_epoch);
#if LB_PROFILE
        c1 = clock64();
#endif
        const unsigned long long at = (k % tiles) * STile::SIZE;
#else
        const unsigned long long at = blockIdx.x * STile::SIZE;
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if (at + STile::SIZE <= n) {  // a whole tile: the copy engine; the last one: the threads, below
            mbar_init(&bar, 1);
            mbar_init_fence();
#if LS_HINT_COPY
            bulk_load_hinted(stage, in + at, STile::SIZE * sizeof(T), &bar, l2_policy<false>());
#else
            bulk_load(stage, in + at, STile::SIZE * sizeof(T), &bar);
#endif
        }
#endif
#if !LS_TICKET
#if LB_PREFETCH
        if (ahead) prefetch_tile<LS_HINT_PREFETCH>(in, blockIdx.x + ahead, n, STile::SIZE);
#endif
        s_tile = blockIdx.x;
        s_epoch = unsigned(atomicAdd(ticket, 1ull) / tiles);
#if LB_PROFILE
        c1 = clock64();
#endif
#endif
    }
    __syncthreads();
    const unsigned long long id = s_tile, base = id * STile::SIZE;
    const unsigned epoch = s_epoch;
    const bool whole = base + STile::SIZE <= n;
    // Thread t's vector of row r: warp w's part is rows w * LS_ROWS .. of 32 vectors, as Tile's.
    const unsigned mine = warp * LS_ROWS * 32 + lane;
    const unsigned long long g = base + 4ull * mine;  // its first element
#if LS_LOOKER
    if (warp < STile::WARPS) {
#endif
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
#if LS_LOOKER
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
#if LB_PROFILE
            c2 = clock64();
#endif
        }
        scan_part<LS_ROWS, LS_THREADS>(stage + mine);
    } else {  // the looker
#if LS_CONTROL
        const T prefix = T(0);  // the study's control: no walk (wrong sums), the data movement alone
#else
        const T prefix = id ? walk_back<StudyWalk>(status, id, epoch, lane) : T(0);
#endif
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
#else
    __syncthreads();
#if LB_PROFILE
    if (t == 0) c2 = clock64();
#endif
    if (warp == 0) {
        const T prefix = look_back<StudyWalk>(status, id, epoch, STile::warps_before(warps, STile::WARPS));
        if (t == 0) s_prefix = prefix;
    } else {
        scan_part<LS_ROWS, LS_THREADS>(stage + mine);
        if (warp == 1) scan_part<LS_ROWS, LS_THREADS>(stage + lane);
    }
    __syncthreads();
#endif
#if LB_PROFILE
    if (t == 0) c3 = clock64();
#endif
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
#if LB_PROFILE
    if (t == 0) write_stamps(status + tiles + LB_STAMPS * id, c0, c1, c2, c3, t0);
#endif
}

// ---- the persistent look-back (studies/scan_lookback.py's candidates, not a variant) ---------
// Measured slower than lookback on the H200 at every tile tried (docs/scan.md): kept so that the
// study can time it again and its tests keep it right.
//
// lookback_persistent: the same tiles, status words and look-back, from LP_BLOCKS blocks per SM
// that stay resident and take tile after tile by ticket. A profile of `lookback` (ncu) had a
// block spend more than half its life waiting in the look-back with its scanned tile in
// registers and no load of its own in flight, and the registers bound how many blocks (and so
// how many bytes) are in flight. Here a block, once its tile is scanned and its aggregate
// published, already knows its next tile (thread 0 took the ticket while the tile was being
// read) and starts copying it into shared memory (cp.async: the copy needs no registers), then
// waits in the look-back and stores: DRAM reads the next tile during the wait.
//
// Each thread copies exactly the 16-byte vectors it will read (stage[r * LP_THREADS + t], the
// slots in the order of Tile's registers), so its own cp.async.wait_group makes them visible to
// it and no barrier guards the buffer; a thread overwrites its slots only after their values were
// consumed by the scan before its barrier. `warps` alternates between two sets of words: a warp
// may write the next tile's totals while a slower one still adds this tile's in its stores.
//
// Tickets: call c's are c * (tiles + gridDim.x) .. + tiles + gridDim.x - 1. Ticket k is tile
// k % (tiles + gridDim.x) if that is below `tiles`; otherwise the block stops. Tickets are taken
// in order, so the call's first `tiles` tickets are its tiles and each block then takes exactly
// one more that stops it: a call uses tiles + gridDim.x tickets and the next call's epoch starts
// where it ended (the host keeps the grid of a shape from call to call). A ticket is taken only
// by a running block, which holds no tile that waits on a later one, so any grid, resident or
// not, finishes (PMPP 11.6's argument for dynamic numbering).
#ifndef LP_ROWS
#define LP_ROWS 8
#endif
#ifndef LP_THREADS
#define LP_THREADS 256
#endif
#ifndef LP_BLOCKS
#define LP_BLOCKS 4  // blocks per SM: the launch bound, and the study's grid (scan.py's lookback_grid)
#endif
// Before sm_80 there is no cp.async: the copies pass through registers and the 64-register bound of
// 4 blocks spills (sm_75: 1024 threads an SM); there the bound asks for 2 (any grid still finishes).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define LP_BOUND (LP_BLOCKS < 2 ? LP_BLOCKS : 2)
#else
#define LP_BOUND LP_BLOCKS
#endif

// A 16-byte copy of `bytes` (0 to 16, the rest zero-filled) from global to shared memory, in
// flight until cp_wait_all. Older targets (sm_75) copy at once.
__device__ __forceinline__ void cp_async16(V* smem, const T* gmem, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(bytes) : "memory");
#else
    V v;
    v.x = bytes > 0 ? gmem[0] : T(0);
    v.y = bytes > 4 ? gmem[1] : T(0);
    v.z = bytes > 8 ? gmem[2] : T(0);
    v.w = bytes > 12 ? gmem[3] : T(0);
    *smem = v;
#endif
}

__device__ __forceinline__ void cp_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void cp_wait_all() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
}

// This thread's vectors of the tile at `base` copied into its slots of `stage` (zeros past n).
template <class Tl>
__device__ __forceinline__ void stage_tile(const T* __restrict__ in, unsigned long long base, unsigned long long n,
                                           V* stage, const Tl& tile) {
    const unsigned long long g = tile.first(base);
    const int have = Tl::remaining(g, n);
#pragma unroll
    for (int r = 0; r < LP_ROWS; ++r) {
        const int left = have - 128 * r;  // elements of this vector and after it
        const unsigned bytes = left >= 4 ? 16u : left > 0 ? 4u * left : 0u;
        cp_async16(stage + r * LP_THREADS + threadIdx.x, bytes ? in + g + 128 * r : in, bytes);
    }
    cp_commit();
}

extern "C" __global__ void __launch_bounds__(LP_THREADS, LP_BOUND)
lookback_persistent(const T* __restrict__ in, T* __restrict__ out, unsigned long long* __restrict__ status,
                    unsigned long long* __restrict__ ticket, unsigned long long n, unsigned long long tiles) {
    typedef Tile<LP_ROWS, LP_THREADS> PTile;
    __shared__ V stage[LP_ROWS * LP_THREADS];
    __shared__ T warps[2][PTile::WARPS];
    __shared__ unsigned long long s_first, s_next;
    __shared__ unsigned s_epoch;
    __shared__ T s_prefix;
    const unsigned long long per_call = tiles + gridDim.x;
    if (threadIdx.x == 0) {
        const unsigned long long k = atomicAdd(ticket, 1ull);
        s_epoch = unsigned(k / per_call);
        s_first = k % per_call;
    }
    __syncthreads();
    const unsigned epoch = s_epoch;
    unsigned long long id = s_first;
    if (id >= tiles) return;  // the block's one stopping ticket (the whole block: a shared word)
    PTile tile;
    stage_tile(in, id * PTile::SIZE, n, stage, tile);
    for (unsigned parity = 0;; parity ^= 1u) {
        // The next ticket of the call: the same epoch (this block has not yet taken its stopping one).
        if (threadIdx.x == 0) s_next = atomicAdd(ticket, 1ull) % per_call;  // read after scan's barrier
        cp_wait_all();
#pragma unroll
        for (int r = 0; r < LP_ROWS; ++r) tile.v[r] = stage[r * LP_THREADS + threadIdx.x];
        T* w = warps[parity];
        tile.scan(w);
        const unsigned long long next = s_next;
        const unsigned long long base = id * PTile::SIZE;
        if (next < tiles) stage_tile(in, next * PTile::SIZE, n, stage, tile);  // DRAM reads it during the wait
        if (threadIdx.x < 32) {
            const T prefix = look_back<StudyWalk>(status, id, epoch, PTile::warps_before(w, PTile::WARPS));
            if (threadIdx.x == 0) s_prefix = prefix;
        }
        __syncthreads();
        tile.store(out, base, n, s_prefix, w);
        if (next >= tiles) break;
        id = next;
    }
}
