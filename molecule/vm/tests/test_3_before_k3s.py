"""The parts of provision before k3s, run for real through the roles' own
task files (converge.yml): as the sudo user becoming root, Debian's packages,
the VM's pinned Python set, registries.yaml from mirrors, the learner's
workdir, kai-lab and the learner's sudo rule; a second run changes nothing.
The learner is a login of its own without sudo (create made it, as the guide
tells an instructor to): it owns its workdir and may run kai-lab as root and
nothing else. What they made is read back in one SSH command."""

import os
import re

import pytest
import yaml

from conftest import REPO, SCENARIO, fatal_messages, phase, recap, run_playbook, vm

PINS = os.path.join(REPO, 'roles', 'k3s', 'files', 'constraints')
MIRRORS = {'docker.io': {'endpoint': ['https://cache.example:5000']},
           'ghcr.io': {'endpoint': ['https://cache.example:5001']}}
# Read back as the sudo user, root's files through sudo; one section per fact.
READ_BACK = r'''
echo '## python'; /usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])'
echo '## freeze'; sudo /opt/gsb-kai-lab/venv/bin/python -m pip freeze --all --disable-pip-version-check
echo '## registries'; sudo cat /etc/rancher/k3s/registries.yaml; sudo stat -c '%a %U' /etc/rancher/k3s/registries.yaml
echo '## workdir'; sudo stat -c '%a %U %n' /home/learner/gsb-kai /home/learner/gsb-kai/.gsb-kai-lab
echo '## sudo'; sudo -n sudo -l -U learner 2>&1
echo '## kai-lab'; sudo -u learner -i timeout 120 sudo -n /usr/local/bin/kai-lab check queues --lang en; echo "exit $?"
echo '## other sudo'; sudo -u learner -i sudo -n true; echo "exit $?"
'''


def normal(requirement):
    """name==version with the name as PyPI compares names (pip freeze says pyasn1_modules, the pins pyasn1-modules)."""
    name, _, version = requirement.strip().partition('==')
    return re.sub(r'[-_.]+', '-', name).lower() + '==' + version


@pytest.fixture(scope='module')
def converged(pristine):
    first, seconds = run_playbook(SCENARIO + '/converge.yml')
    phase('the parts before k3s (converge.yml)', seconds)
    assert first.returncode == 0, '\n'.join(fatal_messages(first.stdout)) or first.stdout[-3000:]
    second, seconds = run_playbook(SCENARIO + '/converge.yml')
    phase('the parts before k3s again', seconds)
    assert second.returncode == 0, '\n'.join(fatal_messages(second.stdout)) or second.stdout[-3000:]
    done, _ = vm('ssh', READ_BACK)
    sections, name = {}, None
    for line in done.stdout.splitlines():
        if line.startswith('## '):
            name = line[3:]
            sections[name] = []
        elif name:
            sections[name].append(line)
    return {'first': first, 'second': second, 'read': sections}


def test_become_and_the_whole_set_ran_and_changed_things(converged):
    assert recap(converged['first'].stdout).get('changed', 0) > 0, converged['first'].stdout[-2000:]


def test_a_second_run_changes_nothing(converged):
    counts = recap(converged['second'].stdout)
    assert counts.get('changed') == 0, converged['second'].stdout[-3000:]


def test_the_vms_python_environment_is_exactly_its_pinned_set(converged):
    python = converged['read']['python'][0]
    with open(os.path.join(PINS, 'py%s.txt' % python)) as handle:
        pins = {normal(line) for line in handle if line.strip() and not line.startswith('#')}
    frozen = {normal(line) for line in converged['read']['freeze']}
    frozen = {line for line in frozen if line.split('==')[0] not in ('pip', 'setuptools', 'wheel')}
    assert frozen == pins, {'not pinned': sorted(frozen - pins), 'missing': sorted(pins - frozen)}


def test_registries_yaml_holds_the_mirrors_private_to_root(converged):
    lines = converged['read']['registries']
    assert lines[-1] == '600 root', lines
    assert yaml.safe_load('\n'.join(lines[:-1])) == {'mirrors': MIRRORS}


def test_the_learners_workdir_is_its_own_private_and_marked(converged):
    workdir = converged['read']['workdir']
    assert workdir[0] == '700 learner /home/learner/gsb-kai', workdir
    # The lab's mark in it stays root's (written by provision, 0600).
    assert workdir[1] == '600 root /home/learner/gsb-kai/.gsb-kai-lab', workdir


def test_the_learners_one_sudo_rule_is_kai_lab_as_root(converged):
    lines = converged['read']['sudo']
    # As root: bookworm's sudo (1.9.13) asks the sudo user for a password to list another user's rules.
    starts = [i for i, line in enumerate(lines) if 'may run the following commands' in line]
    assert starts, lines
    rules = [line.strip() for line in lines[starts[0] + 1:] if line.strip()]
    assert rules == ['(root) NOPASSWD: /usr/local/bin/kai-lab'], lines


def test_the_learner_runs_kai_lab_which_says_it_could_not_grade_without_a_cluster(converged):
    lines = converged['read']['kai-lab']
    assert lines[-1] == 'exit 2', lines
    assert lines[-2].startswith('could not grade: '), lines


def test_the_learner_may_run_nothing_else_as_root(converged):
    lines = converged['read']['other sudo']
    assert lines[-1] != 'exit 0' and any('password is required' in line for line in lines), lines
