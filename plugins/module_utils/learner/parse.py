# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A learner file's bytes as text, and text as JSON: bounded, problems instead of exceptions.

- ``read_text`` and ``read_json`` read through learner/read.py (no links, no
  FIFOs, at most ``MAX_BYTES``) and return a ``LearnerFile``;
  ``decode_text`` and ``parse_json`` do the same for bytes or text already read.
- Text is UTF-8 (a BOM is dropped); bytes that are not UTF-8 become U+FFFD,
  so such a file fails its check on its content, never with a
  UnicodeDecodeError.
- JSON deeper than ``MAX_DEPTH`` is refused before it is parsed (no
  RecursionError in the parser nor later in ``json.dumps`` of the result).
  learner/yaml_docs.py holds YAML to the same depth.

Layer: the learner's files; imports no other layer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import codecs
import json
import re

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.read import MAX_BYTES, LearnerFile, _problem, read_bytes
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import both, printable, with_particle

MAX_DEPTH = 64


def decode_text(name, data):
    """The text of data as a LearnerFile: UTF-8, a BOM dropped, bytes that are not UTF-8 as U+FFFD.

    Replacement, not refusal: the check then judges the text it can see and
    fails with its own words (the replacement characters show in the
    evidence), and the solver compares and backs up the bytes as they are.
    """
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    return LearnerFile(name, data.decode('utf-8', 'replace'))


def read_text(workdir, name, limit=MAX_BYTES):
    """The UTF-8 text of a learner file, as a LearnerFile."""
    got = read_bytes(workdir, name, limit)
    if got.problem:
        return got
    return decode_text(name, got.content)


def json_depth(raw):
    """How deeply the arrays and objects of a JSON text nest (strings ignored), without parsing it."""
    depth = deepest = 0
    for token in _JSON_STRUCTURE.findall(raw):
        if token in '[{':
            depth += 1
            if depth > deepest:
                deepest = depth
        elif token in ']}':
            depth -= 1
    return deepest


_JSON_STRUCTURE = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)


def _too_deep(name, fmt):
    return _problem(name, 'nests its %s more than %d levels deep; the lab\'s files need only a few levels'
                    % (fmt, MAX_DEPTH),
                    '%s 중첩이 %d 단계를 넘습니다. 실습 파일은 몇 단계면 충분합니다' % (fmt, MAX_DEPTH))


def unreadable(name, fmt, error):
    error = printable(error, 200)
    return LearnerFile(name, problem=both('%s cannot be read as %s: %s' % (printable(name, 80), fmt, error),
                                          '%s %s 읽을 수 없습니다: %s'
                                          % (with_particle(printable(name, 80), '을'), with_particle(fmt, '으로'), error)))


def _no_constant(name):
    # NaN and Infinity are no JSON (RFC 8259); Python's parser accepts them unless told not to.
    raise ValueError('%s is not a JSON value' % name)


def parse_json(name, raw):
    """A JSON text as a LearnerFile: bounded depth, problems instead of exceptions."""
    if json_depth(raw) > MAX_DEPTH:
        return _too_deep(name, 'JSON')
    try:
        return LearnerFile(name, json.loads(raw, parse_constant=_no_constant))
    except (ValueError, RecursionError) as exc:
        return unreadable(name, 'JSON', str(exc))


def read_json(workdir, name, limit=MAX_BYTES):
    """The parsed JSON of a learner file, as a LearnerFile."""
    got = read_text(workdir, name, limit)
    if got.problem:
        return got
    return parse_json(name, got.content)
