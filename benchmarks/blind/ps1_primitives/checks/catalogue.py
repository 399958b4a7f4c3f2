"""Writes the table of catalogue.md from src/*.py headers, checks/quick_*.jsonl and checks/out/*.txt."""
import json, re, pathlib
root = pathlib.Path(__file__).resolve().parents[1]
q = {}
for f in (root / 'checks').glob('quick_*.jsonl'):
    for l in open(f):
        d = json.loads(l); q[d['id']] = d
man = json.load(open(root / 'manifest.json'))
def harness(vid):
    f = root / 'checks' / 'out' / f'{vid}.txt'
    if not f.exists():
        return 'harness not run'
    lines = [l.strip() for l in f.read_text().splitlines() if l.startswith(('ok ', 'BAD'))]
    return '; '.join(lines) if lines else 'harness did not finish'
rows = []
order = lambda v: ({'wrong': 0, 'alt': 1, 'short': 2}[v.split('_')[0]], v)
for vid in sorted((v for v in man if v != 'correct'), key=order):
    src = (root / 'src' / f'{vid}.py').read_text()
    what = re.search(r'^# what: (.*)$', src, re.M).group(1).replace('|', '/')
    d = q.get(vid, {})
    if '# %% witness' in src and vid.startswith('wrong'):
        wit = src.split('# %% witness\n', 1)[1].strip().splitlines()[0][:110].replace('|', '/')
        sc = f"`{wit}` → {d.get('witness', '?')}".replace('\n', ' ').replace('|', '/')[:260]
        if vid == 'wrong_28':
            sc += '; harness: ' + harness(vid)[:120]
    else:
        sc = harness(vid)
    vis = 'yes' if d.get('visible_pass') else 'no (' + ', '.join(d.get('visible_fail', {})) + ')'
    if vid in ('short_03', 'short_07'):
        vis = 'no: the cell policy refuses the cell (CellRefused), then test_jvp/test_transpose/test_batch fail; yes only without the policy'
    rows.append(f"| {vid} | {man[vid]['task']} | {man[vid]['kind']} | {what} | {sc} | {vis} |")
head = (root / 'checks' / 'catalogue_head.md').read_text()
tail = (root / 'checks' / 'catalogue_tail.md').read_text()
(root / 'catalogue.md').write_text(head + '\n'.join(rows) + '\n' + tail)
