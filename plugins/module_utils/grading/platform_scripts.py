# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shell scripts of a lab platform's package (grading/platforms.py).

The setup provisions the lab on the platform's machine with this
collection: the k3s target on localhost (ansible-galaxy collection install,
then ansible-playbook gsb.kai_lab.provision). A step's check calls
`kai-lab check STEP --first-failure`, whose exit code is the contract
(0 passed, 1 not passed, 2 could not grade: the machine, not the learner's
work) and whose one line is the first failing check's message; the script
shows it the way its platform does. `timeout` bounds every check below the
platforms' limits, and a check that runs out of time is an environment fault.

Where the platform cannot open the learner's terminal as a login of its own
(grading/platforms.py says which), the learner is root on the machine and
can write KAI's word itself: every check's output then ends with one line
saying the grade is not protected (WORDS['unprotected']), as the package's
first page does.

Layer: grading; may use the cluster client, the KAI domain, the learner's files, the grader's record, the lab's steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

try:
    from shlex import quote
except ImportError:  # Python 2: pipes has it
    from pipes import quote

# Where the setup keeps its Python environment, the installed collection, the
# inventory and its log on the platform's machine.
BASE = '/opt/gsb-kai-lab-setup'
KAI_LAB = '/usr/local/bin/kai-lab'
# A check runs KAI_LAB, or $KAI_LAB_COMMAND; iximiuz's checks keep their state
# under BASE, or $KAI_LAB_SETUP_DIR (the tests run them so, against a stub).
KAI_LAB_RUN = '"${KAI_LAB_COMMAND:-%s}"' % KAI_LAB
STATE = 'state="${KAI_LAB_SETUP_DIR:-%s}/checks/%%s"' % BASE
# Seconds a check may take: kai-lab's own limit is its time_limit (30 s by
# default); Instruqt stops a check after 60 s, iximiuz a task after its timeout_seconds.
CHECK_SECONDS = 50
TIMED_OUT = 124  # timeout(1)'s exit code
# iximiuz: an environment fault that lasts this long marks the playground broken (failcheck).
BROKEN_AFTER = 120

WORDS = {
    'environment': {'en': 'the lab machine has a problem, not your work: {line}',
                    'ko': '여러분의 작업이 아니라 실습 머신에 문제가 있습니다: {line}'},
    'timed_out': {'en': 'the check took more than {seconds} s; run kai-lab check {step} in the terminal to see why',
                  'ko': '확인이 {seconds}초를 넘었습니다. 이유를 보려면 터미널에서 실행하세요: kai-lab check {step}'},
    'broken': {'en': 'the lab machine has been broken for {seconds} s (not your work); restart the lab: {line}',
               'ko': '실습 머신이 {seconds}초 넘게 고장 나 있습니다(여러분의 작업 탓이 아닙니다). 실습을 다시 시작하세요: {line}'},
    'waiting': {'en': 'Setting up the lab machine (a few minutes)...', 'ko': '실습 머신을 준비하고 있습니다(몇 분 걸립니다)...'},
    'ready': {'en': 'The lab machine is ready: kai-lab task prints the first task.',
              'ko': '실습 머신이 준비되었습니다. kai-lab task 가 첫 번째 할 일을 보여 줍니다.'},
    'setup_failed': {'en': 'Setting up the lab machine failed; the end of its log:',
                     'ko': '실습 머신 준비에 실패했습니다. 기록의 끝부분:'},
    # One short line, in every check's output and on the package's first page where the learner is root.
    'unprotected': {'en': 'This grade is not protected: you are root on this machine and could write KAI\'s word '
                          'yourself.',
                    'ko': '이 채점은 보호되지 않습니다: 이 머신에서 여러분은 root 라서 KAI 의 증거를 직접 쓸 수 '
                          '있습니다.'},
}


def say(key, lang, **values):
    return (WORDS[key].get(lang) or WORDS[key]['en']).format(**values)


def script(purpose, body):
    """A bash script: shebang, what it is for, where it comes from, then body."""
    lines = ['#!/bin/bash', '# %s' % purpose,
             '# Written by kai-lab export (gsb.kai_lab); the lab text and the grader are the collection\'s.']
    return '\n'.join(lines + [''] + body) + '\n'


def run_check(step_id, lang):
    """Lines that run kai-lab's check of a step into $line and $rc, bounded by CHECK_SECONDS."""
    return [
        'line=$(timeout %d %s check %s --first-failure --lang %s 2>&1 | tail -n 1; exit "${PIPESTATUS[0]}")'
        % (CHECK_SECONDS, KAI_LAB_RUN, quote(step_id), quote(lang)),
        'rc=$?',
    ]


def notice_lines(lang, unprotected):
    """The line every check prints where the learner is root (unprotected), else none."""
    return ["printf '%%s\\n' %s" % quote(say('unprotected', lang))] if unprotected else []


def fail_lines(step_id, lang, prefix, unprotected=False):
    """Lines that say why a check did not pass: prefix, then the learner's mistake, a timeout or the machine's
    fault; then, where the learner is root, that the grade is not protected (passed or not)."""
    timed_out = say('timed_out', lang, seconds=CHECK_SECONDS, step=step_id)
    environment = say('environment', lang, line='$line')
    return [
        'case $rc in',
        '  0) ;;',
        '  1) printf \'%%s\\n\' "%s$line" ;;' % prefix,
        '  %d) printf \'%%s\\n\' %s ;;' % (TIMED_OUT, quote(prefix + timed_out)),
        '  *) printf \'%%s\\n\' "%s%s" ;;' % (prefix, environment.replace('"', '\\"')),
        'esac',
    ] + notice_lines(lang, unprotected) + [
        '[ "$rc" -eq 0 ] || exit 1',
    ]


def check(step_id, number, lang, platform, prefix='', unprotected=False):
    """A step's check script: exit 0 when kai-lab passes the step, else the first failure's line after prefix
    (and the unprotected line where the learner is root)."""
    return script('%s check of step %d (%s) of the KAI-Scheduler lab: kai-lab grades it.' % (platform, number, step_id),
                  run_check(step_id, lang) + fail_lines(step_id, lang, prefix, unprotected))


def setup(platform, collection, lang, wait_for=None, learner=None, kai_version=None):
    """Provision the lab here with gsb.kai_lab: collection is a gsb-kai_lab-*.tar.gz on this machine or an https URL.

    wait_for: a file the platform creates once its own boot is done (Instruqt's bootstrap).
    learner: (login, home) of the learner's own Linux user, made here without sudo when missing and provisioned
    as kai_lab_learner_user (its ServiceAccount kubeconfig, its workdir, its one sudo rule for kai-lab); None:
    the learner is root. kai_version: the KAI-Scheduler to install (kai_lab_k3s_kai_version), the one the
    package's pages are written for; None: the role's default."""
    body = ['set -euo pipefail', 'base=%s' % BASE, 'collection=%s' % quote(collection),
            'mkdir -p "$base"', 'rm -f "$base/ready" "$base/failed"',
            '# Whatever happens, the log says it and a failure leaves $base/failed.',
            'exec > >(tee -a "$base/setup.log") 2>&1',
            'trap \'touch "$base/failed"\' ERR']
    if wait_for:
        body += ['while [ ! -f %s ]; do sleep 1; done' % quote(wait_for)]
    body += [
        'export DEBIAN_FRONTEND=noninteractive',
        'apt-get update -q',
        'apt-get install -y -q python3-venv curl ca-certificates tar',
        'tarball=$collection',
        'case $collection in',
        '  https://*) tarball=$base/${collection##*/}; curl -fsSL --retry 5 -o "$tarball" "$collection" ;;',
        'esac',
        '# The Python packages the collection runs on, pinned by its own requirements.txt.',
        'tar -xzf "$tarball" -C "$base" requirements.txt',
        'python3 -m venv "$base/venv"',
        '"$base/venv/bin/pip" install -q -r "$base/requirements.txt"',
        '# kubernetes.core comes with the ansible package of requirements.txt.',
        '"$base/venv/bin/ansible-galaxy" collection install --force --no-deps -p "$base/collections" "$tarball"',
    ]
    if learner:
        login, home = learner
        body += [
            '# The learner\'s own login, without sudo: the platform\'s terminal opens as it.',
            'id -u %s > /dev/null 2>&1 || useradd --create-home --home-dir %s --shell /bin/bash %s'
            % (quote(login), quote(home), quote(login)),
        ]
    body += [
        'cat > "$base/inventory.yml" <<EOF',
        'kai_lab:',
        '  hosts:',
        '    localhost:',
        '      ansible_connection: local',
        '      ansible_python_interpreter: $base/venv/bin/python',
        '  vars:',
        '    kai_lab_target: k3s',
        '    kai_lab_lang: %s' % lang,
    ] + (['    kai_lab_learner_user: %s' % learner[0]] if learner else []) + (
        ['    kai_lab_k3s_kai_version: %s' % kai_version] if kai_version else []) + [
        'EOF',
        'export ANSIBLE_COLLECTIONS_PATH="$base/collections"',
        '"$base/venv/bin/ansible-playbook" -i "$base/inventory.yml" gsb.kai_lab.provision',
        'touch "$base/ready"',
    ]
    return script('Provision the KAI-Scheduler lab on this %s machine with gsb.kai_lab (k3s target, localhost).'
                  % platform, body)


def wait_ready(lang):
    """The learner's terminal while the setup runs: wait, then say ready or show the end of the log."""
    return script('Show the learner the setup\'s progress until the lab machine is ready.', [
        'base=%s' % BASE,
        'printf \'%%s\\n\' %s' % quote(say('waiting', lang)),
        'until [ -f "$base/ready" ] || [ -f "$base/failed" ]; do sleep 2; done',
        'if [ -f "$base/ready" ]; then printf \'%%s\\n\' %s; exit 0; fi' % quote(say('ready', lang)),
        'printf \'%%s\\n\' %s' % quote(say('setup_failed', lang)),
        'tail -n 20 "$base/setup.log"',
        'exit 1',
    ])


def solve(step_id, number):
    """Do the step as a perfect learner would (a platform's skip): gsb.kai_lab's solver, this step only."""
    return script('Solve step %d (%s) of the KAI-Scheduler lab with the collection\'s solver.' % (number, step_id), [
        'set -euo pipefail',
        'base=%s' % BASE,
        'export ANSIBLE_COLLECTIONS_PATH="$base/collections"',
        '"$base/venv/bin/ansible-playbook" -i "$base/inventory.yml" gsb.kai_lab.solve '
        '-e %s' % quote('{"kai_lab_solve_steps": ["%s"]}' % step_id),
    ])


def ready_for(step_id, number, lang):
    """A challenge's setup: the lab machine can grade (kai-lab answers, exit 2 only for a broken machine)."""
    return script('Before step %d (%s): the lab machine can grade; the step builds on the ones before.'
                  % (number, step_id), [
                      '%s task %s --lang %s > /dev/null' % (KAI_LAB, quote(step_id), quote(lang)),
                  ])


def nothing_to_clean(step_id, number):
    return script('After step %d (%s): nothing to clean, the next steps build on its objects.' % (number, step_id),
                  ['exit 0'])


def iximiuz_run(step_id, lang, unprotected=False):
    """iximiuz's task run: kai-lab's verdict; a failure's line kept for hintcheck, an environment fault's start for
    failcheck; the unprotected line where the learner is root (the run's output is the task's log)."""
    lines = [STATE % step_id, 'mkdir -p "${state%/*}"'] + run_check(step_id, lang) + notice_lines(lang, unprotected)
    return '\n'.join(lines + [
        'if [ "$rc" -eq 0 ]; then rm -f "$state.line" "$state.broken-since"; exit 0; fi',
        'printf \'%s\\n\' "$line" > "$state.line"',
        'if [ "$rc" -eq 1 ]; then rm -f "$state.broken-since"',
        'elif [ ! -f "$state.broken-since" ]; then date +%s > "$state.broken-since"; fi',
        'exit 1',
    ]) + '\n'


def iximiuz_hint(step_id, lang, unprotected=False):
    """iximiuz's hintcheck: the last failure's line, shown live (always exit 0), then the unprotected line where
    the learner is root."""
    return '\n'.join([STATE % step_id, 'cat "$state.line" 2>/dev/null'] + notice_lines(lang, unprotected)
                     + ['exit 0']) + '\n'


def iximiuz_fail(step_id, lang, unprotected=False):
    """iximiuz's failcheck: exit 1 (the playground is broken) once kai-lab could not grade for BROKEN_AFTER seconds;
    its words then end with the unprotected line where the learner is root."""
    broken = say('broken', lang, seconds=BROKEN_AFTER, line='$(cat "$state.line" 2>/dev/null)')
    return '\n'.join([
        STATE % step_id,
        'since=$(cat "$state.broken-since" 2>/dev/null) || exit 0',
        '[ $(( $(date +%%s) - since )) -ge %d ] || exit 0' % BROKEN_AFTER,
        # No double quote in the words: the line's own $(cat "...") quotes start afresh inside it.
        'printf \'%%s\\n\' "%s"' % broken,
    ] + notice_lines(lang, unprotected) + [
        'exit 1',
    ]) + '\n'
