// The book's letter histogram (PMPP 9.2-9.6), as the course writes it: a-z in bins of four
// (NUM_BINS = 7), `unsigned int` indices, 256 threads per block, CFACTOR = 32. The kernels take
// the arguments of pmppbench's rungs (data, length, histo[, copies]) so studies/baselines.py
// can run each in the rung's call; privatized clears its block's copy after merging it (the
// rung's contract, so the copies are zero for the next call). Reference only: pmppbench's own
// kernels are in kernels_cu/histogram.cu.

#define NUM_BINS 7
#define CFACTOR 32

extern "C" __global__ void histo_kernel(const char* data, int length, unsigned int* histo) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < length) {
        int alphabet_position = data[i] - 'a';
        if (alphabet_position >= 0 && alphabet_position < 26) atomicAdd(&(histo[alphabet_position / 4]), 1);
    }
}

extern "C" __global__ void histo_private_kernel(const char* data, int length, unsigned int* histo,
                                                unsigned int* copies) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < length) {
        int alphabet_position = data[i] - 'a';
        if (alphabet_position >= 0 && alphabet_position < 26)
            atomicAdd(&(copies[blockIdx.x * NUM_BINS + alphabet_position / 4]), 1);
    }
    __syncthreads();
    for (unsigned int bin = threadIdx.x; bin < NUM_BINS; bin += blockDim.x) {
        unsigned int binValue = copies[blockIdx.x * NUM_BINS + bin];
        if (binValue > 0) {
            atomicAdd(&(histo[bin]), binValue);
            copies[blockIdx.x * NUM_BINS + bin] = 0;
        }
    }
}

extern "C" __global__ void histo_shared_kernel(const char* data, int length, unsigned int* histo) {
    __shared__ unsigned int histo_s[NUM_BINS];
    for (unsigned int bin = threadIdx.x; bin < NUM_BINS; bin += blockDim.x) histo_s[bin] = 0u;
    __syncthreads();
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < length) {
        int alphabet_position = data[i] - 'a';
        if (alphabet_position >= 0 && alphabet_position < 26) atomicAdd(&(histo_s[alphabet_position / 4]), 1);
    }
    __syncthreads();
    for (unsigned int bin = threadIdx.x; bin < NUM_BINS; bin += blockDim.x) {
        unsigned int binValue = histo_s[bin];
        if (binValue > 0) atomicAdd(&(histo[bin]), binValue);
    }
}

extern "C" __global__ void histo_contiguous_kernel(const char* data, int length, unsigned int* histo) {
    __shared__ unsigned int histo_s[NUM_BINS];
    for (unsigned int bin = threadIdx.x; bin < NUM_BINS; bin += blockDim.x) histo_s[bin] = 0u;
    __syncthreads();
    unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned int i = tid * CFACTOR; i < min((tid + 1) * CFACTOR, (unsigned int)length); ++i) {
        int alphabet_position = data[i] - 'a';
        if (alphabet_position >= 0 && alphabet_position < 26) atomicAdd(&(histo_s[alphabet_position / 4]), 1);
    }
    __syncthreads();
    for (unsigned int bin = threadIdx.x; bin < NUM_BINS; bin += blockDim.x) {
        unsigned int binValue = histo_s[bin];
        if (binValue > 0) atomicAdd(&(histo[bin]), binValue);
    }
}

extern "C" __global__ void histo_interleaved_kernel(const char* data, int length, unsigned int* histo) {
    __shared__ unsigned int histo_s[NUM_BINS];
    for (unsigned int bin = threadIdx.x; bin < NUM_BINS; bin += blockDim.x) histo_s[bin] = 0u;
    __syncthreads();
    unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned int i = tid; i < length; i += blockDim.x * gridDim.x) {
        int alphabet_position = data[i] - 'a';
        if (alphabet_position >= 0 && alphabet_position < 26) atomicAdd(&(histo_s[alphabet_position / 4]), 1);
    }
    __syncthreads();
    for (unsigned int bin = threadIdx.x; bin < NUM_BINS; bin += blockDim.x) {
        unsigned int binValue = histo_s[bin];
        if (binValue > 0) atomicAdd(&(histo[bin]), binValue);
    }
}

extern "C" __global__ void histo_aggregated_kernel(const char* data, int length, unsigned int* histo) {
    __shared__ unsigned int histo_s[NUM_BINS];
    for (unsigned int bin = threadIdx.x; bin < NUM_BINS; bin += blockDim.x) histo_s[bin] = 0u;
    __syncthreads();
    unsigned int accumulator = 0;
    int prevBinIdx = -1;
    unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned int i = tid; i < length; i += blockDim.x * gridDim.x) {
        int alphabet_position = data[i] - 'a';
        if (alphabet_position >= 0 && alphabet_position < 26) {
            int bin = alphabet_position / 4;
            if (bin == prevBinIdx) {
                ++accumulator;
            } else {
                if (accumulator > 0) atomicAdd(&(histo_s[prevBinIdx]), accumulator);
                accumulator = 1;
                prevBinIdx = bin;
            }
        }
    }
    if (accumulator > 0) atomicAdd(&(histo_s[prevBinIdx]), accumulator);
    __syncthreads();
    for (unsigned int bin = threadIdx.x; bin < NUM_BINS; bin += blockDim.x) {
        unsigned int binValue = histo_s[bin];
        if (binValue > 0) atomicAdd(&(histo[bin]), binValue);
    }
}
