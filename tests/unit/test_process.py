# -*- coding: utf-8 -*-
"""host/process.py with real processes (`sleep 30`) in temporary directories.

Every process a test starts is stopped and reaped at teardown, by pid.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from ansible_collections.gsb.kai_lab.plugins.module_utils.host import process

GRACE = 0.15  # startup_grace: long enough for `sh -c 'exit 2'` to be seen exiting


def alive(pid):
    """True when pid is a live, non-zombie process."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (IOError, OSError):
        return False


def _reap(pid):
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


@pytest.fixture
def procs(tmp_path):
    """Paths for one managed program and cleanup of every pid seen."""

    class Procs(object):
        dir = tmp_path
        pid_file = str(tmp_path / "run" / "sleep.pid")
        log_file = str(tmp_path / "log" / "sleep.log")
        pids = set()
        children = []

        def ensure(self, argv, **kwargs):
            kwargs.setdefault("startup_grace", GRACE)
            result = process.ensure(argv, self.pid_file, self.log_file, **kwargs)
            if result.get("pid"):
                self.pids.add(result["pid"])
            return result

        def unrelated(self):
            """A live process that is not `sleep` (python sleeping), ours to clean up."""
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
            self.children.append(child)
            return child

    p = Procs()
    yield p
    for pid in p.pids:
        if alive(pid) and process.process_cmdline(pid)[0] == "sleep":
            os.kill(pid, signal.SIGKILL)
        _reap(pid)
    for child in p.children:
        if child.poll() is None:
            child.kill()
        child.wait()


def write_pid(path, pid):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write("%d\n" % pid)


def test_ensure_started_then_again_changes_nothing(procs):
    first = procs.ensure(["sleep", "30"])
    assert first["changed"] is True
    assert first["action"] == "started"
    pid = first["pid"]
    assert alive(pid)
    assert process.process_cmdline(pid) == ["sleep", "30"]
    assert process.read_pid(procs.pid_file) == pid
    assert "sleep 30" in open(procs.log_file).read()

    second = procs.ensure(["sleep", "30"])
    assert second == {"changed": False, "pid": pid, "action": "none"}
    assert alive(pid)


def test_changed_argv_restarts(procs):
    old = procs.ensure(["sleep", "30"])["pid"]
    result = procs.ensure(["sleep", "31"])
    assert result["changed"] is True
    assert result["action"] == "restarted"
    assert result["pid"] != old
    assert not alive(old)
    assert process.process_cmdline(result["pid"]) == ["sleep", "31"]
    assert process.read_pid(procs.pid_file) == result["pid"]


def test_changed_environment_restarts(procs):
    old = procs.ensure(["sleep", "30"], env={"KAI_LAB_X": "1"})["pid"]
    assert procs.ensure(["sleep", "30"], env={"KAI_LAB_X": "1"})["changed"] is False
    result = procs.ensure(["sleep", "30"], env={"KAI_LAB_X": "2"})
    assert result["action"] == "restarted"
    assert not alive(old) and alive(result["pid"])


def test_state_restarted_always_restarts(procs):
    old = procs.ensure(["sleep", "30"])["pid"]
    result = procs.ensure(["sleep", "30"], state="restarted")
    assert result["changed"] is True and result["action"] == "restarted"
    assert result["pid"] != old and not alive(old) and alive(result["pid"])


def test_stopped_kills_the_process_and_removes_the_pid_file(procs):
    pid = procs.ensure(["sleep", "30"])["pid"]
    result = procs.ensure(["sleep", "30"], state="stopped")
    assert result == {"changed": True, "pid": None, "action": "stopped"}
    assert not alive(pid)
    assert not os.path.exists(procs.pid_file)
    assert not os.path.exists(procs.pid_file + ".argv")
    # Stopping what is stopped changes nothing.
    assert procs.ensure(["sleep", "30"], state="stopped") == {"changed": False, "pid": None, "action": "none"}


def test_check_mode_reports_but_starts_nothing(procs):
    result = procs.ensure(["sleep", "30"], check_mode=True)
    assert result == {"changed": True, "pid": None, "action": "started"}
    assert not os.path.exists(procs.pid_file)
    pid = procs.ensure(["sleep", "30"])["pid"]
    assert procs.ensure(["sleep", "30"], state="stopped", check_mode=True)["changed"] is True
    assert alive(pid), "check mode must not stop anything"


def test_pid_file_of_the_pytest_process_is_not_ours(procs):
    write_pid(procs.pid_file, os.getpid())
    assert process.running_pid(procs.pid_file, ["sleep", "30"]) is None
    # Named sleep.pid: without argv the file name says which program is ours.
    assert process.running_pid(procs.pid_file) is None
    result = procs.ensure(["sleep", "30"])
    assert result["action"] == "started"
    assert result["pid"] != os.getpid()
    assert process.read_pid(procs.pid_file) == result["pid"]


def test_unrelated_live_process_is_never_killed(procs):
    other = procs.unrelated()
    write_pid(procs.pid_file, other.pid)
    assert procs.ensure(["sleep", "30"], state="stopped") == {"changed": False, "pid": None, "action": "none"}
    assert other.poll() is None and alive(other.pid)
    write_pid(procs.pid_file, other.pid)
    assert process.stop(procs.pid_file) is False
    assert process.stop(procs.pid_file, argv=["sleep", "30"]) is False
    assert other.poll() is None and alive(other.pid)


def test_recorded_program_decides_when_no_argv_is_given(procs):
    pid = procs.ensure(["sleep", "30"])["pid"]
    assert process.recorded_program(procs.pid_file) == "sleep"
    assert process.running_pid(procs.pid_file) == pid
    # The same pid but a different expected program is not ours.
    assert process.running_pid(procs.pid_file, ["kube-apiserver"]) is None


def test_missing_garbled_or_dead_pid_file(procs):
    assert process.read_pid(procs.pid_file) is None
    os.makedirs(os.path.dirname(procs.pid_file), exist_ok=True)
    with open(procs.pid_file, "w") as handle:
        handle.write("not a pid\n")
    assert process.read_pid(procs.pid_file) is None
    assert process.running_pid(procs.pid_file) is None
    dead = subprocess.Popen(["true"])
    dead.wait()
    write_pid(procs.pid_file, dead.pid)
    assert process.running_pid(procs.pid_file, ["true"]) is None
    assert process.process_cmdline(dead.pid) is None


def test_program_that_exits_at_once_is_reported_with_its_log_tail(procs):
    argv = ["sh", "-c", "echo 'error: unknown flag: --bogus' >&2; exit 2"]
    result = procs.ensure(argv, startup_grace=3)
    assert result["changed"] is True
    assert result["pid"] is None
    assert result["exited"] == 2
    assert result["action"] == "started"
    assert any("unknown flag: --bogus" in line for line in result["log_tail"])
    assert any(line.startswith("==== start") for line in result["log_tail"])


def test_tail_returns_the_last_lines(tmp_path):
    path = tmp_path / "log"
    path.write_text("".join("line %d\n" % i for i in range(100)))
    assert process.tail(str(path), 3) == ["line 97", "line 98", "line 99"]
    assert process.tail(str(tmp_path / "missing"), 3) == []


def test_a_reused_pid_of_the_same_program_is_not_ours(tmp_path):
    """Same program name, different start time: a later process that got the
    recorded pid (after a crash or reboot) is neither 'running' nor killed."""
    pid_file = str(tmp_path / "python.pid")
    with open(pid_file, "w") as handle:
        handle.write("%d\n" % os.getpid())
    with open(pid_file + ".start", "w") as handle:
        handle.write("1\n")  # not this process's start time
    assert process.running_pid(pid_file, [sys.executable]) is None
    assert process.stop(pid_file, argv=[sys.executable]) is False
    with open(pid_file + ".start", "w") as handle:
        handle.write("%s\n" % process.start_time(os.getpid()))
    with open(pid_file, "w") as handle:
        handle.write("%d\n" % os.getpid())
    assert process.running_pid(pid_file, [sys.executable]) == os.getpid()


REUSE = r"""
import json, os, signal, subprocess, sys, threading, time
sys.path.insert(0, sys.argv[1])
from ansible_collections.gsb.kai_lab.plugins.module_utils.host import process
if sys.argv[3] == 'no-pidfd':
    process._pidfd_open = lambda pid: None
run = sys.argv[2]
pid_file, log_file = os.path.join(run, 'stubborn.pid'), os.path.join(run, 'stubborn.log')
stubborn = [sys.executable, '-c', 'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)']
first = process.start(stubborn, pid_file, log_file)
time.sleep(0.5)  # let it ignore SIGTERM
second = {}

def reuse_the_pid():
    # While stop() waits out the SIGTERM grace, the checked process dies and
    # another run of the same program gets its pid.
    time.sleep(0.5)
    first.kill()
    first.wait()
    with open('/proc/sys/kernel/ns_last_pid', 'w') as handle:
        handle.write(str(first.pid - 1))
    second['proc'] = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])

thread = threading.Thread(target=reuse_the_pid)
thread.start()
stopped = process.stop(pid_file, timeout=1.5, argv=stubborn)
thread.join()
newcomer = second['proc']
try:  # a SIGKILL takes a moment to end a process: poll() right away would still see it
    newcomer.wait(timeout=0.5)
    alive = False
except subprocess.TimeoutExpired:
    alive = True
result = {'stopped': stopped, 'reused': newcomer.pid == first.pid, 'newcomer_alive': alive}
newcomer.kill()
newcomer.wait()
print(json.dumps(result))
"""


@pytest.mark.parametrize("mode", ["pidfd", "no-pidfd"])
def test_a_pid_reused_while_stopping_is_never_killed(tmp_path, mode):
    """Issue 13 item 13, in a private pid namespace where the next pid can be chosen."""
    from conftest import COLLECTION_PATH
    probe = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("needs unshare --pid (root): %s" % probe.stderr.decode(errors="replace").strip())
    done = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", REUSE,
                           str(COLLECTION_PATH), str(tmp_path), mode],
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["reused"], "the test did not manage to reuse the pid"
    assert result == {"stopped": True, "reused": True, "newcomer_alive": True}


def test_a_kwokctl_pid_file_naming_an_unrelated_program_is_never_trusted(tmp_path):
    """Issue 18 row 11: a pid file with no start time of ours (kwokctl's own)
    naming an unrelated `sleep` is not trusted on the program name: the sleep
    lives on; a process whose command line names the cluster's directory (as
    kwokctl starts each component) is stopped."""
    cluster = tmp_path / "kwok" / "clusters" / "kai-lab"
    unrelated = subprocess.Popen(["sleep", "30"])
    program = os.path.basename(sys.executable)
    ours = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "--config=%s/kwok.yaml" % cluster])
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "--config=/elsewhere/kwok.yaml"])
    try:
        sleep_pid = str(cluster / "pids" / "sleep.pid")
        write_pid(sleep_pid, unrelated.pid)
        assert process.running_pid(sleep_pid) is None
        assert process.stop(sleep_pid, timeout=1) is False
        assert unrelated.poll() is None and alive(unrelated.pid)

        python_pid = str(cluster / "pids" / (program + ".pid"))
        write_pid(python_pid, stranger.pid)
        assert process.stop(python_pid, timeout=1) is False
        assert stranger.poll() is None and alive(stranger.pid)

        write_pid(python_pid, ours.pid)
        assert process.running_pid(python_pid) == ours.pid
        assert process.stop(python_pid, timeout=5) is True
        assert ours.wait(timeout=5) == -signal.SIGTERM
        assert not os.path.exists(python_pid)
    finally:
        for child in (unrelated, ours, stranger):
            if child.poll() is None:
                child.kill()
            child.wait()


def test_several_started_together_share_one_grace_and_a_bad_one_is_named(procs):
    specs = [dict(argv=["sleep", "30"], pid_file=str(procs.dir / ("p%d.pid" % n)),
                  log_file=str(procs.dir / ("p%d.log" % n))) for n in range(3)]
    specs[1]["argv"] = ["sh", "-c", "echo bad flag --x; exit 2"]
    started = time.monotonic()
    grace = 2.0
    results = process.ensure_all(specs, startup_grace=grace)
    elapsed = time.monotonic() - started
    for result in results:
        if result.get("pid"):
            procs.pids.add(result["pid"])
    # One grace for all three; in a row the two that run would each wait theirs (2 x grace).
    # The allowance for a busy machine is one grace.
    assert elapsed < grace * 2
    assert [r["action"] for r in results] == ["started", "started", "started"]
    assert results[1]["exited"] == 2 and results[1]["pid"] is None
    assert "bad flag --x" in "\n".join(results[1]["log_tail"])
    assert alive(results[0]["pid"]) and alive(results[2]["pid"]) and "exited" not in results[0]
    # A second call changes nothing and starts no grace wait.
    again = process.ensure_all([specs[0], specs[2]])
    assert [r["changed"] for r in again] == [False, False]


def test_several_stopped_together_are_waited_for_together(procs, tmp_path):
    # Three programs that each take 1.5 s to exit after SIGTERM.
    slow = "trap 'sleep 1.5; exit 0' TERM; while :; do sleep 0.05; done"
    specs = [dict(argv=["bash", "-c", slow], pid_file=str(tmp_path / ("s%d.pid" % n)),
                  log_file=str(tmp_path / ("s%d.log" % n))) for n in range(3)]
    for result in process.ensure_all(specs, startup_grace=0.1):
        procs.pids.add(result["pid"])
    pids = [process.read_pid(spec["pid_file"]) for spec in specs]
    started = time.monotonic()
    results = process.ensure_all([dict(spec, argv=[]) for spec in specs], state="stopped")
    elapsed = time.monotonic() - started
    assert [r["action"] for r in results] == ["stopped"] * 3
    assert not any(alive(pid) for pid in pids)
    assert not any(os.path.exists(spec["pid_file"]) for spec in specs)
    # The slowest one's 1.5 s, not 3 x 1.5 s in a row (1.5 s of allowance for a busy machine).
    assert elapsed < 2 * 1.5
    # Stopping what is already stopped changes nothing.
    assert [r["changed"] for r in process.ensure_all(specs, state="stopped")] == [False] * 3
