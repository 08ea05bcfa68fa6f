# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kai-lab: the learner's check button, on the VM and on the sim.

  kai-lab check STEP   grade one step now, as grade.yml -e kai_lab_grade_steps=STEP
  kai-lab check        grade the whole lab (writes grade.json and grade-junit.xml)
  kai-lab status       every step's last result from the grader's record, and what is next
  kai-lab hint STEP    the step's hints

The grade is grade_session.grade(), the very code the module kai_lab_grade
runs. The lab's settings come from the config file provision writes
(roles/kai_lab/tasks/cli.yml); the command takes no path from its caller, so
a learner allowed to run it through sudo reads and writes nothing else.

Exit codes, the contract a lab platform's verify script relies on:
0 passed, 1 not passed, 2 could not grade (cluster unreachable, unknown
step, no or broken config).

Layer: grading; may use the cluster client, the KAI domain, the learner's files, the grader's record, the lab's steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import json
import os
import pwd
import sys
import unicodedata

from ansible_collections.gsb.kai_lab.plugins.module_utils.record import store as grade_record_store
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry as steps
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import say

PASSED_EXIT, NOT_PASSED_EXIT, CANNOT_GRADE_EXIT = 0, 1, 2
LANGS = ('ko', 'en')

# The config's keys that are grade settings (grade_session.DEFAULTS); others:
# version (the collection's), target, sim_state_dir.
SETTING_KEYS = ('namespace', 'workdir', 'kai_version', 'kai_record', 'kubeconfig', 'context', 'request_timeout', 'lang',
                'health_urls', 'kai_namespace', 'kai_deployments', 'output_dir', 'time_limit', 'record_path',
                'learner_identity', 'learner_policies')

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
    'environment_failed': {'en': 'KAI-Scheduler is not ready: {message}', 'ko': 'KAI-Scheduler 가 준비되지 않았습니다: {message}'},
    'next': {'en': 'next: step {number} {id} ({title}), then kai-lab check {id}',
             'ko': '다음: {number}단계 {id} ({title}), 마친 뒤 kai-lab check {id}'},
    'all_done': {'en': 'every step is checked: kai-lab check grades the whole lab',
                 'ko': '모든 단계를 확인했습니다: kai-lab check 로 실습 전체를 채점하세요'},
    'cannot_grade': {'en': 'could not grade: {error}', 'ko': '채점할 수 없습니다: {error}'},
    'files': {'en': 'written: {files}', 'ko': '작성한 파일: {files}'},
    'status_passed': {'en': 'passed, verified {at}', 'ko': '통과, {at} 확인'},
    'status_some': {'en': '{done} of {total} checks verified ({at}); run kai-lab check {id}',
                    'ko': '검사 {total}개 중 {done}개 확인 ({at}); kai-lab check {id} 실행'},
    'status_none': {'en': 'not checked yet', 'ko': '아직 확인하지 않음'},
    'record': {'en': 'grader\'s record: {path}', 'ko': '채점 기록: {path}'},
    'no_record': {'en': 'grader\'s record: none yet ({path})', 'ko': '채점 기록: 아직 없음 ({path})'},
    'no_config': {'en': 'kai-lab has no settings: {path} {why}. Provision the lab (ansible-playbook '
                        'playbooks/provision.yml), which writes them.',
                  'ko': 'kai-lab 설정이 없습니다: {path} {why}. 실습을 프로비저닝(ansible-playbook '
                        'playbooks/provision.yml)하면 설정이 작성됩니다.'},
    'not_root': {'en': 'cannot be read as this user: run sudo kai-lab',
                 'ko': '이 사용자로 읽을 수 없습니다: sudo kai-lab 로 실행하세요'},
    'missing': {'en': 'does not exist', 'ko': '이(가) 없습니다'},
    'broken': {'en': 'is not a kai-lab settings file ({error})', 'ko': '은(는) kai-lab 설정 파일이 아닙니다 ({error})'},
    'unknown_step': {'en': 'unknown step {step!r}; the steps are {steps}',
                     'ko': '알 수 없는 단계 {step!r}; 단계는 {steps} 입니다'},
    'internal': {'en': 'kai-lab failed ({error}); please report it to the lab\'s maintainers',
                 'ko': 'kai-lab 오류 ({error}); 실습 관리자에게 알려 주세요'},
}


class ConfigError(Exception):
    pass


def _say(key, lang, **values):
    return say(WORDS[key], lang, **values)


def console(line):
    """line without control or format characters (a learner's text cannot start a console line)."""
    return ''.join(ch if ch == ' ' or unicodedata.category(ch)[0] not in ('C', 'Z') else ' '
                   for ch in str(line)).rstrip()


def load_config(path):
    """The settings provision wrote (a JSON object), or ConfigError in both languages."""
    try:
        with open(path) as handle:
            config = json.load(handle)
    except (IOError, OSError):
        why = 'missing' if not os.path.exists(path) else 'not_root'
        raise ConfigError(dict((lang, _say('no_config', lang, path=path, why=_say(why, lang))) for lang in LANGS))
    except ValueError as exc:
        raise ConfigError(dict((lang, _say('no_config', lang, path=path, why=_say('broken', lang, error=exc)))
                               for lang in LANGS))
    if not isinstance(config, dict) or not isinstance(config.get('namespace'), str):
        raise ConfigError(dict((lang, _say('no_config', lang, path=path, why=_say('broken', lang, error='no namespace')))
                               for lang in LANGS))
    return config


def settings_of(config, lang):
    """The grade settings of the config, in lang; a kubeconfig under ~ is the running user's (root under sudo)."""
    settings = dict((key, config[key]) for key in SETTING_KEYS if config.get(key) is not None)
    settings['lang'] = lang
    kubeconfig = settings.get('kubeconfig')
    if isinstance(kubeconfig, str) and kubeconfig.startswith('~'):
        home = pwd.getpwuid(os.geteuid()).pw_dir
        settings['kubeconfig'] = home + kubeconfig[1:] if kubeconfig[1:2] in ('', '/') else os.path.expanduser(kubeconfig)
    return settings


def parser_for(lang, config):
    """The argument parser with its help in lang."""
    epilog = _say('epilog', lang, steps=', '.join(steps.STEP_IDS))
    parser = argparse.ArgumentParser(prog='kai-lab', description=_say('description', lang), epilog=epilog,
                                     add_help=False)
    parser.add_argument('-h', '--help', action='help', help=_say('help', lang))
    parser.add_argument('--version', action='version', help=_say('version', lang),
                        version='kai-lab (gsb.kai_lab) %s' % config.get('version', 'unknown'))
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument('--lang', choices=LANGS, help=_say('lang', lang, default=config.get('lang') or 'ko'))
    common.add_argument('--json', action='store_true', help=_say('json', lang))
    parser.add_argument('--lang', choices=LANGS, dest='top_lang', help=_say('lang', lang, default=config.get('lang') or 'ko'))
    parser.add_argument('--json', action='store_true', dest='top_json', help=_say('json', lang))
    commands = parser.add_subparsers(dest='command', title=_say('commands', lang), metavar='{check,status,hint}')
    commands.required = True
    check = commands.add_parser('check', parents=[common], help=_say('check', lang), description=_say('check', lang),
                                epilog=epilog, add_help=False)
    check.add_argument('-h', '--help', action='help', help=_say('help', lang))
    check.add_argument('step', nargs='?', help=_say('check_step', lang))
    status = commands.add_parser('status', parents=[common], help=_say('status', lang),
                                 description=_say('status', lang), add_help=False)
    status.add_argument('-h', '--help', action='help', help=_say('help', lang))
    hint = commands.add_parser('hint', parents=[common], help=_say('hint', lang), description=_say('hint', lang),
                               epilog=epilog, add_help=False)
    hint.add_argument('-h', '--help', action='help', help=_say('help', lang))
    hint.add_argument('step', help=_say('hint_step', lang))
    return parser


def _early_lang(argv, default):
    """--lang as given anywhere on the line (the help is worded in it), else default."""
    for index, arg in enumerate(argv):
        if arg == '--lang' and index + 1 < len(argv) and argv[index + 1] in LANGS:
            return argv[index + 1]
        if arg.startswith('--lang=') and arg.split('=', 1)[1] in LANGS:
            return arg.split('=', 1)[1]
    return default if default in LANGS else 'ko'


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


def _next_step(done_ids):
    for step in steps.STEPS:
        if step.id not in done_ids:
            return step
    return None


def _next_line(done_ids, lang):
    step = _next_step(done_ids)
    if step is None:
        return _say('all_done', lang)
    return _say('next', lang, number=step.number, id=step.id, title=step.title[lang])


def check(settings, step_id, lang, out, as_json, cluster=None, err=None):
    """kai-lab check [STEP]: the grade, printed; the exit code. With as_json, stdout is JSON alone (why a grade
    could not be made goes to err)."""
    say_why = err if as_json and err is not None else out
    if step_id is not None and step_id != 'all' and step_id not in steps.STEP_IDS:
        say_why.line(_say('cannot_grade', lang, error=_unknown_step(step_id, lang)))
        return CANNOT_GRADE_EXIT
    whole = step_id in (None, 'all')
    # Imported here: status and hint need none of the grader's modules.
    from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import session as grade_session
    try:
        result = grade_session.grade(settings, None if whole else [step_id], write=True, reports=whole,
                                     cluster=cluster)
    except grade_session.GradeError as exc:
        if as_json and exc.grade is not None:
            out.json(exc.grade)
        say_why.line(_say('cannot_grade', lang, error=exc.message))
        return CANNOT_GRADE_EXIT
    grade = result['grade']
    if as_json:
        out.json(grade if whole else grade['steps'][0])
    else:
        for row in result['table']:
            out.line(row)
        # KAI not serving fails the grade as grade.yml's does: the step's verdict names it too.
        down = [c['id'] for c in grade['environment'] if c['status'] != 'passed']
        for graded in grade['steps'] if not whole else []:
            not_passed = [c['id'] for c in graded['checks'] if c['status'] != 'passed'] + down
            if not_passed:
                out.line(_say('step_failed', lang, number=graded['number'], id=graded['id'], title=graded['title'],
                              count=len(not_passed), checks=', '.join(not_passed)))
            else:
                out.line(_say('step_passed', lang, number=graded['number'], id=graded['id'], title=graded['title']))
        if whole:
            out.line(_say('lab_passed' if grade['passed'] else 'lab_failed', lang, score=grade['score']))
            out.line(_say('files', lang, files=', '.join(result['files'])))
    if result['cluster_error']:
        # Files-only checks ran; the cluster's could not: not a grade of the lab.
        say_why.line(_say('cannot_grade', lang, error=result['cluster_error']))
        return CANNOT_GRADE_EXIT
    down = [c for c in grade['environment'] if c['status'] != 'passed']
    if down and not as_json:
        out.line(_say('environment_failed', lang, message=down[0]['message']))
    if not whole and grade['passed'] and not as_json:
        done = set(s.id for s in steps.STEPS if s.number <= grade['steps'][0]['number'])
        out.line(_next_line(done, lang))
    return PASSED_EXIT if grade['passed'] else NOT_PASSED_EXIT


def kai_of(settings, lang, cluster=None):
    """(the KAI line, its dict) of the KAI that runs, or (why it cannot be read, None): status says it first."""
    from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import output as grade_output
    from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import session as grade_session
    from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import running as kai_running
    from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import kai_forms
    settings = grade_session.complete(settings)
    try:
        if cluster is None and not settings.get('kai_record'):
            cluster = grade_session.connect(settings)  # k3s: read through the API
        kai = kai_forms.describe(grade_session.running_kai(settings, cluster))
    except grade_session.GradeError as exc:
        return console(exc.message), None
    return console(grade_output.kai_line(kai, lang)), kai


def status(settings, lang, out, as_json, cluster=None):
    """kai-lab status: the KAI that runs, what protects its word, what the grader's record holds per step, and
    what is next; exit 0 when every step passed."""
    kai_said, kai = kai_of(settings, lang, cluster)
    from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import session as grade_session
    protection = grade_session.protection_now(settings, lang, (kai or {}).get('version'), cluster)
    path = settings.get('record_path')
    record, notes = grade_record_store.load(path, settings['namespace'])
    recorded = record['checks']
    rows = []
    for step in steps.STEPS:
        ids = [c.id for c in step.checks]
        seen = [recorded[i]['verified_at'] for i in ids if i in recorded]
        rows.append({'id': step.id, 'number': step.number, 'title': step.title[lang],
                     'checks': len(ids), 'verified': len(seen), 'passed': len(seen) == len(ids),
                     'last_verified_at': max(seen) if seen else None})
    done = set(r['id'] for r in rows if r['passed'])
    following = _next_step(done)
    if as_json:
        out.json({'kai': kai or {'error': kai_said}, 'protection': protection, 'record': path,
                  'notes': [n.get(lang) or n['en'] for n in notes], 'steps': rows,
                  'next': following.id if following else None})
    else:
        out.line(kai_said)
        out.line(protection['line'])
        exists = path and os.path.exists(path)
        out.line(_say('record' if exists else 'no_record', lang, path=path))
        for note in notes:
            out.line('note: %s' % (note.get(lang) or note['en']))
        for row in rows:
            at = (row['last_verified_at'] or '')[:16].replace('T', ' ') + ' UTC'
            if row['passed']:
                what = _say('status_passed', lang, at=at)
            elif row['verified']:
                what = _say('status_some', lang, done=row['verified'], total=row['checks'], at=at, id=row['id'])
            else:
                what = _say('status_none', lang)
            out.line('%-2s %-10s %s (%s)' % (row['number'], row['id'], what, row['title']))
        out.line(_next_line(done, lang))
    return PASSED_EXIT if following is None else NOT_PASSED_EXIT


def hint(step_id, lang, out, as_json):
    """kai-lab hint STEP: each check's description and hint."""
    if step_id not in steps.STEP_IDS:
        out.line(_unknown_step(step_id, lang))
        return CANNOT_GRADE_EXIT
    step = steps.step(step_id)
    hints = [{'id': c.id, 'description': say(c.words['desc'], lang), 'hint': say(c.words['hint'], lang)}
             for c in step.checks]
    if as_json:
        out.json({'id': step.id, 'number': step.number, 'title': step.title[lang], 'hints': hints})
        return PASSED_EXIT
    out.line('%s %s: %s' % (step.number, step.id, step.title[lang]))
    for entry in hints:
        out.line('- %s (%s): %s' % (entry['id'], entry['description'], entry['hint']))
    return PASSED_EXIT


def main(argv=None, config_path=None, stdout=None, stderr=None, cluster=None):
    """Run kai-lab; the exit code. cluster: a client to grade with instead of connecting (tests)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    out, err = Output(stdout or sys.stdout), Output(stderr or sys.stderr)
    try:
        config = load_config(config_path)
    except ConfigError as exc:
        if '--version' in argv:
            err.line('kai-lab (gsb.kai_lab) unknown')
        err.line(exc.args[0][_early_lang(argv, 'ko')])
        return CANNOT_GRADE_EXIT
    lang = _early_lang(argv, config.get('lang'))
    parser = parser_for(lang, config)
    # argparse prints help, version and usage errors to sys.stdout and sys.stderr itself.
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out.stream, err.stream
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error (argparse's own 2)
        return exc.code if isinstance(exc.code, int) else CANNOT_GRADE_EXIT
    finally:
        sys.stdout, sys.stderr = streams
    lang = args.lang or args.top_lang or lang
    as_json = args.json or args.top_json
    settings = settings_of(config, lang)
    try:
        if args.command == 'check':
            return check(settings, args.step, lang, out, as_json, cluster=cluster, err=err)
        if args.command == 'status':
            return status(settings, lang, out, as_json, cluster=cluster)
        return hint(args.step, lang, out, as_json)
    except Exception as exc:  # never a traceback for the learner
        err.line(_say('internal', lang, error='%s: %s' % (type(exc).__name__, exc)))
        return CANNOT_GRADE_EXIT
