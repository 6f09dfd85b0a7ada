#!/usr/bin/env python3
"""Speak (and mis-speak) kgb's wire protocol from tests, with pyzmq and a minimal
protobuf encoder written here (no generated code needed).

  kgbwire.py garbage ENDPOINT KIND     send one bad frame as a DEALER peer; KIND is one of
                                       random, version99, oversize, empty, nobody, multipart,
                                       truncated, wrongkind
  kgbwire.py submit ENDPOINT FILE      send FILE's text as SubmitRequest.manifest_json
                                       (bypassing the CLI's checks); prints "ok=<0|1>
                                       id=<n> error=<text>" from the reply; exit 0 on a reply
  kgbwire.py status ENDPOINT           a StatusRequest; prints the number of campaigns
  kgbwire.py jobassign OUT OP CASES PLAN
                                       write a serialised JobAssign (the executor's stdin):
                                       CASES "0,1,2", PLAN a plan file whose sources lie
                                       beside it
  kgbwire.py records FILE              decode an executor's stdout records; prints
                                       "case N verdict V" lines and "end infra I"
  kgbwire.py forge-result ENDPOINT WID JOB EPOCH LO HI
                                       from a connection that never registered, a JobResult
                                       claiming "pass" for cases [LO,HI) of JOB under EPOCH
                                       as worker WID; prints "accepted=A register_again=R
                                       reason=..." from the ResultAck
  kgbwire.py forge-heartbeat ENDPOINT WID JOB EPOCH
                                       the same with a Heartbeat naming JOB as running;
                                       prints "known=K cancel=<ids>"
  kgbwire.py impostor ENDPOINT NAME HOST CATVER JOB EPOCH LO HI
                                       register as worker NAME on HOST (a fresh session)
                                       listing JOB as running, then heartbeat and send a
                                       "pass" JobResult for it from that registration;
                                       prints "register ok=O wid=W error=...", then the
                                       heartbeat and result lines as above
  kgbwire.py rogue ENDPOINT NAME HOST CATVER PLATFORM KIND
                                       register as worker NAME with one device of PLATFORM,
                                       heartbeat until a job is assigned, then answer it
                                       with a malformed result of KIND (verdict999,
                                       verdict0, dup, outside, timed: see rogue_cases);
                                       prints "job=J accepted=A reason=..." from the ResultAck
  kgbwire.py late ENDPOINT SCENARIO NAME HOST CATVER PLATFORM
                                       a worker's late result, or a result after it
                                       registered again, in the windows where the
                                       coordinator once refused it (tests/integration/
                                       test_late_results.sh); SCENARIO is one of
                                       requeue (the result arrives while the requeue after
                                       its lease expired is being written: a lock on the
                                       job's row in $KGB_DATABASE_URL holds it there),
                                       restart (the requeue was written, the coordinator
                                       restarted: the shell restarts it when this prints
                                       "restart now" and touches $KGBWIRE_GO), regen (a new
                                       process registers under the name while a job is
                                       assigned to the old one: a lock on the worker's row
                                       holds the registration). Prints "accepted=A
                                       reason=..." of the ResultAck that matters
With KGBWIRE_CURVE_SERVER_KEY_FILE and KGBWIRE_CURVE_SECRET_KEY_FILE (files written by
`kgb keygen`) the peer speaks CURVE with that key.

Frames follow proto/kgb.proto: one serialised kgb.Envelope per frame.
"""
import os
import sys
import zmq

PROTOCOL_VERSION = 1
# Envelope field numbers (proto/kgb.proto)
F_VERSION, F_SEQ = 1, 2
F_HEARTBEAT, F_ERROR = 12, 18
F_SUBMIT, F_SUBMIT_REPLY, F_STATUS, F_STATUS_REPLY = 30, 31, 32, 33
MAX_FRAME_WORKER = 16 << 20
MAX_FRAME_CLI = 256 << 20


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(no, v):
    return varint(no << 3) + varint(v)


def field_bytes(no, b):
    if isinstance(b, str):
        b = b.encode()
    return varint((no << 3) | 2) + varint(len(b)) + b


def envelope(body_no, body=b'', version=PROTOCOL_VERSION, seq=1):
    out = b''
    if version is not None:
        out += field_varint(F_VERSION, version)
    out += field_varint(F_SEQ, seq)
    if body_no is not None:
        out += field_bytes(body_no, body)
    return out


def parse(buf):
    """Decode one protobuf message into {field: [values]} (varints as int, else bytes)."""
    i, out = 0, {}
    while i < len(buf):
        key, i = read_varint(buf, i)
        no, wt = key >> 3, key & 7
        if wt == 0:
            v, i = read_varint(buf, i)
        elif wt == 2:
            n, i = read_varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError('wire type %d' % wt)
        out.setdefault(no, []).append(v)
    return out


def read_varint(buf, i):
    shift = n = 0
    while True:
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def key_text(path):
    """The Z85 key of a `kgb keygen` file (comment lines start with '#')."""
    for line in open(path):
        line = line.strip()
        if line and not line.startswith('#'):
            return line.split()[0].encode()
    sys.exit('kgbwire: no key in %s' % path)


def connect(endpoint):
    ctx = zmq.Context.instance()
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 2000)
    s.setsockopt(zmq.SNDHWM, 0)
    server = os.environ.get('KGBWIRE_CURVE_SERVER_KEY_FILE')
    secret = os.environ.get('KGBWIRE_CURVE_SECRET_KEY_FILE')
    if server and secret:
        sec = key_text(secret)
        s.curve_serverkey = key_text(server)
        s.curve_secretkey = sec
        s.curve_publickey = zmq.curve_public(sec)
    s.connect(endpoint)
    return s


def reply(s, body_no, timeout_ms=10000):
    """Wait for the next reply carrying body_no; returns its decoded body."""
    deadline = timeout_ms
    while s.poll(deadline):
        env = parse([p for p in s.recv_multipart() if p][-1])
        if body_no in env:
            return parse(env[body_no][0])
        if F_ERROR in env:
            sys.exit('kgbwire: error reply: %s' % parse(env[F_ERROR][0]).get(1, [b''])[0].decode())
    sys.exit('kgbwire: no reply (field %d) within %d ms' % (body_no, timeout_ms))


F_REGISTER, F_REGISTER_ACK, F_HEARTBEAT_ACK, F_JOB_RESULT, F_RESULT_ACK = 10, 11, 13, 15, 16


def running_job(job, epoch):
    return field_varint(1, int(job)) + field_varint(2, int(epoch)) + field_varint(3, 0)


def job_result(wid, job, epoch, lo, hi):
    body = field_varint(1, int(job)) + field_varint(2, int(epoch)) + field_bytes(3, wid)
    for i in range(int(lo), int(hi)):
        body += field_bytes(4, field_varint(1, i) + field_varint(2, 1))  # VERDICT_PASS
    return envelope(F_JOB_RESULT, body, seq=7)


def send_result(s, wid, job, epoch, lo, hi):
    s.send(job_result(wid, job, epoch, lo, hi))
    a = reply(s, F_RESULT_ACK)
    print('accepted=%d register_again=%d reason=%s' % (a.get(3, [0])[0], a.get(5, [0])[0],
                                                       a.get(4, [b''])[0].decode(errors='replace')))


def send_heartbeat(s, wid, job, epoch):
    s.send(envelope(F_HEARTBEAT, field_bytes(1, wid) + field_bytes(2, running_job(job, epoch)), seq=5))
    a = reply(s, F_HEARTBEAT_ACK)
    print('known=%d cancel=%s' % (a.get(1, [0])[0], ','.join(str(x) for x in decode_ids(a.get(2, [])))))


def decode_ids(vals):
    out = []
    for v in vals:
        if isinstance(v, bytes):  # packed
            i = 0
            while i < len(v):
                n, i = read_varint(v, i)
                out.append(n)
        else:
            out.append(v)
    return out


def impostor(endpoint, name, host, catver, job, epoch, lo, hi):
    s = connect(endpoint)
    reg = field_bytes(1, name) + field_bytes(2, 'kgbwire') + field_bytes(3, catver) + field_bytes(4, host)
    reg += field_varint(5, os.getpid()) + field_bytes(7, running_job(job, epoch)) + field_bytes(8, os.urandom(16))
    s.send(envelope(F_REGISTER, reg, seq=3))
    a = reply(s, F_REGISTER_ACK)
    ok, wid = a.get(1, [0])[0], a.get(2, [b''])[0].decode()
    print('register ok=%d wid=%s error=%s' % (ok, wid, a.get(5, [b''])[0].decode(errors='replace')))
    if not ok:
        return
    send_heartbeat(s, wid, job, epoch)
    send_result(s, wid, job, epoch, lo, hi)


F_JOB_ASSIGN = 14


def rogue_cases(kind, lo, hi):
    """The malformed case results of KIND for the shard [lo, hi)."""
    def case(i, verdict=1, extra=b''):
        return field_bytes(4, field_varint(1, i) + field_varint(2, verdict) + extra)
    ok = [case(i) for i in range(lo + 1, hi)]
    if kind == 'verdict999':
        return [case(lo, 999)] + ok
    if kind == 'verdict0':
        return [case(lo, 0)] + ok
    if kind == 'dup':
        return [case(lo, 1), case(lo, 6)] + ok
    if kind == 'outside':
        return [case(hi + 100)]
    if kind == 'timed':
        import struct
        tiny = struct.pack('<d', 1e-300)
        timing = b''.join(varint((f << 3) | 1) + tiny for f in (1, 2, 5)) + field_varint(7, 10)
        return [case(lo, 1, field_varint(5, 1) + field_bytes(6, timing))] + ok
    sys.exit('kgbwire: unknown rogue kind %r' % kind)


def rogue(endpoint, name, host, catver, platform, kind, timeout_s=60):
    import time
    s = connect(endpoint)
    dev = field_varint(1, 0) + field_bytes(2, 'opencl') + field_bytes(3, 'rogue device') + \
        field_bytes(7, platform) + field_varint(10, 1)
    reg = field_bytes(1, name) + field_bytes(2, 'kgbwire') + field_bytes(3, catver) + field_bytes(4, host)
    reg += field_varint(5, os.getpid()) + field_bytes(6, dev) + field_bytes(8, os.urandom(16))
    s.send(envelope(F_REGISTER, reg, seq=3))
    a = reply(s, F_REGISTER_ACK)
    wid = a.get(2, [b''])[0].decode()
    if not a.get(1, [0])[0]:
        sys.exit('kgbwire: rogue %s not registered: %s' % (name, a.get(5, [b''])[0].decode(errors='replace')))
    end = time.time() + timeout_s
    while time.time() < end:
        s.send(envelope(F_HEARTBEAT, field_bytes(1, wid), seq=5))
        if not s.poll(300):
            continue
        env = parse([p for p in s.recv_multipart() if p][-1])
        if F_JOB_ASSIGN not in env:
            continue
        ja = parse(env[F_JOB_ASSIGN][0])
        job, epoch = ja[1][0], ja[2][0]
        cases = decode_ids(ja.get(6, []))
        body = field_varint(1, job) + field_varint(2, epoch) + field_bytes(3, wid)
        body += b''.join(rogue_cases(kind, min(cases), max(cases) + 1))
        s.send(envelope(F_JOB_RESULT, body, seq=7))
        r = reply(s, F_RESULT_ACK)
        print('job=%d accepted=%d reason=%s' % (job, r.get(3, [0])[0], r.get(4, [b''])[0].decode(errors='replace')))
        return
    sys.exit('kgbwire: rogue %s was assigned no job within %d s' % (name, timeout_s))


class Psql:
    """A psql session on $KGB_DATABASE_URL fed line by line (to hold a lock)."""

    def __init__(self):
        import subprocess
        self.p = subprocess.Popen(['psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', os.environ['KGB_DATABASE_URL']],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(self, sql):
        self.p.stdin.write(sql + '\n')
        self.p.stdin.flush()

    def lock(self, table, where):
        """BEGIN and lock the rows of TABLE matching WHERE; returns once they are held."""
        self.send("BEGIN; SELECT 'locked' FROM %s WHERE %s FOR UPDATE;" % (table, where))
        if self.p.stdout.readline().strip() != 'locked':
            sys.exit('kgbwire: nothing of %s matched %s' % (table, where))

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def sql_value(sql):
    import subprocess
    return subprocess.run(['psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', os.environ['KGB_DATABASE_URL'], '-c', sql],
                          check=True, capture_output=True, text=True).stdout.strip()


def wait_sql(sql, want, timeout_s=60):
    import time
    end = time.time() + timeout_s
    while time.time() < end:
        if sql_value(sql) == want:
            return
        time.sleep(0.05)
    sys.exit('kgbwire: %r did not become %r within %d s' % (sql, want, timeout_s))


def wait_lock(text, timeout_s=60):
    """Until a statement of the store holding TEXT waits for a lock."""
    wait_sql("SELECT count(*) > 0 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%%%s%%'"
             % text, 't', timeout_s)


class FakeWorker:
    """A worker speaking the protocol by hand, with one device of PLATFORM."""

    def __init__(self, endpoint, name, host, catver, platform, session=None):
        self.ep, self.name, self.host, self.catver, self.platform = endpoint, name, host, catver, platform
        self.session = session or os.urandom(16)
        self.s = connect(endpoint)
        self.wid = ''
        self.seq = 10

    def send(self, body_no, body):
        self.seq += 1
        self.s.send(envelope(body_no, body, seq=self.seq))

    def register(self, running=()):
        dev = field_varint(1, 0) + field_bytes(2, 'opencl') + field_bytes(3, 'fake device') + \
            field_bytes(7, self.platform) + field_varint(10, 1)
        reg = field_bytes(1, self.name) + field_bytes(2, 'kgbwire') + field_bytes(3, self.catver)
        reg += field_bytes(4, self.host) + field_varint(5, os.getpid()) + field_bytes(6, dev)
        reg += b''.join(field_bytes(7, running_job(j, e)) for j, e in running) + field_bytes(8, self.session)
        self.send(F_REGISTER, reg)

    def registered(self):
        a = self.expect(F_REGISTER_ACK)
        if not a.get(1, [0])[0]:
            sys.exit('kgbwire: %s not registered: %s' % (self.name, a.get(5, [b''])[0].decode(errors='replace')))
        self.wid = a.get(2, [b''])[0].decode()

    def heartbeat(self, running=()):
        self.send(F_HEARTBEAT, field_bytes(1, self.wid) + b''.join(field_bytes(2, running_job(j, e))
                                                                 for j, e in running))

    def expect(self, body_no, timeout_ms=30000):
        """The next message carrying body_no (others dropped)."""
        import time
        end = time.time() + timeout_ms / 1000
        while True:
            left = int((end - time.time()) * 1000)
            if left <= 0 or not self.s.poll(left):
                sys.exit('kgbwire: %s: no message (field %d) within %d ms' % (self.name, body_no, timeout_ms))
            env = parse([p for p in self.s.recv_multipart() if p][-1])
            if body_no in env:
                return parse(env[body_no][0])

    def take(self, timeout_s=60):
        """Heartbeat until a job is assigned; returns (job, epoch, lo, hi)."""
        import time
        end = time.time() + timeout_s
        while time.time() < end:
            self.heartbeat()
            if not self.s.poll(300):
                continue
            env = parse([p for p in self.s.recv_multipart() if p][-1])
            if F_JOB_ASSIGN in env:
                ja = parse(env[F_JOB_ASSIGN][0])
                cases = decode_ids(ja.get(6, []))
                return ja[1][0], ja[2][0], min(cases), max(cases) + 1
        sys.exit('kgbwire: %s was assigned no job within %d s' % (self.name, timeout_s))

    def result(self, job, epoch, lo, hi, infra=False):
        body = field_varint(1, job) + field_varint(2, epoch) + field_bytes(3, self.wid)
        if infra:
            body += field_varint(9, 15)  # JobResult.infra = VERDICT_INFRA_ERROR
        else:
            body += b''.join(field_bytes(4, field_varint(1, i) + field_varint(2, 1)) for i in range(lo, hi))
        self.send(F_JOB_RESULT, body)

    def result_ack(self, job):
        while True:
            a = self.expect(F_RESULT_ACK)
            if a.get(1, [0])[0] == job:
                return a.get(3, [0])[0], a.get(4, [b''])[0].decode(errors='replace'), a.get(5, [0])[0]


def late(endpoint, scenario, name, host, catver, platform):
    import time
    w = FakeWorker(endpoint, name, host, catver, platform)
    w.register()
    w.registered()
    job, epoch, lo, hi = w.take()
    print('job=%d epoch=%d cases=[%d,%d)' % (job, epoch, lo, hi), flush=True)
    if scenario == 'requeue':
        # its lease runs out (no more heartbeats) while its row is locked: the requeue
        # waits in the store, and the result arrives meanwhile
        lock = Psql()
        lock.lock('jobs', 'id = %d' % job)
        wait_lock('attempts >= $3 THEN')
        w.result(job, epoch, lo, hi)
        time.sleep(0.5)  # taken in by the coordinator behind the requeue
        lock.send('COMMIT;')
        lock.close()
        acc, reason, _ = w.result_ack(job)
    elif scenario == 'restart':
        # the lease runs out and the requeue is written; then the coordinator restarts
        wait_sql("SELECT state FROM jobs WHERE id = %d" % job, 'queued')
        print('restart now', flush=True)
        go = os.environ['KGBWIRE_GO']
        end = time.time() + 120
        while not os.path.exists(go):
            if time.time() > end:
                sys.exit('kgbwire: %s never appeared' % go)
            time.sleep(0.05)
        w = FakeWorker(endpoint, name, host, catver, platform, w.session)  # the same process, reconnected
        w.register()
        w.registered()
        w.result(job, epoch, lo, hi)
        acc, reason, _ = w.result_ack(job)
    elif scenario == 'regen':
        # a new process under the name registers; its upsert waits on the worker's row
        lock = Psql()
        lock.lock('workers', "name = '%s'" % name)
        w2 = FakeWorker(endpoint, name, host, catver, platform)
        w2.register()
        wait_lock('INSERT INTO workers')
        # meanwhile the old process gives its job back and heartbeats: its free slot
        # takes the next job, whose assignment is written after the registration
        w.result(job, epoch, lo, hi, infra=True)
        for _ in range(2):
            w.heartbeat()
            w.expect(F_HEARTBEAT_ACK)
        lock.send('COMMIT;')
        lock.close()
        w2.registered()
        ja = w2.expect(F_JOB_ASSIGN)
        job2, epoch2 = ja[1][0], ja[2][0]
        cases = decode_ids(ja.get(6, []))
        print('job=%d epoch=%d assigned to the new process' % (job2, epoch2), flush=True)
        w2.result(job2, epoch2, min(cases), max(cases) + 1)
        acc, reason, _ = w2.result_ack(job2)
    else:
        sys.exit('kgbwire: unknown late scenario %r' % scenario)
    print('accepted=%d reason=%s' % (acc, reason), flush=True)


def request(endpoint, frame, timeout_ms=10000):
    s = connect(endpoint)
    s.send(frame)
    if not s.poll(timeout_ms):
        sys.exit('kgbwire: no reply from %s within %d ms' % (endpoint, timeout_ms))
    parts = s.recv_multipart()
    return parse([p for p in parts if p][-1])


def garbage(endpoint, kind):
    s = connect(endpoint)
    heartbeat = field_bytes(1, 'no-such-worker')
    if kind == 'random':
        frames = [os.urandom(4096)]
    elif kind == 'version99':
        frames = [envelope(F_HEARTBEAT, heartbeat, version=99)]
        frames.append(envelope(F_STATUS, b'', version=99))
    elif kind == 'oversize':
        limit = MAX_FRAME_CLI if endpoint_is_cli() else MAX_FRAME_WORKER
        body = b'x' * (limit + 1)
        frames = [envelope(F_SUBMIT, field_bytes(1, body))]
    elif kind == 'empty':
        frames = [b'']
    elif kind == 'nobody':
        frames = [envelope(None)]
    elif kind == 'multipart':
        s.send_multipart([b'abc', envelope(F_STATUS), b'\x00\x01'])
        frames = []
    elif kind == 'truncated':
        frames = [envelope(F_SUBMIT, field_bytes(1, 'x' * 100))[:40]]
    elif kind == 'wrongkind':
        # a CLI request at the worker socket, a worker message at the CLI socket
        frames = [envelope(F_HEARTBEAT, heartbeat) if endpoint_is_cli() else envelope(F_STATUS)]
    else:
        sys.exit('kgbwire: unknown garbage kind %r' % kind)
    for f in frames:
        s.send(f)
    # linger: wait for the frames to leave before the process exits (large frames take
    # a while); terminating the context blocks until they are sent or the linger ends
    s.close(linger=30000)
    zmq.Context.instance().term()


def endpoint_is_cli():
    return os.environ.get('KGBWIRE_SOCKET', 'worker') == 'cli'


VERDICTS = ['unspecified', 'pass', 'compile_error', 'launch_error', 'crash', 'timeout',
            'wrong_result', 'unwritten_output', 'out_of_bounds_write', 'input_modified',
            'nondeterministic', 'illegal_address', 'resource_error', 'plan_error', 'not_run',
            'infra_error', 'unsupported']


def jobassign(out, op, cases, plan):
    import json
    text = open(plan).read()
    p = json.loads(text)
    body = field_varint(1, 1) + field_varint(2, 1) + field_varint(3, 1) + field_varint(4, 0)
    body += field_bytes(5, op)
    body += field_bytes(6, b''.join(varint(int(c)) for c in cases.split(',')))
    body += field_varint(7, 7) + field_bytes(8, text)
    for name in sorted({k['source'] for k in p['kernels']}):
        src = open(os.path.join(os.path.dirname(plan), name), 'rb').read()
        body += field_bytes(9, field_bytes(1, name) + field_bytes(2, src))
    body += field_varint(10, 300000) + field_varint(11, 50) + field_varint(15, 1)
    with open(out, 'wb') as f:
        f.write(body)


def records(path):
    buf = open(path, 'rb').read()
    i = 0
    while i + 5 <= len(buf):
        n = int.from_bytes(buf[i:i + 4], 'little')
        kind, payload = buf[i + 4:i + 5], buf[i + 5:i + 4 + n]
        i += 4 + n
        if kind == b'L':  # launch window marker: one raw byte, no protobuf
            continue
        m = parse(payload)
        if kind == b'C':
            v = m.get(2, [0])[0]
            print('case %d verdict %s' % (m.get(1, [0])[0], VERDICTS[v] if v < len(VERDICTS) else v))
        elif kind == b'E':
            print('end infra %d' % m.get(9, [0])[0])
    if i != len(buf):
        sys.exit('kgbwire: %d trailing bytes in %s' % (len(buf) - i, path))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cmd, ep = sys.argv[1], sys.argv[2]
    if cmd == 'jobassign':
        jobassign(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
        return
    if cmd == 'records':
        records(sys.argv[2])
        return
    if cmd == 'forge-result':
        send_result(connect(ep), *sys.argv[3:8])
    elif cmd == 'forge-heartbeat':
        send_heartbeat(connect(ep), *sys.argv[3:6])
    elif cmd == 'impostor':
        impostor(ep, *sys.argv[3:10])
    elif cmd == 'rogue':
        rogue(ep, *sys.argv[3:8])
    elif cmd == 'late':
        late(ep, *sys.argv[3:8])
    elif cmd == 'garbage':
        garbage(ep, sys.argv[3])
    elif cmd == 'submit':
        text = open(sys.argv[3], 'rb').read()
        body = field_bytes(1, text) + field_bytes(2, os.path.basename(sys.argv[3]))
        env = request(ep, envelope(F_SUBMIT, body))
        if F_SUBMIT_REPLY in env:
            r = parse(env[F_SUBMIT_REPLY][0])
            print('ok=%d id=%d error=%s' % (r.get(1, [0])[0], r.get(2, [0])[0],
                                            r.get(4, [b''])[0].decode(errors='replace')))
        elif F_ERROR in env:
            r = parse(env[F_ERROR][0])
            print('ok=0 id=0 error=%s' % r.get(1, [b''])[0].decode(errors='replace'))
        else:
            sys.exit('kgbwire: unexpected reply fields %s' % sorted(env))
    elif cmd == 'status':
        env = request(ep, envelope(F_STATUS, b''))
        if F_STATUS_REPLY not in env:
            sys.exit('kgbwire: unexpected reply fields %s' % sorted(env))
        print(len(parse(env[F_STATUS_REPLY][0]).get(1, [])))
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
