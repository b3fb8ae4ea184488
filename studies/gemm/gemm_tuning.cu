// The GEMM tile sweep's kernels (studies/gemm/tuning.py): the shipped register- and warp-tiled
// templates, instantiated by the study at the tiles it names. Nothing of its own: the sweep
// varies only the template arguments of the rungs it was tuned from.
#include "gemm_warptile.cuh"
