#!/usr/bin/env python3
"""Write a variant of the demo manifest for a test.

  manifest.py OUT [--methods a,b] [--ops x,y] [--skip-ops x,y] [--set KEY=JSON]... [--name NAME]

The source manifest's directory is copied next to OUT (OUT's directory/src-NAME) and
plans and source files are pointed there, so OUT can live anywhere and still names only
files under its own directory, as kgb requires. --methods keeps those
methods (in that order), --ops keeps those operators' candidates, --skip-ops drops
those operators' candidates (and keeps the others), --set overrides a
top-level field with a JSON value (--set time_limit_ms=4000).
"""
import argparse
import json
import os
import shutil
import sys

here = os.path.dirname(os.path.abspath(__file__))
demo = os.path.join(here, '..', '..', 'examples', 'demo', 'demo.json')

ap = argparse.ArgumentParser()
ap.add_argument('out')
ap.add_argument('--methods')
ap.add_argument('--ops')
ap.add_argument('--skip-ops')
ap.add_argument('--set', action='append', default=[])
ap.add_argument('--name')
ap.add_argument('--source', default=demo)
a = ap.parse_args()

with open(a.source) as f:
    m = json.load(f)
base = os.path.dirname(os.path.abspath(a.source))
outdir = os.path.dirname(os.path.abspath(a.out))
copy = 'src-' + os.path.basename(base)
shutil.copytree(base, os.path.join(outdir, copy), dirs_exist_ok=True)
methods = m['methods']
if a.methods:
    want = a.methods.split(',')
    byname = {x['name']: x for x in methods}
    missing = [w for w in want if w not in byname]
    if missing:
        sys.exit('manifest.py: no method %s in %s' % (', '.join(missing), a.source))
    methods = [byname[w] for w in want]
ops = a.ops.split(',') if a.ops else None
if a.skip_ops:
    skip = a.skip_ops.split(',')
    listed = m['operators'] if isinstance(m.get('operators'), list) else \
        [c['operator'] for x in methods for c in x['candidates']]
    unknown = [o for o in skip if o not in listed]
    if unknown:
        sys.exit('manifest.py: --skip-ops %s: not operators of %s' % (', '.join(unknown), a.source))
    ops = [o for o in (ops or listed) if o not in skip]
for meth in methods:
    cands = []
    for c in meth['candidates']:
        if ops and c['operator'] not in ops:
            continue
        if isinstance(c.get('plan'), str):
            c['plan'] = os.path.join(copy, c['plan'])
        for k, v in list(c.get('sources', {}).items()):
            if isinstance(v, str):
                c['sources'][k] = os.path.join(copy, v)
        cands.append(c)
    meth['candidates'] = cands
m['methods'] = methods
if m.get('baseline') and m['baseline'] not in [x['name'] for x in methods]:
    del m['baseline']
if a.name:
    m['name'] = a.name
if ops:
    m['operators'] = ops
for kv in a.set:
    k, _, v = kv.partition('=')
    m[k] = json.loads(v)
with open(a.out, 'w') as f:
    json.dump(m, f, indent=1)
