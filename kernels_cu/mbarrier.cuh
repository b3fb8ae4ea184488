// Hopper's asynchronous copies and the barriers they complete on (sm_90): compile.py hands every
// kernels_cu/*.cuh to NVRTC as a header, so a kernel file includes this one by name. Every helper
// is inline PTX; a kernel that calls them builds only for sm_90 and newer, so their callers guard
// their bodies (or are templates instantiated by name) and the other targets never see them.
//
// An mbarrier counts arrivals and, for the copy engine, bytes: one thread arrives with
// expect_tx(bytes), the engine's copies complete_tx their bytes as they land, and the phase
// completes when both counts are met. Waiters poll the phase's parity (the barrier's use number
// mod 2), so a barrier serves one stage of a ring over and over without being reset.
#pragma once
#ifdef __CUDACC__  // (the CPU harness of tests/test_histogram.py compiles kernel files as C++)

__device__ __forceinline__ unsigned smem_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}

// The barriers' initialisation made visible to the copy engine (before the first copy names them).
__device__ __forceinline__ void mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

// Arrive once and add `bytes` to the transaction count the phase waits for.
__device__ __forceinline__ void mbar_expect_tx(unsigned long long* bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void mbar_arrive(unsigned long long* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}

// Spin until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity) {
    unsigned done = 0;
    while (!done)
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(smem_addr(bar)), "r"(parity) : "memory");
}

// Shared memory that threads have read (the generic proxy) ordered before the copy engine (the
// async proxy) writes it again: the refill of a ring's stage.
__device__ __forceinline__ void async_proxy_fence() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// The copy engine: `bytes` (a multiple of 16, both addresses 16-byte aligned) from global memory
// at src into shared memory at dst, counted on bar (which this call also expects them on).
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
    mbar_expect_tx(bar, bytes);
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
                 ::"r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)) : "memory");
}

// bulk_load with an L2 eviction priority for the bytes it reads (`policy` from createpolicy).
__device__ __forceinline__ void bulk_load_hinted(void* dst, const void* src, unsigned bytes, unsigned long long* bar,
                                                 unsigned long long policy) {
    mbar_expect_tx(bar, bytes);
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;\n"
                 ::"r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)), "l"(policy) : "memory");
}

// The copy engine: the box of the tensor map at `map` (a __grid_constant__ kernel parameter's address)
// at (c0 along the contiguous dimension, c1 along rows) into shared memory at dst, its bytes counted on
// bar (whose transaction count the caller has raised by them).
__device__ __forceinline__ void tensor_load_2d(void* dst, const void* map, unsigned long long* bar, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n"
                 ::"r"(smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(smem_addr(bar)), "r"(c0),
                 "r"(c1)
                 : "memory");
}

// tensor_load_2d with an L2 eviction priority for the bytes it reads (`policy` from createpolicy).
__device__ __forceinline__ void tensor_load_2d_hinted(void* dst, const void* map, unsigned long long* bar, int c0,
                                                      int c1, unsigned long long policy) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
                 " [%0], [%1, {%3, %4}], [%2], %5;\n"
                 ::"r"(smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(smem_addr(bar)), "r"(c0),
                 "r"(c1), "l"(policy)
                 : "memory");
}
#endif
