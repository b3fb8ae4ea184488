// The protocol's own kernel (pmppbench/protocol.py, EventTimer).
//
// hold: one thread keeps its stream busy for `ns` nanoseconds of the GPU's global timer.
// Launched just before a batch's start event, it makes the GPU reach that event only after
// the host has queued the batch's first launches. Without it, a batch that starts on an idle
// GPU also times the host's submission of its first call (a CuPy launch costs ~5-20 us),
// while the batch right after the warmup does not (the warmup still fills the queue): the
// first batch came out 1-3% faster than the rest for 0.1 ms kernels. nvbench's blocking
// kernel and do_bench's cache flush put the GPU in the same busy state before their start
// events. The hold itself ends before the start event, so it is never timed.
extern "C" __global__ void hold(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
#if __CUDA_ARCH__ >= 700
        __nanosleep(1000);  // yield the issue slots; the timer has ~1 us resolution anyway
#endif
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}
