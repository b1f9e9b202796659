# Stall samples on the fence instructions of libcu++'s atomics, per source line of
# cuda_ptx_generated.h (which names the PTX operation), as a share of ALL samples
# (the SASS view's total, including instructions without a source line).
# usage: python3 fence_share.py spawn_many-source-cuda-sass.csv.gz TOTAL_SAMPLES
import csv, gzip, sys, collections
total = int(sys.argv[2])
rows = csv.reader(gzip.open(sys.argv[1], 'rt'))
cur, line, out = None, None, collections.Counter()
def num(x):
    try: return int(x)
    except ValueError: return 0
for row in rows:
    if not row: continue
    if row[0] == 'File Path': cur = row[1].split('/')[-1]; continue
    if row[0] in ('Function Name', 'Line No') or len(row) < 5: continue
    if row[0] != '': line = (cur, row[0]); continue
    op = row[3].split()[0] if row[3].split() else ''
    if op in ('ERRBAR', 'CCTL.IVALL') or op.startswith('MEMBAR'):
        out[(line, op)] += num(row[4])
print(f'fence instructions: {sum(out.values())} samples, {100 * sum(out.values()) / total:.1f} % of {total}')
by_line = collections.Counter()
for (l, op), v in out.items(): by_line[l] += v
for l, v in by_line.most_common(12): print(f'{100 * v / total:5.2f} %  {l[0]}:{l[1]}')
