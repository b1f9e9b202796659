#!/usr/bin/env python3
# Prints, per benchmark, each variant's key counter over the rounds of an A/B directory (ab-<variant>-<round>.json).
# Usage: ab_summary.py DIR
import glob, json, os, re, sys, collections
d = sys.argv[1]
keys = ['tasks_per_s', 'resumes_per_s', 'p50_ns', 'us_per_step', 'lanes_per_batch', 'ratio']
vals = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(d, 'ab-*-*.json'))):
    v = re.match(r'ab-(.*)-(\d+)\.json', os.path.basename(f)).group(1)
    try:
        js = json.load(open(f))
    except Exception as e:
        print('unreadable', f, e); continue
    for b in js.get('benchmarks', []):
        for k, x in b.items():
            if isinstance(x, (int, float)) and (k in keys or k.endswith('_per_s') or 'p50' in k or k in ('real_time',)):
                vals[(b['name'], k)][v].append(x)
for (name, k), per in sorted(vals.items()):
    base = per.get('base')
    line = f"{name[:55]:55s} {k:16s}"
    for v, xs in sorted(per.items()):
        line += f" {v}=" + ",".join(f"{x:.4g}" for x in xs)
    if base and sum(base):
        for v, xs in per.items():
            if v != 'base': line += f"  {v}/base={sum(xs)/len(xs)/(sum(base)/len(base)):.3f}"
    print(line)
