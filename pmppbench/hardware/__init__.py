"""Facts about the machine: the one door to CuPy and NVRTC, device facts and archs, the GPU inventory,
compilation and its cache, occupancy, the Hopper tensor-memory-access maps."""
