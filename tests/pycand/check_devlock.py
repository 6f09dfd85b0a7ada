"""The recorder's try-only hold of the device lock (kgb_record.DeviceLock.take_try,
docs/worker.md "Sharing a device"), checked against holds made through other open
files, as other processes make them: it never gets ahead of a timing waiting at the
gate, it shares with shared holders, it does not wait for an exclusive holder past its
limit, and it goes ahead without the lock when the limit passes.

    check_devlock.py DIR      # prints one line per check; exits 1 when one fails"""
import fcntl
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "worker", "pyrec"))
import kgb_record  # noqa: E402

d = sys.argv[1]
os.makedirs(d, exist_ok=True)
path = os.path.join(d, "device.lock")
trace = os.path.join(d, "trace")
failed = 0


def check(ok, what):
    global failed
    print(("ok " if ok else "FAIL ") + what)
    failed += not ok


def other(suffix=""):
    return os.open(path + suffix, os.O_RDWR | os.O_CREAT, 0o600)


lock = kgb_record.DeviceLock({"path": path, "trace": trace})

# a timing waits at the gate: the try-only hold does not get the lock before it
gate = other(".gate")
fcntl.flock(gate, fcntl.LOCK_EX)
t = time.monotonic()
lock.take_try(0.2)
check(not lock.held and time.monotonic() - t >= 0.2,
      "a timing waiting at the gate goes first: the try gives up after its limit, unheld")
fcntl.flock(gate, fcntl.LOCK_UN)

# another shared holder (a validation run): shared together
sh = other()
fcntl.flock(sh, fcntl.LOCK_SH)
lock.take_try(0.2)
check(lock.held, "held shared beside another shared hold")
lock.release()
fcntl.flock(sh, fcntl.LOCK_UN)

# an exclusive holder (a timing): not held while it times
ex = other()
fcntl.flock(ex, fcntl.LOCK_EX)
lock.take_try(0.2)
check(not lock.held, "not held while another holds the lock exclusively")
fcntl.flock(ex, fcntl.LOCK_UN)

# free: held at once, and the hold is traced as a shared one
lock.take_try(0.2)
check(lock.held, "held when the device is free")
lock.release()
with open(trace) as f:
    lines = f.read().split()
check(len(lines) == 10 and lines[1] == "SH" and lines[6] == "SH", "the two holds are in the trace: %s" % lines)
sys.exit(1 if failed else 0)
