"""What a candidate's Python may open (docs/security.md, "What a candidate can read").

The recorder, the replayer and the Triton helper call install() after torch and Triton are imported and
before the candidate's module is: from then on an audit hook refuses, with
PermissionError, every open (open(), os.open, io, an import's read of a module file)
and every directory listing of a path outside

  - the Python installation and the directories on sys.path at that moment (the
    standard library, site-packages, kgb's own recorder),
  - the child's private working directory and its temporary directory,
  - the Triton and kgb cache directories named in the environment,
  - the system's libraries and devices (/usr, /lib*, /dev, /sys, /etc/ld.so.cache)
    and this process's own /proc entries;

and every path under a directory of KGB_CONFINE_DENY (colon-separated, set by the
worker's sandbox: the reference cache, which holds the answers of every case), even
where one of the roots above holds it (a cache under the temporary directory).

Paths are resolved (symbolic links followed) before they are compared, so a link in
the working directory does not lead out. This is an audit hook, not an operating
system boundary: code that calls the C library itself (ctypes) is not stopped by it;
the child's environment, limits and network namespace (worker/compile.c) stay the
outer fence.
"""
import os
import sys

_SYSTEM = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/dev", "/sys", "/etc/ld.so.cache",
           "/proc/self", "/proc/thread-self", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat",
           "/proc/sys", "/proc/driver")
_EVENTS = ("open", "os.listdir", "os.scandir", "glob.glob")
_roots = None
_deny = ()


def _real(p):
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    return os.path.realpath(os.path.abspath(p))


def allowed(path):
    """True if the (resolved) path lies under one of the roots."""
    p = _real(path)
    for r in _deny:
        if p == r or p.startswith(r.rstrip("/") + "/"):
            return False
    for r in _roots:
        if p == r or p.startswith(r.rstrip("/") + "/"):
            return True
    return False


def _hook(event, args):
    if event not in _EVENTS or not args:
        return
    path = args[0]
    if not isinstance(path, (str, bytes, os.PathLike)):
        return  # an fd, or glob's pattern list
    path = os.fspath(path)
    if not allowed(path):
        if not os.path.lexists(path):
            # what the call would have met anyway (os.stat tells as much): libraries
            # that look for an optional file go on as without the hook
            raise FileNotFoundError(2, "No such file or directory", path)
        raise PermissionError("kgb: a candidate may not read '%s' (outside its sandbox: docs/security.md)"
                              % (os.fsdecode(path) if isinstance(path, bytes) else path))


def install(extra=()):
    """Confine the rest of this process's Python-level file access (once)."""
    global _roots, _deny
    if _roots is not None:
        return
    _deny = tuple(_real(d) for d in os.environ.get("KGB_CONFINE_DENY", "").split(":") if d)
    import tempfile
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, os.getcwd(),
             tempfile.gettempdir(), "/proc/%d" % os.getpid(),
             # kgb's own Python: the recorder, the replayer and the Triton helper above
             # them; in the source tree, the PyTorch provider
             os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
             os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "kgb", "providers")}
    roots.update(p for p in sys.path if p and os.path.isdir(p))
    for v in ("TRITON_CACHE_DIR", "TRITON_HOME", "TRITON_DUMP_DIR", "KGB_CACHE_DIR", "CUDA_HOME",
              "CUDA_PATH", "KGB_PYREC_COMPILE_MEMO"):
        if os.environ.get(v):
            roots.add(os.environ[v])
    roots.update(extra)
    # sys.path entries resolve into their real directories; the system roots stay as
    # named (and resolved: /lib may be a link to /usr/lib)
    _roots = sorted({_real(r) for r in roots} | set(_SYSTEM) | {_real(s) for s in _SYSTEM})
    sys.addaudithook(_hook)
