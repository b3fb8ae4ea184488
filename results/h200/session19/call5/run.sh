#!/bin/bash
# session 19, call 5: studies/cub_builds.py after the review (the builds taken from the default
# config's plan, each step's Workload.prebuild, as worker.Ahead's build thread runs them; call 1's
# version listed six keys by hand, with other histogram levels than `all` uses), on 1 and 6 threads
# from empty caches. Logs tarred after every step.
set -u
source studies/steps.sh
device_begin
step builds-1 120 env PMPPBENCH_CACHE_DIR=/tmp/cb1 CCCL_PCH_CACHE_DIR=/tmp/pch1 python3 studies/cub_builds.py --threads 1; pack
step builds-6 120 env PMPPBENCH_CACHE_DIR=/tmp/cb6 CCCL_PCH_CACHE_DIR=/tmp/pch6 python3 studies/cub_builds.py --threads 6; pack
device_end
