export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
d=results/h200
SKIP_SANITIZER=1 bash scripts/reference_run.sh $d > $OUT/ref.log 2>&1
tail -n 4 $d/all.txt
python3 scripts/spread_study.py 6 > $d/stream-spread.txt 2>&1; cat $d/stream-spread.txt
rm -f /tmp/cmds/commands.txt
OUT=/tmp/cmds SKIP_TESTS=1 bash scripts/gpu_check.sh "transpose --check-only" "transpose 4096 4096 20" "transpose 8192 8192 20" "stream --check-only" "stream 1048576 64" "stream 4194304 64" > /dev/null 2>&1
cp /tmp/cmds/commands.txt $d/commands/transpose-stream.txt; grep -n "^exit\|largest" $d/commands/transpose-stream.txt
python3 -m pytest -q -rA -m gpu tests > $d/gpu-tests.txt 2>&1; grep -E "pmppbench .* ms|passed|failed" $d/gpu-tests.txt | tail -n 12
rm -f $d/gpu-tests-stream.txt
tar czf $OUT/h200.tgz $d
