# Session 19 study: where a cold `all` spends its wall time inside the worker (PMPP_TRACE=file):
# each step, each step's prebuild (on the build thread), each CUB object's load or build, and
# each wait for a step's host work done ahead. One line per event: time, pid, thread, what, seconds.
import builtins
import os
import sys
import threading
import time

path = os.environ.get("PMPP_TRACE")
if path:
    _orig_import = builtins.__import__
    done = [False]
    T0 = time.time()

    def log(msg):
        with open(path, "a") as f:
            f.write(f"{time.time() - T0:8.3f} {os.getpid()} {threading.current_thread().name} {msg}\n")

    def timed(module, name, label):
        fn = getattr(module, name)

        def wrapper(*a, **k):
            t = time.perf_counter()
            log(f"begin {name} {label(*a, **k)}")
            try:
                return fn(*a, **k)
            finally:
                log(f"end {name} {label(*a, **k)} {time.perf_counter() - t:.3f}")

        setattr(module, name, wrapper)

    def patch():
        from pmppbench import runner, worker
        from pmppbench.workloads import cub

        timed(worker, "run_step", lambda step, **k: step.label)
        timed(worker, "_prebuild", lambda step: step.label)
        timed(runner, "host_work", lambda w, shape, *a: f"{w.name} {w.label(shape)}")
        timed(cub, "built", lambda compute, cp, key, make: repr(key))
        take = worker.Ahead.take

        def take2(self, step):
            t = time.perf_counter()
            r = take(self, step)
            log(f"take {step.label} wait {time.perf_counter() - t:.3f} ahead={r is not None}")
            return r

        worker.Ahead.take = take2

    def imp(name, *a, **k):
        m = _orig_import(name, *a, **k)
        mods = sys.modules
        if (not done[0] and hasattr(mods.get("pmppbench.worker"), "_prebuild")
                and hasattr(mods.get("pmppbench.runner"), "host_work")
                and hasattr(mods.get("pmppbench.workloads.cub"), "built")):
            done[0] = True
            try:
                patch()
            except Exception as e:  # noqa: BLE001
                log(f"patch failed {e!r}")
        return m

    builtins.__import__ = imp
