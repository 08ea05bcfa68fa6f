# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A grade as JUnit XML (for CI) and as a console table.

Layer: grading; may use the cluster client, the KAI domain, the learner's files, the grader's record, the lab's steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from xml.sax.saxutils import escape, quoteattr

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import fill
from ansible_collections.gsb.kai_lab.plugins.module_utils.record import proofs as grade_record
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import FAILED, PASSED, UNVERIFIED

# The line that says which KAI is graded (grade.json's kai.line, the table's
# first line, the JUnit properties, the gate's table) and, on a KAI that is
# not the lab text's, each step whose form differs there.
KAI_WORDS = {
    'graded': {'en': 'KAI-Scheduler {version} (read from {source})',
               'ko': 'KAI-Scheduler {version} ({source} 에서 읽음)'},
    'as_written': {'en': ': the lab text\'s version, every step as the text writes it',
                   'ko': ': 실습 설명의 버전이며 모든 단계가 설명대로입니다'},
    'not_lab': {'en': '; not the lab text\'s {lab_version}: {steps}',
                'ko': '; 실습 설명의 {lab_version:이} 아닙니다: {steps}'},
    'same_form': {'en': 'every step as the text writes it', 'ko': '모든 단계가 설명대로입니다'},
    'gang': {'en': 'step {number} uses an explicit PodGroup of three pods instead of the Job '
                   '(a batch Job is one gang only from {since})',
             'ko': '{number}단계는 Job 대신 파드 세 개의 명시적 PodGroup 을 씁니다 '
                   '(batch Job 이 갱 하나가 되는 것은 {since} 부터)'},
    'preempt': {'en': 'step {number} deletes that PodGroup and its pods instead of the Job',
                'ko': '{number}단계는 Job 대신 그 PodGroup 과 파드들을 지웁니다'},
}


def kai_line(kai, lang='en'):
    """One line: which KAI, where it was read, and the steps whose form differs on it."""
    line = KAI_WORDS['graded'][lang].format(version=kai['version'], source=kai['source'])
    if kai['version'] == kai['lab_version']:
        return line + KAI_WORDS['as_written'][lang]
    steps = [KAI_WORDS[entry['step']][lang].format(**entry) for entry in kai['differences']]
    return line + fill(KAI_WORDS['not_lab'][lang], lab_version=kai['lab_version'],
                       steps='; '.join(steps) or KAI_WORDS['same_form'][lang])


def _kai_properties(grade):
    """The JUnit properties naming the KAI graded and what protects its word (none for a grade without them)."""
    kai, protection = grade.get('kai'), grade.get('protection')
    properties = []
    if kai:
        properties += ['      <property name="kai_version" value=%s/>' % quoteattr(kai['version']),
                       '      <property name="kai" value=%s/>' % quoteattr(kai.get('line') or kai_line(kai))]
    if protection:
        properties += ['      <property name="kai_word_protected" value="%s"/>'
                       % ('true' if protection.get('protected') else 'false'),
                       '      <property name="protection" value=%s/>' % quoteattr(protection.get('line') or '')]
    return ['    <properties>'] + properties + ['    </properties>'] if properties else []


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
        lines.extend(_kai_properties(grade))
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
    rows = [grade['kai']['line']] if grade.get('kai') else []
    if grade.get('protection'):
        rows.append(grade['protection']['line'])
    rows.append('%-4s %-22s %-4s %s' % ('step', 'check', '', 'message'))
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
