"""The Python client (client/coloc_report.py): bounded sends, aggregation, and a round trip to a
colocd this test starts. `make client-test` runs it beside a private munged (tests/unit-run)."""

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "client"))
import coloc_report  # noqa: E402

BUILD = os.environ.get("COLOC_BUILD_DIR", os.path.join(ROOT, "build"))


def settings(endpoint, interval_s=0.0, timeout_ms=50):
    return coloc_report.Settings(42, endpoint, "n1", os.environ.get("COLOC_MUNGE_SOCKET", ""), interval_s, timeout_ms)


class Lines:
    def __init__(self):
        self.lines = []
        self.lock = threading.Lock()

    def __call__(self, line):
        with self.lock:
            self.lines.append(line)


class Scratch(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="coloc-client-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def check_unanswered(self, endpoint):
        log = Lines()
        # A call that waited for its send would take the whole 200 ms timeout against a frozen
        # colocd; 50 ms leaves room for a loaded 2-core machine.
        r = coloc_report.Reporter(settings(endpoint, timeout_ms=200), log=log)
        for _ in range(4):
            t0 = time.monotonic()
            r.iteration(0.1)
            self.assertLess(time.monotonic() - t0, 0.05)
            self.assertTrue(r.wait_idle(5))
        t0 = time.monotonic()
        r.iteration(0.1)
        r.close()
        self.assertLess(time.monotonic() - t0, 0.2 + 0.5)  # one bounded send, munge included
        self.assertEqual((r.failed, r.sent), (5, 0))
        self.assertEqual(len(log.lines), 1, log.lines)
        self.assertTrue(log.lines[0].startswith("coloc: job 42: "), log.lines[0])
        self.assertIn("unavailable", log.lines[0])


@unittest.skipUnless(shutil.which("munge"), "needs the munge command")
class BoundedSend(Scratch):
    def test_colocd_down(self):
        self.check_unanswered("ipc://" + os.path.join(self.dir, "nobody.sock"))

    def test_colocd_frozen(self):
        path = os.path.join(self.dir, "frozen.sock")
        frozen = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        frozen.bind(path)
        frozen.listen(16)  # accepts connections, never reads nor answers
        self.addCleanup(frozen.close)
        self.check_unanswered("ipc://" + path)


class Aggregation(unittest.TestCase):
    def test_one_mean_with_its_count_per_interval(self):
        sent = []
        r = coloc_report.Reporter(settings("ipc:///nowhere", interval_s=0.3),
                                  send=lambda s, mean, n: sent.append((mean, n)))
        for _ in range(3):
            r.iteration(0.1)
        r.iteration(-1)
        r.iteration(float("nan"))
        r.iteration("x")  # never raises
        time.sleep(0.1)
        self.assertEqual(sent, [])
        time.sleep(0.25)
        r.iteration(0.5)
        self.assertTrue(r.wait_idle(5))
        self.assertEqual(len(sent), 1)
        self.assertAlmostEqual(sent[0][0], 0.2)
        self.assertEqual(sent[0][1], 4)
        r.iteration(0.25)
        r.close()
        self.assertEqual(len(sent), 2)
        self.assertAlmostEqual(sent[1][0], 0.25)
        self.assertEqual(sent[1][1], 1)
        r.iteration(1.0)  # closed: nothing
        self.assertEqual(len(sent), 2)

    def test_settings_from_the_environment(self):
        job = {"SLURM_JOB_ID": "123", "COLOC_DECISION": "7", "SLURMD_NODENAME": "n1"}
        self.assertEqual(coloc_report.settings_from_env({}), (None, ""))
        s, why = coloc_report.settings_from_env(job)
        self.assertEqual((s.job_id, s.endpoint, s.node, s.interval_s, s.timeout_ms),
                         (123, "ipc:///run/coloc/colocd.sock", "n1", 30.0, 500))
        s, _ = coloc_report.settings_from_env(dict(job, COLOC_ENDPOINT="tcp://h:5555", COLOC_REPORT_INTERVAL_S="0"))
        self.assertEqual((s.endpoint, s.interval_s), ("tcp://h:5555", 0.0))
        s, why = coloc_report.settings_from_env(dict(job, COLOC_REPORT_INTERVAL_S="soon"))
        self.assertIsNone(s)
        self.assertIn("COLOC_REPORT_INTERVAL_S=soon", why)
        self.assertEqual(coloc_report.settings_from_env(dict(job, COLOC_REPORT="0")), (None, ""))
        self.assertEqual(coloc_report.settings_from_env({"SLURM_JOB_ID": "123"}), (None, ""))


def load_module(library):
    """A fresh copy of the module as a job would import it, with COLOC_REPORT_LIBRARY=library."""
    saved = os.environ.get("COLOC_REPORT_LIBRARY")
    os.environ["COLOC_REPORT_LIBRARY"] = library
    try:
        spec = importlib.util.spec_from_file_location("coloc_report_copy", os.path.join(ROOT, "client", "coloc_report.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        if saved is None:
            del os.environ["COLOC_REPORT_LIBRARY"]
        else:
            os.environ["COLOC_REPORT_LIBRARY"] = saved


@unittest.skipUnless(os.environ.get("COLOC_MUNGE_SOCKET") and os.path.exists(os.path.join(BUILD, "colocd")),
                     "needs build/colocd and a private munged (make client-test)")
class RoundTrip(unittest.TestCase):
    """Both ways of the module (the C library through ctypes, its own wire code) against one colocd."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="coloc-client-")
        cls.addClassCleanup(shutil.rmtree, cls.dir, True)
        cls.munge = os.environ["COLOC_MUNGE_SOCKET"]
        cls.endpoint = "ipc://" + os.path.join(cls.dir, "colocd.sock")
        conf = os.path.join(cls.dir, "colocd.yaml")
        with open(conf, "w") as f:
            f.write('listen: ["%s"]\ndatabase: %s\nmunge_socket: %s\npidfile: %s\n'
                    'node_types: { quad: { gpus: 4, slots_per_gpu: 2 } }\nnodes: [ { names: "n1", type: quad } ]\n'
                    % (cls.endpoint, os.path.join(cls.dir, "coloc.db"), cls.munge, os.path.join(cls.dir, "colocd.pid")))
        log = open(os.path.join(cls.dir, "colocd.log"), "w")
        cls.addClassCleanup(log.close)
        colocd = subprocess.Popen([os.path.join(BUILD, "colocd"), "-f", "-c", conf], stdout=log, stderr=log)

        def stop():
            colocd.terminate()
            colocd.wait(10)
        cls.addClassCleanup(stop)
        deadline = time.monotonic() + 10
        while True:
            try:
                coloc_report.call(cls.endpoint, {"op": "status"}, cls.munge, 1000)
                break
            except coloc_report.ReportError:
                if time.monotonic() > deadline or colocd.poll() is not None:
                    with open(os.path.join(cls.dir, "colocd.log")) as f:
                        raise AssertionError("colocd did not start: " + f.read())
                time.sleep(0.1)

    def observations(self):
        return coloc_report.call(self.endpoint, {"op": "status"}, self.munge, 5000)["status"]["observations"]

    def report_iterations(self, module, job_id):
        """Places job `job_id` and reports two iterations through `module` as the job would; returns
        the module's own Reporter (None with the library)."""
        placed = coloc_report.call(self.endpoint, {"op": "place", "job_id": job_id, "node": "n1", "slots": 1,
                                                   "mode": "bind"}, self.munge, 5000)
        self.assertTrue(placed["ok"])
        env = {"SLURM_JOB_ID": str(job_id), "COLOC_DECISION": str(placed["decision"]), "COLOC_ENDPOINT": self.endpoint,
               "SLURMD_NODENAME": "n1", "COLOC_REPORT_INTERVAL_S": "0", "COLOC_REPORT_TIMEOUT_MS": "5000"}
        saved = dict(os.environ)
        os.environ.update(env)
        try:
            self.assertTrue(module.init())
            t0 = time.monotonic()
            module.iteration(0.3)
            module.iteration(0.5)
            self.assertLess(time.monotonic() - t0, 0.05)  # the send happens on the module's thread
            r = module._reporter
            module.close()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        return r

    def test_an_iteration_time_reaches_colocds_model_through_the_python_client(self):
        module = load_module("none")
        self.assertEqual(module.backend(), "python")
        before = self.observations()
        r = self.report_iterations(module, 1)
        self.assertGreaterEqual(r.sent, 1)
        self.assertEqual(r.failed, 0)
        self.assertGreaterEqual(self.observations(), before + 1)
        with self.assertRaises(coloc_report.ReportError) as e:
            coloc_report.call(self.endpoint, {"op": "observe", "job_id": 99, "iter_time_s": 1.0}, self.munge, 5000)
        self.assertEqual(e.exception.code, "not_found")

    def test_an_iteration_time_reaches_colocds_model_through_the_c_library(self):
        library = os.path.join(BUILD, "libcoloc_report.so")
        self.assertTrue(os.path.exists(library), library + " is not built")
        module = load_module(library)
        self.assertEqual(module.backend(), "library")
        before = self.observations()
        self.assertIsNone(self.report_iterations(module, 2))
        self.assertGreaterEqual(self.observations(), before + 1)

    def test_a_library_that_cannot_be_loaded_leaves_the_python_client(self):
        self.assertEqual(load_module(os.path.join(self.dir, "absent", "libcoloc_report.so")).backend(), "python")


if __name__ == "__main__":
    unittest.main()


class Phase(unittest.TestCase):
    """align(): the same slots as the C library's coloc_report_align (client/phase_align.hpp)."""

    def test_first_iteration_waits_for_its_slot(self):
        a = coloc_report.PhaseAligner(0.25, 1.0, 0.1, 0.0)
        self.assertAlmostEqual(a.wait_before_iteration(100.5), 0.75)

    def test_later_iterations_wait_only_when_a_little_early(self):
        a = coloc_report.PhaseAligner(0.0, 1.0, 0.1, 0.0)
        self.assertEqual(a.wait_before_iteration(10.0), 0.0)
        self.assertAlmostEqual(a.wait_before_iteration(10.95), 0.05)
        self.assertAlmostEqual(a.wait_before_iteration(11.6), 0.1)
        self.assertEqual(a.wait_before_iteration(12.2), 0.0)

    def test_opt_in_only(self):
        self.assertIsNone(coloc_report._aligner_from_env(1.0, {}))
        a = coloc_report._aligner_from_env(1.0, {"COLOC_PHASE_ALIGN": "1", "COLOC_PHASE_OFFSET_S": "0.5"})
        self.assertEqual((a.offset_s, a.period_s), (0.5, 1.0))
