# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kai-lab's verbs for the lab text and lab platforms, beside check, status and hint:

  kai-lab task [STEP]              a step's task in the learner's language, with this lab's paths
                                   (no STEP: the next one the grader's record has not passed)
  kai-lab export PLATFORM DIR      a lab platform's package of the lab (grading/platforms.py)
  kai-lab check STEP --first-failure
                                   one line, the first failing check's message, for a platform's check
                                   script; the exit codes of kai-lab check

grading/cli.py registers them (add_parsers, add_check_options) and hands
them their arguments (run, first_failure); kai-lab status names the next
task with next_task_line. task reads no cluster: only the lab text, the
settings and the grader's record. export is the one verb that takes paths
from its caller, so it refuses to run for a learner through sudo (the
learner's rule on a VM, where kai-lab runs as root).

Layer: grading; may use the cluster client, the KAI domain, the learner's files, the grader's record, the lab's steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import cli_output
from ansible_collections.gsb.kai_lab.plugins.module_utils.record import store as grade_record_store
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import lab_text, lab_values
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry as steps
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import say

VERBS = ('task', 'export')
# The settings task needs, and their defaults when the config has none (grading/session.py's DEFAULTS).
TEXT_SETTINGS = ('namespace', 'workdir', 'kai_namespace')

WORDS = {
    'task': {'en': 'print a step\'s task with this lab\'s paths (none: the next step not passed yet)',
             'ko': '이 실습의 경로로 단계의 할 일을 출력 (단계 없이: 아직 통과하지 못한 다음 단계)'},
    'task_step': {'en': 'the step; none: the next one not passed yet', 'ko': '단계. 없으면 아직 통과하지 못한 다음 단계'},
    'export': {'en': 'write a lab platform\'s package of this lab into DIR: its pages, a setup that provisions the '
                     'lab with this collection, a check script per step',
               'ko': '실습 플랫폼용 패키지를 DIR 에 작성: 페이지, 이 컬렉션으로 실습을 준비하는 setup, 단계별 확인 스크립트'},
    'platform': {'en': 'the lab platform', 'ko': '실습 플랫폼'},
    'dir': {'en': 'a directory that does not exist yet or is empty', 'ko': '아직 없거나 비어 있는 디렉터리'},
    'collection': {'en': 'the collection the platform\'s machine installs: a gsb-kai_lab-*.tar.gz (ansible-galaxy '
                         'collection build; copied into the package) or an https URL of one',
                   'ko': '플랫폼의 머신이 설치할 컬렉션: gsb-kai_lab-*.tar.gz 파일(ansible-galaxy collection build, '
                         '패키지에 복사) 또는 그 https URL'},
    'kai_version': {'en': 'the KAI-Scheduler the package installs, whose form of each step its pages write (default: '
                          'the lab text\'s, the k3s target\'s default)',
                    'ko': '패키지가 설치할 KAI-Scheduler 버전. 페이지는 그 버전에 맞는 단계 형태로 씁니다 (기본값: 실습 '
                          '설명의 버전, k3s 대상의 기본값)'},
    'first_failure': {'en': 'print one line instead of the table: the first failing check\'s message and hint (for a '
                            'lab platform\'s check script)',
                      'ko': '표 대신 한 줄 출력: 처음 실패한 검사의 메시지와 힌트 (실습 플랫폼의 확인 스크립트용)'},
    'failure': {'en': '{id}: {message}. Hint: {hint}', 'ko': '{id}: {message}. 힌트: {hint}'},
    'next_task': {'en': 'the task: {summary} (kai-lab task prints it in full)',
                  'ko': '할 일: {summary} (kai-lab task 로 전체를 봅니다)'},
    'written': {'en': '{platform} package written to {dest}: {count} files', 'ko': '{platform} 패키지를 {dest} 에 작성: 파일 {count}개'},
    'cannot_export': {'en': 'could not export: {error}', 'ko': '내보낼 수 없습니다: {error}'},
    'through_sudo': {'en': 'kai-lab export writes and reads the paths it is given, so it does not run through sudo for '
                           'another user: run it as root or on your own machine',
                     'ko': 'kai-lab export 는 주어진 경로를 읽고 쓰므로 다른 사용자를 위해 sudo 로 실행하지 않습니다: root 로 '
                           '또는 자신의 머신에서 실행하세요'},
}


def _say(key, lang, **values):
    return say(WORDS[key], lang, **values)


def add_parsers(commands, common, lang, help_text, epilog):
    """The task and export subcommands, their help in lang."""
    from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import platforms
    task = commands.add_parser('task', parents=[common], help=_say('task', lang), description=_say('task', lang),
                               epilog=epilog, add_help=False)
    task.add_argument('-h', '--help', action='help', help=help_text)
    task.add_argument('step', nargs='?', help=_say('task_step', lang))
    export = commands.add_parser('export', parents=[common], help=_say('export', lang),
                                 description=_say('export', lang), add_help=False)
    export.add_argument('-h', '--help', action='help', help=help_text)
    export.add_argument('platform', choices=platforms.PLATFORMS, help=_say('platform', lang))
    export.add_argument('dest', metavar='DIR', help=_say('dir', lang))
    export.add_argument('--collection', required=True, help=_say('collection', lang))
    export.add_argument('--kai-version', dest='kai_version', help=_say('kai_version', lang))


def add_check_options(check, lang):
    check.add_argument('--first-failure', action='store_true', help=_say('first_failure', lang))


def run(args, settings, lang, out, err, as_json):
    """kai-lab task or export; the exit code."""
    if args.command == 'task':
        return task(settings, args.step, lang, out, as_json)
    return export(settings, args.platform, args.dest, args.collection, lang, out, err, as_json, args.kai_version)


def running_version(settings, cluster=None):
    """The version of the KAI that runs, whose form of each step the text writes, or None when it cannot be read.

    The sim's record is a file (no cluster is asked); a VM's KAI is read
    through the API (two requests, bounded by the settings' request time).
    None (not read): the text shows the lab text's form and each other one.
    """
    from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import running as kai_running
    try:
        if settings.get('kai_record'):
            return kai_running.read_sim_record(settings['kai_record']).version
        if cluster is None and not settings.get('kubeconfig'):
            return None
        from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import session as grade_session
        full = grade_session.complete(settings)
        cluster = cluster or grade_session.connect(full)
        return kai_running.running_kai(cluster, None, full['kai_namespace']).version
    except Exception:  # any reason it cannot be read: the text then shows every form
        return None


def lab_of(settings, lang, running=False, cluster=None):
    """The lab text with this lab's namespace, workdir and KAI namespace (the defaults' where settings have none);
    running: written for the KAI that runs and the lab's target (kai-lab task, hint, status)."""
    values = dict((key, settings.get(key)) for key in TEXT_SETTINGS)
    if not all(values.values()):
        # Only then: the grading core's import costs kai-lab task a tenth of a second.
        from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.session import DEFAULTS
        values = dict((key, value or DEFAULTS[key]) for key, value in values.items())
    kai_version = running_version(settings, cluster) if running else None
    return lab_text.Lab(lang, values['namespace'], values['workdir'], values['kai_namespace'], kai_version=kai_version,
                        target=settings.get('target') if running else None)


def next_step(settings):
    """The first step whose checks the grader's record has not all verified, or None (kai-lab status's rule)."""
    record, _notes = grade_record_store.load(settings.get('record_path'), settings['namespace'])
    recorded = record['checks']
    for step in steps.STEPS:
        if not all(c.id in recorded for c in step.checks):
            return step
    return None


def task(settings, step_id, lang, out, as_json):
    """kai-lab task [STEP]: the step's task (title, task, files, context, how to check); exit 0, 2 for an unknown step."""
    if step_id is not None and step_id not in steps.STEP_IDS:
        out.line(cli_output._unknown_step(step_id, lang))
        return cli_output.CANNOT_GRADE_EXIT
    step = steps.step(step_id) if step_id else next_step(settings)
    if step is None:
        out.line(cli_output._say('all_done', lang))
        return cli_output.PASSED_EXIT
    lab = lab_of(settings, lang, running=True)
    nodes = lab.step(step.id, level=1)
    if as_json:
        out.json({'id': step.id, 'number': step.number, 'title': step.title[lang], 'summary': lab.summary(step.id),
                  'files': lab_values.step_files(step, lab.workdir),
                  'text': lab_text.markdown(nodes)})
        return cli_output.PASSED_EXIT
    for line in lab_text.plain(nodes).splitlines():
        out.line(line)
    return cli_output.PASSED_EXIT


def next_task_line(settings, lang, step):
    """What kai-lab status says of the next step's task."""
    return lab_text.plain_inline(_say('next_task', lang, summary=lab_of(settings, lang, running=True).summary(step.id)))


def first_failure(settings, step_id, lang, out, cluster=None):
    """kai-lab check [STEP] --first-failure: one line and kai-lab check's exit code.

    Passed: the step's (or the lab's) PASSED line. Not passed: the first
    check not passed (the step's, then KAI's health), its id, message and
    hint. Could not grade: why, as kai-lab check says it.
    """
    from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import session as grade_session
    if step_id is not None and step_id != 'all' and step_id not in steps.STEP_IDS:
        out.line(cli_output._say('cannot_grade', lang, error=cli_output._unknown_step(step_id, lang)))
        return cli_output.CANNOT_GRADE_EXIT
    whole = step_id in (None, 'all')
    try:
        result = grade_session.grade(settings, None if whole else [step_id], write=True, reports=whole, cluster=cluster)
    except grade_session.GradeError as exc:
        out.line(cli_output._say('cannot_grade', lang, error=exc.message))
        return cli_output.CANNOT_GRADE_EXIT
    if result['cluster_error']:
        out.line(cli_output._say('cannot_grade', lang, error=result['cluster_error']))
        return cli_output.CANNOT_GRADE_EXIT
    grade = result['grade']
    if grade['passed']:
        if whole:
            out.line(cli_output._say('lab_passed', lang, score=grade['score']))
        else:
            graded = grade['steps'][0]
            out.line(cli_output._say('step_passed', lang, number=graded['number'], id=graded['id'], title=graded['title']))
        return cli_output.PASSED_EXIT
    failing = [c for s in grade['steps'] for c in s['checks'] if c['status'] != 'passed']
    failing += [c for c in grade['environment'] if c['status'] != 'passed']
    first = failing[0] if failing else {'id': 'grade', 'message': 'not passed', 'hint': ''}
    out.line(_say('failure', lang, id=first['id'], message=(first.get('message') or '').rstrip('. '),
                  hint=first.get('hint') or '-'))
    return cli_output.NOT_PASSED_EXIT


def export(settings, platform, dest, collection, lang, out, err, as_json, kai_version=None):
    """kai-lab export PLATFORM DIR --collection TARBALL|URL: the package written; 2 when it cannot be."""
    from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import platforms
    if os.environ.get('SUDO_UID') not in (None, '', '0'):
        # sudo sets SUDO_UID itself: the learner's sudo rule must not let them read or write root's files.
        err.line(_say('cannot_export', lang, error=_say('through_sudo', lang)))
        return cli_output.CANNOT_GRADE_EXIT
    try:
        # The platform's machine is provisioned with the collection's defaults (namespace, workdir), not this lab's.
        files, tarball = platforms.package(platform, lab_of({}, lang), collection, kai_version=kai_version)
        written = platforms.write(dest, files, tarball, collection)
    except platforms.ExportError as exc:
        err.line(_say('cannot_export', lang, error=exc.args[0].get(lang) or exc.args[0]['en']))
        return cli_output.CANNOT_GRADE_EXIT
    except (IOError, OSError) as exc:
        err.line(_say('cannot_export', lang, error=exc))
        return cli_output.CANNOT_GRADE_EXIT
    if as_json:
        out.json({'platform': platform, 'dest': dest, 'files': written})
    else:
        out.line(_say('written', lang, platform=platform, dest=dest, count=len(written)))
    return cli_output.PASSED_EXIT
