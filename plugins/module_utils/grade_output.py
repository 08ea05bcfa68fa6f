# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A grade as JUnit XML (for CI) and as a console table."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from xml.sax.saxutils import escape, quoteattr

from ansible_collections.gsb.kai_lab.plugins.module_utils import grade_record
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import FAILED, PASSED, UNVERIFIED


def junit_xml(grade):
    """A JUnit XML document: one testsuite per step, one testcase per check."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<testsuites name="gsb.kai_lab grade" tests="%d" failures="%d" skipped="%d" time="%.3f">'
             % (sum(len(s['checks']) for s in grade['steps']), grade['counts'][FAILED], grade['counts'][UNVERIFIED],
                grade['duration'])]
    for step in grade['steps']:
        failures = len([c for c in step['checks'] if c['status'] == FAILED])
        skipped = len([c for c in step['checks'] if c['status'] == UNVERIFIED])
        lines.append('  <testsuite name=%s tests="%d" failures="%d" skipped="%d">'
                     % (quoteattr('%d %s' % (step['number'], step['id'])), len(step['checks']), failures, skipped))
        for check in step['checks']:
            lines.append('    <testcase classname=%s name=%s time="%.4f">'
                         % (quoteattr('kai_lab.%s' % step['id']), quoteattr(check['id']), check['duration']))
            if check['status'] == FAILED:
                lines.append('      <failure message=%s>%s</failure>'
                             % (quoteattr(check['message']), escape(check['hint'])))
            elif check['status'] == UNVERIFIED:
                lines.append('      <skipped message=%s/>' % quoteattr(check['message']))
            lines.append('    </testcase>')
        lines.append('  </testsuite>')
    lines.append('</testsuites>')
    return '\n'.join(lines) + '\n'


def summary_table(grade):
    """The console table: one line per check (a passed one shows its message only when it says more than OK),
    then the score and what concerns the grader's record."""
    marks = {PASSED: 'PASS', FAILED: 'FAIL', UNVERIFIED: '????'}
    rows = ['%-4s %-22s %-4s %s' % ('step', 'check', '', 'message')]
    for step in grade['steps']:
        for check in step['checks']:
            rows.append('%-4s %-22s %-4s %s' % (step['number'], check['id'], marks[check['status']],
                                                '' if check['message'] == 'OK' else check['message']))
    for check in grade['environment']:
        rows.append('%-4s %-22s %-4s %s' % ('-', check['id'], marks[check['status']],
                                            '' if check['status'] == PASSED else check['message']))
    rows.append('score %.1f%% (%d/%d points), %s' % (grade['score'], grade['points'], grade['max_points'],
                                                     'PASSED' if grade['passed'] else 'NOT PASSED'))
    rows.extend(grade_record.table_lines(grade))
    return rows
