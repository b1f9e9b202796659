#!/bin/bash
# session 26, call 3: the settle step's parts (prof, finer), and the per-warp ring's capacity
# (WEFT_BENCH_RING: config::local_queue_capacity, default 256) for spawn_many and yield_many
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/prof $OUT/r/ring
cd build/cuda
for q in 256 1024 4096; do
  WEFT_BENCH_RING=$q timeout 100 bench/variants/prof/weft_bench_device --benchmark_filter='spawn_many|yield_many/1048576' --benchmark_out=$OUT/r/prof/prof-q$q.json --benchmark_out_format=json > $OUT/r/prof/prof-q$q.txt 2>&1
  echo "prof q$q rc=$?"
done
for r in 1 2; do for q in 256 1024 4096 8192; do
  WEFT_BENCH_RING=$q timeout 100 bench/variants/ring/weft_bench_device --benchmark_filter='spawn_many|yield_many/1048576|one_task_trip|chained|decision' --benchmark_out=$OUT/r/ring/ring-q$q-$r.json --benchmark_out_format=json > $OUT/r/ring/ring-q$q-$r.txt 2>&1
  echo "ring q$q-$r rc=$?"
done; done
python3 - <<'PY'
import json,glob,os
for f in sorted(glob.glob(os.environ['OUT']+'/r/*/*.json')):
  d=json.load(open(f))
  for b in d['benchmarks']:
    keys=[k for k in b if k.startswith(('p0','p1','n1','n2','q1','q2','cycles','tasks_per','resumes_per','lanes_per','stolen','injected','nap','parks','batches','us_per_step'))]
    print(os.path.basename(f), b['name'].split('/min')[0], ' '.join(f"{k}={b[k]:.4g}" for k in sorted(keys)))
PY
cd $OUT && tar czf r.tgz r && rm -rf r
