#!/usr/bin/env bash
# Session 41, call d: scripts/gpu-check on the final build (this session's commits: the GPU shutdown's idle wait,
# the late answers' wait after the reactor stops, the GPU facts check; no device code changed), then the shutdown
# tests that go through the reactor 5 more times each on the GPU, timed.
# Pack: tar -cJf build/carry/s41d.tar.xz build/cuda/tests/weft_tests build/cuda/tests/weft_device_smoke \
#   build/cuda/examples/saxpy build/cuda/examples/file_pipeline
# (Call f ran the same on its own pack: run_s41f.sh passes its name, s41f, as $1.)
set -u
n=${1:-s41d}
o=$OUT/$n
mkdir -p "$o"
tar -xJf build/carry/$n.tar.xz
t0=$(date +%s)
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$? wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
for r in 1 2 3 4 5; do
  for t in "runtime shutdown with requests in flight completes every waiting task with shutting_down" \
           "runtime shutdown answers requests still waiting for ring space with shutting_down"; do
    s=$(date +%s%N)
    WEFT_BACKEND=cuda timeout 60 build/cuda/tests/weft_tests "$t" >>"$o/shutdown-tests.txt" 2>&1
    echo "rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms: $t" >>"$o/shutdown-runs.txt"
  done
  WEFT_BACKEND=cuda timeout 120 build/cuda/tests/weft_tests "[net]" -d yes 2>&1 | grep -i "shut" >>"$o/net-shutdown.txt"
  echo "net rc=${PIPESTATUS[0]}" >>"$o/shutdown-runs.txt"
done
tar -czf "$OUT/$n.tgz" -C "$OUT" "$n"
