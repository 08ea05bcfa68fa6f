# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Learner text made safe to print, and problems stated in both languages.

The learner's workdir is untrusted input (see learner/read.py); text from it
may hold control characters that forge a console line.

Printing: ``printable(text, limit)`` is the one way to put learner text into a
message, evidence, the console table or JUnit XML: control and format
characters removed, line breaks and tabs turned into spaces (no forged
console line), at most ``limit`` characters with an ellipsis.
``bounded(value)`` is the same for evidence: a JSON-compatible copy of
bounded size for grade.json and the module's result.

Layer: the learner's files; imports no other layer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re
import string
import unicodedata

EXCERPT = 160


def both(en, ko):
    """A problem stated in both languages."""
    return {'en': en, 'ko': ko}


_SPACES = re.compile(r'\s+', re.UNICODE)
_DROP = frozenset(('Cc', 'Cf', 'Cs', 'Co', 'Cn', 'Zl', 'Zp'))


def printable(value, limit=EXCERPT):
    """One safe line of learner text: no control characters, at most limit characters.

    Line breaks, tabs and other whitespace become single spaces; control,
    format (e.g. bidi overrides), private-use, surrogate and unassigned code
    points are removed, so the result is valid in XML and cannot start a new
    console line. Longer text is cut and ends with an ellipsis.
    """
    if value is None:
        return ''
    if not isinstance(value, str):
        value = str(value)
    # Work on a bounded slice: the caller may hand in a whole file.
    value = value[:limit * 4 + 16]
    value = _SPACES.sub(' ', value)
    value = ''.join(ch for ch in value if unicodedata.category(ch) not in _DROP).strip()
    if len(value) > limit:
        value = value[:max(limit - 1, 0)].rstrip() + u'\u2026'
    return value


def bounded(value, depth=16, items=100, text=500):
    """A JSON-compatible copy of evidence, bounded for grade.json and the module's result.

    Strings go through printable(text); lists and mappings keep their first
    items entries; nesting below depth becomes '...'; NaN and infinities
    become their text ('nan', 'inf'); any other type (a date, bytes) becomes
    its printable string. Iterative in effect: depth is small.
    """
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        # NaN and the infinities are no JSON: kept as their text, so every grade file stays strict JSON.
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, str):
        return printable(value, text)
    if depth <= 0:
        return u'\u2026'
    if isinstance(value, dict):
        return dict((printable(key, 100), bounded(item, depth - 1, items, text))
                    for key, item in list(value.items())[:items])
    if isinstance(value, (list, tuple, set, frozenset)):
        return [bounded(item, depth - 1, items, text) for item in list(value)[:items]]
    return printable(value, text)


# ---------------------------------------------------------------- Korean particles
# A Korean particle depends on the sound the word before it ends with: 이/가, 을/를, 은/는, 과/와 after a
# final consonant or a vowel, 으로/로 after a consonant other than ㄹ or after a vowel or ㄹ. The lab's words
# are often code (p1, v0.18.6, queues.yaml): read as a Korean reader says them.
PARTICLES = {
    '이': ('이', '가'), '가': ('이', '가'), '을': ('을', '를'), '를': ('을', '를'), '은': ('은', '는'), '는': ('은', '는'),
    '과': ('과', '와'), '와': ('과', '와'), '으로': ('으로', '로'), '로': ('으로', '로'), '이다': ('이다', '다'),
    '이에요': ('이에요', '예요'), '이며': ('이며', '며'), '이고': ('이고', '고'),
}
# Digits as read in Korean: 영 일 이 삼 사 오 육 칠 팔 구 (None: no final consonant; 'ㄹ' apart for 으로/로).
_DIGITS = {'0': 'ㅇ', '1': 'ㄹ', '2': None, '3': 'ㅁ', '4': None, '5': None, '6': 'ㄱ', '7': 'ㄹ', '8': 'ㄹ', '9': None}
# How code words end when read aloud (a file's extension, words of the lab): the longest matching end wins.
_ENDINGS = {
    'json': 'ㄴ', 'yaml': 'ㄹ', 'yml': 'ㄹ', 'xml': 'ㄹ', 'txt': None, 'csv': None, 'html': 'ㄹ', 'md': None,
    'pod': None, 'pods': None, 'job': 'ㅂ', 'jobs': None, 'queue': None, 'queues': None, 'group': 'ㅂ',
    'map': 'ㅂ', 'lab': 'ㅂ', 'gang': 'ㅇ', 'research': None, 'ops': None, 'build': None, 'train': 'ㄴ',
    'fraction': 'ㄴ', 'limit': 'ㅅ', 'quota': None, 'scheduler': None, 'binder': None, 'event': None,
    'events': None, 'node': None, 'nodes': None, 'status': None, 'config': None, 'account': None,
    'policy': None, 'label': 'ㄹ', 'annotation': 'ㄴ', 'namespace': None, 'kubectl': 'ㄹ', 'kubeconfig': None,
    'gpu': None, 'gpus': None, 'cpu': None, 'api': None, 'kai': None, 'sudo': None, 'root': None,
    'learner': None, 'step': 'ㅂ', 'check': None, 'hint': None, 'task': None, 'doctor': None, 'reason': 'ㄴ',
    'evict': None, 'unschedulable': 'ㄹ', 'overlimit': 'ㅅ', 'member': None, 'minmember': None, 'true': None,
    'false': None, 'none': 'ㄴ', 'null': 'ㄹ', 'sim': 'ㅁ', 'k3s': None, 'vm': None, 'image': None,
    'deployment': None, 'secret': 'ㅅ', 'role': 'ㄹ', 'binding': 'ㅇ', 'token': 'ㄴ', 'record': None,
    'name': 'ㅁ', 'time': 'ㅁ',  # 네임, 타임: schedulerName, eventTime
}
# Latin letters read by name at the end of an abbreviation (GPU, p1 aside): l, m, n end in a consonant.
_LETTERS = {'l': 'ㄹ', 'm': 'ㅁ', 'n': 'ㄴ', 'r': None}


def final_sound(word):
    """The final consonant the word ends with as a Korean reader says it ('ㄹ', another jamo), or None (a vowel)."""
    text = str(word).rstrip(' \t`\'")]}>.,:;!?')
    if not text:
        return None
    last = text[-1]
    if u'\uac00' <= last <= u'\ud7a3':
        index = (ord(last) - 0xAC00) % 28
        return None if index == 0 else ('ㄹ' if index == 8 else 'ㄱ')
    if last.isdigit():
        digits = ''
        for ch in reversed(text):
            if not ch.isdigit():
                break
            digits = ch + digits
        if last == '0' and len(digits.lstrip('0')) > 0:
            return 'ㅂ' if len(digits) - len(digits.rstrip('0')) == 1 else 'ㄱ'  # 십, 백/천 (만: ㄴ; read alike)
        return _DIGITS[last]
    lowered = ''.join(ch for ch in text.lower() if ch.isalnum() or ch in '-_./')
    word_end = lowered.replace('_', '-').replace('/', '-').replace('.', '-').rsplit('-', 1)[-1]
    if word_end in _ENDINGS:
        return _ENDINGS[word_end]
    for size in range(len(word_end), 0, -1):
        if word_end[-size:] in _ENDINGS:
            return _ENDINGS[word_end[-size:]]
    if last.isalpha() and last.lower() in _LETTERS:
        return _LETTERS[last.lower()]
    if last.isalpha() and len(word_end) > 1:
        before = word_end[-2]
        if last.lower() == 'g' and before == 'n':  # string, binding: -ng is 응
            return 'ㅇ'
        if last.lower() in 'bkpt' and (before in 'aeiou' or word_end[-2:] == 'ck'):  # 랩, 리밋, 스택: a stop after a vowel
            return 'ㄱ'
    return None  # 빌드, 로그, 아이디: d and g end in 드/그; 익스포트, 헬프: a stop after a consonant ends in 으


def particle(word, name):
    """The particle name ('이', '을', '은', '과', '으로', ...) in the form the word takes: '가' after p2, '이' after p1."""
    consonant, vowel = PARTICLES[name]
    sound = final_sound(word)
    if consonant == '으로':
        return vowel if sound in (None, 'ㄹ') else consonant
    return vowel if sound is None else consonant


def with_particle(word, name):
    """word, a space, and its particle: 'v0.18.6 이', 'gang.txt 를' (the lab puts a space after code)."""
    return '%s %s' % (word, particle(word, name))


class _WithParticles(string.Formatter):
    """str.format, where a field's format spec may be a particle: '{name:이}' gives 'fr-2 가' for name fr-2,
    '{name:`이}' gives '`fr-2` 가' (the value as code)."""

    def format_field(self, value, format_spec):
        if format_spec in PARTICLES:
            return with_particle(format(value, ''), format_spec)
        if format_spec[:1] == '`' and format_spec[1:] in PARTICLES:  # code: '{name:`을}' gives '`gang` 을'
            return '`%s` %s' % (format(value, ''), particle(format(value, ''), format_spec[1:]))
        return super(_WithParticles, self).format_field(value, format_spec)


_FORMATTER = _WithParticles()


def fill(template, **values):
    """template.format(**values), with Korean particles as format specs: '{name:을} 지우세요'."""
    return _FORMATTER.vformat(template, (), values)
