#!/usr/bin/env python3
"""Write the two manifests of tests/integration/test_tables.sh into DIR (with a copy of
examples/demo under DIR/demo): methods with several samples and rounds, token usage.

  make_manifests.py DIR

tables-a: baseline; iter (round 0: one candidate per operator); samp (three samples of
round 0 for silu and gt, none for rms_norm and cublasSaxpy_v2). tables-b: round 1 of iter,
regenerating only silu, which failed in round 0, with the baseline for its speedup.
The demo kernels used and why each passes or fails are in examples/demo/README.md:
agent-b's silu and gt are defective; agent-a's gt, silu and saxpy use work
groups of 1024, 512 and 1024 items, more than the test's second platform allows.
"""
import json
import os
import shutil
import sys

out = sys.argv[1]
demo = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'examples', 'demo')
shutil.copytree(demo, os.path.join(out, 'demo'), dirs_exist_ok=True)
PLAN = {'silu': 'silu', 'gt': 'gt', 'rms_norm': 'rms_norm', 'cublasSaxpy_v2': 'saxpy'}
OPS = ['silu', 'gt', 'rms_norm', 'cublasSaxpy_v2']


# two consecutive cases per candidate (one job each), the second timed for silu and
# cublasSaxpy_v2; gt's and rms_norm's are untimed, so they pass without a speedup
CASES = {'silu': [2, 3], 'gt': [0, 1], 'rms_norm': [0, 1], 'cublasSaxpy_v2': [7, 8]}


def cand(op, method, **kw):
    c = {'operator': op, 'plan': 'demo/%s/%s.plan.json' % (method, PLAN[op]), 'cases': CASES[op]}
    c.update(kw)
    return c


def head(name, ops):
    return {'name': name, 'operators': ops, 'seed': 7, 'shard_size': 64,
            'time_limit_ms': 60000, 'timing_budget_ms': 20, 'baseline': 'baseline'}


a = head('tables-a', OPS)
a['methods'] = [
    {'name': 'baseline', 'candidates': [cand(op, 'baseline') for op in OPS]},
    {'name': 'iter', 'candidates': [
        cand('silu', 'agent-b', model='m-1', gen_seconds=30,
             usage={'input': 1000, 'output': 200, 'cache_read': 5000}),
        cand('gt', 'agent-a', model='m-1', gen_seconds=20, usage={'input': 800, 'output': 100}),
        cand('rms_norm', 'agent-a', model='m-1', gen_seconds=40,
             usage={'input': 1200, 'output': 300, 'cache_write': 400, 'cache_read': 2000, 'reasoning': 50}),
        cand('cublasSaxpy_v2', 'agent-b', model='m-1', gen_seconds=10, usage={'input': 600, 'output': 90}),
    ]},
    {'name': 'samp', 'candidates': [
        cand(op, m, sample=s, model='m-2', gen_seconds=10, usage={'input': 500, 'output': 100, 'cache_read': 1000})
        for op, ms in (('silu', ['agent-b', 'baseline', 'baseline']), ('gt', ['agent-b', 'agent-b', 'baseline']))
        for s, m in enumerate(ms)]},
]
b = head('tables-b', ['silu'])
b['methods'] = [
    {'name': 'baseline', 'candidates': [cand('silu', 'baseline')]},
    {'name': 'iter', 'candidates': [
        cand('silu', 'agent-a', round=1, model='m-1', gen_seconds=25,
             usage={'input': 1500, 'output': 250, 'cache_read': 6000})]},
]
for m in (a, b):
    with open(os.path.join(out, m['name'] + '.json'), 'w') as f:
        json.dump(m, f, indent=1)
