// pmppbench reduce --kernel reduce_coarsened.cu:my_coarsened --like coarsened
// From `pmppbench template reduce coarsened`: the shared tree stops at 64 partial sums; the last
// warp finishes with shuffles (PMPP 10.8's idea), no barrier and no shared memory for its 5 steps.
// Each step adds the same pairs as the tree did, so the order of additions is unchanged.

extern "C" __global__ void my_coarsened(const ELEM* in, ELEM* out, int n) {
    __shared__ ELEM s[BLOCK_DIM];
    unsigned t = threadIdx.x;
    long long i = 2LL * COARSE_FACTOR * BLOCK_DIM * blockIdx.x + t;
    ELEM sum = ELEM(0);
    for (int tile = 0; tile < 2 * COARSE_FACTOR; ++tile)  // 2 * COARSE_FACTOR inputs added serially
        if (i + (long long)tile * BLOCK_DIM < n) sum += in[i + (long long)tile * BLOCK_DIM];
    s[t] = sum;
    for (unsigned stride = blockDim.x / 2; stride >= 32; stride /= 2) {
        __syncthreads();
        if (t < stride) s[t] += s[t + stride];
    }
    if (t < 32) {  // one warp: s[t] is its own last write
        sum = s[t];
        for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
        if (t == 0) atomicAdd(out, sum);  // *out was zeroed before the call
    }
}
