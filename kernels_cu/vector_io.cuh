// Device helpers shared by the shipped kernels and the studies' forms of them
// (studies/memory_roof/): compile.py hands every kernels_cu/*.cuh to NVRTC as a header, so a
// kernel file includes this one by name. Float4 global loads and stores with the edge
// handling of a 1-D array, and cp.async's 16-byte copy into shared memory.
#pragma once

// x[g .. g+3] as one float4, zero outside [0, n) -- the same zero-fill as `shared`. g is a
// multiple of 4, so the four are all inside (one 16-byte load), all left of x[0] (g < 0), or
// the last partial group, where x[g + 3] is already past the end. Only the first and last
// blocks ever take the slow path.
__device__ __forceinline__ float4 load4(const float* __restrict__ x, long long g, long long n) {
    if (g >= 0 && g + 4 <= n) return __ldg(reinterpret_cast<const float4*>(x + g));
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (g >= 0) {
        if (g + 0 < n) v.x = x[g + 0];
        if (g + 1 < n) v.y = x[g + 1];
        if (g + 2 < n) v.z = x[g + 2];
    }
    return v;
}

// y[g .. g+3] = v, dropping the elements at or past n; g >= 0 is a multiple of 4, so as in
// load4 the slow path never has y[g + 3] to write.
__device__ __forceinline__ void store4(float* __restrict__ y, long long g, long long n, float4 v) {
    if (g + 4 <= n) {
        __stcs(reinterpret_cast<float4*>(y + g), v);
        return;
    }
    if (g + 0 < n) y[g + 0] = v.x;
    if (g + 1 < n) y[g + 1] = v.y;
    if (g + 2 < n) y[g + 2] = v.z;
}

// cp.async (sm_80 and later): a 16-byte copy from global to shared memory that does not pass
// through the thread's registers; .cg caches it in L2 only. wait_async_copies() waits for all
// of the thread's outstanding copies (cp.async.wait_all also commits them). Defined only under
// a CUDA compiler: the CPU emulation in tests/test_stencil.py supplies host versions (a 16-byte
// copy and a no-op), as it does for __ldg and __stcs.
#ifdef __CUDACC__
__device__ __forceinline__ void copy16_async(float* smem, const float* gmem) {
    unsigned dst;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(dst) : "l"(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(gmem) : "memory");
}
__device__ __forceinline__ void wait_async_copies() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }
#endif
