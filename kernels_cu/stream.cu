// CUDA streams (the course's 06_stream.cu, "CUDA stream" to "Stream 实测").
//
// The kernels are deliberately plain: the experiment is about the host side, how chunks of
// an array are queued on streams so that one chunk's copies overlap another chunk's compute.
// Each chunk is uploaded, transformed by `synthesize`, and downloaded; the host passes the
// chunk's own start pointer, so inside the kernel the indices run 0..n-1 (PMPP's "d_in +
// offset"). `add_one` only serves the cross-stream event dependency demo ("event_dependency").
//
// Indices are size_t like the rest of pmppbench: 3 chunks of 2^30 floats would overflow int.

// synthesize: y[i] = sum_{k=1..terms} sin(k * x[i]) / k, the first `terms` terms of the
// Fourier series of a sawtooth. 64 sinf per element make the kernel long enough to be worth
// overlapping with the copies (the course's point); one output per thread, as in the seed.
// sinf, not __sinf: the accurate version (2 ulp), so the check's tolerance can be derived.
// Phases are in [0, 2*pi) and TERMS <= 1024, so k * x stays far below 105615, where sinf
// would switch to its slow (Payne-Hanek) range reduction.
extern "C" __global__ void synthesize(const float* __restrict__ x, float* __restrict__ y,
                                      size_t n, int terms) {
    size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float xi = x[i];  // one load, reused by every term
    float sum = 0.0f;
    for (int k = 1; k <= terms; ++k)
        sum += sinf(k * xi) / k;
    y[i] = sum;
}

// add_one: y = x + 1. Launched twice on two streams, the second waiting on an event the
// first recorded (cudaStreamWaitEvent), so the result is x + 2 only if the dependency holds.
extern "C" __global__ void add_one(const float* __restrict__ x, float* __restrict__ y, size_t n) {
    size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}
