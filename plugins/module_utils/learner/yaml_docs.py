# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Learner YAML as JSON-compatible documents, refusing what Kubernetes objects cannot hold.

- YAML is checked event by event first: aliases (``*name``, the alias bomb)
  are refused, nesting deeper than ``MAX_DEPTH`` is refused, an unquoted date
  or timestamp stays the string it was written as, and tags with no JSON
  equivalent (``!!set``, ``!!binary``, ``!!omap``, ``!!pairs``, ``!!python/*``,
  any custom ``!tag``) are refused. What it returns always serialises with
  ``json.dumps``.

    got = read_yaml_documents(workdir, 'queues.yaml')   # a LearnerFile, as in learner/read.py

Layer: the learner's files; imports no other layer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

try:
    import yaml
    HAS_YAML = True
except ImportError:  # reported by common.require_libraries before any use
    yaml = None
    HAS_YAML = False

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.parse import MAX_DEPTH, read_text, unreadable
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.read import MAX_BYTES, LearnerFile
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import both, printable, with_particle


class YamlRefused(Exception):
    """A YAML construct the lab does not accept; carries en and ko words."""

    def __init__(self, en, ko):
        super(YamlRefused, self).__init__(en)
        self.problem = both(en, ko)


# Tags that mean the same in JSON; any other explicit tag is refused.
_JSON_TAGS = frozenset('tag:yaml.org,2002:%s' % t for t in ('str', 'int', 'float', 'bool', 'null', 'seq', 'map'))
_TIMESTAMP = 'tag:yaml.org,2002:timestamp'


def _refuse(events):
    """Raise YamlRefused for the first alias, non-JSON tag or nesting past MAX_DEPTH in a YAML event stream."""
    depth = 0
    for event in events:
        line = event.start_mark.line + 1 if event.start_mark else 0
        if isinstance(event, yaml.AliasEvent):
            raise YamlRefused(
                'uses a YAML alias (*%s, line %d): aliases are not accepted (they can multiply a small '
                'file into gigabytes); write the value out in full' % (printable(event.anchor, 60), line),
                'YAML 별칭(*%s, %d행)을 씁니다. 별칭은 받지 않습니다 (작은 파일을 수 GB로 불릴 수 있음). '
                '값을 그대로 적으세요' % (printable(event.anchor, 60), line))
        tag = getattr(event, 'tag', None)
        if tag not in (None, '!', _TIMESTAMP) and tag not in _JSON_TAGS:
            raise YamlRefused(
                'uses the YAML tag %s (line %d), which has no JSON equivalent: Kubernetes objects hold only '
                'mappings, lists, strings, numbers, booleans and null' % (printable(tag, 60), line),
                'JSON 에 없는 YAML 태그 %s 씁니다 (%d행). 쿠버네티스 객체는 매핑, 리스트, 문자열, 숫자, '
                '불리언, null 만 가집니다' % (with_particle(printable(tag, 60), '을'), line))
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise YamlRefused(
                    'nests its YAML more than %d levels deep (line %d); the lab\'s files need only a few levels'
                    % (MAX_DEPTH, line),
                    'YAML 중첩이 %d 단계를 넘습니다 (%d행). 실습 파일은 몇 단계면 충분합니다' % (MAX_DEPTH, line))
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1


def _as_written(loader, node):
    """A date or timestamp stays the string the learner wrote (JSON has no date)."""
    return loader.construct_scalar(node)


def _loader_class():
    """yaml's safe loader (libyaml's when present: 4x faster), dates kept as strings."""
    base = getattr(yaml, 'CSafeLoader', None) or yaml.SafeLoader
    loader = type('JsonSafeLoader', (base,), {})
    loader.add_constructor(_TIMESTAMP, _as_written)
    return loader


_LOADER = _loader_class() if HAS_YAML else None


def parse_yaml_documents(name, raw):
    """The non-empty documents of a YAML text as a LearnerFile (content: a list).

    A first pass over the parser's events (no composition, so no alias is
    expanded and nothing recurses) refuses aliases, non-JSON tags and deep
    nesting; only then are the documents built.
    """
    try:
        _refuse(yaml.parse(raw, Loader=_LOADER))
        docs = [doc for doc in yaml.load_all(raw, Loader=_LOADER) if doc is not None]
    except YamlRefused as exc:
        return LearnerFile(name, problem=both('%s %s' % (printable(name, 80), exc.problem['en']),
                                              '%s: %s' % (printable(name, 80), exc.problem['ko'])))
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as exc:
        # ValueError: e.g. an integer of more digits than Python converts.
        return unreadable(name, 'YAML', str(exc))
    return LearnerFile(name, docs)


def read_yaml_documents(workdir, name, limit=MAX_BYTES):
    """The documents of a learner's YAML file, as a LearnerFile (content: a list)."""
    got = read_text(workdir, name, limit)
    if got.problem:
        return got
    return parse_yaml_documents(name, got.content)
