# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What provision says of the objects it owns (issue 42): their names, what it put back, and, in English and
Korean, what it could not put back, why (the API server's own words on one line) and the command that fixes it.

Layer: the targets (both); may use the cluster client, the readiness gate, this host's processes, the KAI domain, the learner's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import fill

# Kinds whose deletion takes what is in them: never deleted to be created again.
KEPT_KINDS = ('Namespace', 'CustomResourceDefinition', 'Config')
WHAT_DELETION_TAKES = {
    'Namespace': ('everything in it', '그 안의 모든 것'),
    'CustomResourceDefinition': ('every %s in the cluster', '클러스터의 모든 %s'),
    'Config': ("KAI's components, which its operator then makes again",
               'KAI 구성 요소 (오퍼레이터가 다시 만듭니다)'),
}
# An API server's refusal of a replace that a delete and a create get past: a field that is immutable (its words
# for a Secret's type and a PriorityClass's value, a binding's roleRef), not a content it refuses whatever the way.
IMMUTABLE = re.compile(r'immutable|cannot change|may not be changed')
# An admission policy's or webhook's denial (a ValidatingAdmissionPolicy's is a 422 with its own words, which may
# say anything): never taken for an immutable field.
DENIED = re.compile(r"ValidatingAdmissionPolicy '[^']*' with binding '[^']*' denied|admission webhook \"[^\"]*\" denied")


class Refusal(Exception):
    """An object provision could not put back: which, what differs, why and the command that fixes it."""

    def __init__(self, name, differs, why, command):
        super(Refusal, self).__init__('%s: %s' % (name, why[0]))
        self.name, self.differs, self.why, self.command = name, differs, why, command

    def text(self):
        """The whole message, in English then Korean."""
        if self.differs:
            differs = ('What differs from what provision writes: %s.' % '; '.join(self.differs),
                       '프로비전이 쓰는 것과 다른 점: %s.' % '; '.join(self.differs))
        else:
            differs = ('Nothing differs from what provision writes that could be told apart here.',
                       '여기서 구별할 수 있는 다른 점은 없습니다.')
        return ('Provision cannot put back %s as it writes it: %s. %s To fix it by hand: %s, then run provision '
                'again. / ' % (self.name, self.why[0], differs[0], self.command)
                + fill('프로비전이 {name:를} 되돌리지 못했습니다: {why}. {differs} 직접 고치려면 다음을 실행한 뒤 '
                       '프로비전을 다시 실행하세요: {command}', name=self.name, why=self.why[1], differs=differs[1],
                       command=self.command))

    def as_dict(self):
        return {'object': self.name, 'differences': self.differs, 'why': self.why[0], 'command': self.command,
                'msg': self.text()}


def display_name(obj):
    meta = obj.get('metadata') or {}
    name = meta.get('name')
    return '%s %s' % (obj.get('kind'), '%s/%s' % (meta['namespace'], name) if meta.get('namespace') else name)


def outcome_lines(outcome):
    """One line per object created or put back: "<Kind> <name>: created", "<Kind> <name>: replaced (<what
    differed>; ...)"."""
    lines = ['%s: created' % name for name in outcome['created']]
    for item in outcome['repaired']:
        lines.append('%s: %s (%s)' % (item['object'], item['action'], '; '.join(item['differences'])))
    return lines


def message(exc):
    try:
        return str((json.loads(exc.body) or {}).get('message') or exc.reason or '')
    except (TypeError, ValueError, AttributeError):
        return str(getattr(exc, 'reason', '') or '')


def one_line(text, limit=240):
    text = ' '.join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + '...'


def why_api(exc, denier):
    """(English, Korean) of an API server's refusal, its own message on one line."""
    said = one_line(message(exc))
    if denier or DENIED.search(said):
        return ('an admission policy or webhook refused it (%s)' % said,
                '어드미션 정책이나 웹훅이 거부했습니다 (%s)' % said)
    if exc.status == 403:
        return ("the lab's credentials may not change it (%s)" % said,
                '실습의 자격 증명으로는 바꿀 수 없습니다 (%s)' % said)
    if exc.status == 422:
        return ('the API server refused it as invalid (%s)' % said,
                'API 서버가 유효하지 않다며 거부했습니다 (%s)' % said)
    return ('the API server answered %s (%s)' % (exc.status, said),
            fill('API 서버가 {status:로} 응답했습니다 ({said})', status=exc.status, said=said))


def why_cluster(exc):
    said = one_line(exc)
    return (said, '클러스터에 요청하지 못했습니다 (%s)' % said)
