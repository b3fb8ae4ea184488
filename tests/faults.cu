// Test-only kernels for the supervision GPU test (tests/test_faults.py): y = x, done right,
// wrong, with an out-of-bounds write that poisons the CUDA context, and never finishing.

extern "C" __global__ void good(const float* x, float* y, int n, volatile int* never) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}

extern "C" __global__ void wrong(const float* x, float* y, int n, volatile int* never) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}

extern "C" __global__ void out_of_bounds(const float* x, float* y, int n, volatile int* never) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i + (1ll << 40)] = x[i];  // a terabyte past the buffer: cudaErrorIllegalAddress
}

extern "C" __global__ void hang(const float* x, float* y, int n, volatile int* never) {
    while (never[0] == 0) {  // never is 0 and nothing writes it: the kernel never ends
    }
}
