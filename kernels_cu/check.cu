// The check's own kernel (pmppbench/measure/check.py): one pass over an output still on the GPU (FP32,
// or int32/uint32 under the exact rule) and its CPU reference, uploaded once per shape. It is not the kernel under test and shares
// nothing with it; it computes, in float64, exactly what the host path computes with NumPy:
//
//   finite = isfinite(out)               err = finite ? |out - ref| : inf
//   mag    = |ref|                       rel = mag > 0 ? err / mag : (err > 0 ? inf : 0)
//   bad    = RULE 0 (exact):       out != float(ref), or not finite, or the signs differ
//            RULE 1 (elementwise): !(err <= atol + rtol * mag)
//            RULE 2 (normwise):    not finite; and sums (out - ref)^2 over finite, ref^2
//
// and reduces them per block: the largest err and its first index, the largest rel, how
// many are bad and the first bad index, whether all are finite, the two sums. The host
// combines the blocks (a few thousand doubles) and words the verdict as the host path does.
// A NaN reference would be ignored here where NumPy's argmax picks it; references are
// computed by pmppbench and are never NaN. An integer output is always finite and has no -0,
// so its exact rule is out != ref converted to the output's type (wrapping, as NumPy's astype),
// while err and rel come from the unconverted values, as on the host. Integer outputs have
// their own kernel, rather than CuPy's array operations, because each of those is a kernel
// CuPy compiles at its first use on a machine: about 15 s of a first `all`, in its checks.

#define CHECK_THREADS 256
#define CHECK_INF __longlong_as_double(0x7ff0000000000000ULL)
#define STATS 8  // per block: max_err, its index, max_rel, bad count, first bad, all finite, diff_sq, ref_sq

__device__ __forceinline__ bool finite_of(float x) { return isfinite(x); }
template <typename T> __device__ __forceinline__ bool finite_of(T) { return true; }

// RULE 0's verdict on one element: an FP32 output against its reference rounded to nearest (as
// NumPy's astype(float32)), bit for bit; an integer one against its reference converted to the
// output's type.
template <typename R> __device__ __forceinline__ bool exact_bad(float o, R r) {
    const float rs = (float)(double)r;
    return (o != rs) || !isfinite(o) || (signbit(o) != signbit(rs));
}
template <typename R> __device__ __forceinline__ bool exact_bad(int o, R r) { return o != (int)r; }
template <typename R> __device__ __forceinline__ bool exact_bad(unsigned o, R r) { return o != (unsigned)r; }

template <typename O, typename R, int RULE>
__global__ void __launch_bounds__(CHECK_THREADS)
compare(const O* __restrict__ out, const R* __restrict__ ref, unsigned long long n, double rtol,
        double atol, double* __restrict__ partial) {
    double max_err = -1.0, max_rel = 0.0, diff_sq = 0.0, ref_sq = 0.0;
    unsigned long long worst = 0, first_bad = n, bad_count = 0;
    int all_finite = 1;
    const unsigned long long stride = (unsigned long long)gridDim.x * CHECK_THREADS;
    for (unsigned long long i = (unsigned long long)blockIdx.x * CHECK_THREADS + threadIdx.x; i < n; i += stride) {
        const O o = out[i];
        const R r = ref[i];
        const double o64 = (double)o, r64 = (double)r;
        const bool finite = finite_of(o);
        const double err = finite ? fabs(o64 - r64) : CHECK_INF;
        const double mag = fabs(r64);
        const double rel = mag > 0.0 ? err / mag : (err > 0.0 ? CHECK_INF : 0.0);
        bool bad;
        if (RULE == 0) {
            bad = exact_bad(o, r);
        } else if (RULE == 1) {
            bad = !(err <= atol + rtol * mag);
        } else {
            bad = !finite;
            if (finite) diff_sq += (o64 - r64) * (o64 - r64);
            ref_sq += r64 * r64;
        }
        if (err > max_err) { max_err = err; worst = i; }  // indices rise: the first of equals stays
        max_rel = fmax(max_rel, rel);
        if (bad) { bad_count++; if (i < first_bad) first_bad = i; }
        all_finite &= finite;
    }

    __shared__ double s_err[CHECK_THREADS], s_rel[CHECK_THREADS], s_diff[CHECK_THREADS], s_ref[CHECK_THREADS];
    __shared__ unsigned long long s_worst[CHECK_THREADS], s_first[CHECK_THREADS], s_count[CHECK_THREADS];
    __shared__ int s_finite[CHECK_THREADS];
    const int t = threadIdx.x;
    s_err[t] = max_err; s_worst[t] = worst; s_rel[t] = max_rel; s_count[t] = bad_count;
    s_first[t] = first_bad; s_finite[t] = all_finite; s_diff[t] = diff_sq; s_ref[t] = ref_sq;
    __syncthreads();
    for (int half = CHECK_THREADS / 2; half > 0; half >>= 1) {
        if (t < half) {
            const int u = t + half;
            if (s_err[u] > s_err[t] || (s_err[u] == s_err[t] && s_worst[u] < s_worst[t])) {
                s_err[t] = s_err[u]; s_worst[t] = s_worst[u];
            }
            s_rel[t] = fmax(s_rel[t], s_rel[u]);
            s_count[t] += s_count[u];
            if (s_first[u] < s_first[t]) s_first[t] = s_first[u];
            s_finite[t] &= s_finite[u];
            s_diff[t] += s_diff[u];
            s_ref[t] += s_ref[u];
        }
        __syncthreads();
    }
    if (t == 0) {
        double* p = partial + (unsigned long long)blockIdx.x * STATS;
        p[0] = s_err[0]; p[1] = (double)s_worst[0]; p[2] = s_rel[0]; p[3] = (double)s_count[0];
        p[4] = (double)s_first[0]; p[5] = s_finite[0]; p[6] = s_diff[0]; p[7] = s_ref[0];
    }
}
