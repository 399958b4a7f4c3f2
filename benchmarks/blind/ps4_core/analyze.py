import json, glob, os, sys, csv
sys.path.insert(0, '/work/blind_ps4/src')
from variants import V
TASK = {'bt': 'ps4.broadcast_transpose', 'dce': 'ps4.dce', 'fold': 'ps4.fold_constants'}
outs = [d for d in sorted(glob.glob('/work/blind_ps4/out_s*')) if os.path.exists(d + '/grades.csv')]
def per_task(d, sid):
    r = json.load(open(f'{d}/results/{sid}.json'))
    t = {}
    for test in r['tests']:
        k = test['name'].split('.')[0] + '.' + test['name'].split('.')[1].split(':')[0]
        k = '.'.join(test['name'].split(':')[0].split('.')[:2])
        a = t.setdefault(k, [0, 0, []])
        a[0] += test['points']; a[1] += test['max_points']
        if test['status'] != 'passed': a[2].append(test['name'].split(':')[0] + ': ' + test['message'][:260])
    return r['score'], t
rows = []
for vid, (task, b, desc) in V.items():
    line = [vid, task]
    for d in outs:
        for sid in (vid, vid + '_b'):
            score, t = per_task(d, sid)
            own = t[TASK[task]]
            line.append(f"{os.path.basename(d)}/{'b' if sid.endswith('_b') else 'a'}:{score:g} own={own[0]:g}/{own[1]:g}")
    print(' | '.join(line))
if '-v' in sys.argv:
    d = outs[0]
    for vid, (task, b, desc) in V.items():
        score, t = per_task(d, vid)
        for k, (p, m, fails) in t.items():
            for f in fails:
                print(vid, k, '::', f)
