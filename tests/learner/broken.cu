// Does not compile: line 4 uses an undeclared name.
__global__ void my_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i] + undeclared_offset;
}
