#!/bin/bash
# session 26, call 2: where spawn_many's warp time goes (prof: clock64 sums in the worker loop, an experiment),
# and spawn_many's scaling with the number of worker warps (lean, WEFT_BENCH_WORKERS)
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/prof $OUT/r/scale
cd build/cuda
for w in 0 528; do
  WEFT_BENCH_WORKERS=$w timeout 100 bench/variants/prof/weft_bench_device --benchmark_filter='spawn_many|yield_many/1048576' --benchmark_out=$OUT/r/prof/prof-w$w.json --benchmark_out_format=json > $OUT/r/prof/prof-w$w.txt 2>&1
  echo "prof w$w rc=$?"
done
for w in 132 264 528 1056 0; do
  WEFT_BENCH_WORKERS=$w timeout 100 bench/variants/lean/weft_bench_device --benchmark_filter='spawn_many|yield_many/1048576/64' --benchmark_out=$OUT/r/scale/lean-w$w.json --benchmark_out_format=json > $OUT/r/scale/lean-w$w.txt 2>&1
  echo "lean w$w rc=$?"
done
python3 - <<'PY'
import json,glob,os
for f in sorted(glob.glob(os.environ['OUT']+'/r/*/*.json')):
  d=json.load(open(f))
  for b in d['benchmarks']:
    keys=[k for k in b if k.startswith(('p0','p1','n1','cycles','tasks_per','resumes_per','lanes_per','stolen','injected','nap','parks','batches'))]
    print(os.path.basename(f), b['name'].split('/min')[0], ' '.join(f"{k}={b[k]:.4g}" for k in sorted(keys)))
PY
cd $OUT && tar czf r.tgz r && rm -rf r
