// The course lab's transpose kernels, as the course writes them: A is M x N, B = A^T is N x M,
// both row-major; block (32, 32), one element per thread, `int` coordinates and size_t
// offsets. naive and shared32 are the course's listings; padded33 is shared32 with the
// course's one change (`tile[32][33]`); copy is the course's bandwidth reference, naive's
// body with B = A. Reference only: pmppbench's own kernels are in kernels_cu/transpose.cu;
// studies/baselines.py times the two side by side.

extern "C" __global__ void copy(const float* a, float* b, int m, int n) {
    int x = blockIdx.x * 32 + threadIdx.x;  // column of A
    int y = blockIdx.y * 32 + threadIdx.y;  // row of A
    if (x < n && y < m)
        b[size_t(y) * n + x] = a[size_t(y) * n + x];
}

extern "C" __global__ void naive(const float* a, float* b, int m, int n) {
    int x = blockIdx.x * 32 + threadIdx.x;  // column of A
    int y = blockIdx.y * 32 + threadIdx.y;  // row of A
    if (x < n && y < m)
        b[size_t(x) * m + y] = a[size_t(y) * n + x];
}

extern "C" __global__ void shared32(const float* a, float* b, int m, int n) {
    __shared__ float tile[32][32];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * 32 + tx;
    int y = blockIdx.y * 32 + ty;
    if (x < n && y < m) tile[ty][tx] = a[size_t(y) * n + x];
    __syncthreads();
    int out_x = blockIdx.y * 32 + tx;
    int out_y = blockIdx.x * 32 + ty;
    if (out_x < m && out_y < n)
        b[size_t(out_y) * m + out_x] = tile[tx][ty];
}

extern "C" __global__ void padded33(const float* a, float* b, int m, int n) {
    __shared__ float tile[32][33];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * 32 + tx;
    int y = blockIdx.y * 32 + ty;
    if (x < n && y < m) tile[ty][tx] = a[size_t(y) * n + x];
    __syncthreads();
    int out_x = blockIdx.y * 32 + tx;
    int out_y = blockIdx.x * 32 + ty;
    if (out_x < m && out_y < n)
        b[size_t(out_y) * m + out_x] = tile[tx][ty];
}
