// The course's own listings of every textbook rung, as the course writes them, one section per
// workload (PMPP chapters 2, 5-7, 9-11 and the course labs). Reference only: pmppbench's own
// kernels are in kernels_cu/; studies/baselines.py compiles this one unit and times each listing
// beside the rung of the same algorithm. Each section keeps its listing's own macros; the one
// name two sections define differently (COARSE_FACTOR) is redefined at its section's start.

// ==== vecadd ==================================================================================

// The course's vector add, as the course writes it: one element per thread, `int` index and
// size, 256 threads per block (the course's `vector_add`). Reference only: pmppbench's own
// kernels are in kernels_cu/vecadd.cu; studies/baselines.py times the two side by side.

extern "C" __global__ void vector_add(const float* A, const float* B, float* C, const int n) {
    int idx = blockDim.x * blockIdx.x + threadIdx.x;
    if (idx < n) {
        C[idx] = A[idx] + B[idx];
    }
}

// ==== transpose ===============================================================================

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

// ==== gemm ====================================================================================

// The course's GEMM kernels, C[M,N] = A[M,K] B[K,N] row-major FP32, as the course writes them.
// Reference only: pmppbench's own kernels are in kernels_cu/gemm.cu; studies/baselines.py
// times the two side by side.
//
//   gemm_naive      the course lab's naive body (block (16,16), fmaf, size_t offsets)
//   gemm_tiled16    the course lab's gemm_tiled with T = TK = 16
//   gemm_tiled32    the same listing with T = TK = 32 (block (32,32), the course's
//                   matrix_mul_tiled tile)
//   gemm_coarsened  the course's thread-coarsening kernel (TILE_WIDTH 32, COARSE_FACTOR 4):
//                   square width x width, width a multiple of 128, int offsets, no bounds tests

extern "C" __global__ void gemm_naive(const float* A, const float* B, float* C, int M, int N, int K) {
    constexpr int T = 16;
    int row = blockIdx.y * T + threadIdx.y;
    int col = blockIdx.x * T + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0;
        for (int k = 0; k < K; ++k)
            acc = fmaf(A[size_t(row) * K + k], B[size_t(k) * N + col], acc);
        C[size_t(row) * N + col] = acc;
    }
}

#define GEMM_TILED(NAME, T_)                                                                  \
    extern "C" __global__ void NAME(const float* A, const float* B, float* C, int M, int N, int K) { \
        constexpr int T = T_, TK = T_;                                                        \
        __shared__ float As[T][TK], Bs[TK][T];                                                \
        int tx = threadIdx.x, ty = threadIdx.y;                                               \
        int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;                             \
        float acc = 0.0f;                                                                     \
        for (int base = 0; base < K; base += TK) {                                            \
            As[ty][tx] = (row < M && base + tx < K) ? A[size_t(row) * K + base + tx] : 0.0f;  \
            Bs[ty][tx] = (base + ty < K && col < N) ? B[size_t(base + ty) * N + col] : 0.0f;  \
            __syncthreads();                                                                  \
            for (int k = 0; k < TK; ++k) acc = fmaf(As[ty][k], Bs[k][tx], acc);               \
            __syncthreads();                                                                  \
        }                                                                                     \
        if (row < M && col < N) C[size_t(row) * N + col] = acc;                               \
    }

GEMM_TILED(gemm_tiled16, 16)
GEMM_TILED(gemm_tiled32, 32)

#define TILE_WIDTH 32
#undef COARSE_FACTOR
#define COARSE_FACTOR 4
extern "C" __global__ void gemm_coarsened(float* M, float* N, float* P, int width) {
    __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];

    int bx = blockIdx.x;  int by = blockIdx.y;
    int tx = threadIdx.x; int ty = threadIdx.y;

    int row = by * TILE_WIDTH + ty;
    int colStart = bx * TILE_WIDTH * COARSE_FACTOR + tx;

    float Pvalue[COARSE_FACTOR];
    for (int c = 0; c < COARSE_FACTOR; ++c) Pvalue[c] = 0.0f;

    for (int ph = 0; ph < width / TILE_WIDTH; ++ph) {
        Mds[ty][tx] = M[row * width + ph * TILE_WIDTH + tx];
        for (int c = 0; c < COARSE_FACTOR; ++c) {
            int col = colStart + c * TILE_WIDTH;
            Nds[ty][tx] = N[(ph * TILE_WIDTH + ty) * width + col];
            __syncthreads();
            for (int k = 0; k < TILE_WIDTH; ++k) Pvalue[c] += Mds[ty][k] * Nds[k][tx];
            __syncthreads();
        }
    }
    for (int c = 0; c < COARSE_FACTOR; ++c) {
        int col = colStart + c * TILE_WIDTH;
        P[row * width + col] = Pvalue[c];
    }
}

// ==== stencil =================================================================================

// The course's 1D stencil, as the course writes it (int indices, B = 256, the radius a
// compile-time -DRADIUS, default 32). stencil_shared is the course's listing;
// stencil_naive is the course's window loop (the bounds-checked `int j = i + d` sum the
// course shows for R = 2) put in a kernel with the same launch. Reference only: pmppbench's
// own kernels are in kernels_cu/stencil.cu; studies/baselines.py times the two side by side.

#ifndef RADIUS
#define RADIUS 32
#endif

constexpr int B = 256, R = RADIUS;

extern "C" __global__ void stencil_naive(const float* x, float* y, int n) {
    int i = int(blockIdx.x) * B + int(threadIdx.x);
    if (i < n) {
        float sum = 0;
        for (int d = -R; d <= R; ++d) {
            int j = i + d;
            if (j >= 0 && j < n) sum += x[j];
        }
        y[i] = sum / float(2 * R + 1);
    }
}

extern "C" __global__ void stencil_shared(const float* x, float* y, int n) {
    __shared__ float tile[B + 2 * R];
    int t = int(threadIdx.x), base = int(blockIdx.x) * B;
    for (int j = t; j < B + 2 * R; j += B) {
        int g = base + j - R;
        tile[j] = (g >= 0 && g < n) ? x[g] : 0.0f;
    }
    __syncthreads();
    int i = base + t;
    if (i < n) {
        float sum = 0;
        for (int d = 0; d < 2 * R + 1; ++d) sum += tile[t + d];
        y[i] = sum / float(2 * R + 1);
    }
}

// ==== reduce ==================================================================================

// The book's sum reductions (PMPP 10.2-10.7), as the course writes them: float, `unsigned int`
// indices, 1024 threads per block, each block owning 2 * 1024 inputs (coarsened: 2 * 8 * 1024).
// Where the book assumes N is a multiple of the segment, a load past N reads 0 here, and the
// book's in-place first step reads the input and writes the scratch array (so the input
// survives repeated calls); the kernels take the arguments of pmppbench's rungs so
// studies/baselines.py can run each in the rung's call. Reference only: pmppbench's own
// kernels are in kernels_cu/reduce.cu.

#define BLOCK_DIM 1024
#undef COARSE_FACTOR
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

// ==== histogram ===============================================================================

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

// ==== scan ====================================================================================

// The book's section scans (PMPP 11.2-11.4), as the course writes them: float, inclusive, `int`
// sizes and `unsigned int` indices; Kogge-Stone with 1024 threads over a 1024-element section,
// Brent-Kung with 1024 threads over 2048, the three-phase scan with 512 threads of 8 elements.
// Each writes its section's scan and the section's total S[blockIdx.x], taking the arguments of
// pmppbench's rungs so that studies/baselines.py runs each in the rung's own three-kernel call
// (its scan of the sums and its add-back). Reference only: pmppbench's own kernels are in
// kernels_cu/scan.cu.

#define SECTION_SIZE 1024
#define BK_SECTION_SIZE 2048
#undef COARSE_FACTOR
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
