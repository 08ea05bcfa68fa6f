"""Each common mistake fails exactly the checks it breaks, and says so in
Korean and in English."""

import os

import pytest

EXPECTED = {
    'queues.hierarchy': {'en': 'KAI reads an unset limit as 0', 'ko': '비어 있는 limit 을 0으로 읽어'},
    'podgroup.manifest': {'en': 'no schedulerName: kai-scheduler', 'ko': 'schedulerName: kai-scheduler 가 없어'},
    'podgroup.running': {'en': 'placed by default-scheduler, not KAI', 'ko': 'KAI가 아닌 default-scheduler'},
    'podgroup.file': {'en': "but p1's PodGroup is None", 'ko': 'p1 의 PodGroup 은 None'},
    'limit_fix.running': {'en': 'is in namespace default, but the lab works in kai-lab',
                          'ko': 'default 네임스페이스에 있습니다'},
    'fraction.manifest': {'en': 'cannot have both GPU fraction request and whole GPU resource request/limit',
                          'ko': 'gpu-fraction annotation 과 nvidia.com/gpu limits 가 함께'},
    'report.values': {'en': 'was not computed from this cluster', 'ko': '이 클러스터에서 계산한 report.json 이 아닙니다'},
}


@pytest.fixture(scope='module', params=['en', 'ko'])
def grade(request, grade_run):
    output = os.path.join(os.environ['MOLECULE_EPHEMERAL_DIRECTORY'], 'grade-%s' % request.param)
    return request.param, grade_run(request.param, output)


def test_exactly_the_expected_checks_fail(grade):
    _, result = grade
    failed = sorted(c['id'] for s in result['steps'] for c in s['checks'] if c['status'] != 'passed')
    assert failed == sorted(EXPECTED)
    assert not result['passed'] and 0 < result['score'] < 100


def test_each_mistake_is_named_in_the_graders_language(grade):
    lang, result = grade
    checks = {c['id']: c for s in result['steps'] for c in s['checks']}
    for check_id, words in EXPECTED.items():
        assert words[lang] in checks[check_id]['message'], (check_id, checks[check_id]['message'])
        assert checks[check_id]['hint'], check_id
