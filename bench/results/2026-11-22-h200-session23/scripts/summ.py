import json,glob,os,sys
for f in sorted(glob.glob(sys.argv[1]+'/*.json')):
    d=json.load(open(f)); r=[]
    for b in d['benchmarks']:
        n=b['name'].split('/iterations')[0].replace('/manual_time','').replace('BM_','').replace('/min_time:2.000','')
        for k in ('one_way_p99_ns','batches_per_hop','us_per_step','resumes_per_s','tasks_per_s','one_way_p50_ns','host_loop_over_weft','shared_fraction'):
            if k in b: r.append(f"{n}.{k}={b[k]:.4g}")
        if b.get('error_occurred'): r.append(n+" ERROR "+b.get('error_message',''))
    print(os.path.basename(f), ' '.join(r))
