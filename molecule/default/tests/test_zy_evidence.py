"""Evidence that lasts the whole lab. converge solved the lab with
kai_lab_solve_check_steps, so each step was graded right after it was done
and the grader's record holds KAI's proof. Then every event of the lab
namespace is deleted (what the API server's event TTL does): the grade is
still 100 and says where the proof came from. Without the per-step checks
(a grade with an empty record) the result is the honest one: unverified,
with a hint to check each step as it is done.

Runs after test_solved_lab (which reads the events) and before test_zz_reset.
"""

import json
import os
import stat

from conftest import REPO, run_playbook, sim_kubeconfig, sim_state

NS = 'kai-lab'
EVENT_CHECKS = ('gang.reason', 'preempt.evicted')  # KAI v0.12.0 keeps nl-1's OverLimit condition


def record_file():
    return os.path.join(sim_state(), 'grade-records', '%s.json' % NS)


def lab_checks():
    """The check ids of the step list (plugins/module_utils/steps/registry.py), read from this checkout."""
    import sys
    sys.path.insert(0, os.path.join(REPO, '.collections'))
    from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry
    return sorted(c.id for c in registry.CHECKS)


def checks_of(grade):
    return {c['id']: c for s in grade['steps'] for c in s['checks']}


def test_the_per_step_checks_kept_kais_proof():
    path = record_file()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with open(path) as handle:
        record = json.load(handle)
    checks = record['checks']
    assert sorted(checks) == lab_checks()
    gang = [p for p in checks['gang.reason']['proofs'] if p['kind'] == 'event']
    assert gang and 'while 3 are required for gang scheduling' in gang[0]['message'] and gang[0]['uid']
    evict = checks['preempt.evicted']['proofs'][0]
    assert evict['reason'] == 'Evict' and evict['source'] == 'kai-scheduler' and 'pg-bd-1-' in evict['message']


def test_grading_some_steps_prints_just_their_table(tmp_path):
    proc = run_playbook('grade.yml', '-e', 'kai_lab_grade_steps=nolimit,gang', '-e', 'kai_lab_lang=en',
                        '-e', 'kai_lab_grade_dir=%s' % tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]
    with open(os.path.join(str(tmp_path), 'grade.json')) as handle:
        grade = json.load(handle)
    assert [s['id'] for s in grade['steps']] == ['nolimit', 'gang'] and grade['score'] == 100.0
    assert 'nolimit.reason' in proc.stdout and 'queues.file' not in proc.stdout


def test_without_events_the_record_keeps_the_grade_at_100(host, kubectl, grade_run, tmp_path):
    deleted = host.run('kubectl --kubeconfig %s -n %s delete events --all' % (sim_kubeconfig(), NS))
    assert deleted.rc == 0, deleted.stderr
    left = kubectl('-n %s get events' % NS)['items']
    assert not [e for e in left if e['reason'] in ('Evict', 'Unschedulable')], left
    grade = grade_run('en', str(tmp_path))
    checks = checks_of(grade)
    assert grade['score'] == 100.0 and grade['passed'], [(c['id'], c['message']) for c in checks.values()
                                                         if not c['passed']]
    for check_id in EVENT_CHECKS:
        assert 'verified at' in checks[check_id]['message'] and 'from KAI\'s event' in checks[check_id]['message']
        assert checks[check_id]['evidence']['recorded']['proof']['uid']
    assert sorted(grade['record']['used']) == sorted(EVENT_CHECKS)


def test_without_events_or_per_step_checks_the_grade_is_honest(grade_run, tmp_path):
    no_record = '-e', 'kai_lab_grade_record_dir=%s' % (tmp_path / 'no-record')
    grade = grade_run('en', str(tmp_path / 'en'), extra=no_record)
    checks = checks_of(grade)
    unverified = sorted(c['id'] for c in checks.values() if c['status'] == 'unverified')
    assert unverified == sorted(EVENT_CHECKS) and not grade['passed']
    lost = sum(checks[c]['weight'] for c in EVENT_CHECKS)
    assert (grade['points'], grade['score']) == (grade['max_points'] - lost,
                                                 round(100.0 * (grade['max_points'] - lost) / grade['max_points'], 1))
    assert 'kai_lab_grade_steps=gang' in checks['gang.reason']['hint']
    assert 'kai_lab_grade_steps=preempt' in checks['preempt.evicted']['hint']
    ko = checks_of(grade_run('ko', str(tmp_path / 'ko'), extra=no_record))
    assert '각 단계를 마친 직후' in ko['gang.reason']['hint']
