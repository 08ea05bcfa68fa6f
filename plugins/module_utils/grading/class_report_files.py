# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The class summary's files: class.json, class.csv, class-junit.xml and class.html.

Everything a learner controls (messages quoting their files, evidence, pod
names) is treated as hostile: HTML-escaped under a policy that runs no script
at all, neutralised against spreadsheet formulas in CSV, and stripped of
characters XML cannot carry. The summary itself: grading/class_report.py.

Layer: grading; may use the cluster client, the KAI domain, the learner's files, the grader's record, the lab's steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import io
import json
import os
import re

from html import escape as _html_escape

from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.class_report import FAILED, GRADED, PASSED, UNVERIFIED, as_text
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.write import write_file

FILES = ('class.json', 'class.csv', 'class-junit.xml', 'class.html')
# Evidence shown for a failing cell is cut here: a learner's file can be large.
EVIDENCE_LIMIT = 2000
# Cells a spreadsheet would read as a formula (OWASP "CSV injection").
_FORMULA_START = ('=', '+', '-', '@', '\t', '\r', '\n')
# Characters XML 1.0 cannot carry at all.
_XML_INVALID = re.compile(u'[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]')


def _cell(row, step_id):
    for step in row['steps']:
        if step['id'] == step_id:
            return step
    return None


def _evidenceas_text(evidence):
    if evidence in (None, {}, [], ''):
        return ''
    text = json.dumps(evidence, ensure_ascii=False, sort_keys=True, default=as_text, allow_nan=False)
    return text if len(text) <= EVIDENCE_LIMIT else text[:EVIDENCE_LIMIT] + ' ...'


def _spreadsheet_safe(value):
    """A CSV cell no spreadsheet evaluates: formula starts get a leading quote."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    text = as_text(value).replace('\r', ' ').replace('\n', ' ')
    if text.startswith(_FORMULA_START) or text.lstrip().startswith(_FORMULA_START[:4]):
        return "'" + text
    return text


def to_json(summary):
    return json.dumps(summary, indent=2, ensure_ascii=False, sort_keys=True, default=as_text, allow_nan=False) + '\n'


def to_csv(summary):
    """One row per learner: score, each step's status, the failing checks' messages."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator='\r\n')
    header = (['learner', 'status', 'score', 'points', 'max_points', 'passed']
              + [step['id'] for step in summary['steps']] + ['failed_checks', 'message', 'kai_word_protected', 'protection'])
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
        values += ['true' if row.get('protected') else 'false', row.get('protection', '')]
        writer.writerow([_spreadsheet_safe(value) for value in values])
    return buffer.getvalue()


def _xmlas_text(value):
    return _XML_INVALID.sub(u'\ufffd', as_text(value))


def to_junit(summary):
    """JUnit XML: a testsuite per learner, a testcase per check."""
    import xml.etree.ElementTree as ET
    root = ET.Element('testsuites', name='gsb.kai_lab class')
    for row in summary['learners']:
        suite = ET.SubElement(root, 'testsuite', name=_xmlas_text(row['learner']))
        tests = failures = skipped = errors = 0
        if row['status'] != GRADED:
            case = ET.SubElement(suite, 'testcase', classname='kai_lab.%s' % _xmlas_text(row['learner']), name='grade')
            ET.SubElement(case, 'error', message=_xmlas_text(row['message']))
            tests, errors = 1, 1
        for step in row['steps']:
            failing = dict((check['id'], check) for check in step['failing'])
            for check in step['checks']:
                tests += 1
                case = ET.SubElement(suite, 'testcase', classname='kai_lab.%s' % _xmlas_text(step['id']),
                                     name=_xmlas_text(check['id']))
                detail = failing.get(check['id'])
                if check['status'] == FAILED:
                    failures += 1
                    node = ET.SubElement(case, 'failure', message=_xmlas_text(check['message']))
                    node.text = _xmlas_text('\n'.join(filter(None, [detail['hint'], _evidenceas_text(detail['evidence'])])))
                elif check['status'] == UNVERIFIED:
                    skipped += 1
                    ET.SubElement(case, 'skipped', message=_xmlas_text(check['message']))
        suite.set('tests', str(tests))
        suite.set('failures', str(failures))
        suite.set('errors', str(errors))
        suite.set('skipped', str(skipped))
        if row['score'] is not None:
            properties = ET.SubElement(suite, 'properties')
            ET.SubElement(properties, 'property', name='score', value=_xmlas_text(row['score']))
            ET.SubElement(properties, 'property', name='kai_word_protected',
                          value='true' if row.get('protected') else 'false')
            ET.SubElement(properties, 'property', name='protection', value=_xmlas_text(row.get('protection', '')))
        # Properties must come first in a testsuite (JUnit's schema).
        if len(suite) and suite[-1].tag == 'properties':
            suite.insert(0, suite[-1])
            del suite[-1]
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding='unicode') + '\n'


def _h(value):
    return _html_escape(as_text(value), quote=True)


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
        evidence = _evidenceas_text(check.get('evidence'))
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
    lines.append('<th>environment</th><th>KAI\'s word</th></tr></thead><tbody>')
    for row in summary['learners']:
        lines.append('<tr><th>%s</th>' % _h(row['learner']))
        if row['status'] != GRADED:
            lines.append('<td class="%s" colspan="%d">%s</td></tr>'
                         % (_h(row['status']), len(summary['steps']) + 3, _h(row['message'])))
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
        protected = bool(row.get('protected'))
        lines.append('<td class="%s">%s</td>' % ('passed' if protected else 'unverified',
                                                 _h('protected' if protected else row.get('protection', ''))))
        lines.append('</tr>')
    lines.append('</tbody></table></body></html>\n')
    return '\n'.join(lines)


RENDERERS = (('class.json', to_json), ('class.csv', to_csv), ('class-junit.xml', to_junit), ('class.html', to_html))


# Every learner's grades and messages are in these files: only the
# instructor who ran the grade reads them unless told otherwise.
FILE_MODE = 0o600
DIRECTORY_MODE = 0o700


def write_summary(summary, directory, mode=FILE_MODE, directory_mode=DIRECTORY_MODE):
    """Write the four files atomically; returns their paths.

    A missing directory is created with directory_mode; the files get mode
    (0600 by default, whatever the umask: not readable by other local users).
    """
    if not os.path.isdir(directory):
        os.makedirs(directory, directory_mode)
        os.chmod(directory, directory_mode)  # makedirs' mode is cut by the umask
    paths = []
    for name, render in RENDERERS:
        # mkstemp + os.replace: no fixed temporary name another user could plant.
        paths.append(write_file(directory, name, render(summary), mode=mode))
    return paths
