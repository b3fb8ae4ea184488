// pmppbench vecadd --kernel vecadd_float4.cu:my_float4 --like float4
// From `pmppbench template vecadd float4`: the grid-stride body replaced by one float4 of a, b and c
// per thread (one 16-byte load or store instead of four), the first n % 4 threads taking the tail.

extern "C" __global__ void my_float4(const float* a, const float* b, float* c, unsigned long long n) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long n4 = n / 4;  // whole float4s; cudaMalloc'd arrays are 16-byte aligned
    if (i < n4) {
        float4 x = reinterpret_cast<const float4*>(a)[i];
        float4 y = reinterpret_cast<const float4*>(b)[i];
        reinterpret_cast<float4*>(c)[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    if (i < n % 4) c[4 * n4 + i] = a[4 * n4 + i] + b[4 * n4 + i];  // the tail: at most 3 threads
}
