// pmppbench stencil3d --kernel stencil3d_shared.cu:my_shared --like shared
// From `pmppbench template stencil3d shared`: PMPP 8.3's input tiling. Each thread loads one cell of
// the block's IN_TILE_DIM^3 input tile into shared memory; the inner (IN_TILE_DIM - 2)^3 threads then
// compute their cell from the tile, the seven terms in the problem's order.

constexpr float c0 = 0.40f, c1 = 0.11f, c2 = 0.09f, c3 = 0.12f, c4 = 0.08f, c5 = 0.13f, c6 = 0.07f;  // the problem's
#define OUT_TILE_DIM (IN_TILE_DIM - 2)

extern "C" __global__ void my_shared(const float* in, float* out, int N) {
    __shared__ float s[IN_TILE_DIM][IN_TILE_DIM][IN_TILE_DIM];
    long long i = (long long)blockIdx.z * OUT_TILE_DIM + threadIdx.z - 1;  // z
    long long j = (long long)blockIdx.y * OUT_TILE_DIM + threadIdx.y - 1;  // y
    long long k = (long long)blockIdx.x * OUT_TILE_DIM + threadIdx.x - 1;  // x
    bool inside = i >= 0 && i < N && j >= 0 && j < N && k >= 0 && k < N;
    if (inside) s[threadIdx.z][threadIdx.y][threadIdx.x] = in[(i * N + j) * N + k];
    __syncthreads();
    unsigned z = threadIdx.z, y = threadIdx.y, x = threadIdx.x;
    if (!inside || z < 1 || z > OUT_TILE_DIM || y < 1 || y > OUT_TILE_DIM || x < 1 || x > OUT_TILE_DIM) return;
    long long c = (i * N + j) * N + k;
    if (i == 0 || j == 0 || k == 0 || i == N - 1 || j == N - 1 || k == N - 1) out[c] = s[z][y][x];
    else out[c] = c0 * s[z][y][x] + c1 * s[z][y][x - 1] + c2 * s[z][y][x + 1] + c3 * s[z][y - 1][x]
                  + c4 * s[z][y + 1][x] + c5 * s[z - 1][y][x] + c6 * s[z + 1][y][x];
}
