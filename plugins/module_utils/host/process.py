# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Keep a long-running program alive as a detached process with a pid file.

The sim target runs KAI-Scheduler's components and the fake GPU operator as
plain processes. This helper is what a supervisor would do for them, no more:
start when not running, leave alone when running with the same command line,
restart when the command line changed, stop on request.

Layer: this host's processes; imports no other layer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import signal
import subprocess
import tempfile
import time


def read_pid(pid_file):
    """The pid in pid_file, or None when the file is missing or garbled."""
    try:
        with open(pid_file) as handle:
            return int(handle.read().strip())
    except (IOError, OSError, ValueError):
        return None


def start_time(pid):
    """When the process started, in clock ticks since boot (/proc/<pid>/stat field 22), or None."""
    try:
        with open('/proc/%d/stat' % pid) as handle:
            return handle.read().rsplit(')', 1)[1].split()[19]
    except (IOError, OSError, IndexError):
        return None


def process_cmdline(pid):
    """The argv of a live, non-zombie process, or None."""
    try:
        with open('/proc/%d/stat' % pid) as handle:
            # The state follows the parenthesised command name.
            if handle.read().rsplit(')', 1)[1].split()[0] == 'Z':
                return None
        with open('/proc/%d/cmdline' % pid, 'rb') as handle:
            raw = handle.read()
    except (IOError, OSError, IndexError):
        return None
    return [part.decode('utf-8', 'replace') for part in raw.split(b'\0')[:-1]]


def running_pid(pid_file, argv=None):
    """The pid recorded in pid_file if that process is alive and is ours.

    A recycled pid of an unrelated program must never be mistaken for ours
    (and never be killed), so the live process must run the expected
    executable: argv[0] when given, else the one recorded next to the pid
    file at start, else the program the pid file is named after (kwokctl's
    convention, e.g. kube-apiserver.pid). A name alone proves nothing (anyone
    can run a `sleep`), so the process must also be the very one: the start
    time recorded when it was started, or, for a pid file someone else wrote
    (kwokctl's own, with no start time of ours), a command line that names
    the state directory the pid file belongs to (see names_state_dir).
    """
    pid = read_pid(pid_file)
    if pid is None:
        return None
    cmdline = process_cmdline(pid)
    if not cmdline:
        return None
    expected = argv[0] if argv else recorded_program(pid_file)
    if expected is None:
        expected = os.path.basename(pid_file)[:-len('.pid')] if pid_file.endswith('.pid') else None
    if expected and os.path.basename(cmdline[0]) != os.path.basename(expected):
        return None
    # A pid reused by another run of the same program (say, python) after a
    # crash or reboot differs in its start time.
    try:
        with open(pid_file + '.start') as handle:
            recorded = handle.read().strip()
    except (IOError, OSError):
        recorded = None
    if recorded:
        return pid if recorded == start_time(pid) else None
    return pid if names_state_dir(cmdline, state_dir(pid_file)) else None


def state_dir(pid_file):
    """The directory a pid file's directory belongs to: <cluster>/pids/x.pid -> <cluster>.

    kwokctl keeps a cluster's pid files in <cluster>/pids/ and starts each
    process with paths inside <cluster> (etcd's --data-dir, the API server's
    --client-ca-file, the scheduler's --config, the kwok controller's
    --config=<cluster>/kwok.yaml: pkg/kwokctl/components/*.go of kwok v0.8.0).
    """
    return os.path.dirname(os.path.dirname(os.path.abspath(pid_file)))


def names_state_dir(cmdline, directory):
    """True when an argument after the program is a path inside directory (alone or as a flag's value)."""
    if not directory or directory == os.sep:
        return False
    inside = directory.rstrip(os.sep) + os.sep
    for arg in cmdline[1:]:
        value = arg.split('=', 1)[1] if arg.startswith('-') and '=' in arg else arg
        if value.startswith(inside):
            return True
    return False


def recorded_program(pid_file):
    try:
        with open(pid_file + '.argv') as handle:
            return handle.read().split('\n', 1)[0].split('\0', 1)[0] or None
    except (IOError, OSError):
        return None


def start(argv, pid_file, log_file, env=None, cwd=None):
    """Start argv detached from us (own session), output appended to log_file."""
    for path in (pid_file, log_file):
        directory = os.path.dirname(path)
        if directory and not os.path.isdir(directory):
            os.makedirs(directory)
    full_env = dict(os.environ)
    full_env.update(env or {})
    with open(log_file, 'ab') as log, open(os.devnull, 'rb') as devnull:
        log.write(('\n==== start %s: %s\n' % (time.strftime('%Y-%m-%dT%H:%M:%S'), ' '.join(argv))).encode())
        log.flush()
        proc = subprocess.Popen(
            argv, stdin=devnull, stdout=log, stderr=subprocess.STDOUT,
            env=full_env, cwd=cwd, start_new_session=True, close_fds=True)
    with open(pid_file + '.start', 'w') as handle:
        handle.write('%s\n' % (start_time(proc.pid) or ''))
    # A unique temporary name, never a fixed .tmp one that could be a planted symlink.
    fd, temporary = tempfile.mkstemp(prefix='.%s.' % os.path.basename(pid_file), dir=os.path.dirname(pid_file) or '.')
    with os.fdopen(fd, 'w') as handle:
        handle.write('%d\n' % proc.pid)
    os.chmod(temporary, 0o644)
    os.replace(temporary, pid_file)
    return proc


def _pidfd_open(pid):
    """A pidfd for pid (Linux >= 5.3, Python >= 3.9), or None where there is none."""
    opener = getattr(os, 'pidfd_open', None)
    if opener is None or getattr(signal, 'pidfd_send_signal', None) is None:
        return None
    try:
        return opener(pid)
    except OSError:  # gone already, or a kernel without pidfds
        return None


class _Target(object):
    """One checked process to signal: by pidfd, so a reused pid is never hit.

    The pidfd is taken before the identity check; the check is then known to
    be about the pidfd's process when that process is still there after it.
    Without pidfds, every signal re-checks the start time first (a narrow
    window remains, as with any pid-based supervisor).
    """

    def __init__(self, pid, pidfd, started):
        self.pid = pid
        self.pidfd = pidfd
        self.started = started

    def alive(self):
        """True while the checked process runs (not a zombie)."""
        if self.pidfd is not None:
            try:
                signal.pidfd_send_signal(self.pidfd, 0)
            except OSError:
                return False
        # With a pidfd held, /proc/<pid> is this very process while it exists.
        return start_time(self.pid) == self.started and process_cmdline(self.pid) is not None

    def send(self, signum):
        try:
            if self.pidfd is not None:
                signal.pidfd_send_signal(self.pidfd, signum)
            elif start_time(self.pid) == self.started:
                os.kill(self.pid, signum)
        except OSError:  # exited meanwhile
            pass

    def close(self):
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


def _checked_target(pid_file, argv):
    pid = read_pid(pid_file)
    if pid is None:
        return None
    pidfd = _pidfd_open(pid)
    target = _Target(pid, pidfd, start_time(pid))
    if target.started is None or running_pid(pid_file, argv) != pid or not target.alive():
        target.close()
        return None
    return target


def stop(pid_file, timeout=10.0, argv=None):
    """Stop the recorded process: SIGTERM, then SIGKILL after timeout seconds.

    Returns True when a process was stopped. Both signals go to the process
    whose identity was checked, never to a later process that got its pid.
    """
    return stop_all([(pid_file, argv)], timeout)[0]


def stop_all(recorded, timeout=10.0):
    """stop() for several (pid_file, argv): each is sent SIGTERM, then all
    are waited for together (a teardown waits for the slowest, not the sum)."""
    targets = [_checked_target(pid_file, argv) for pid_file, argv in recorded]
    try:
        for target in targets:
            if target is not None:
                target.send(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(t is not None and t.alive() for t in targets):
            time.sleep(0.1)
        for target in targets:
            if target is not None and target.alive():
                target.send(signal.SIGKILL)
    finally:
        for target in targets:
            if target is not None:
                target.close()
    for pid_file, dummy in recorded:
        for path in (pid_file, pid_file + '.argv', pid_file + '.start'):
            if os.path.exists(path):
                os.remove(path)
    return [target is not None for target in targets]


def ensure(argv, pid_file, log_file, state='started', env=None, cwd=None,
           check_mode=False, startup_grace=0.5):
    """Bring the process to state ('started', 'stopped' or 'restarted').

    Returns a dict with changed, pid, action and, when the program died right
    after start, the last lines of its log so the caller can say why.
    """
    spec = dict(argv=argv, pid_file=pid_file, log_file=log_file, env=env, cwd=cwd)
    return ensure_all([spec], state=state, check_mode=check_mode, startup_grace=startup_grace)[0]


def ensure_all(specs, state='started', check_mode=False, startup_grace=0.5):
    """ensure() for several processes (dicts of argv, pid_file, log_file, env,
    cwd), started one after another and then watched for one shared grace
    period, so starting six costs one grace, not six."""
    if state == 'stopped':
        running = [running_pid(spec['pid_file'], spec['argv']) is not None for spec in specs]
        if not check_mode:
            stop_all([(spec['pid_file'], spec['argv']) for spec, alive in zip(specs, running) if alive])
        return [{'changed': alive, 'pid': None, 'action': 'stopped' if alive else 'none'} for alive in running]
    results = []
    started = []
    for spec in specs:
        result, proc = _bring(spec, state, check_mode)
        results.append(result)
        if proc is not None:
            started.append((result, proc, spec['log_file']))
    # A program that cannot even parse its flags exits at once: report it now
    # rather than as a vague timeout later.
    deadline = time.monotonic() + startup_grace
    while started and time.monotonic() < deadline and any(proc.poll() is None for dummy, proc, dummy in started):
        time.sleep(0.05)
    for result, proc, log_file in started:
        if proc.poll() is not None:
            result.update(pid=None, exited=proc.returncode, log_tail=tail(log_file, 20))
    return results


def _bring(spec, state, check_mode):
    """One process to state: its result and, when it was (re)started, its Popen."""
    argv, pid_file = spec['argv'], spec['pid_file']
    env = spec.get('env')
    current = running_pid(pid_file, argv)
    spec_file = pid_file + '.argv'
    wanted = '\0'.join(argv) + '\n' + '\0'.join('%s=%s' % kv for kv in sorted((env or {}).items()))
    try:
        with open(spec_file) as handle:
            recorded = handle.read()
    except (IOError, OSError):
        recorded = None

    action = 'none'
    if current is None:
        action = 'started'
    elif state == 'restarted' or recorded != wanted:
        action = 'restarted'
    if action == 'none' or check_mode:
        return {'changed': action != 'none', 'pid': current, 'action': action}, None

    if current is not None:
        stop(pid_file, argv=argv)
    proc = start(argv, pid_file, spec['log_file'], env=env, cwd=spec.get('cwd'))
    with open(spec_file, 'w') as handle:
        handle.write(wanted)
    return {'changed': True, 'pid': proc.pid, 'action': action}, proc


def tail(path, lines):
    """The last lines of a text file, for error messages."""
    try:
        with open(path, 'rb') as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 16384))
            data = handle.read().decode('utf-8', 'replace')
    except (IOError, OSError):
        return []
    return data.splitlines()[-lines:]
