# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The API server's answers read within bounds: one deadline, a size, a nesting depth.

Layer: the cluster client; imports nothing of the collection but its own package (errors.py).

Whatever the cluster holds (anyone who may write an object chooses its
fields: the API server keeps a managedFields entry nested 10,000 levels deep,
or an Event message of 1 MB), reading it ends within the request's one
Deadline (connect, send and every read of the answer, not a timeout per
read), holds at most MAX_BYTES of it, and decodes only JSON that nests at
most MAX_DEPTH levels, checked before it is parsed: so neither the parser
nor anything later (copying, encoding, comparing) meets a RecursionError.
What is out of bounds is a ClusterError naming the object (kind,
namespace/name and the path to its deep field, where the answer shows them)
and the bound: AnswerTooLarge, AnswerTooDeep, RequestTimeout.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re
import time

from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import (
    AnswerTooDeep, AnswerTooLarge, ListTooLarge, RequestTimeout, UnreadableAnswer)

# One answer (a page of a list is one): the API server keeps objects of at
# most 1.5 MiB (etcd's request limit); the lab's lists are far smaller.
MAX_BYTES = 8 * 1024 * 1024
# The deepest object the lab reads (a CRD with its schema, KAI's Config) nests
# under 30 levels; Python's parser gives up near 1,000, its copy and encoder sooner.
MAX_DEPTH = 100
CHUNK = 64 * 1024
# The naming of a deep object (only when one is found) reads at most this long.
NAMING_SECONDS = 2.0


class Deadline(object):
    """The one deadline of a request, on the monotonic clock: now + seconds, or the caller's earlier one (at)."""

    def __init__(self, seconds, what, at=None, clock=time.monotonic):
        self.clock = clock
        start = clock()
        self.at = start + seconds if at is None else min(start + seconds, at)
        self.budget = max(0.0, self.at - start)
        self.what = what

    def left(self):
        """Seconds left, or RequestTimeout when none are."""
        left = self.at - self.clock()
        if left <= 0:
            raise self.error()
        return left

    def error(self):
        return RequestTimeout('cannot %s: the Kubernetes API server did not answer within %.1f s (one deadline '
                              'for the whole request, its answer included)' % (self.what, self.budget))


def read_body(read, deadline, limit=MAX_BYTES, length=None):
    """The bytes read(n) gives until it gives none, at most limit of them, within deadline.

    length: the answer's Content-Length, when it has one (more than limit: refused before any read).
    """
    if length is not None and str(length).isdigit() and int(length) > limit:
        raise too_large(deadline.what, limit)
    data = bytearray()
    while True:
        deadline.left()
        chunk = read(CHUNK)
        if not chunk:
            return data
        data += chunk
        if len(data) > limit:
            raise too_large(deadline.what, limit)


def too_large(what, limit):
    return AnswerTooLarge('cannot %s: the API server\'s answer is larger than %s, more than the lab reads in one '
                          'answer (no object of the lab comes near it): look for an object that large and delete it'
                          % (what, _size(limit)), limit)


def too_long(what, kind, namespace, items, size, remaining, max_items, max_bytes):
    """ListTooLarge of a list past max_items objects or max_bytes of answers, with what was read; remaining:
    the API server's remainingItemCount (the estimate it gives with a continue token), when it is a count."""
    if not isinstance(remaining, int) or isinstance(remaining, bool) or remaining < 0:
        remaining = None
    if len(items) > max_items:
        limit = max_items
        message = 'cannot %s: there are more than %d, more than the lab reads of any kind' % (what, limit)
    else:
        limit = max_bytes
        message = ('cannot %s: the %d read are %s, more than the lab reads of any kind (%s)'
                   % (what, len(items), size_text(size), size_text(limit)))
    return ListTooLarge(message, limit, kind, namespace, items, size, remaining)


def _size(count):
    return '%d MiB' % (count // (1024 * 1024)) if count >= 1024 * 1024 else '%d bytes' % count


def size_text(count):
    """count bytes as a reader says them: '8 MiB', '8.4 MiB', '200 KiB', '512 bytes'."""
    for unit, scale in (('MiB', 1024 * 1024), ('KiB', 1024)):
        if count >= scale:
            value = round(count / float(scale), 1)
            return ('%d %s' if value == int(value) else '%.1f %s') % (value, unit)
    return '%d bytes' % count


# ---------------------------------------------------------------- depth

# Every byte but the quote and the brackets (bytes.translate deletes them).
_NOT_STRUCTURE = bytes(bytearray(range(256))).translate(None, b'"[]{}')
_LEAF = re.compile(br'\{\}|\[\]')


def deeper_than(data, limit=MAX_DEPTH):
    """Whether the arrays and objects of a JSON text nest more than limit levels, without parsing it.

    C-speed on the whole text: escaped backslashes and quotes dropped, then
    all but quotes and brackets, then what lies between quotes (strings);
    then limit passes each removing the innermost pairs. Text that is no
    JSON may give either answer: the parser then says what is wrong.
    """
    if b'\\' in data:
        data = data.replace(b'\\\\', b'').replace(b'\\"', b'')
    brackets = b''.join(data.translate(None, _NOT_STRUCTURE).split(b'"')[::2])
    for _level in range(limit):
        if not brackets:
            return False
        brackets = _LEAF.sub(b'', brackets)
    # Left over: deeper than limit, or unbalanced (no JSON).
    return bool(brackets) and brackets.count(b'{') + brackets.count(b'[') == brackets.count(b'}') + brackets.count(b']')


_TOKEN = re.compile(br'"(?:[^"\\]|\\.)*"\s*:?|[\[\]{}]')


def deep_point(data, limit=MAX_DEPTH, clock=time.monotonic):
    """(where the object holding the first container deeper than limit starts, the keys leading to that
    container) - the object is a list's item, or the answer itself; (None, []) if not found in time."""
    stop = clock() + NAMING_SECONDS
    stack = []  # per open container: [is object, its last key, where it starts, the key path to it]
    item = 0
    for count, match in enumerate(_TOKEN.finditer(data)):
        if count % 4096 == 0 and clock() > stop:
            return None, []
        token = match.group()
        if token[:1] == b'"':
            if token.endswith(b':') and stack:
                stack[-1][1] = token.rstrip(b': \t\r\n')[1:-1].decode('utf-8', 'replace')
            continue
        if token in (b'}', b']'):
            if stack:
                stack.pop()
            continue
        parent = stack[-1] if stack else None
        step = None if parent is None else (parent[1] if parent[0] else '[]')
        path = (parent[3] + [step]) if parent is not None else []
        stack.append([token == b'{', None, match.start(), path])
        if len(stack) == 3 and stack[0][1] == 'items' and not stack[1][0]:
            item = match.start()  # an item of a list's items
        if len(stack) > limit:
            return item, [p for p in (path[2:] if item else path) if p is not None]
    return None, []


_META = re.compile(br'"metadata"\s*:\s*\{')
_FIELD = {name: re.compile(br'"%s"\s*:\s*"([^"\\]{1,253})"' % name.encode()) for name in ('name', 'namespace')}
_SAFE_NAME = re.compile(r'^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$')


def _identity(data, start):
    """(namespace, name) of the object at start, from the top of its metadata (the API server writes name and
    namespace first), or Nones."""
    found = _META.search(data, start, start + 4096)
    if not found:
        return None, None
    head = data[found.end():found.end() + 1024]
    nested = min([i for i in (head.find(b'{'), head.find(b'[')) if i >= 0] or [len(head)])
    head = head[:nested]
    values = []
    for name in ('namespace', 'name'):
        match = _FIELD[name].search(head)
        value = match.group(1).decode('utf-8', 'replace') if match else None
        values.append(value if value and _SAFE_NAME.match(value) else None)
    return values[0], values[1]


def too_deep(data, limit, what, kind=None):
    """AnswerTooDeep naming the object (kind namespace/name) and the path to its deep field, where found."""
    start, keys = deep_point(data, limit)
    namespace, name = _identity(data, start) if start is not None else (None, None)
    shown = (kind or 'an object') + (' %s' % '/'.join(p for p in (namespace, name) if p) if name else '')
    path = '.'.join(keys[:5]).replace('.[]', '[]') + ('...' if len(keys) > 5 else '')
    fix = ''
    if kind and name:
        fix = ' (kubectl delete %s %s%s)' % (kind.lower(), name, ' -n %s' % namespace if namespace else '')
    return AnswerTooDeep('cannot %s: %s nests more than %d levels deep%s, more than the lab reads in any object. '
                         'Delete that object or remove its deep field%s'
                         % (what, shown, limit, ' (at %s)' % path if path else '', fix), limit)


def decode(data, what, kind=None, limit=MAX_DEPTH):
    """The JSON of an answer ({} when empty), its depth checked before it is parsed."""
    if not data:
        return {}
    if deeper_than(data, limit):
        raise too_deep(data, limit, what, kind)
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise UnreadableAnswer('cannot %s: the API server\'s answer is no JSON the lab reads (%s)'
                               % (what, str(exc)[:120]))
