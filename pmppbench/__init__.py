"""pmppbench: checked, carefully timed GPU kernels from PMPP chapters 5-6."""

__version__ = "0.1.0"
