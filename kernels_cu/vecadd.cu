// Vector add, C = A + B (PMPP 2.x / 5.1). The bandwidth reference of pmppbench:
// 12 bytes move per element (two 4-byte reads, one 4-byte write) for 1 FLOP, an arithmetic
// intensity of 1/12 FLOP/B -- far left of any GPU's ridge point, so the only question is
// how close each variant gets to the memory roof.
//
// Indices are size_t in float4 and grid_stride: N = 2^28 elements is 1 GiB per array and
// still fits int, but the float4 variant's byte offsets and larger N would not. scalar is a
// template on its index type I, and the host picks the instantiation per N
// (pmppbench/workloads/vecadd.py, index_type): the course's `int` while N + 256 < 2^31,
// `long long` beyond. For a memory-bound kernel the index width costs nothing measurable
// (docs/measurement.md), but the int path keeps scalar the course's kernel. Plain pointers, as
// the course's (__restrict__ gains nothing here).

// scalar: one element per thread, 256 threads per block, `if (i < n)` guards the last block.
template <class I>
__global__ void scalar(const float* a, const float* b, float* c, I n) {
    const I i = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x);
    if (i < n) c[i] = a[i] + b[i];
}

// float4: each thread moves 16 bytes per array with one vector load/store (LDG.128 /
// STG.128), a quarter of the memory instructions of `scalar`. cudaMalloc'd arrays are
// 256-byte aligned, so the float4 view is aligned. The n % 4 leftover elements are
// handled by the first threads of the grid in a scalar tail.
extern "C" __global__ void float4_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, size_t n) {
    size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    size_t n4 = n / 4;
    if (i < n4) {
        float4 x = reinterpret_cast<const float4*>(a)[i];
        float4 y = reinterpret_cast<const float4*>(b)[i];
        reinterpret_cast<float4*>(c)[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    size_t tail = 4 * n4 + i;  // at most 3 threads do this
    if (i < n % 4) c[tail] = a[tail] + b[tail];
}

// grid_stride: a fixed grid (a few blocks per SM, chosen on the host) walks the array with
// stride gridDim.x * blockDim.x -- each thread handles many elements, so the grid size no
// longer depends on n (PMPP's answer to "n larger than the grid").
extern "C" __global__ void grid_stride(const float* __restrict__ a, const float* __restrict__ b,
                                       float* __restrict__ c, size_t n) {
    size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        c[i] = a[i] + b[i];
}
