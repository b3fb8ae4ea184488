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
