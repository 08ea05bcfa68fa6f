# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A class at a glance: the grades of many learners as JSON, CSV, JUnit and HTML.

Input is what the kai_lab_grade module returned for each learner host (its
``grade``, the grade.json structure), or the result Ansible recorded when a
host could not be reached or graded. Nothing here knows how a grade is made.

Everything a learner controls (messages quoting their files, evidence, pod
names) is treated as hostile: HTML-escaped under a policy that runs no script
at all, neutralised against spreadsheet formulas in CSV, and stripped of
characters XML cannot carry.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import io
import json
import os
import re

from html import escape as _html_escape

SCHEMA_VERSION = 1
GRADED, UNREACHABLE, NOT_GRADED = 'graded', 'unreachable', 'not_graded'
PASSED, FAILED, UNVERIFIED = 'passed', 'failed', 'unverified'
FILES = ('class.json', 'class.csv', 'class-junit.xml', 'class.html')
# Evidence shown for a failing cell is cut here: a learner's file can be large.
EVIDENCE_LIMIT = 2000
# Cells a spreadsheet would read as a formula (OWASP "CSV injection").
_FORMULA_START = ('=', '+', '-', '@', '\t', '\r', '\n')
# Characters XML 1.0 cannot carry at all.
_XML_INVALID = re.compile(u'[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]')


def _text(value):
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
    return [dict(id=_text(check.get('id')), status=_text(check.get('status')),
                 message=_text(check.get('message')), hint=_text(check.get('hint')),
                 evidence=check.get('evidence'))
            for check in checks or [] if check.get('status') != PASSED]


def learner_row(learner, result):
    """One learner from the registered result of the grade task on their host."""
    result = result if isinstance(result, dict) else {}
    grade = result.get('grade')
    row = dict(learner=_text(learner), status=GRADED, message='', score=None, points=None, max_points=None,
               passed=False, kai_version='', generated_at='', steps=[], environment=[])
    if isinstance(grade, dict) and isinstance(grade.get('steps'), list):
        row.update(score=grade.get('score'), points=grade.get('points'), max_points=grade.get('max_points'),
                   passed=bool(grade.get('passed')), kai_version=_text(grade.get('kai_version')),
                   generated_at=_text(grade.get('generated_at')))
        for step in grade['steps']:
            row['steps'].append(dict(id=_text(step.get('id')), number=step.get('number'),
                                     title=_text(step.get('title')), status=_step_status(step),
                                     checks=[dict(id=_text(c.get('id')), status=_text(c.get('status')),
                                                  message=_text(c.get('message')))
                                             for c in step.get('checks') or []],
                                     failing=_failing_checks(step.get('checks'))))
        row['environment'] = _failing_checks(grade.get('environment'))
        return row
    if result.get('unreachable'):
        row.update(status=UNREACHABLE, message='host could not be reached: %s' % _text(result.get('msg')).strip())
    elif result.get('failed'):
        row.update(status=NOT_GRADED, message='grade failed: %s' % _text(result.get('msg')).strip())
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


def _cell(row, step_id):
    for step in row['steps']:
        if step['id'] == step_id:
            return step
    return None


def _evidence_text(evidence):
    if evidence in (None, {}, [], ''):
        return ''
    text = json.dumps(evidence, ensure_ascii=False, sort_keys=True, default=_text)
    return text if len(text) <= EVIDENCE_LIMIT else text[:EVIDENCE_LIMIT] + ' ...'


def _spreadsheet_safe(value):
    """A CSV cell no spreadsheet evaluates: formula starts get a leading quote."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    text = _text(value).replace('\r', ' ').replace('\n', ' ')
    if text.startswith(_FORMULA_START) or text.lstrip().startswith(_FORMULA_START[:4]):
        return "'" + text
    return text


def to_json(summary):
    return json.dumps(summary, indent=2, ensure_ascii=False, sort_keys=True, default=_text) + '\n'


def to_csv(summary):
    """One row per learner: score, each step's status, the failing checks' messages."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator='\r\n')
    header = (['learner', 'status', 'score', 'points', 'max_points', 'passed']
              + [step['id'] for step in summary['steps']] + ['failed_checks', 'message'])
    writer.writerow([_spreadsheet_safe(value) for value in header])
    for row in summary['learners']:
        failing = []
        cells = []
        for step in summary['steps']:
            cell = _cell(row, step['id'])
            cells.append(cell['status'] if cell else '')
            failing.extend('%s: %s' % (check['id'], check['message']) for check in (cell or {}).get('failing', []))
        failing.extend('%s: %s' % (check['id'], check['message']) for check in row['environment'])
        values = [row['learner'], row['status'], row['score'] if row['score'] is not None else '',
                  row['points'] if row['points'] is not None else '',
                  row['max_points'] if row['max_points'] is not None else '',
                  'true' if row['passed'] else 'false'] + cells + [' | '.join(failing), row['message']]
        writer.writerow([_spreadsheet_safe(value) for value in values])
    return buffer.getvalue()


def _xml_text(value):
    return _XML_INVALID.sub(u'\ufffd', _text(value))


def to_junit(summary):
    """JUnit XML: a testsuite per learner, a testcase per check."""
    import xml.etree.ElementTree as ET
    root = ET.Element('testsuites', name='gsb.kai_lab class')
    for row in summary['learners']:
        suite = ET.SubElement(root, 'testsuite', name=_xml_text(row['learner']))
        tests = failures = skipped = errors = 0
        if row['status'] != GRADED:
            case = ET.SubElement(suite, 'testcase', classname='kai_lab.%s' % _xml_text(row['learner']), name='grade')
            ET.SubElement(case, 'error', message=_xml_text(row['message']))
            tests, errors = 1, 1
        for step in row['steps']:
            failing = dict((check['id'], check) for check in step['failing'])
            for check in step['checks']:
                tests += 1
                case = ET.SubElement(suite, 'testcase', classname='kai_lab.%s' % _xml_text(step['id']),
                                     name=_xml_text(check['id']))
                detail = failing.get(check['id'])
                if check['status'] == FAILED:
                    failures += 1
                    node = ET.SubElement(case, 'failure', message=_xml_text(check['message']))
                    node.text = _xml_text('\n'.join(filter(None, [detail['hint'], _evidence_text(detail['evidence'])])))
                elif check['status'] == UNVERIFIED:
                    skipped += 1
                    ET.SubElement(case, 'skipped', message=_xml_text(check['message']))
        suite.set('tests', str(tests))
        suite.set('failures', str(failures))
        suite.set('errors', str(errors))
        suite.set('skipped', str(skipped))
        if row['score'] is not None:
            properties = ET.SubElement(suite, 'properties')
            ET.SubElement(properties, 'property', name='score', value=_xml_text(row['score']))
        # Properties must come first in a testsuite (JUnit's schema).
        if len(suite) and suite[-1].tag == 'properties':
            suite.insert(0, suite[-1])
            del suite[-1]
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding='unicode') + '\n'


def _h(value):
    return _html_escape(_text(value), quote=True)


_STYLE = '''
body{font-family:sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse}
th,td{border:1px solid #999;padding:.3em .5em;vertical-align:top;text-align:left}
th{background:#eee}
td.passed{background:#c8f0c8}
td.failed{background:#f6c1c1}
td.unverified{background:#fbe7a1}
td.unreachable,td.not_graded{background:#ddd;font-style:italic}
details summary{cursor:pointer}
details div{max-width:40em;white-space:pre-wrap;font-size:.85em;margin-top:.3em}
pre{white-space:pre-wrap;word-break:break-all;margin:.2em 0}
.legend span{display:inline-block;padding:.1em .6em;margin-right:.5em;border:1px solid #999}
'''


def _details(label, checks):
    """A cell's failing checks: a title for hover, a <details> to click open."""
    hover = '\n'.join('%s: %s' % (check['id'], check['message']) for check in checks)
    parts = []
    for check in checks:
        parts.append('<b>%s</b> (%s): %s' % (_h(check['id']), _h(check['status']), _h(check['message'])))
        if check.get('hint'):
            parts.append('<i>%s</i>' % _h(check['hint']))
        evidence = _evidence_text(check.get('evidence'))
        if evidence:
            parts.append('<pre>%s</pre>' % _h(evidence))
    return ('<details title="%s"><summary>%s</summary><div>%s</div></details>'
            % (_h(hover), _h(label), '\n'.join(parts)))


def to_html(summary, title='KAI-Scheduler lab: class grade'):
    """One self-contained page, no script at all (and a policy forbidding any)."""
    head = ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'">'
            '<title>%s</title><style>%s</style></head><body>' % (_h(title), _STYLE))
    counts = summary['counts']
    lines = [head, '<h1>%s</h1>' % _h(title),
             '<p>%d learners: %d passed, %d graded, %d unreachable, %d not graded. Generated %s.</p>'
             % (counts['learners'], counts['passed'], counts['graded'], counts['unreachable'],
                counts['not_graded'], _h(summary['generated_at'])),
             '<p class="legend"><span class="passed" style="background:#c8f0c8">passed</span>'
             '<span style="background:#f6c1c1">failed</span><span style="background:#fbe7a1">unverified</span>'
             '<span style="background:#ddd">not reached / not graded</span> Click a cell for its messages.</p>',
             '<table><thead><tr><th>learner</th><th>score</th>']
    lines.extend('<th title="%s">%s %s</th>' % (_h(step['title']), _h(step['number']), _h(step['id']))
                 for step in summary['steps'])
    lines.append('<th>environment</th></tr></thead><tbody>')
    for row in summary['learners']:
        lines.append('<tr><th>%s</th>' % _h(row['learner']))
        if row['status'] != GRADED:
            lines.append('<td class="%s" colspan="%d">%s</td></tr>'
                         % (_h(row['status']), len(summary['steps']) + 2, _h(row['message'])))
            continue
        lines.append('<td class="%s">%s%%</td>' % (PASSED if row['passed'] else FAILED, _h('%.1f' % (row['score'] or 0))))
        for step in summary['steps']:
            cell = _cell(row, step['id'])
            if cell is None:
                lines.append('<td class="unverified">-</td>')
            elif cell['failing']:
                lines.append('<td class="%s">%s</td>' % (_h(cell['status']), _details(cell['status'], cell['failing'])))
            else:
                lines.append('<td class="passed">passed</td>')
        if row['environment']:
            lines.append('<td class="failed">%s</td>' % _details(FAILED, row['environment']))
        else:
            lines.append('<td class="passed">passed</td>')
        lines.append('</tr>')
    lines.append('</tbody></table></body></html>\n')
    return '\n'.join(lines)


RENDERERS = (('class.json', to_json), ('class.csv', to_csv), ('class-junit.xml', to_junit), ('class.html', to_html))


def write_summary(summary, directory):
    """Write the four files atomically; returns their paths."""
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o755)
    paths = []
    for name, render in RENDERERS:
        path = os.path.join(directory, name)
        content = render(summary)
        with io.open(path + '.tmp', 'w', encoding='utf-8', newline='') as handle:
            handle.write(content)
        os.rename(path + '.tmp', path)
        paths.append(path)
    return paths


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
        lines.append('%-20s %5.1f%% %s' % (row['learner'], row['score'] or 0, verdict))
    return lines
