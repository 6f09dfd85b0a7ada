#!/bin/bash
# Results that reach the coordinator together are written in one multi-row statement
# (docs/scheduler.md, "Throughput"), and each keeps its own outcome. A raw worker holding
# eight one-case jobs sends all eight results back to back, then a second copy of one and
# a result under a wrong epoch for another, and one result carries timing counters
# beyond the store's integer range. Every job is recorded exactly once; the copy is
# answered as accepted (or not answered: its first copy's ack covers it), the wrong
# epoch is refused as stale, the counters are stored clamped, and every row has its
# label. (A result with a case outside its shard is refused whole, and its worker
# trusted no more: test_trust.)
. "$(dirname "$0")/lib.sh"

export KGB_LEASE_MS=20000 KGB_HEARTBEAT_MS=1000
db_init
start_coordinator coord
CATVER=$(kgb ops --json | "$KGB_PY" -c 'import json,sys; print(json.load(sys.stdin)["catalog_version"])')
[ -n "$CATVER" ] || die "no catalog version from kgb ops --json"

# eight jobs of one case on a platform only the raw worker below serves
"$KGB_PY" - "$TEST_DIR/m.json" "$KGB_ROOT" <<'PY' || die "manifest"
import json, sys
root = sys.argv[2]
plan = json.load(open(root + '/examples/demo/baseline/add.plan.json'))
src = open(root + '/examples/demo/baseline/add.cl').read()
cands = [{"operator": "add", "plan": plan, "sources": {"add.cl": {"inline": src}}}]
json.dump({"name": "batch", "operators": ["add"], "platforms": ["sim:batch"], "shard_size": 1,
           "timing": True, "heldout": 0, "methods": [{"name": "m", "candidates": cands}]}, open(sys.argv[1], "w"))
PY
out=$(kgb submit --wait-for-platforms "$TEST_DIR/m.json") || die "kgb submit: $out"
id=$(printf '%s\n' "$out" | sed -n 's/^campaign \([0-9][0-9]*\) .*/\1/p' | head -n1)
[ -n "$id" ] || die "no campaign id in: $out"

out=$("$KGB_PY" - "$KGB_WORKER_ENDPOINT" "$CATVER" "$KGB_ROOT" <<'PY' 2>&1
import os, struct, sys, time
sys.path.insert(0, sys.argv[3] + '/tests/tools')
import kgbwire as w
ep, catver = sys.argv[1], sys.argv[2]
s = w.connect(ep)
dev = (w.field_varint(1, 0) + w.field_bytes(2, 'sim') + w.field_bytes(3, 'batch') + w.field_bytes(4, 'sim')
       + w.field_bytes(7, 'sim:batch') + w.field_varint(10, 8))
reg = (w.field_bytes(1, 'raw-batch') + w.field_bytes(2, 'kgbwire') + w.field_bytes(3, catver)
       + w.field_bytes(4, 'batch-host') + w.field_varint(5, os.getpid()) + w.field_bytes(6, dev)
       + w.field_bytes(8, os.urandom(16)))
s.send(w.envelope(w.F_REGISTER, reg, seq=1))
a = w.reply(s, w.F_REGISTER_ACK)
if not a.get(1, [0])[0]:
    sys.exit('register refused: %s' % a.get(5, [b''])[0])
wid = a.get(2, [b''])[0].decode()
jobs = []  # (job, epoch, [cases])
t0 = time.time()
while len(jobs) < 8 and time.time() - t0 < 60:
    if not s.poll(500):
        s.send(w.envelope(w.F_HEARTBEAT, w.field_bytes(1, wid), seq=2))
        continue
    env = w.parse([p for p in s.recv_multipart() if p][-1])
    if 14 in env:
        ja = w.parse(env[14][0])
        jobs.append((ja[1][0], ja[2][0], w.decode_ids(ja.get(6, []))))
if len(jobs) < 8:
    sys.exit('only %d jobs assigned' % len(jobs))

def dbl(no, v):
    return bytes([(no << 3) | 1]) + struct.pack('<d', v)

def result(job, epoch, cases, extra=b''):
    body = w.field_varint(1, job) + w.field_varint(2, epoch) + w.field_bytes(3, wid)
    for c in cases:
        body += w.field_bytes(4, w.field_varint(1, c) + w.field_varint(2, 1) + extra)
    return body

timing = w.field_bytes(6, dbl(1, 1500.0) + dbl(2, 1400.0) + dbl(5, 1520.0) + w.field_varint(7, 4294967295)
                       + w.field_varint(12, 4294967295))
frames = []
j0, e0, c0 = jobs[0]
frames.append(result(j0, e0, c0, timing))
for j, e, c in jobs[1:]:
    frames.append(result(j, e, c))
frames.append(result(*jobs[1]))                               # a second copy
frames.append(result(jobs[2][0], jobs[2][1] + 5, jobs[2][2]))  # a wrong epoch
for f in frames:  # back to back: one loop turn of the coordinator
    s.send(w.envelope(w.F_JOB_RESULT, f, seq=3))
acks = []
t0 = time.time()
while time.time() - t0 < 20 and len(acks) < len(frames):
    if not s.poll(2000):
        break
    env = w.parse([p for p in s.recv_multipart() if p][-1])
    if w.F_RESULT_ACK in env:
        a = w.parse(env[w.F_RESULT_ACK][0])
        acks.append((a.get(1, [0])[0], a.get(2, [0])[0], a.get(3, [0])[0], a.get(4, [b''])[0].decode()))
ok = {j for j, e, acc, r in acks if acc and any(j == x[0] and e == x[1] for x in jobs)}
print('accepted_jobs=%d' % len(ok))
stale = [r for j, e, acc, r in acks if j == jobs[2][0] and e == jobs[2][1] + 5]
print('stale=%s' % ('refused' if stale and all('stale' in r for r in stale) else repr(stale)))
dup = [acc for j, e, acc, r in acks if j == jobs[1][0] and e == jobs[1][1]]
print('copy_acks_all_accepted=%d' % int(bool(dup) and all(dup)))
print('job0=%d' % j0)
PY
) || die "raw worker: $out"
echo "$out" | sed 's/^/    /'
assert_eq "$(echo "$out" | sed -n 's/^accepted_jobs=//p')" 8 "all eight results acknowledged as accepted"
assert_eq "$(echo "$out" | sed -n 's/^stale=//p')" refused "the result under a wrong epoch refused as stale"
assert_eq "$(echo "$out" | sed -n 's/^copy_acks_all_accepted=//p')" 1 "the second copy answered as accepted"
j0=$(echo "$out" | sed -n 's/^job0=//p')
assert_eq "$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id AND state = 'done'")" 8 "eight jobs done"
assert_eq "$(q "SELECT count(*), count(*) FILTER (WHERE verdict = 'pass'), count(label)
	FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.campaign_id = $id")" "8|8|8" \
	"eight rows, one per case, all pass, each with its label"
assert_eq "$(q "SELECT samples, throttled_samples, median_ns FROM results WHERE job_id = $j0")" \
	"2147483647|2147483647|1500" "timing counters beyond the integer range stored clamped"
test_done
