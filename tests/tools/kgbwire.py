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


def connect(endpoint):
    ctx = zmq.Context.instance()
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 2000)
    s.setsockopt(zmq.SNDHWM, 0)
    s.connect(endpoint)
    return s


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
    if cmd == 'garbage':
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
