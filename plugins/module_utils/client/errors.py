# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster client's errors: the API server's answers and what the lab says of them.

Layer: the cluster client (the lowest); imports nothing of the collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import sys


class ApiException(Exception):
    """An API server's error answer (status, reason, body), from either transport."""

    def __init__(self, status=None, reason=None, body=None):
        super(ApiException, self).__init__('%s %s' % (status, reason))
        self.status = status
        self.reason = reason
        self.body = body


def api_exception(exc):
    """exc as an ApiException when it is an API server's answer (the kubernetes client's own kind too), else None."""
    if isinstance(exc, ApiException):
        return exc
    rest = sys.modules.get('kubernetes.client.exceptions') or sys.modules.get('kubernetes.client.rest')
    if rest is not None and isinstance(exc, getattr(rest, 'ApiException', ())):
        return ApiException(exc.status, exc.reason, exc.body)
    return None


class ClusterError(Exception):
    """A failure talking to the cluster, with a message naming what to fix."""


class NotSupportedKind(ClusterError):
    pass


class InvalidName(ClusterError):
    """A name or namespace no object of the lab's kinds can have."""


class UnreadableAnswer(ClusterError):
    """An answer of the API server the lab does not read (client/answer.py): larger or deeper than its bounds."""

    def __init__(self, message, limit=None):
        super(UnreadableAnswer, self).__init__(message)
        self.limit = limit


class AnswerTooLarge(UnreadableAnswer):
    pass


class AnswerTooDeep(UnreadableAnswer):
    pass


class ListTooLarge(UnreadableAnswer):
    """A list longer than the lab reads of one kind (client/api.py's Cluster.list, issue 40): kind and
    namespace (None: every namespace) listed, the objects read before the bound (items), the bytes of their
    answers (size) and how many more the API server said there are (remaining; None when it did not say)."""

    def __init__(self, message, limit=None, kind=None, namespace=None, items=(), size=0, remaining=None):
        super(ListTooLarge, self).__init__(message, limit)
        self.kind = kind
        self.namespace = namespace
        self.items = list(items)
        self.size = size
        self.remaining = remaining

    @property
    def count(self):
        """How many there are: those read and those the API server said remain (at least those read)."""
        return len(self.items) + (self.remaining or 0)


class RequestTimeout(ClusterError):
    """The API server did not answer a whole request by its deadline."""


def admission_denial(error):
    """The admission webhook's message inside an API error, if any."""
    text = str(error)
    marker = 'denied the request:'
    return text.split(marker, 1)[1].strip().rstrip('"}').strip() if marker in text else None


def api_error(action, exc):
    message = None
    try:
        message = json.loads(exc.body).get('message')
    except Exception:
        message = None
    return 'cannot %s: %s %s' % (action, exc.status, message or exc.reason)


def short_reason(exc):
    text = str(exc)
    for marker in ('Connection refused', 'timed out', 'Name or service not known', 'certificate verify failed'):
        if marker in text:
            return marker.lower()
    return text[:200]
