// pmppbench histogram --kernel histogram_shared_private.cu:my_shared_private --like shared_private
// From `pmppbench template histogram shared_private`: PMPP 9.10's privatization. Each block counts
// into its own BINS counters in shared memory (atomics there are cheap and contend only within the
// block), then adds its non-zero counts to histo once.

__device__ unsigned bin_of(unsigned char c) {  // PMPP 9.1: the byte's bin, or BINS for none
#if BINS == 256
    return c;
#else
    unsigned pos = unsigned(c) - 'a';
    return pos < 26 ? pos / 4 : BINS;  // a-d, e-h, ..., y-z
#endif
}

extern "C" __global__ void my_shared_private(const unsigned char* data, int length, unsigned* histo) {
    __shared__ unsigned s[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) s[b] = 0u;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // one byte per thread
    if (i < length) {
        unsigned b = bin_of(data[i]);
        if (b < BINS) atomicAdd(&s[b], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        if (s[b]) atomicAdd(&histo[b], s[b]);  // histo was zeroed before the call
}
