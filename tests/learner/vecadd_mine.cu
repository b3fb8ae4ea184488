// Learner kernels for tests/test_learner.py, with vecadd scalar's signature (run --like scalar).

__global__ void my_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

__device__ unsigned int calls_so_far;

// Right on its first launch only: later launches count past the grid and write a + b + 1.
__global__ void first_call_only(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int k = atomicAdd(&calls_so_far, 1u);
    if (i < n) c[i] = a[i] + b[i] + (k < gridDim.x * blockDim.x ? 0.0f : 1.0f);
}
