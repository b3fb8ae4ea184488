#!/bin/bash
# GEMM at shapes that are not multiples of the tile, in one device call (docs/gemm-shapes.md):
# `best` beside cuBLAS of the same precision at the 22 shapes x 4 precisions of
# configs/gemm_shapes.toml, then the GEMM GPU tests that hold best's choices and every rung to
# the edge shapes (1, 7, 129, 4095, 4097 in each dimension), then the table docs/gemm-shapes.md
# prints, each shape's best against its precision's targets.
#
#     bash scripts/gemm_shapes_run.sh OUT    (from the repository root, on the GPU)
#
# OUT gets gemm_shapes.csv (+ .meta.json), gemm_shapes.txt, gpu-tests.txt and gemm_shapes.md;
# commit the CSV and its .meta.json as results/<board>/gemm_shapes.csv.
set -u
out=${1:?usage: gemm_shapes_run.sh OUT}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv >"$out/board.txt"
python3 -m pmppbench all --config gemm_shapes --out "$out/gemm_shapes.csv" >"$out/gemm_shapes.txt" 2>&1
echo "sweep: exit $?" >>"$out/board.txt"
python3 -m pytest -q -rfE -p no:cacheprovider -m gpu tests/test_gemm.py tests/test_gemm_tc.py \
    -k "best or odd or edge" >"$out/gpu-tests.txt" 2>&1
echo "gpu tests: exit $?" >>"$out/board.txt"
# The table docs/gemm-shapes.md prints (scripts/results_tables.py, `gemm-shapes`): a miss in bold.
python3 -c 'import sys; sys.path.insert(0, "scripts"); from pathlib import Path; import results_tables as r
print("\n".join(r.gemm_shapes(Path(sys.argv[1]))))' "$out/gemm_shapes.csv" >"$out/gemm_shapes.md"
