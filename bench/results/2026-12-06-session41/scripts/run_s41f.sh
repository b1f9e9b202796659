#!/usr/bin/env bash
# Session 41, call f: scripts/gpu-check on the final build after the review fixes (e2264ad: the GPU shutdown idle
# wait, the late answers' wait after the reactor stops, the GPU facts check; no device code changed), then the
# shutdown tests that go through the reactor 5 more times each on the GPU, timed: run_s41d.sh, on this call's pack.
# Pack: tar -cJf build/carry/s41f.tar.xz build/cuda/tests/weft_tests build/cuda/tests/weft_device_smoke \
#   build/cuda/examples/saxpy build/cuda/examples/file_pipeline
exec bash "$(dirname "$0")/run_s41d.sh" s41f
