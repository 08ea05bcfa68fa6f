"""Runs after test_zz_reset.py (file order), on the blank lab it leaves: the lab
platforms' packages, as `kai-lab export` writes them, checked on the real sim
step by step. Every step's check script of the three platforms (Killercoda's
verify.sh, Instruqt's check-kai-lab, iximiuz's task with its hintcheck and
failcheck) runs as its platform runs it, with the kai-lab provision installed:

- on the blank lab, each fails with its step's first failing check;
- then solve.yml does one step at a time; after step N, N's scripts pass and
  every later step's still fail, worded as `kai-lab check --json` words the
  first failing check, never as an environment fault;
- where the learner is root (Killercoda, iximiuz Labs), every output ends
  with the package's line that the grade is not protected (issue 40).

The lab is solved again at the end, as the scenario's later files expect."""

import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import kai_lab_command, run_playbook

PLATFORMS = ('killercoda', 'instruqt', 'iximiuz')
# The line the packages whose learner is root print last (grading/platform_scripts.py WORDS['unprotected'], en).
UNPROTECTED = "This grade is not protected: you are root on this machine and could write KAI's word yourself.\n"
# Each script's bound (grading/platform_scripts.py CHECK_SECONDS): Killercoda and Instruqt stop a check at 60 s.
SCRIPT_SECONDS = 50


def kai_lab_json(*args):
    done = subprocess.run([kai_lab_command()] + list(args) + ['--json', '--lang', 'en'], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return json.loads(done.stdout)


def front_matter(path):
    import yaml
    with open(path) as handle:
        text = handle.read()
    assert text.startswith('---\n')
    return yaml.safe_load(text[4:].split('\n---\n', 1)[0])


@pytest.fixture(scope='module')
def lab(tmp_path_factory):
    """The steps (id, number) and each platform's package, exported by the installed kai-lab."""
    base = tmp_path_factory.mktemp('packages')
    for platform in PLATFORMS:
        done = subprocess.run([kai_lab_command(), 'export', platform, str(base / platform), '--collection',
                               'https://example.org/dist/gsb-kai_lab-0.1.0.tar.gz', '--lang', 'en'],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
    steps = [(row['id'], row['number']) for row in kai_lab_json('status')['steps']]
    assert [n for _, n in steps] == list(range(1, len(steps) + 1))
    return {'base': base, 'steps': steps, 'setup': tmp_path_factory.mktemp('setup'),
            'iximiuz': front_matter(base / 'iximiuz' / 'index.md')['tasks']}


def scripts(lab, step_id, number):
    """[(platform, argv, a failure's line prefix or None when the script prints nothing but the notice, the notice
    its every output ends with)] of one step."""
    return [
        ('killercoda', ['bash', str(lab['base'] / 'killercoda' / ('step%d' % number) / 'verify.sh')], '', UNPROTECTED),
        ('instruqt', ['bash', str(lab['base'] / 'instruqt' / ('%02d-%s' % (number, step_id.replace('_', '-')))
                                  / 'check-kai-lab')], 'FAIL: ', ''),
        ('iximiuz', ['bash', '-c', lab['iximiuz']['verify_' + step_id]['run']], None, UNPROTECTED),
        ('iximiuz hintcheck', ['bash', '-c', lab['iximiuz']['verify_' + step_id]['hintcheck']], 'hint', UNPROTECTED),
        ('iximiuz failcheck', ['bash', '-c', lab['iximiuz']['verify_' + step_id]['failcheck']], 'never', ''),
    ]


def run(lab, argv):
    env = dict(os.environ, KAI_LAB_COMMAND=kai_lab_command(), KAI_LAB_SETUP_DIR=str(lab['setup']))
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=SCRIPT_SECONDS + 10, env=env)
    return done, time.monotonic() - started


def first_failure(step_id):
    """The step's first failing check as the scripts word it, from kai-lab check --json on the same lab."""
    graded = kai_lab_json('check', step_id)
    failing = [c for c in graded['checks'] if c['status'] != 'passed']
    assert failing, graded
    first = failing[0]
    assert first['id'].startswith(step_id + '.'), first
    return '%s: %s. Hint: %s' % (first['id'], first['message'].rstrip('. '), first['hint'] or '-')


def check_lab(lab, done_through):
    """Run every script of every step from done_through's on; returns {step: seconds of its slowest script}."""
    slowest = {}
    for step_id, number in lab['steps']:
        if number < done_through:
            continue
        passed = number <= done_through
        expected = None if passed else first_failure(step_id)
        runs = scripts(lab, step_id, number)
        # The three platforms' checks at once, as three machines would; then iximiuz's hintcheck and failcheck,
        # which read what its task's run kept.
        with ThreadPoolExecutor(max_workers=3) as pool:
            said = list(pool.map(lambda entry: run(lab, entry[1]), runs[:3]))
        said += [run(lab, entry[1]) for entry in runs[3:]]
        for (platform, _argv, prefix, notice), (result, seconds) in zip(runs, said):
            where = 'step %d %s, %s, after step %d: rc %d, %r %r' % (
                number, step_id, platform, done_through, result.returncode, result.stdout, result.stderr)
            assert seconds < SCRIPT_SECONDS, where
            assert result.stderr == '', where
            if prefix == 'never':  # failcheck: the playground is not broken
                assert (result.returncode, result.stdout) == (0, notice), where
            elif prefix == 'hint':  # hintcheck: says what is missing, always exits 0
                assert (result.returncode, result.stdout) == (0, ('' if passed else expected + '\n') + notice), where
            elif passed:
                assert (result.returncode, result.stdout) == (0, notice), where
            elif prefix is None:  # iximiuz's task: only the notice; its hintcheck speaks
                assert (result.returncode, result.stdout) == (1, notice), where
            else:
                assert (result.returncode, result.stdout) == (1, prefix + expected + '\n' + notice), where
        slowest[step_id] = max(seconds for _result, seconds in said)
    return slowest


def test_each_platforms_check_fails_on_a_blank_lab_and_passes_only_from_its_own_step(lab):
    assert check_lab(lab, 0)
    for step_id, number in lab['steps']:
        solve = run_playbook('solve.yml', '-e', json.dumps({'kai_lab_solve_steps': [step_id]}), timeout=300)
        assert solve.returncode == 0, solve.stdout[-3000:]
        slowest = check_lab(lab, number)
        print('after step %d %s: slowest script per step %s' % (
            number, step_id, ', '.join('%s %.2f s' % (k, v) for k, v in slowest.items())))
    whole = kai_lab_json('check')
    assert whole['passed'], [c for s in whole['steps'] for c in s['checks'] if c['status'] != 'passed']
