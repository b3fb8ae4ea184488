"""What a learner's kernel --like each vecadd variant is given and must do (Variant.starter,
docs/your-own-kernel.md): scalar's int index (the course's; past 2^31 - 257 elements the harness
passes a long long), the others' size_t count, and a simple correct body for each."""

from __future__ import annotations

from pmppbench.workloads.base import Starter

LEAVES = "c[i] = a[i] + b[i] for every i < n (FP32, exact)"
SCALAR = Starter(
    "const float* a, const float* b, float* c, int n", "ceil(n / 256) blocks: one thread per element", LEAVES,
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;  // one element per thread\n"
    "    if (i < n) c[i] = a[i] + b[i];  // the last block's threads past n do nothing\n")
STRIDED_BODY = ("    // every element, whatever the grid: a grid-stride loop (PMPP 5.1's answer to n > threads)\n"
                "    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
                "    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; "
                "i += stride)\n"
                "        c[i] = a[i] + b[i];\n")
COUNTED = "const float* a, const float* b, float* c, unsigned long long n"
FLOAT4 = Starter(COUNTED, "ceil(max(n / 4, n % 4) / 256) blocks: one thread per float4 of a, b and c, the first "
                 "n % 4 threads also take one element of the tail", LEAVES, STRIDED_BODY)
STRIDED = Starter(COUNTED, "min(ceil(n / 256), 8 per SM) blocks: a fixed grid striding over the array",
                  LEAVES, STRIDED_BODY)
