#!/usr/bin/env bash
# The stream overlap evidence behind docs/stream_overlap.md, on a GPU machine:
#   bash studies/stream_overlap_run.sh results/h200
# Times 3 and 8 chunks of 2^22 floats on 1-4 (and 8) streams with the bound and the
# prediction, traces the pipelines (studies/stream_timeline.py), checks the stream
# workload on its check shapes and runs its GPU tests.
set -uo pipefail
dest=${1:?usage: stream_overlap_run.sh DEST_DIR}
mkdir -p "$dest"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current,clocks.sm \
  --format=csv > "$dest/stream-overlap.txt" 2>&1
for chunks in 3 8; do
  streams=1,2,3,4; [ "$chunks" = 8 ] && streams=1,2,3,4,8
  echo "== pmppbench stream 4194304 64 --chunks $chunks --streams $streams" >> "$dest/stream-overlap.txt"
  $py -m pmppbench stream 4194304 64 --chunks "$chunks" --streams "$streams" \
    --out "$dest/stream-overlap-$chunks.csv" --force >> "$dest/stream-overlap.txt" 2>&1
  echo "exit $?" >> "$dest/stream-overlap.txt"
done
$py studies/stream_timeline.py 4194304 64 8 1,2,3,4 "$dest/stream-timeline-8.json" > "$dest/stream-timeline.txt" 2>&1
echo "exit $?" >> "$dest/stream-timeline.txt"
$py studies/stream_timeline.py 4194304 64 3 1,3 "$dest/stream-timeline-3.json" >> "$dest/stream-timeline.txt" 2>&1
echo "exit $?" >> "$dest/stream-timeline.txt"
$py -m pmppbench stream --check-only > "$dest/stream-check.txt" 2>&1
echo "exit $?" >> "$dest/stream-check.txt"
$py -m pytest -q -rA -m gpu tests/test_stream.py > "$dest/stream-gpu-tests.txt" 2>&1
echo "exit $?" >> "$dest/stream-gpu-tests.txt"
