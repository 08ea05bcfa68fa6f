"""Each common mistake fails exactly the checks it breaks, and says so in
Korean and in English, in grade.json and in the table grade.yml prints."""

import json
import os
import time

import pytest
import yaml

from conftest import run_playbook

EXPECTED = {
    'queues.hierarchy': {'en': 'KAI reads an unset limit as 0', 'ko': '비어 있는 limit 을 0으로 읽어'},
    'podgroup.manifest': {'en': 'no schedulerName: kai-scheduler', 'ko': 'schedulerName: kai-scheduler 가 없어'},
    'podgroup.running': {'en': 'placed by default-scheduler, not KAI', 'ko': 'KAI가 아닌 default-scheduler'},
    'podgroup.file': {'en': 'but p1 has no PodGroup', 'ko': 'p1 파드에는 PodGroup 이 없습니다'},
    'limit_fix.running': {'en': 'is in namespace default, but the lab works in kai-lab',
                          'ko': 'default 네임스페이스에 있습니다'},
    'gang.reason': {'en': 'this KAI (v0.12.0) groups each pod of a Job alone, before v0.14.7 it ignores '
                          'kai.scheduler/batch-min-member',
                    'ko': '이 KAI(v0.12.0)는 v0.14.7 이전이라 Job 의 파드를 하나씩 따로 묶고 '
                          'kai.scheduler/batch-min-member 를 무시합니다'},
    'fraction.manifest': {'en': 'cannot have both GPU fraction request and whole GPU resource request/limit',
                          'ko': 'gpu-fraction 어노테이션과 nvidia.com/gpu limits 가 함께'},
    'report.values': {'en': 'was not computed from this cluster', 'ko': '이 클러스터에서 계산한 report.json 이 아닙니다'},
}
# Where the hint has to point somewhere specific: the lab's Job cannot be a
# gang on this KAI, so the hint gives the PodGroup form that is.
EXPECTED_HINTS = {
    'gang.reason': {'en': 'On the sim write the gang as an explicit PodGroup',
                    'ko': '실습 환경(sim)에서는 갱을 PodGroup 으로 직접 만드세요'},
}


def printed_table(stdout):
    """The rows of the table grade.yml printed (its "Show the grade" task, YAML as Ansible shows it)."""
    shown = stdout.split('TASK [Show the grade]', 1)[1].split('\nTASK [', 1)[0].split('\nPLAY', 1)[0]
    return yaml.safe_load(shown.split('=>', 1)[1])['msg']


@pytest.fixture(scope='module')
def gang_job_podgroups(kubectl):
    """Job gang's pods and the PodGroup each was given, once pod-grouper has seen all three (at most 60 s)."""
    deadline = time.monotonic() + 60
    while True:
        pods = kubectl('-n kai-lab get pods -l job-name=gang')['items']
        groups = dict((p['metadata']['name'], (p['metadata'].get('annotations') or {}).get('pod-group-name'))
                      for p in pods)
        if (len(groups) == 3 and None not in groups.values()) or time.monotonic() > deadline:
            return groups
        time.sleep(1)


@pytest.fixture(scope='module', params=['en', 'ko'])
def grade(request, gang_job_podgroups):
    """grade.json and the printed output of grade.yml, in one language."""
    lang = request.param
    output = os.path.join(os.environ['MOLECULE_EPHEMERAL_DIRECTORY'], 'grade-%s' % lang)
    proc = run_playbook('grade.yml', '-e', 'kai_lab_lang=%s' % lang, '-e', 'kai_lab_grade_dir=%s' % output,
                        timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    with open(os.path.join(output, 'grade.json')) as handle:
        return lang, json.load(handle), proc.stdout


def test_this_kai_gives_each_pod_of_the_lab_job_its_own_podgroup(gang_job_podgroups, kubectl):
    """The shape the grader names for step 5, as KAI v0.12.0 makes it from the lab text's Job."""
    assert len(gang_job_podgroups) == 3 and None not in gang_job_podgroups.values(), gang_job_podgroups
    assert len(set(gang_job_podgroups.values())) == 3, gang_job_podgroups
    podgroups = dict((pg['metadata']['name'], pg) for pg in kubectl('-n kai-lab get podgroups')['items'])
    assert [podgroups[name]['spec'].get('minMember') for name in gang_job_podgroups.values()] == [1, 1, 1]


def test_exactly_the_expected_checks_fail(grade):
    _, result, _ = grade
    failed = sorted(c['id'] for s in result['steps'] for c in s['checks'] if c['status'] != 'passed')
    assert failed == sorted(EXPECTED)
    assert not result['passed'] and 0 < result['score'] < 100


def test_each_mistake_is_named_in_the_graders_language(grade):
    lang, result, _ = grade
    checks = {c['id']: c for s in result['steps'] for c in s['checks']}
    for check_id, expected in EXPECTED.items():
        assert expected[lang] in checks[check_id]['message'], (check_id, checks[check_id]['message'])
        assert checks[check_id]['hint'], check_id
    for check_id, expected in EXPECTED_HINTS.items():
        assert expected[lang] in checks[check_id]['hint'], (check_id, checks[check_id]['hint'])


def test_the_printed_table_names_each_mistake(grade):
    lang, result, stdout = grade
    rows = dict((row.split()[1], row) for row in printed_table(stdout)[1:] if len(row.split()) > 2)
    for check_id, expected in EXPECTED.items():
        assert rows[check_id].split()[2] == 'FAIL', rows[check_id]
        assert expected[lang] in rows[check_id], rows[check_id]


# The Events converge created to pass for KAI's word (issue 18): each check
# that could take one names it as no proof, and passes on KAI's own Events.
FORGED = {'nolimit.reason': 'nl-1.forged', 'preempt.evicted': 'evict.forged'}


def test_forged_events_are_named_and_are_no_proof(grade):
    _, result, _ = grade
    checks = {c['id']: c for s in result['steps'] for c in s['checks']}
    for check_id, event in FORGED.items():
        check = checks[check_id]
        assert check['status'] == 'passed', (check_id, check['message'])
        named = [line for line in check['evidence'].get('not_proof') or [] if event in line]
        assert named and 'this Event is not about any PodGroup of your pods' in named[0], (check_id, check['evidence'])
        assert event not in json.dumps(check['evidence'].get('kai_proof')), check_id
    # The forged gang Event changes nothing: this KAI gave the lab's Job no gang.
    assert 'gang.forged' not in json.dumps(checks['gang.reason'])


def test_a_nan_gpu_fraction_pod_is_graded(grade, kubectl):
    """The pod exists (KAI's webhook admitted it) and the grade above was written, strict JSON."""
    pod = kubectl('-n kai-lab get pod nan-fraction')
    assert pod['metadata']['annotations']['gpu-fraction'] == 'NaN'
    _, result, _ = grade
    json.dumps(result, allow_nan=False)
