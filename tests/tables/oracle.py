#!/usr/bin/env python3
"""Recompute every figure of `kgb tables --json` from the store's raw rows (candidates,
jobs, results, campaigns), by docs/tables.md's formulas written out again here, and
compare. Prints one line per table checked and exits 1 on the first disagreement.

  oracle.py DATABASE_URL TABLES_JSON REFERENCE
"""
import json
import math
import subprocess
import sys
from collections import defaultdict

url, doc_path, ref = sys.argv[1], sys.argv[2], sys.argv[3]
doc = json.load(open(doc_path))
cids = [c['id'] for c in doc['campaigns']]
ops = {o['op']: o['source'] for o in doc['operators']}
CHEATS = {'host_compute', 'no_launch', 'host_sync', 'foreign_pointer', 'stale_result'}


def rows(sql):
    out = subprocess.run(['psql', '-XAtq', '-F', '\t', '-v', 'ON_ERROR_STOP=1', url, '-c', sql],
                         check=True, capture_output=True, text=True).stdout
    return [line.split('\t') for line in out.splitlines() if line]


def f(x):
    return None if x == '' else float(x)


ids = ','.join(map(str, cids))
baseline = {int(r[0]): r[1] for r in rows('SELECT id, coalesce(baseline, \'\') FROM campaigns WHERE id IN (%s)' % ids)}
heldout = {int(r[0]): int(r[1]) for r in rows('SELECT id, heldout FROM campaigns WHERE id IN (%s)' % ids)}
cand = {}
for r in rows('SELECT id, campaign_id, method, op, round, sample, case_count, coalesce(heldout_lo, -1), tokens, '
              'coalesce(input_tokens::text, \'\'), coalesce(output_tokens::text, \'\'), '
              'coalesce(cache_write_tokens::text, \'\'), coalesce(cache_read_tokens::text, \'\'), '
              'coalesce(reasoning_tokens::text, \'\'), gen_seconds FROM candidates WHERE campaign_id IN (%s)' % ids):
    cand[int(r[0])] = dict(id=int(r[0]), cid=int(r[1]), method=r[2], op=r[3], round=int(r[4]), sample=int(r[5]),
                           cases=int(r[6]), hlo=int(r[7]), tokens=float(r[8]),
                           usage=[f(x) for x in r[9:14]], gen=float(r[14]))
res = defaultdict(dict)      # (candidate, platform) -> case -> (verdict, timed, median, rse)
plats = set()
for r in rows('SELECT j.candidate_id, p.name, r.case_index, r.verdict, r.timed, coalesce(r.median_ns, 0), '
              'coalesce(r.rse, 0) FROM jobs j JOIN platforms p ON p.id = j.platform_id '
              'LEFT JOIN results r ON r.job_id = j.id WHERE j.campaign_id IN (%s)' % ids):
    plats.add(r[1])
    key = (int(r[0]), r[1])
    res.setdefault(key, {})
    if r[2] != '':
        res[key][int(r[2])] = (r[3], r[4] == 't', float(r[5]), float(r[6]))


def public(c, i):
    return c['hlo'] < 0 or i < c['hlo']


def clean(c, p):
    rs = res.get((c['id'], p))
    if rs is None:
        return None
    pub = sum(1 for i, v in rs.items() if public(c, i) and v[0] == 'pass')
    hpass = sum(1 for i, v in rs.items() if not public(c, i) and v[0] == 'pass')
    return (pub == c['cases'] and hpass == (heldout[c['cid']] if c['hlo'] >= 0 else 0)
            and not any(v[0] in CHEATS for v in rs.values()))


def raw(c, p):
    rs = res.get((c['id'], p), {})
    return sum(1 for i, v in rs.items() if public(c, i) and (v[0] == 'pass' or v[0] in CHEATS)) == c['cases']


def speedup(c, p):
    """(geomean, rse, timed cases) of candidate c on p against its campaign's baseline."""
    base = sorted((b for b in cand.values() if b['cid'] == c['cid'] and b['method'] == baseline[c['cid']]
                   and b['op'] == c['op']), key=lambda b: (b['round'], b['sample'], b['id']))
    logs, r2 = [], 0.0
    for i, v in res.get((c['id'], p), {}).items():
        if not (v[0] == 'pass' and v[1] and v[2] > 0 and public(c, i)):
            continue
        for b in base:
            w = res.get((b['id'], p), {}).get(i)
            if w and w[0] == 'pass' and w[1] and w[2] > 0:
                logs.append(math.log(w[2] / v[2]))
                r2 += v[3] ** 2 + w[3] ** 2
                break
    if not logs:
        return None
    return math.exp(sum(logs) / len(logs)), math.sqrt(r2) / len(logs), len(logs)


# a (method, operator, round, sample) counts once, the earliest campaign's (per platform
# for outcomes, over every platform for tokens)
def first_of(cs):
    seen, out = set(), []
    for c in sorted(cs, key=lambda c: (c['cid'], c['id'])):
        key = (c['method'], c['op'], c['round'], c['sample'])
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


methods = sorted({c['method'] for c in cand.values()})
op_rows = {}                # (method, platform, op) -> dict
for m in methods:
    for p in sorted(plats):
        mine = first_of(c for c in cand.values() if c['method'] == m and c['op'] in ops and (c['id'], p) in res)
        if not mine:
            continue
        for op in ops:
            cs = sorted((c for c in mine if c['op'] == op), key=lambda c: (c['round'], c['sample'], c['cid'], c['id']))
            ok = [c for c in cs if clean(c, p)]
            r0 = [c for c in cs if c['round'] == 0]
            sp = speedup(ok[0], p) if ok else None
            allc = first_of(c for c in cand.values() if c['method'] == m and c['op'] == op)
            op_rows[(m, p, op)] = dict(
                attempted=bool(cs), passed=bool(ok), passed_raw=any(raw(c, p) for c in cs),
                first_round=min(c['round'] for c in ok) if ok else None,
                candidate_id=ok[0]['id'] if ok else None,
                rounds=max(c['round'] for c in cs) + 1 if cs else 0,
                samples=len(r0), samples_passed=sum(1 for c in r0 if clean(c, p)),
                speedup=sp[0] if sp else None, speedup_rse=sp[1] if sp else None,
                tokens=sum(c['tokens'] for c in allc), gen=sum(c['gen'] for c in allc),
                usage=[sum(c['usage'][k] for c in allc if c['usage'][k] is not None)
                       if any(c['usage'][k] is not None for c in allc) else None for k in range(5)])

bad = 0


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def expect(what, got, want):
    global bad
    if not close(got, want):
        print('FAIL %s: kgb tables says %r, recomputed %r' % (what, got, want))
        bad += 1


def geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def group(m, p, src):
    return [v for (mm, pp, op), v in op_rows.items() if mm == m and pp == p and (src == 'all' or ops[op] == src)]


# summary
summary = {(r['method'], r['platform'], r['source']): r for r in doc['summary']}
for m, p in sorted({(k[0], k[1]) for k in op_rows}):
    for src in ['all'] + sorted(set(ops.values())):
        g = group(m, p, src)
        r = summary.get((m, p, src))
        if r is None:
            print('FAIL summary: no row for %s %s %s' % (m, p, src))
            bad += 1
            continue
        n = len(g)
        passed = [v for v in g if v['passed']]
        sps = [v['speedup'] for v in passed if v['speedup'] is not None]
        rse = math.sqrt(sum(v['speedup_rse'] ** 2 for v in passed if v['speedup'] is not None)) / len(sps) if sps else None
        w = '%s %s %s' % (m, p, src)
        expect(w + ' operators', r['operators'], n)
        expect(w + ' passed', r['passed'], len(passed))
        expect(w + ' passed_raw', r['passed_raw'], sum(1 for v in g if v['passed_raw']))
        expect(w + ' accuracy', r['accuracy'], len(passed) / n)
        expect(w + ' speedup', r['speedup'], geo(sps))
        if sps:
            expect(w + ' speedup_low', r['speedup_low'], geo(sps) * math.exp(-2 * rse))
            expect(w + ' speedup_high', r['speedup_high'], geo(sps) * math.exp(2 * rse))
        for pv, key in ((0.8, 'fast_0_8'), (1.0, 'fast_1_0'), (1.5, 'fast_1_5')):
            k = sum(1 for s in sps if s > pv)
            expect(w + ' ' + key, r[key], k / n)
            expect(w + ' ' + key + '_passed', r[key + '_passed'], k / len(passed) if passed else None)
        tok = sum(v['tokens'] for v in g)
        cr = sum(v['usage'][3] or 0 for v in g)
        expect(w + ' tokens', r['tokens'], tok)
        for k, key in enumerate(('input_tokens', 'output_tokens', 'cache_write_tokens', 'cache_read_tokens',
                                 'reasoning_tokens')):
            us = [v['usage'][k] for v in g if v['usage'][k] is not None]
            expect(w + ' ' + key, r[key], sum(us) if us else None)
        expect(w + ' tokens_per_success', r['tokens_per_success'], tok / len(passed) if passed else None)
        expect(w + ' tokens_per_success_no_cache_read', r['tokens_per_success_no_cache_read'],
               (tok - cr) / len(passed) if passed else None)
        expect(w + ' gen_seconds', r['gen_seconds'], sum(v['gen'] for v in g))
print('summary: %d rows recomputed' % len(doc['summary']))

# Pass@K and pass@k
for r in doc['pass_at_k']:
    g = group(r['method'], r['platform'], 'all')
    k = r['k']
    w = '%s %s k=%d' % (r['method'], r['platform'], k)
    expect(w + ' pass_at_k_rounds', r['pass_at_k_rounds'],
           sum(1 for v in g if v['first_round'] is not None and v['first_round'] < k) / len(g))
    est = []
    for v in g:
        n, c = v['samples'], v['samples_passed']
        if n == 0:
            est.append(0.0)
        elif n < k:
            est.append(None)
        else:
            est.append(1 - math.comb(n - c, k) / math.comb(n, k))
    expect(w + ' pass_at_k_unbiased', r['pass_at_k_unbiased'],
           None if None in est else sum(est) / len(est))
print('pass_at_k: %d rows recomputed' % len(doc['pass_at_k']))

# matched subset
bases = set(baseline.values())
for r in doc['matched']:
    p = r['platform']
    compared = sorted({m for (m, pp, op) in op_rows if pp == p and m not in bases})
    common = [op for op in ops if all(op_rows[(m, p, op)]['speedup'] is not None for m in compared)]
    sps = [op_rows[(r['method'], p, op)]['speedup'] for op in common]
    expect('matched %s %s operators' % (p, r['method']), r['operators'], len(common))
    expect('matched %s %s speedup' % (p, r['method']), r['speedup'], geo(sps))
print('matched: %d rows recomputed' % len(doc['matched']))

# cross-chip and lost operators
for r in doc.get('cross_chip') or []:
    m, p = r['method'], r['platform']
    acc = summary[(m, p, 'all')]['accuracy']
    racc = summary[(m, ref, 'all')]['accuracy']
    expect('cross_chip %s %s drop_points' % (m, p), r['drop_points'], 100 * (racc - acc))
    expect('cross_chip %s %s lost' % (m, p), r['lost'],
           sum(1 for op in ops if op_rows[(m, ref, op)]['passed'] and not op_rows[(m, p, op)]['passed']))
lost = []
for (m, p, op), v in sorted(op_rows.items()):
    if p != ref and not v['passed'] and op_rows[(m, ref, op)]['passed']:
        cid = op_rows[(m, ref, op)]['candidate_id']
        fails = sorted(i for i, x in res.get((cid, p), {}).items() if x[0] != 'pass')
        lost.append((m, op, p, cid, fails[0] if fails else None))
got = sorted((r['method'], r['op'], r['platform'], r['candidate_id'], r['case_index']) for r in doc.get('lost') or [])
if got != lost:
    print('FAIL lost: kgb tables says %r, recomputed %r' % (got, lost))
    bad += 1
print('cross_chip: %d rows, lost: %d operators recomputed' % (len(doc.get('cross_chip') or []), len(lost)))
sys.exit(1 if bad else 0)
