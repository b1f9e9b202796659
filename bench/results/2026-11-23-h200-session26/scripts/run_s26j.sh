#!/bin/bash
# session 26, call 10: where a shared inline step goes now (stamps: clock64 on the owner lane and the servers' lane 0,
# all in one SM, summed per phase), chained_bulk and dependent_decision, two processes, with lean between them
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/stamps
cd build/cuda
for v in stamps lean stamps; do
  n=$v-$(ls $OUT/r/stamps | grep -c "^$v.*json$")
  timeout 100 bench/variants/$v/weft_bench_device --benchmark_filter='chained|decision' --benchmark_out=$OUT/r/stamps/$n.json --benchmark_out_format=json > $OUT/r/stamps/$n.txt 2>&1
  echo "$n rc=$?"
done
python3 - <<'PY'
import json,glob,os
for f in sorted(glob.glob(os.environ['OUT']+'/r/stamps/*.json')):
  for b in json.load(open(f))['benchmarks']:
    ks=sorted(k for k in b if k.startswith('s') and k[1:2] in '0123456789_' or k=='us_per_step')
    print(os.path.basename(f), b['name'].split('/iter')[0], ' '.join(f"{k}={b[k]:.4g}" for k in ks))
PY
cd $OUT && tar czf r.tgz r && rm -rf r
