#!/usr/bin/env python3
"""A test double of a model API (no real endpoint is reachable from the tests).

It plays both an OpenAI-compatible chat-completions endpoint (POST .../chat/completions)
and an Anthropic messages endpoint (POST .../messages), and answers kgb generate's
prompts with canned candidates from examples/demo: per operator a script of answer kinds
by round (the round is read from the reflection text of the prompt), and per operator a
fault served on the first request of each prompt (429 with Retry-After, 500, a slow
answer, a truncated body, malformed JSON).

It counts, per prompt (sha256 of system + "\\n" + user, as kgb records it), the requests
and the valid answers it delivered; GET /counts returns them, with every request's time
and outcome. GET /control?delay=S&delay_round=R&hold=0|1&drop=1 slows answers down
(from round R on), holds them until hold=0, and with drop=1 drops the requests held so
far (their client was killed) instead of answering them.

usage: model_double.py ROOT PORTFILE
"""
import hashlib
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = sys.argv[1]
DEMO = os.path.join(ROOT, "examples", "demo")
FILES = {"add": "add", "silu": "silu", "sum": "sum", "softmax": "softmax", "index_select": "index_select",
         "clone": "clone", "cumsum": "cumsum", "gt": "gt", "rms_norm": "rms_norm",
         "rotary_embedding": "rotary_embedding", "cublasSgemm_v2": "sgemm", "cublasSaxpy_v2": "saxpy"}

# answer kind per round (the last one repeats)
SCRIPT = {
    "add": ["good"],
    "silu": ["broken", "good"],
    "sum": ["good"],
    "index_select": ["broken", "broken", "good"],
    "clone": ["nocode", "good"],
    "cumsum": ["badplan", "good"],
    "gt": ["broken"],
    "rms_norm": ["good"],
    "rotary_embedding": ["good"],
    "cublasSaxpy_v2": ["good"],
}
# the fault served on the first request of every prompt of these operators
FAULT = {"sum": "429", "rms_norm": "500", "rotary_embedding": "truncated", "cublasSaxpy_v2": "malformed",
         "add": "slow"}

lock = threading.Lock()
counts = {}      # hash -> {"op", "round", "requests", "answered"}
events = []      # [time, hash, outcome]
control = {"delay": 0.0, "delay_round": 0, "hold": False, "drop_before": 0.0}
prompts = {}     # hash -> the user prompt of its first request
state = {"writing": 0, "held": 0}


def candidate(op, kind):
    f = FILES[op]
    if kind == "nocode":
        return "I would need more detail about the operator before writing a kernel for it."
    src_dir = "agent-b" if kind == "broken" else "baseline"
    plan = json.load(open(os.path.join(DEMO, src_dir, f + ".plan.json")))
    name = plan["kernels"][0]["source"]
    src = open(os.path.join(DEMO, src_dir, name)).read()
    if kind == "badplan":
        plan["kernels"][0]["args"][0] = {"tensor": "no_such_tensor"}
    if op == "sum":
        # the file named on the line before its block, a plain ``` fence
        return ("Plan:\n\n```json\n%s\n```\n\nKernel **%s**:\n```\n%s```\n" %
                (json.dumps(plan, indent=1), name, src))
    return ("Here is a kernel for %s.\n\n```json\n%s\n```\n\n```opencl %s\n%s```\n" %
            (op, json.dumps(plan, indent=1), name, src))


def round_of(user):
    m = re.search(r"\(round (\d+)\) did not pass", user)
    return int(m.group(1)) + 1 if m else 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send_json(self, code, obj, headers=()):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.startswith("/control"):
            q = dict(p.split("=", 1) for p in self.path.split("?", 1)[1].split("&")) if "?" in self.path else {}
            with lock:
                if "delay" in q:
                    control["delay"] = float(q["delay"])
                if "delay_round" in q:
                    control["delay_round"] = int(q["delay_round"])
                if "hold" in q:
                    control["hold"] = q["hold"] == "1"
                if q.get("drop") == "1":
                    control["drop_before"] = time.time()
            self.send_json(200, control)
        elif self.path == "/prompts":
            with lock:
                self.send_json(200, prompts)
        elif self.path == "/counts":
            with lock:
                self.send_json(200, {"prompts": counts, "events": events, "writing": state["writing"],
                                     "held": state["held"]})
        else:
            self.send_json(404, {"error": "no such path"})

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        req = json.loads(self.rfile.read(n))
        anthropic = self.path.endswith("/messages")
        if anthropic:
            system = req.get("system", "")
            user = req["messages"][-1]["content"]
            if self.headers.get("x-api-key") != os.environ.get("DOUBLE_KEY", "test-key-anthropic"):
                return self.send_json(401, {"error": {"message": "invalid key " + str(self.headers.get("x-api-key"))}})
        else:
            msgs = req["messages"]
            system = msgs[0]["content"] if msgs[0]["role"] == "system" else ""
            user = msgs[-1]["content"]
            if self.headers.get("Authorization") != "Bearer " + os.environ.get("DOUBLE_KEY", "test-key-openai"):
                return self.send_json(401, {"error": {"message": "invalid key " + str(self.headers.get("Authorization"))}})
        h = hashlib.sha256((system + "\n" + user).encode()).hexdigest()
        m = re.search(r"^Operator: (\S+)$", user, re.M)
        op = m.group(1) if m else "?"
        rnd = round_of(user)
        with lock:
            c = counts.setdefault(h, {"op": op, "round": rnd, "requests": 0, "answered": 0})
            c["requests"] += 1
            first = c["requests"] == 1
            prompts.setdefault(h, user)
            delay = control["delay"] if rnd >= control["delay_round"] else 0
        fault = FAULT.get(op) if first else None
        if fault == "429":
            events.append([time.time(), h, "429"])
            return self.send_json(429, {"error": {"message": "rate limited"}}, [("Retry-After", "1")])
        if fault == "500":
            events.append([time.time(), h, "500"])
            return self.send_json(500, {"error": {"message": "overloaded"}})
        if fault == "slow":
            # past the client's timeout, then no answer at all
            events.append([time.time(), h, "slow"])
            time.sleep(4)
            self.close_connection = True
            return
        if delay:
            time.sleep(delay)
        held_since = None
        while True:
            with lock:
                if not control["hold"]:
                    if held_since is not None:
                        state["held"] -= 1
                        if held_since < control["drop_before"]:
                            # held past a kill of its client: never answered
                            self.close_connection = True
                            return
                    state["writing"] += 1
                    break
                if held_since is None:
                    held_since = time.time()
                    state["held"] += 1
            time.sleep(0.05)
        try:
            kinds = SCRIPT.get(op, ["good"])
            text = candidate(op, kinds[min(rnd, len(kinds) - 1)]) if op in FILES else "no such operator"
            pin, pout = len(system + user) // 4, len(text) // 4
            if anthropic:
                obj = {"id": "msg_1", "type": "message", "role": "assistant", "model": req["model"],
                       "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                       "usage": {"input_tokens": pin, "output_tokens": pout, "cache_creation_input_tokens": 11,
                                 "cache_read_input_tokens": 5}}
            else:
                obj = {"id": "c1", "object": "chat.completion", "model": req["model"],
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                    "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": pin + 7, "completion_tokens": pout, "total_tokens": pin + pout + 7,
                                 "prompt_tokens_details": {"cached_tokens": 7},
                                 "completion_tokens_details": {"reasoning_tokens": 3}}}
            body = json.dumps(obj).encode()
            if fault == "truncated":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[: len(body) // 3])
                self.wfile.flush()
                self.close_connection = True
                events.append([time.time(), h, "truncated"])
                return
            if fault == "malformed":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                bad = b'{"choices": [{"message": {"content": "oops'
                self.send_header("Content-Length", str(len(bad)))
                self.end_headers()
                self.wfile.write(bad)
                events.append([time.time(), h, "malformed"])
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            with lock:
                c["answered"] += 1
                events.append([time.time(), h, "answer"])
        finally:
            with lock:
                state["writing"] -= 1


srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
srv.daemon_threads = True
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
srv.serve_forever()
