// The book's sum reductions (PMPP 10.2-10.7), as the course writes them: float, `unsigned int`
// indices, 1024 threads per block, each block owning 2 * 1024 inputs (coarsened: 2 * 8 * 1024).
// Where the book assumes N is a multiple of the segment, a load past N reads 0 here, and the
// book's in-place first step reads the input and writes the scratch array (so the input
// survives repeated calls); the kernels take the arguments of pmppbench's rungs so
// studies/baselines.py can run each in the rung's call. Reference only: pmppbench's own
// kernels are in kernels_cu/reduce.cu.

#define BLOCK_DIM 1024
#define COARSE_FACTOR 8

extern "C" __global__ void SimpleSumReductionKernel(const float* input, float* scratch, float* partial, int n) {
    unsigned int segment = 2 * blockDim.x * blockIdx.x;
    unsigned int i = segment + 2 * threadIdx.x;
    scratch[i] = (i < n ? input[i] : 0.0f) + (i + 1 < n ? input[i + 1] : 0.0f);
    __syncthreads();
    for (unsigned int stride = 2; stride <= blockDim.x; stride *= 2) {
        if (threadIdx.x % stride == 0) scratch[i] += scratch[i + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = scratch[segment];
}

extern "C" __global__ void ConvergentSumReductionKernel(const float* input, float* scratch, float* partial, int n) {
    unsigned int segment = 2 * blockDim.x * blockIdx.x;
    unsigned int i = segment + threadIdx.x;
    scratch[i] = (i < n ? input[i] : 0.0f) + (i + blockDim.x < n ? input[i + blockDim.x] : 0.0f);
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride >= 1; stride /= 2) {
        if (threadIdx.x < stride) scratch[i] += scratch[i + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = scratch[segment];
}

extern "C" __global__ void SharedMemorySumReductionKernel(const float* input, float* partial, int n) {
    __shared__ float input_s[BLOCK_DIM];
    unsigned int segment = 2 * blockDim.x * blockIdx.x;
    unsigned int i = segment + threadIdx.x, t = threadIdx.x;
    input_s[t] = (i < n ? input[i] : 0.0f) + (i + BLOCK_DIM < n ? input[i + BLOCK_DIM] : 0.0f);
    for (unsigned int stride = blockDim.x / 2; stride >= 1; stride /= 2) {
        __syncthreads();
        if (t < stride) input_s[t] += input_s[t + stride];
    }
    if (t == 0) partial[blockIdx.x] = input_s[0];
}

extern "C" __global__ void SegmentedSumReductionKernel(const float* input, float* output, int n) {
    __shared__ float input_s[BLOCK_DIM];
    unsigned int segment = 2 * blockDim.x * blockIdx.x;
    unsigned int i = segment + threadIdx.x, t = threadIdx.x;
    input_s[t] = (i < n ? input[i] : 0.0f) + (i + BLOCK_DIM < n ? input[i + BLOCK_DIM] : 0.0f);
    for (unsigned int stride = blockDim.x / 2; stride >= 1; stride /= 2) {
        __syncthreads();
        if (t < stride) input_s[t] += input_s[t + stride];
    }
    if (t == 0) atomicAdd(output, input_s[0]);
}

extern "C" __global__ void CoarsenedSumReductionKernel(const float* input, float* output, int n) {
    __shared__ float input_s[BLOCK_DIM];
    unsigned int segment = COARSE_FACTOR * 2 * blockDim.x * blockIdx.x;
    unsigned int i = segment + threadIdx.x, t = threadIdx.x;
    float sum = i < n ? input[i] : 0.0f;
    for (unsigned int tile = 1; tile < COARSE_FACTOR * 2; ++tile)
        sum += i + tile * BLOCK_DIM < n ? input[i + tile * BLOCK_DIM] : 0.0f;
    input_s[t] = sum;
    for (unsigned int stride = blockDim.x / 2; stride >= 1; stride /= 2) {
        __syncthreads();
        if (t < stride) input_s[t] += input_s[t + stride];
    }
    if (t == 0) atomicAdd(output, input_s[0]);
}
