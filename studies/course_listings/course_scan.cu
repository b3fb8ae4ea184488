// The book's section scans (PMPP 11.2-11.4), as the course writes them: float, inclusive, `int`
// sizes and `unsigned int` indices; Kogge-Stone with 1024 threads over a 1024-element section,
// Brent-Kung with 1024 threads over 2048, the three-phase scan with 512 threads of 8 elements.
// Each writes its section's scan and the section's total S[blockIdx.x], taking the arguments of
// pmppbench's rungs so that studies/baselines.py runs each in the rung's own three-kernel call
// (its scan of the sums and its add-back). Reference only: pmppbench's own kernels are in
// kernels_cu/scan.cu.

#define SECTION_SIZE 1024
#define BK_SECTION_SIZE 2048
#define COARSE_FACTOR 8
#define CO_SECTION_SIZE (512 * COARSE_FACTOR)

extern "C" __global__ void Kogge_Stone_scan_kernel(const float* X, float* Y, float* S, int N) {
    __shared__ float XY[SECTION_SIZE];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) XY[threadIdx.x] = X[i];
    else XY[threadIdx.x] = 0.0f;
    for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        float temp;
        if (threadIdx.x >= stride) temp = XY[threadIdx.x] + XY[threadIdx.x - stride];
        __syncthreads();
        if (threadIdx.x >= stride) XY[threadIdx.x] = temp;
    }
    if (i < N) Y[i] = XY[threadIdx.x];
    if (threadIdx.x == blockDim.x - 1) S[blockIdx.x] = XY[threadIdx.x];
}

extern "C" __global__ void Brent_Kung_scan_kernel(const float* X, float* Y, float* S, int N) {
    __shared__ float XY[BK_SECTION_SIZE];
    unsigned int i = 2 * blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) XY[threadIdx.x] = X[i];
    else XY[threadIdx.x] = 0.0f;
    if (i + blockDim.x < N) XY[threadIdx.x + blockDim.x] = X[i + blockDim.x];
    else XY[threadIdx.x + blockDim.x] = 0.0f;
    for (unsigned int stride = 1; stride <= blockDim.x; stride *= 2) {
        __syncthreads();
        unsigned int index = (threadIdx.x + 1) * 2 * stride - 1;
        if (index < BK_SECTION_SIZE) XY[index] += XY[index - stride];
    }
    for (int stride = BK_SECTION_SIZE / 4; stride > 0; stride /= 2) {
        __syncthreads();
        unsigned int index = (threadIdx.x + 1) * stride * 2 - 1;
        if (index + stride < BK_SECTION_SIZE) XY[index + stride] += XY[index];
    }
    __syncthreads();
    if (i < N) Y[i] = XY[threadIdx.x];
    if (i + blockDim.x < N) Y[i + blockDim.x] = XY[threadIdx.x + blockDim.x];
    if (threadIdx.x == 0) S[blockIdx.x] = XY[BK_SECTION_SIZE - 1];
}

extern "C" __global__ void three_phase_scan_kernel(const float* X, float* Y, float* S, int N) {
    __shared__ float XY[CO_SECTION_SIZE];
    unsigned int base = blockIdx.x * CO_SECTION_SIZE;
    for (unsigned int j = threadIdx.x; j < CO_SECTION_SIZE; j += blockDim.x)
        XY[j] = base + j < N ? X[base + j] : 0.0f;
    __syncthreads();
    // phase 1: a sequential scan of each thread's COARSE_FACTOR elements
    unsigned int start = threadIdx.x * COARSE_FACTOR;
    for (unsigned int j = start + 1; j < start + COARSE_FACTOR; ++j) XY[j] += XY[j - 1];
    // phase 2: Kogge-Stone over the last element of every thread's subsection
    unsigned int last = start + COARSE_FACTOR - 1;
    for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        float temp;
        if (threadIdx.x >= stride) temp = XY[last] + XY[last - stride * COARSE_FACTOR];
        __syncthreads();
        if (threadIdx.x >= stride) XY[last] = temp;
    }
    __syncthreads();
    // phase 3: the previous subsection's last element added to this one's others
    if (threadIdx.x > 0) {
        float carry = XY[start - 1];
        for (unsigned int j = start; j < last; ++j) XY[j] += carry;
    }
    __syncthreads();
    for (unsigned int j = threadIdx.x; j < CO_SECTION_SIZE; j += blockDim.x)
        if (base + j < N) Y[base + j] = XY[j];
    if (threadIdx.x == blockDim.x - 1) S[blockIdx.x] = XY[CO_SECTION_SIZE - 1];
}
