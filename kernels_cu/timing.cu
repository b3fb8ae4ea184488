// The protocol's own kernel (pmppbench/measure/protocol.py, EventTimer).
//
// hold: one thread keeps its stream busy for `ns` nanoseconds of the GPU's global timer.
// Launched just before a batch's start event, it holds the GPU while the host queues the
// whole batch, so the GPU reaches the start event with every call already queued and the
// events time the calls back to back. Without it, a batch that starts on an idle GPU also
// times the host's launches, while the batch right after the warmup does not (the warmup
// still fills the queue), so first batches would differ from the rest (README, "The
// protocol", has the measurement). nvbench's blocking kernel and
// do_bench's cache flush put the GPU in the same busy state before their start events.
// The timer lengthens the hold when the host needs longer; the hold is never timed.
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
