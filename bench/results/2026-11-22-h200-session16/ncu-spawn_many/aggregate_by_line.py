# usage: python3 aggregate_by_line.py spawn_many-source-cuda-sass.csv.gz [LINES] [TOTAL_SAMPLES]
import csv,collections,sys
import gzip
f=gzip.open(sys.argv[1],'rt') if sys.argv[1].endswith('.gz') else open(sys.argv[1]); r=csv.reader(f)
cur=None; hdr=None; agg=collections.Counter(); aggr=collections.defaultdict(collections.Counter)
def num(x):
    try: return int(x)
    except: return 0
for row in r:
    if not row: continue
    if row[0]=='File Path': cur=row[1]; continue
    if row[0]=='Function Name': continue
    if row[0]=='Line No': hdr=row; ix={h:i for i,h in enumerate(hdr)}; continue
    if row[0]!='':
        s=num(row[4])
        key=(cur.replace('/work/wt-prof/',''),num(row[0]))
        agg[key]+=s
        for h in ('stall_long_sb','stall_no_inst','stall_membar','stall_wait','stall_sleep','stall_branch_resolving'):
            aggr[key][h]+=num(row[ix[h]])
        aggr[key]['exec']+=num(row[ix['Instructions Executed']])
        aggr[key]['thr']+=num(row[ix['Thread Instructions Executed']])
tot=int(sys.argv[3]) if len(sys.argv)>3 else sum(agg.values())
print('samples with a source line',sum(agg.values()),'; percentages below are of',tot)
byfile=collections.Counter()
for (fp,l),v in agg.items(): byfile[fp]+=v
for fp,v in byfile.most_common(25): print(f'{100*v/tot:5.1f}% {fp}')
print()
for (fp,l),v in agg.most_common(int(sys.argv[2]) if len(sys.argv)>2 else 50):
    a=aggr[(fp,l)]
    print(f'{100*v/tot:5.2f}% {fp.split("/")[-1]}:{l}  lsb {100*a["stall_long_sb"]/tot:.2f} ni {100*a["stall_no_inst"]/tot:.2f} mb {100*a["stall_membar"]/tot:.2f} sl {100*a["stall_sleep"]/tot:.2f} thr/inst {a["thr"]/max(1,a["exec"]):.1f}')
