// pmppbench transpose --kernel transpose_padded33.cu:my_padded33 --like padded33
// From `pmppbench template transpose padded33`: the naive body (writes strided by m) replaced by a
// TILE_DIM x TILE_DIM tile in shared memory, read coalesced from A and written coalesced to B. Its
// rows are TILE_STRIDE = 33 floats: the column read-out tile[threadIdx.x][threadIdx.y] of a warp
// falls in 32 different banks (with 32 it would be a 32-way conflict).

extern "C" __global__ void my_padded33(const float* a, float* b, int m, int n) {
    __shared__ float tile[TILE_DIM][TILE_STRIDE];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;  // A's column
    int y = blockIdx.y * TILE_DIM + threadIdx.y;  // A's row
    if (x < n && y < m) tile[threadIdx.y][threadIdx.x] = a[y * n + x];
    __syncthreads();
    int bx = blockIdx.y * TILE_DIM + threadIdx.x;  // B's column = A's row
    int by = blockIdx.x * TILE_DIM + threadIdx.y;  // B's row = A's column
    if (bx < m && by < n) b[by * m + bx] = tile[threadIdx.x][threadIdx.y];
}
