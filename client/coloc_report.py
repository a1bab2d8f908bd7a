"""coloc_report: a training job tells colocd how long its iterations take.

Inside a job placed by spank_coloc.so::

    import coloc_report
    coloc_report.init()
    for batch in loader:
        t0 = time.monotonic()
        train_step(batch)
        coloc_report.iteration(time.monotonic() - t0)
    coloc_report.close()

The mean iteration time and the iteration count go to colocd (its ``observe`` request) at most
once per interval (COLOC_REPORT_INTERVAL_S, default 30 s), authenticated with munge as the job's
user (the ``munge`` command). Sending happens on a thread of its own: ``iteration()`` only adds
to a sum and never waits on colocd or munged, and nothing here raises into the training loop. A
failed send is dropped; the first failure is logged as one line on stderr, starting "coloc: ".

The same environment as libcoloc_report (coloc_report(3)): SLURM_JOB_ID and COLOC_DECISION
(required), COLOC_ENDPOINT, SLURMD_NODENAME, COLOC_REPORT=0, COLOC_REPORT_INTERVAL_S,
COLOC_REPORT_TIMEOUT_MS, COLOC_MUNGE_SOCKET.

``align(period_s)`` at the start of each iteration keeps the phase slot colocd gave the job when
it opts in (COLOC_PHASE_ALIGN=1; COLOC_PHASE_OFFSET_S, COLOC_PHASE_PERIOD_S, COLOC_PHASE_MAX_SLEEP),
as coloc_report_align() does (coloc_report(3)).

Where libcoloc_report.so can be loaded, the module-level API (init, iteration, flush, close,
align) is the C library's, through ctypes: COLOC_REPORT_LIBRARY names its path (``none``: do not
load it), else the copy beside this file, else the installed one. Without it (a container that
lacks the library) the same API runs here on the standard library alone: ZeroMQ's wire protocol
(ZMTP 3.0, NULL mechanism, as a REQ peer) over the ipc:// or tcp:// endpoint, one connection per
report. ``backend()`` says which is in use. ``call``, ``Reporter`` and ``PhaseAligner`` are always
this module's own.
"""

import atexit
import ctypes
import ctypes.util
import hashlib
import json
import math
import os
import socket
import struct
import subprocess
import sys
import threading
import time

__all__ = ["init", "iteration", "flush", "close", "align", "backend", "PhaseAligner", "Reporter", "Settings",
           "settings_from_env", "call"]

DEFAULT_ENDPOINT = "ipc:///run/coloc/colocd.sock"
_SCHEME = "coloc2:"  # proto/auth.cpp: the credential's payload is this and the body's SHA-256


class ReportError(Exception):
    """A request that got no ok reply: ``code`` is colocd's error code or ``unavailable``."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class Settings:
    def __init__(self, job_id, endpoint=DEFAULT_ENDPOINT, node="", munge_socket="", interval_s=30.0, timeout_ms=500):
        self.job_id = job_id
        self.endpoint = endpoint
        self.node = node
        self.munge_socket = munge_socket
        self.interval_s = interval_s
        self.timeout_ms = timeout_ms


def _number(text, lo, hi):
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) and lo <= v <= hi else None


def settings_from_env(env=None):
    """(Settings, "") when reporting is on; (None, why) when off (why empty: not a coloc job)."""
    env = os.environ if env is None else env
    if env.get("COLOC_REPORT") == "0":
        return None, ""
    job = env.get("SLURM_JOB_ID", "")
    if not job.isdigit() or not 1 <= int(job) <= 0xFFFFFFFF or not env.get("COLOC_DECISION"):
        return None, ""
    s = Settings(int(job), env.get("COLOC_ENDPOINT") or DEFAULT_ENDPOINT, env.get("SLURMD_NODENAME", ""),
                 env.get("COLOC_MUNGE_SOCKET", ""))
    v = env.get("COLOC_REPORT_INTERVAL_S", "")
    if v:
        i = _number(v, 0, 1e6)
        if i is None:
            return None, "COLOC_REPORT_INTERVAL_S=%s is not a number of seconds from 0 to 1e6" % v
        s.interval_s = i
    v = env.get("COLOC_REPORT_TIMEOUT_MS", "")
    if v:
        t = _number(v, 1, 60000)
        if t is None or t != int(t):
            return None, "COLOC_REPORT_TIMEOUT_MS=%s is not a whole number of milliseconds from 1 to 60000" % v
        s.timeout_ms = int(t)
    return s, ""


def observe_body(settings, mean_s, count):
    body = {"op": "observe", "job_id": settings.job_id, "iter_time_s": mean_s, "iterations": count}
    if settings.node:
        body["node"] = settings.node
    return body


# --- the wire: envelope, munge, ZMTP ---------------------------------------------------------------


def seal(body, munge_socket="", timeout_s=5.0):
    """The wire bytes of a request: the body as written once, then its credential as the last
    member, the credential's payload being the digest of exactly those body bytes (envelope.hpp)."""
    body = dict(body)
    body.pop("cred", None)
    body["v"] = 1
    raw = json.dumps(body, separators=(",", ":"))
    payload = _SCHEME + hashlib.sha256(raw.encode()).hexdigest()
    cmd = ["munge", "-s", payload]
    if munge_socket:
        cmd += ["-S", munge_socket]
    try:
        out = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ReportError("internal", "munge: %s" % e) from None
    if out.returncode != 0:
        raise ReportError("internal", out.stderr.decode(errors="replace").strip() or "munge failed")
    cred = out.stdout.decode().strip()
    return (raw[:-1] + ("," if raw != "{}" else "") + '"cred":' + json.dumps(cred) + "}").encode()


def _connect(endpoint, timeout_s):
    if endpoint.startswith("ipc://"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout_s)
        try:
            s.connect(endpoint[len("ipc://"):])
        except BaseException:
            s.close()
            raise
        return s
    if endpoint.startswith("tcp://"):
        host, _, port = endpoint[len("tcp://"):].rpartition(":")
        s = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s)
        s.settimeout(timeout_s)
        return s
    raise ReportError("unavailable", "endpoint %s: only ipc:// and tcp:// are supported" % endpoint)


def _recv_exact(s, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("colocd closed the connection")
        buf += chunk
    return bytes(buf)


def _frame(data, more=False, command=False):
    flags = (0x01 if more else 0) | (0x04 if command else 0)
    if len(data) > 255:
        return struct.pack(">BQ", flags | 0x02, len(data)) + data
    return struct.pack(">BB", flags, len(data)) + data


def _read_frame(s):
    flags = _recv_exact(s, 1)[0]
    size = struct.unpack(">Q", _recv_exact(s, 8))[0] if flags & 0x02 else _recv_exact(s, 1)[0]
    if size > 256 * 1024 * 1024:
        raise ConnectionError("a frame of %d bytes" % size)
    return flags, _recv_exact(s, size)


# ZMTP 3.0 greeting: signature, version 3.0, mechanism NULL, as-server 0, filler.
_GREETING = b"\xff" + b"\x00" * 8 + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\x00") + b"\x00" + b"\x00" * 31
_READY = _frame(b"\x05READY" + b"\x0bSocket-Type" + struct.pack(">I", 3) + b"REQ", command=True)


def _exchange(endpoint, wire, timeout_s):
    deadline = time.monotonic() + timeout_s
    s = _connect(endpoint, timeout_s)
    try:
        s.sendall(_GREETING + _READY)
        greeting = _recv_exact(s, 64)
        if greeting[0] != 0xFF or greeting[9] != 0x7F or greeting[10] < 3:
            raise ConnectionError("the peer does not speak ZMTP 3")
        flags, ready = _read_frame(s)
        if not flags & 0x04 or not ready.startswith(b"\x05READY"):
            raise ConnectionError("the peer sent no READY")
        s.sendall(_frame(b"", more=True) + _frame(wire))  # REQ: an empty delimiter, then the body
        parts = []
        while True:
            s.settimeout(max(deadline - time.monotonic(), 0.001))
            flags, data = _read_frame(s)
            if flags & 0x04:
                continue  # a command (PING, ...): not part of the reply
            parts.append(data)
            if not flags & 0x01:
                break
        return parts[-1]
    finally:
        s.close()


def call(endpoint, body, munge_socket="", timeout_ms=500):
    """Sends one request and returns colocd's reply as a dict; raises ReportError."""
    timeout_s = timeout_ms / 1000.0
    wire = seal(body, munge_socket, timeout_s)
    try:
        raw = _exchange(endpoint, wire, timeout_s)
    except (OSError, ConnectionError) as e:
        raise ReportError("unavailable", "colocd at %s: %s" % (endpoint, e)) from None
    try:
        reply = json.loads(raw)
    except ValueError:
        raise ReportError("bad_json", "the reply is not JSON") from None
    if not isinstance(reply, dict) or reply.get("ok") is not True:
        err = reply.get("error", {}) if isinstance(reply, dict) else {}
        raise ReportError(str(err.get("code", "internal")), str(err.get("message", "error without a message")))
    return reply


# --- the reporter ------------------------------------------------------------------------------


def _to_stderr(line):
    try:
        print(line, file=sys.stderr, flush=True)
    except Exception:
        pass


class Reporter:
    """Sums iteration times; a thread of its own sends their mean at most once per interval.

    ``send(settings, mean_s, count)`` (default: the observe request to colocd) and ``log`` (one
    line; default: stderr) may be replaced, for tests."""

    def __init__(self, settings, send=None, log=None):
        self.settings = settings
        self._send = send or self._send_to_colocd
        self._log = log or _to_stderr
        self._pid = os.getpid()  # a forked child (a data loader worker) reports nothing
        self._cv = threading.Condition()
        self._sum = 0.0
        self._count = 0
        self._window_start = time.monotonic()
        self._pending = None  # [mean_s, count]
        self._sending = False
        self._stop = False
        self._closed = False
        self._failure_logged = False
        self.sent = 0
        self.failed = 0
        self._thread = threading.Thread(target=self._run, name="coloc-report", daemon=True)
        self._thread.start()

    def iteration(self, seconds):
        try:
            seconds = float(seconds)
            if not math.isfinite(seconds) or seconds <= 0 or os.getpid() != self._pid:
                return
            with self._cv:
                if self._closed:
                    return
                self._sum += seconds
                self._count += 1
                if time.monotonic() - self._window_start >= self.settings.interval_s:
                    self._enqueue()
        except Exception:
            pass

    def flush(self):
        if os.getpid() != self._pid:
            return
        with self._cv:
            if not self._closed and self._count:
                self._enqueue()

    def _enqueue(self):
        if self._pending:
            n = self._pending[1] + self._count
            self._pending = [(self._pending[0] * self._pending[1] + self._sum) / n, n]
        else:
            self._pending = [self._sum / self._count, self._count]
        self._sum = 0.0
        self._count = 0
        self._window_start = time.monotonic()
        self._cv.notify_all()

    def close(self):
        """Sends what is left and waits for that send (bounded by the timeout)."""
        if os.getpid() != self._pid:
            return
        with self._cv:
            if self._closed:
                return
            self._closed = True
            if self._count:
                self._enqueue()
            self._stop = True
            self._cv.notify_all()
        self._thread.join(self.settings.timeout_ms / 1000.0 + 5.0)

    def wait_idle(self, timeout_s):
        with self._cv:
            return self._cv.wait_for(lambda: not self._pending and not self._sending, timeout_s)

    def _run(self):
        with self._cv:
            while True:
                self._cv.wait_for(lambda: self._pending or self._stop)
                if not self._pending:
                    break
                mean_s, count = self._pending
                self._pending = None
                self._sending = True
                self._cv.release()
                try:
                    ok, why = self._try_send(mean_s, count)
                finally:
                    self._cv.acquire()
                self._sending = False
                if ok:
                    self.sent += 1
                else:
                    self.failed += 1
                    if not self._failure_logged:
                        self._failure_logged = True
                        self._log("coloc: job %d: iteration times not reported to colocd at %s (%s); later failures "
                                  "are dropped without a word" % (self.settings.job_id, self.settings.endpoint, why))
                self._cv.notify_all()
            self._cv.notify_all()

    def _try_send(self, mean_s, count):
        try:
            self._send(self.settings, mean_s, count)
            return True, ""
        except ReportError as e:
            return False, "%s: %s" % (e.code, e)
        except Exception as e:
            return False, str(e) or type(e).__name__

    @staticmethod
    def _send_to_colocd(settings, mean_s, count):
        call(settings.endpoint, observe_body(settings, mean_s, count), settings.munge_socket, settings.timeout_ms)


# --- the C library, when it can be loaded -------------------------------------------------------

LIBRARY_NAME = "libcoloc_report.so"


def _load_library(env=None):
    """libcoloc_report.so with its prototypes set, or None: COLOC_REPORT_LIBRARY's path ("none": no
    library), else the copy beside this file, else the installed one."""
    env = os.environ if env is None else env
    named = env.get("COLOC_REPORT_LIBRARY", "")
    if named == "none":
        return None
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY_NAME)
    candidates = [named] if named else [here, ctypes.util.find_library("coloc_report") or LIBRARY_NAME]
    for path in candidates:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            if named:
                _to_stderr("coloc: COLOC_REPORT_LIBRARY=%s cannot be loaded; using the Python client" % named)
            continue
        lib.coloc_report_init.argtypes, lib.coloc_report_init.restype = [], ctypes.c_int
        lib.coloc_report_iteration.argtypes, lib.coloc_report_iteration.restype = [ctypes.c_double], None
        lib.coloc_report_flush.argtypes, lib.coloc_report_flush.restype = [], None
        lib.coloc_report_close.argtypes, lib.coloc_report_close.restype = [], None
        lib.coloc_report_align.argtypes, lib.coloc_report_align.restype = [ctypes.c_double], ctypes.c_double
        return lib
    return None


_library = _load_library()


def backend():
    """"library" when the C library serves the module-level API, "python" otherwise."""
    return "library" if _library is not None else "python"


# --- the module-level API, as the C library's ---------------------------------------------------

_lock = threading.Lock()
_reporter = None


def init():
    """Reads the environment and starts reporting; True when reports will be sent."""
    global _reporter
    if _library is not None:
        return bool(_library.coloc_report_init())
    close()
    try:
        settings, why = settings_from_env()
        if settings is None:
            if why:
                _to_stderr("coloc: iteration times are not reported: " + why)
            return False
        with _lock:
            _reporter = Reporter(settings)
        return True
    except Exception as e:
        _to_stderr("coloc: iteration times are not reported: %s" % e)
        return False


def iteration(seconds):
    """One training iteration took ``seconds``; cheap, never raises."""
    if _library is not None:
        try:
            _library.coloc_report_iteration(float(seconds))
        except (TypeError, ValueError):
            pass
        return
    r = _reporter
    if r is not None:
        r.iteration(seconds)


def flush():
    """Sends what is summed now, without waiting for the interval."""
    if _library is not None:
        _library.coloc_report_flush()
        return
    r = _reporter
    if r is not None:
        try:
            r.flush()
        except Exception:
            pass


def close():
    """Sends what is left, waits for that send (at most COLOC_REPORT_TIMEOUT_MS) and stops."""
    global _reporter
    if _library is not None:
        _library.coloc_report_close()
        return
    with _lock:
        r, _reporter = _reporter, None
    if r is not None:
        try:
            r.close()
        except Exception:
            pass


atexit.register(close)  # what is summed at exit still goes, as with the C library


class PhaseAligner:
    """Iterations on a wall-clock grid: slots at offset_s + k * period_s * (1 + slack) seconds since
    the epoch (client/phase_align.hpp). The first iteration waits for its slot; later ones sleep only
    when a little early, at most max_share of a period, and never when late."""

    def __init__(self, offset_s, period_s, max_share=0.1, slack=0.02):
        self.offset_s, self.period_s, self.max_share, self.slack = offset_s, period_s, max_share, slack
        self.started = False

    def wait_before_iteration(self, now_s):
        grid = self.period_s * (1 + self.slack)
        if grid <= 0:
            return 0.0
        late = math.fmod(now_s - self.offset_s, grid)
        if late < 0:
            late += grid
        early = grid - late
        if not self.started:
            self.started = True
            return 0.0 if late == 0 else early
        if late < early:
            return 0.0
        return min(early, self.max_share * grid)


def _aligner_from_env(period_s, env=None):
    env = os.environ if env is None else env
    if env.get("COLOC_PHASE_ALIGN") != "1":
        return None
    offset = _number(env.get("COLOC_PHASE_OFFSET_S") or "0", 0, 3600)
    period = _number(env.get("COLOC_PHASE_PERIOD_S") or "0", 0, 3600)
    share = _number(env.get("COLOC_PHASE_MAX_SLEEP") or "0.1", 0, 1)
    if offset is None or period is None or share is None:
        _to_stderr("coloc: iterations are not phase-aligned: a COLOC_PHASE_* setting is not a number in range")
        return None
    return PhaseAligner(offset, period if period > 0 else period_s, share)


_aligner = None
_aligner_read = False


def align(period_s=0.0):
    """Sleeps until this iteration's phase slot when the job opted in; returns the seconds slept."""
    global _aligner, _aligner_read
    if _library is not None:
        try:
            return _library.coloc_report_align(float(period_s))
        except (TypeError, ValueError):
            return 0.0
    try:
        with _lock:
            if not _aligner_read:
                _aligner_read = True
                _aligner = _aligner_from_env(period_s)
            a = _aligner
        if a is None:
            return 0.0
        wait = a.wait_before_iteration(time.time())
        if wait > 0:
            time.sleep(wait)
        return wait
    except Exception:
        return 0.0
