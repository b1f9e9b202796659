#!/usr/bin/env bash
# Session 43, call a (diagnostic): which SASS instructions of the worker kernel run during spawn_many, and where
# warps wait for instructions. Session 42's prof_spawn harness (patches/ of session 42) built at cf38b23 with
# -gline-tables-only (ptxas -lineinfo; same function sizes within 1 %), at full occupancy (workers 0), through
# Nsight Compute's SourceCounters (executed instructions and stall samples per PC).
# Pack: tar -cJf build/carry/s43a.tar.xz -C /tmp/wt-prof build/cuda/bench/prof_spawn
set -u
o=$OUT/s43a
mkdir -p "$o"
tar -xJf build/carry/s43a.tar.xz
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
"$NCU" --version >"$o/ncu-version.txt" 2>&1
"$NCU" --help 2>&1 | grep -i -A3 "print-source\|page" >"$o/ncu-help.txt"
WEFT_PROF_DEFER=1 timeout 60 build/cuda/bench/prof_spawn 10000000 -1 0 4 >"$o/plain.txt" 2>&1
WEFT_PROF_DEFER=1 timeout 300 "$NCU" --clock-control none --replay-mode application -k regex:weft_worker -c 1 \
  --section SourceCounters --section WarpStateStats --import-source no \
  -o "$o/src" build/cuda/bench/prof_spawn 10000000 -1 0 4 >"$o/ncu.log" 2>&1
echo "ncu rc=$?" >>"$o/ncu.log"
"$NCU" --import "$o/src.ncu-rep" --page source --csv --print-source sass >"$o/source-sass.csv" 2>"$o/source-sass.err"
"$NCU" --import "$o/src.ncu-rep" --page details >"$o/details.txt" 2>&1
PY=$(ls -d /usr/local/cuda/nsight-compute*/extras/python /opt/nvidia/nsight-compute/*/extras/python 2>/dev/null | head -1)
echo "python dir: $PY" >"$o/pydump.err"
PYTHONPATH=$PY python3 - "$o/src.ncu-rep" >"$o/pcs.tsv" 2>>"$o/pydump.err" <<'PY'
import sys, ncu_report
ctx = ncu_report.load_report(sys.argv[1])
a = ctx.range_by_idx(0).action_by_idx(0)
pcs = set()
for name in a.metric_names():
    m = a.metric_by_name(name)
    if not m.has_correlation_ids():
        continue
    ids = m.correlation_ids()
    for i in range(m.num_instances()):
        pc = ids.as_uint64(i)
        pcs.add(pc)
        print(f"{name}\t{pc}\t{m.as_double(i)}")
for pc in sorted(pcs):
    try:
        print(f"sass\t{pc}\t{a.sass_by_pc(pc)}")
    except Exception as e:
        print(f"sass\t{pc}\t?{e}")
PY
xz -9 "$o"/*.ncu-rep "$o"/*.csv "$o"/*.tsv 2>/dev/null
tar -czf "$OUT/s43a.tgz" -C "$OUT" s43a
