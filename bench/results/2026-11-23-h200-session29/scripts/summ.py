#!/usr/bin/env python3
# summ.py DIR: min-max of the key counters per variant over its JSON files
import json, sys, glob, os, re, collections
d = sys.argv[1]
keys = {'spawn_many': 'tasks_per_s', 'yield_many/1048576/64': 'resumes_per_s', 'yield_many/1048576/0': 'resumes_per_s',
        'chained': 'us_per_step', 'decision': 'us_per_step', 'one_task_trip/0': 'us_per_step', 'one_task_trip/1': 'us_per_step',
        'ping_pong_pinned/1000': 'one_way_p50_ns', 'ping_pong_pinned/10000': 'one_way_p50_ns'}
res = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(d, '*.json'))):
    v = re.sub(r'-\d+\.json$', '', os.path.basename(f))
    try: js = json.load(open(f))
    except Exception as e: print('bad', f, e); continue
    for b in js['benchmarks']:
        for k, c in keys.items():
            if k in b['name'] and c in b:
                res[k][v].append(b[c])
        if 'decision' in b['name'] and 'host_loop_over_weft' in b: res['decision x'][v].append(b['host_loop_over_weft'])
for k in res:
    print(k)
    for v, xs in sorted(res[k].items()):
        print(f'   {v:10s} {min(xs):.4g} - {max(xs):.4g}  ({len(xs)})  ' + ' '.join(f'{x:.4g}' for x in xs))
