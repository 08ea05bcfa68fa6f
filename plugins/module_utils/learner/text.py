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
