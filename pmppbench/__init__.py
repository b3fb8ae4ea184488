"""pmppbench: checked, carefully timed GPU kernels from PMPP chapters 5-6 and 9-11, and the tensor cores."""

__version__ = "0.1.0"
