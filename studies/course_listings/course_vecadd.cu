// The course's vector add, as the course writes it: one element per thread, `int` index and
// size, 256 threads per block (the course's `vector_add`). Reference only: pmppbench's own
// kernels are in kernels_cu/vecadd.cu; studies/baselines.py times the two side by side.

extern "C" __global__ void vector_add(const float* A, const float* B, float* C, const int n) {
    int idx = blockDim.x * blockIdx.x + threadIdx.x;
    if (idx < n) {
        C[idx] = A[idx] + B[idx];
    }
}
