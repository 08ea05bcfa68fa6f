# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kai-lab's verbs: check, status and hint, each printing through an Output and giving the exit code.

``check`` is grade_session.grade(), the very code the module kai_lab_grade
runs; ``status`` reads the grader's record and the KAI that runs; ``hint``
only the step's words. The command line that calls them is grading/cli.py.

Layer: grading; may use the cluster client, the KAI domain, the learner's files, the grader's record, the lab's steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import cli_task
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.cli_output import (
    CANNOT_GRADE_EXIT, NOT_PASSED_EXIT, PASSED_EXIT, _say, _unknown_step, console)
from ansible_collections.gsb.kai_lab.plugins.module_utils.record import store as grade_record_store
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry as steps
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import say


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
        _print_grade(grade, result['files'], whole, lang, out)
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


def _verdict(graded, down, lang):
    """A step's verdict line; KAI not serving fails the step as grade.yml's grade does, and is named."""
    not_passed = [c['id'] for c in graded['checks'] if c['status'] != 'passed'] + down
    if not_passed:
        return _say('step_failed', lang, number=graded['number'], id=graded['id'], title=graded['title'],
                    count=len(not_passed), checks=', '.join(not_passed))
    return _say('step_passed', lang, number=graded['number'], id=graded['id'], title=graded['title'])


def _print_grade(grade, files, whole, lang, out):
    """The verdict first (the step's, or the lab's), then a row per check with the hint of each not passed,
    then the KAI version's note only for a step it changes and one sentence on what protects the grade."""
    marks = dict(zip(('passed', 'failed', 'unverified'), _say('marks', lang).split('|')))
    down = [c['id'] for c in grade['environment'] if c['status'] != 'passed']
    if whole:
        out.line(_say('lab_passed' if grade['passed'] else 'lab_failed', lang, score=grade['score']))
    for graded in grade['steps']:
        if whole:
            out.line(_verdict(graded, down, lang))
            continue
        out.line(_verdict(graded, down, lang))
        for check in graded['checks']:
            message = check.get('message') or ''
            out.line(_say('check_row', lang, mark=marks.get(check['status'], '????'), id=check['id'],
                          message='' if check['status'] == 'passed' else ': ' + message))
            if check['status'] != 'passed' and check.get('hint'):
                out.line(_say('check_hint', lang, hint=check['hint']))
    kai = grade.get('kai') or {}
    shown = set(g['id'] for g in grade['steps'])
    from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import output as grade_output
    for entry in kai.get('differences') or []:
        if entry['step'] in shown and not whole:
            difference = grade_output.KAI_WORDS[entry['step']][lang].format(**entry)
            out.line(_say('kai_note', lang, version=kai.get('version'), difference=difference, id=entry['step']))
    protection = grade.get('protection')
    if protection:
        key = 'protected_short' if protection.get('protected') else (
            'unknown_short' if protection.get('error') else 'unprotected_short')
        out.line(_say(key, lang))
    if whole:
        out.line(_say('files', lang, files=', '.join(files)))


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
                  'next': following.id if following else None,
                  'next_task': cli_task.next_task_line(settings, lang, following) if following else None})
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
        if following is not None:
            out.line(cli_task.next_task_line(settings, lang, following))
    return PASSED_EXIT if following is None else NOT_PASSED_EXIT


def hint(settings, step_id, lang, out, as_json):
    """kai-lab hint STEP: each check's description and hint, with this lab's names and paths."""
    if step_id not in steps.STEP_IDS:
        out.line(_unknown_step(step_id, lang))
        return CANNOT_GRADE_EXIT
    step = steps.step(step_id)
    lab = cli_task.lab_of(settings, lang, running=True).values
    hints = [{'id': c.id, 'description': say(c.words['desc'], lang, **lab), 'hint': say(c.words['hint'], lang, **lab)}
             for c in step.checks]
    if as_json:
        out.json({'id': step.id, 'number': step.number, 'title': step.title[lang], 'hints': hints})
        return PASSED_EXIT
    out.line('%s %s: %s' % (step.number, step.id, step.title[lang]))
    for entry in hints:
        out.line('- %s (%s): %s' % (entry['id'], entry['description'], entry['hint']))
    return PASSED_EXIT
