"""The CUDA sources, installed as package data (pmppbench.kernels_cu); compile.py reads them."""
