# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A class at a glance: the grades of many learners as one summary.

Input is what the kai_lab_grade module returned for each learner host (its
``grade``, the grade.json structure), or the result Ansible recorded when a
host could not be reached or graded. Nothing here knows how a grade is made.
The summary's four files (JSON, CSV, JUnit, HTML), safe against what a
learner controls, are written by grading/class_report_files.py.

Layer: grading; may use the cluster client, the KAI domain, the learner's files, the grader's record, the lab's steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

SCHEMA_VERSION = 1
GRADED, UNREACHABLE, NOT_GRADED = 'graded', 'unreachable', 'not_graded'
PASSED, FAILED, UNVERIFIED = 'passed', 'failed', 'unverified'


def as_text(value):
    """Any value as text (bytes as UTF-8, None as empty)."""
    if value is None:
        return ''
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode('utf-8', 'replace')
    return str(value)


def _step_status(step):
    statuses = [check.get('status') for check in step.get('checks') or []]
    if FAILED in statuses:
        return FAILED
    if UNVERIFIED in statuses:
        return UNVERIFIED
    return PASSED if statuses else UNVERIFIED


def _failing_checks(checks):
    return [dict(id=as_text(check.get('id')), status=as_text(check.get('status')),
                 message=as_text(check.get('message')), hint=as_text(check.get('hint')),
                 evidence=check.get('evidence'))
            for check in checks or [] if check.get('status') != PASSED]


def kai_short(kai):
    """Which KAI a learner was graded on, and the steps whose form differs there from the lab text."""
    if not isinstance(kai, dict) or not kai.get('version'):
        return ''
    differing = [str(entry.get('number') or entry.get('step')) for entry in kai.get('differences') or []
                 if isinstance(entry, dict)]
    if as_text(kai.get('version')) == as_text(kai.get('lab_version')) or not differing:
        return 'KAI %s' % as_text(kai['version'])
    return 'KAI %s (not the lab text\'s %s; %s %s in %s own form)' % (
        as_text(kai['version']), as_text(kai.get('lab_version')), 'steps' if len(differing) > 1 else 'step',
        ', '.join(differing), 'their' if len(differing) > 1 else 'its')


def protection_short(protection):
    """What protects a learner's KAI evidence, in a few words: protected, or the writes the learner holds."""
    if not isinstance(protection, dict):
        return 'not asked (a grade without a protection block)'
    if protection.get('protected') is True:
        return 'KAI\'s word is protected'
    holds = [as_text(h.get('en') or h.get('id')) for h in protection.get('holds') or [] if isinstance(h, dict)]
    return 'KAI\'s word is NOT protected: the learner may %s' % ('; '.join(holds) or 'write its evidence')


def learner_row(learner, result):
    """One learner from the registered result of the grade task on their host."""
    result = result if isinstance(result, dict) else {}
    grade = result.get('grade')
    row = dict(learner=as_text(learner), status=GRADED, message='', score=None, points=None, max_points=None,
               passed=False, kai_version='', kai='', generated_at='', steps=[], environment=[], protected=False,
               protection='')
    if isinstance(grade, dict) and isinstance(grade.get('steps'), list):
        row.update(score=grade.get('score'), points=grade.get('points'), max_points=grade.get('max_points'),
                   passed=bool(grade.get('passed')), kai_version=as_text(grade.get('kai_version')),
                   generated_at=as_text(grade.get('generated_at')), kai=kai_short(grade.get('kai')),
                   protected=(grade.get('protection') or {}).get('protected') is True,
                   protection=protection_short(grade.get('protection')))
        for step in grade['steps']:
            row['steps'].append(dict(id=as_text(step.get('id')), number=step.get('number'),
                                     title=as_text(step.get('title')), status=_step_status(step),
                                     checks=[dict(id=as_text(c.get('id')), status=as_text(c.get('status')),
                                                  message=as_text(c.get('message')))
                                             for c in step.get('checks') or []],
                                     failing=_failing_checks(step.get('checks'))))
        row['environment'] = _failing_checks(grade.get('environment'))
        return row
    if result.get('unreachable'):
        row.update(status=UNREACHABLE, message='host could not be reached: %s' % as_text(result.get('msg')).strip())
    elif result.get('failed'):
        row.update(status=NOT_GRADED, message='grade failed: %s' % as_text(result.get('msg')).strip())
    else:
        row.update(status=NOT_GRADED, message='not graded: the host stopped before the grade task')
    return row


def class_summary(results, generated_at):
    """The class: rows in learner order, the steps seen (in lab order), counts."""
    rows = [learner_row(learner, result) for learner, result in sorted(results.items())]
    steps = []
    seen = set()
    for row in rows:
        for step in row['steps']:
            if step['id'] not in seen:
                seen.add(step['id'])
                steps.append(dict(id=step['id'], number=step['number'], title=step['title']))
    steps.sort(key=lambda step: (step['number'] is None, step['number'], step['id']))
    counts = dict(learners=len(rows), graded=0, passed=0, unreachable=0, not_graded=0)
    for row in rows:
        counts[row['status']] += 1
        counts['passed'] += 1 if row['passed'] else 0
    return dict(schema_version=SCHEMA_VERSION, generated_at=generated_at, counts=counts, steps=steps,
                learners=rows)


def console_lines(summary):
    """One console line per learner: score and the steps not passed."""
    lines = []
    for row in summary['learners']:
        if row['status'] != GRADED:
            lines.append('%-20s %s' % (row['learner'], row['message']))
            continue
        missing = ['%s %s' % (step['id'], step['status']) for step in row['steps'] if step['status'] != PASSED]
        missing.extend('%s %s' % (check['id'], check['status']) for check in row['environment'])
        verdict = 'PASSED' if row['passed'] else 'not passed: ' + ', '.join(missing)
        lines.append('%-20s %5.1f%% %s%s [%s]' % (row['learner'], row['score'] or 0, verdict,
                                                  ' [%s]' % row['kai'] if row['kai'] else '', row['protection']))
    return lines
