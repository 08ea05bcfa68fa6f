"""Issue 40: links the learner plants in its home never steer root (runs last: it ends with teardown).

The learner owns its home, so every name there that provision, reset,
solve, grade, kai-lab or teardown touches may be a symbolic link (or, where
fs.protected_hardlinks is 0, a hard link) the learner planted. Each is
planted here as the learner would, the instructor's playbook (or the
learner's sudo kai-lab) runs, and a listing of /usr/local, /etc, /root and
the sim's state directory taken before and after shows no file outside the
learner's home changed owner, mode, content or existence. On today's main
row 1 (~/.kube a link to the directory holding kai-lab, then reset) gave
that directory to the learner, and row 2 (~/.kube a link to a directory
holding root's config, then teardown) removed root's file.
"""

import hashlib
import os
import pwd
import re
import shutil
import stat

import pytest

from conftest import as_learner, home, kai_lab_command, kubectl, run_playbook, workdir
from molecule_common import sim_state

# Root's, outside the learner's home: what the links point at. A directory holding a `config` (row 2) and a
# `kai-lab`, as /usr/local/bin holds the real one.
CANARY = '/etc/gsb-kai-lab-canary'
TREES = ('/usr/local', '/etc', '/root')
# Not listed: caches and toolchains no task of the lab writes as root on a learner's path, too large to walk in
# a test, and changing by themselves (other sims' state, image builds with /proc mounted). The sim's own state
# directory is listed apart.
SKIP = ('/root/.cache', '/root/go', '/root/.pyenv', '/root/.rustup', '/root/.cargo', '/root/.npm', '/usr/local/go',
        '/root/.local/state')
# Listed by owner and mode only, never by content: too large to hash.
NO_CONTENT = ('/usr/local/lib/python',)
# What changes on its own while the lab runs, named with why; everything else must stay as it was.
CHURN = (
    (r'^/root/\.ansible(_async)?(/|$)', 'Ansible\'s own temporary files and async job status'),
    (r'^/root/\.kube/cache/', 'kubectl\'s discovery cache (root\'s kubectl run by other work)'),
    (r'^/root/\.config/go/', 'Go\'s telemetry counters (a Go build elsewhere on the machine)'),
    (r'^/root/antsibull\.log$', 'antsibull-docs\' log (make docs elsewhere on the machine)'),
    (r'^{state}/.*\.log(\.[0-9]+)?$', 'the sim\'s processes write their logs'),
    (r'^{state}/(kwok/clusters/kai-lab/)?(logs|pids|etcd|async)(/|$)', 'the sim\'s logs, pid files, etcd data, jobs'),
    (r'^{state}/grade-records(/|$)', 'the grader\'s record, which the grades keep and reset archives'),
    (r'^{state}/(kai-lab-lib/[^/]+/[^/]+/.*__pycache__|.*/__pycache__)(/|$)', 'kai-lab\'s compiled code'),
    (r'^{state}/(ready|gate|provision)[^/]*$', 'the readiness gate\'s and provision\'s records'),
)


def _churn(path):
    state = re.escape(sim_state().rstrip('/'))
    return any(re.search(pattern.format(state=state), path) for pattern, _why in CHURN)


def _digest(path, size):
    if size > 4 * 1024 * 1024:
        return 'size %d' % size
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK), 'rb') as handle:
        return hashlib.sha256(handle.read(size + 1)).hexdigest()


def listing():
    """path -> (kind, uid, gid, mode, content digest) of everything in TREES and the state directory."""
    found = {}
    skip_home = home().rstrip('/') + '/'
    for top in TREES + (sim_state(),):
        if not os.path.isdir(top):
            continue  # the state directory, once teardown removed it
        device = os.lstat(top).st_dev
        for where, dirs, files in os.walk(top):
            # Not into the learner's home, a skipped cache, or another file system (a /proc mounted in a chroot).
            dirs[:] = [d for d in dirs if not (os.path.join(where, d) + '/').startswith(skip_home)
                       and (top == sim_state() or os.path.join(where, d) not in SKIP)
                       and os.lstat(os.path.join(where, d)).st_dev == device]
            for name in dirs + files:
                path = os.path.join(where, name)
                try:
                    info = os.lstat(path)
                except FileNotFoundError:
                    continue
                content = None
                if stat.S_ISREG(info.st_mode) and not path.startswith(NO_CONTENT):
                    try:
                        content = _digest(path, info.st_size)
                    except OSError as exc:
                        content = 'unreadable: %s' % exc.strerror
                elif stat.S_ISLNK(info.st_mode):
                    content = os.readlink(path)
                found[path] = (stat.S_IFMT(info.st_mode), info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode), content)
    return found


def differences(before, after, also_allowed=()):
    """What changed outside the learner's home that is not the lab's own churn, one line each.

    In the sim's state directory a provision rewrites and makes files of its own (a new cluster's certificates,
    kai-lab's code when it changed): there a followed link shows as a file given to the learner or opened wider,
    so only the owner and mode of what is there before and after are compared. Everywhere else, everything.
    """
    changed = []
    state = sim_state().rstrip('/') + '/'
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if path.startswith(state) and (old is None or new is None or old[:4] == new[:4]):
            continue
        if old == new or _churn(path) or path.startswith(also_allowed):
            continue
        if old is None:
            changed.append('%s: appeared %s' % (path, new[:4]))
        elif new is None:
            changed.append('%s: vanished' % path)
        else:
            what = [field for field, a, b in zip(('kind', 'owner', 'group', 'mode', 'content'), old, new) if a != b]
            changed.append('%s: %s changed (%s -> %s)' % (path, '/'.join(what), old[:4], new[:4]))
    return changed


@pytest.fixture(scope='module')
def canary():
    shutil.rmtree(CANARY, ignore_errors=True)
    os.makedirs(CANARY, mode=0o755)
    with open(os.path.join(CANARY, 'config'), 'w') as handle:
        handle.write('# root\'s own settings: no learner may have these\n')
    os.chmod(os.path.join(CANARY, 'config'), 0o600)
    with open(os.path.join(CANARY, 'kai-lab'), 'w') as handle:
        handle.write('#!/bin/sh\necho root\'s command\n')
    os.chmod(os.path.join(CANARY, 'kai-lab'), 0o755)
    yield CANARY
    shutil.rmtree(CANARY, ignore_errors=True)


@pytest.fixture(scope='module')
def before(canary):
    return listing()


def _learner(*argv):
    done = as_learner(*argv)
    assert done.returncode == 0, (argv, done.stdout, done.stderr)


def _kube():
    return os.path.join(home(), '.kube')


def test_row_1_kube_a_link_to_the_directory_of_kai_lab_then_reset(before):
    """The instructor's reset writes the learner's kubeconfig: refused, naming the link; nothing outside changes."""
    _learner('mv', _kube(), _kube() + '.mine')
    _learner('ln', '-s', os.path.dirname(kai_lab_command()), _kube())
    try:
        done = run_playbook('reset.yml', timeout=600)
        assert done.returncode != 0, done.stdout[-3000:]
        assert '/.kube is a symbolic link (%s)' % os.path.dirname(kai_lab_command()) in done.stdout, done.stdout[-3000:]
        assert '심볼릭 링크' in done.stdout
        changed = differences(before, listing())
        assert changed == [], '\n'.join(changed)
    finally:
        _learner('rm', _kube())
        _learner('mv', _kube() + '.mine', _kube())


def test_kube_config_a_symbolic_or_hard_link_to_roots_file_then_reset_solve_grade_and_kai_lab(before):
    """Reset replaces the links with the learner's own file; solve, grade and kai-lab write through none."""
    config = os.path.join(_kube(), 'config')
    _learner('rm', config)
    _learner('ln', '-s', os.path.join(CANARY, 'config'), config)
    done = run_playbook('reset.yml', timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
    info = os.lstat(config)
    assert stat.S_ISREG(info.st_mode) and info.st_uid == pwd.getpwnam('gsb-learner').pw_uid
    assert kubectl('get', 'queues').returncode == 0
    # A hard link: what a learner can make where fs.protected_hardlinks is 0 (root plants it, whatever the sysctl).
    os.unlink(config)
    os.link(os.path.join(CANARY, 'config'), config)
    # The workdir's names too: links to root's files where the solver, the grade and kai-lab write.
    for name, target in (('queues.yaml', 'config'), ('podgroup.txt', 'kai-lab'), ('grade.json', 'kai-lab'),
                         ('grade-junit.xml', 'config')):
        _learner('ln', '-sf', os.path.join(CANARY, target), os.path.join(workdir(), name))
    os.link(os.path.join(CANARY, 'config'), os.path.join(workdir(), 'report.json'))
    done = run_playbook('provision.yml', '-e', 'kai_lab_full_provision=true', timeout=900)
    assert done.returncode == 0, done.stdout[-3000:]
    assert os.lstat(config).st_nlink == 1
    for playbook in ('solve.yml', 'grade.yml'):
        done = run_playbook(playbook, timeout=900)
        assert done.returncode == 0, (playbook, done.stdout[-3000:])
    checked = as_learner('sudo', '-n', kai_lab_command(), 'check', '--lang', 'en', timeout=120)
    assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr[-2000:]
    changed = differences(before, listing())
    assert changed == [], '\n'.join(changed)


def test_the_workdir_a_link_to_roots_directory(before):
    """grade.yml, reset.yml and the learner's sudo kai-lab refuse a workdir that is a link, naming it."""
    _learner('mv', workdir(), workdir() + '.mine')
    _learner('ln', '-s', CANARY, workdir())
    try:
        for playbook in ('grade.yml', 'reset.yml'):
            done = run_playbook(playbook, timeout=600)
            assert 'is a symbolic link' in done.stdout, (playbook, done.stdout[-3000:])
        checked = as_learner('sudo', '-n', kai_lab_command(), 'check', 'queues', '--lang', 'en', timeout=120)
        assert checked.returncode == 2 and 'is a symbolic link' in checked.stdout + checked.stderr, checked
        changed = differences(before, listing())
        assert changed == [], '\n'.join(changed)
    finally:
        _learner('rm', workdir())
        _learner('mv', workdir() + '.mine', workdir())


def test_row_2_kube_a_link_to_a_directory_holding_roots_config_then_teardown(before):
    """Teardown removes only the kubeconfig provision wrote: root's config behind a link stays (last: the lab goes)."""
    _learner('mv', _kube(), _kube() + '.mine')
    _learner('ln', '-s', CANARY, _kube())
    done = run_playbook('teardown.yml', timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
    # Said as a warning (stderr) and in the task's result, which the YAML callback folds: words, not lines.
    said = ' '.join((done.stdout + done.stderr).split())
    assert '/.kube/config is kept' in said and os.path.exists(os.path.join(CANARY, 'config')), said[-3000:]
    # Teardown removes the sim (its state directory and the learner's sudo rule): nothing else.
    gone = differences(before, listing(), also_allowed=(sim_state(), '/etc/sudoers.d/gsb-kai-lab'))
    assert gone == [], '\n'.join(gone)
    _learner('rm', _kube())
    _learner('mv', _kube() + '.mine', _kube())
