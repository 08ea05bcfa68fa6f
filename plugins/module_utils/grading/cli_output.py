# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kai-lab's words and how it prints: each line one console line, or JSON.

Every message of the command (its help, its verdicts, its errors) is in
WORDS, in Korean and English; ``console`` makes any line, a learner's text
within it too, one printable console line. The exit codes are the contract
a lab platform's verify script relies on (see grading/cli.py).

Layer: grading; may use the cluster client, the KAI domain, the learner's files, the grader's record, the lab's steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import unicodedata

from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry as steps
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import say

PASSED_EXIT, NOT_PASSED_EXIT, CANNOT_GRADE_EXIT = 0, 1, 2
LANGS = ('ko', 'en')

WORDS = {
    'description': {'en': 'Check the KAI-Scheduler lab: grade a step as you finish it, see where you are, get a hint.',
                    'ko': 'KAI-Scheduler 실습 확인: 단계를 마칠 때마다 채점하고, 진행 상황과 힌트를 봅니다.'},
    'epilog': {'en': 'Exit codes: 0 passed, 1 not passed, 2 could not grade. Steps: {steps}.',
               'ko': '종료 코드: 0 통과, 1 통과하지 못함, 2 채점할 수 없음. 단계: {steps}.'},
    'lang': {'en': 'language of the output (default: the lab\'s, {default})',
             'ko': '출력 언어 (기본값: 실습의 언어 {default})'},
    'json': {'en': 'print JSON (a step\'s part of grade.json, or the whole grade) instead of the table',
             'ko': '표 대신 JSON 출력 (grade.json 의 해당 단계 부분, 또는 전체)'},
    'version': {'en': 'print the collection\'s version and exit', 'ko': '컬렉션 버전을 출력하고 종료'},
    'help': {'en': 'show this help and exit', 'ko': '이 도움말을 보여 주고 종료'},
    'check': {'en': 'grade one step now (keeps KAI\'s proof in the grader\'s record), or the whole lab',
              'ko': '한 단계를 지금 채점(KAI의 증거를 채점 기록에 남김)하거나 실습 전체를 채점'},
    'check_step': {'en': 'the step to grade; none: the whole lab (writes grade.json and grade-junit.xml)',
                   'ko': '채점할 단계. 없으면 실습 전체 (grade.json, grade-junit.xml 작성)'},
    'status': {'en': 'every step\'s last result from the grader\'s record, and what is next',
               'ko': '채점 기록에 있는 단계별 마지막 결과와 다음 할 일'},
    'hint': {'en': 'the hints of a step', 'ko': '단계의 힌트'},
    'hint_step': {'en': 'the step', 'ko': '단계'},
    'commands': {'en': 'commands', 'ko': '명령'},
    'step_passed': {'en': 'step {number} {id} ({title}): PASSED', 'ko': '{number}단계 {id} ({title}): 통과'},
    'step_failed': {'en': 'step {number} {id} ({title}): NOT PASSED ({count} check(s) not passed: {checks})',
                    'ko': '{number}단계 {id} ({title}): 통과하지 못함 (통과하지 못한 검사 {count}개: {checks})'},
    'lab_passed': {'en': 'the lab: PASSED ({score}%)', 'ko': '실습 전체: 통과 ({score}%)'},
    'lab_failed': {'en': 'the lab: NOT PASSED ({score}%)', 'ko': '실습 전체: 통과하지 못함 ({score}%)'},
    # Only KAI's health fails the grade's environment check: the fault kai-lab doctor names kai_not_ready.
    'environment_failed': {'en': 'KAI-Scheduler is not ready: {message} An environment fault, not your work: '
                                 'kai-lab doctor says what to do.',
                           'ko': 'KAI-Scheduler 가 준비되지 않았습니다: {message} 여러분의 작업이 아닌 환경 문제입니다: '
                                 'kai-lab doctor 가 할 일을 알려 줍니다.'},
    'next': {'en': 'next: step {number} {id} ({title}), then kai-lab check {id}',
             'ko': '다음: {number}단계 {id} ({title}), 마친 뒤 kai-lab check {id}'},
    'all_done': {'en': 'every step is checked: kai-lab check grades the whole lab',
                 'ko': '모든 단계를 확인했습니다: kai-lab check 로 실습 전체를 채점하세요'},
    'cannot_grade': {'en': 'could not grade: {error}', 'ko': '채점할 수 없습니다: {error}'},
    # kai-lab check's lines after the verdict: a row per check, its hint when it did not pass.
    'check_row': {'en': '  {mark} {id}{message}', 'ko': '  {mark} {id}{message}'},
    'check_hint': {'en': '       hint: {hint}', 'ko': '       힌트: {hint}'},
    'marks': {'en': 'PASS|FAIL|????', 'ko': '통과|실패|????'},
    # One sentence on what protects the grade (grade.json and kai-lab status have the whole verdict).
    'protected_short': {'en': 'This grade reads only what KAI wrote: your account cannot write it.',
                        'ko': '이 채점은 KAI 가 쓴 것만 읽습니다. 여러분의 계정으로는 그것을 쓸 수 없습니다.'},
    'unprotected_short': {'en': 'Note: your account could write what KAI writes, so this grade cannot tell your work '
                                'from a copy (kai-lab status says which writes).',
                          'ko': '참고: 여러분의 계정으로 KAI 가 쓰는 객체를 쓸 수 있어서, 이 채점은 여러분의 작업과 '
                                '흉내 낸 것을 가리지 못합니다 (어떤 쓰기인지는 kai-lab status 가 알려 줍니다).'},
    'unknown_short': {'en': 'Note: whether your account could write what KAI writes was not asked (kai-lab status '
                            'says why).',
                      'ko': '참고: 여러분의 계정이 KAI 가 쓰는 객체를 쓸 수 있는지 묻지 못했습니다 (이유는 kai-lab '
                            'status 가 알려 줍니다).'},
    # Only on a step whose form differs on the KAI that runs.
    'kai_note': {'en': 'On KAI-Scheduler {version}, {difference}: kai-lab task {id} shows it.',
                 'ko': 'KAI-Scheduler {version} 에서 {difference}. kai-lab task {id} 에 나와 있습니다.'},
    'files': {'en': 'written: {files}', 'ko': '작성한 파일: {files}'},
    'status_passed': {'en': 'passed, verified {at}', 'ko': '통과, {at} 확인'},
    'status_some': {'en': '{done} of {total} checks verified ({at}); run kai-lab check {id}',
                    'ko': '검사 {total}개 중 {done}개 확인 ({at}); kai-lab check {id} 실행'},
    'status_none': {'en': 'not checked yet', 'ko': '아직 확인하지 않음'},
    'record': {'en': 'grader\'s record: {path}', 'ko': '채점 기록: {path}'},
    'no_record': {'en': 'grader\'s record: none yet ({path})', 'ko': '채점 기록: 아직 없음 ({path})'},
    'no_config': {'en': 'kai-lab has no settings: {path} {why}. Provision the lab (ansible-playbook '
                        'playbooks/provision.yml), which writes them.',
                  'ko': 'kai-lab 설정이 없습니다: 설정 파일({path}){why}. 실습을 프로비저닝(ansible-playbook '
                        'playbooks/provision.yml)하면 설정이 작성됩니다.'},
    'not_root': {'en': 'cannot be read as this user: run sudo kai-lab',
                 'ko': '을 이 사용자로 읽을 수 없습니다: sudo kai-lab 으로 실행하세요'},
    'missing': {'en': 'does not exist', 'ko': '이 없습니다'},
    'broken': {'en': 'is not a kai-lab settings file ({error})', 'ko': '이 kai-lab 설정 형식이 아닙니다 ({error})'},
    'unknown_step': {'en': 'unknown step {step!r}; the steps are {steps}',
                     'ko': '알 수 없는 단계 {step!r}; 단계는 {steps} 입니다'},
    'internal': {'en': 'kai-lab failed ({error}); please report it to the lab\'s maintainers',
                 'ko': 'kai-lab 오류 ({error}); 실습 관리자에게 알려 주세요'},
}


def _say(key, lang, **values):
    return say(WORDS[key], lang, **values)


def console(line):
    """line without control or format characters (a learner's text cannot start a console line)."""
    return ''.join(ch if ch == ' ' or unicodedata.category(ch)[0] not in ('C', 'Z') else ' '
                   for ch in str(line)).rstrip()


class Output(object):
    """Where the command prints: each line one console line."""

    def __init__(self, stream):
        self.stream = stream

    def line(self, text=''):
        self.stream.write(console(text) + '\n')

    def json(self, value):
        self.stream.write(json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True) + '\n')


def _unknown_step(step, lang):
    return _say('unknown_step', lang, step=step, steps=', '.join(steps.STEP_IDS))
