# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The standard library's transport to the API server (Cluster(light=True)).

Layer: the cluster client. Importing the kubernetes client takes most of a
second; for the kubeconfigs the lab writes (server, CA, client certificate and
key or a bearer token) this speaks to the API server over http.client with one
kept-alive connection; any other kubeconfig goes through the kubernetes client.
Many small requests (the grade's access reviews) go on that connection back
to back, their answers read in order (HTTP/1.1 pipelining: call_many).

A request has one deadline (client/answer.py's Deadline): connecting,
sending, and every read of the status line, the headers and the body wait
at most what is left of it, so an answer trickling in byte by byte ends
with it; the body is read up to a bound (answer.MAX_BYTES).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import io
import json
import os
import shutil
import socket
import ssl
import tempfile

from ansible_collections.gsb.kai_lab.plugins.module_utils.client import answer
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import ApiException

try:
    from urllib.parse import urlencode, urlsplit
except ImportError:  # Python 2 has no urllib.parse; sanity still imports the file there
    from urllib import urlencode
    from urlparse import urlsplit

try:
    import http.client as http_client
except ImportError:  # Python 2, for sanity's import test only
    http_client = None


# Requests sent back to back before their answers are read (call_many): their answers (a SubjectAccessReview's
# is under 1 KiB) fit in the socket's buffers, so the server never waits for the client to read.
PIPELINE = 32
# What a kubeconfig may hold for the standard library's transport; anything
# else (exec, auth-provider, proxy-url, tls-server-name, impersonation, ...)
# needs the kubernetes client.
_LIGHT_CLUSTER_KEYS = frozenset(('server', 'certificate-authority', 'certificate-authority-data',
                                 'insecure-skip-tls-verify', 'extensions'))
_LIGHT_USER_KEYS = frozenset(('client-certificate', 'client-certificate-data', 'client-key', 'client-key-data',
                              'token', 'extensions'))


class _Answer(object):
    def __init__(self, data):
        self.data = data


class _DeadlineReader(io.RawIOBase):
    """The socket's reads (through its own raw file, which keeps it open while read), each waiting at most what
    is left of the request's deadline."""

    def __init__(self, sock, deadline):
        super(_DeadlineReader, self).__init__()
        self.sock, self.deadline = sock, deadline
        self.raw = sock.makefile('rb', buffering=0)

    def readable(self):
        return True

    def readinto(self, buffer):
        self.sock.settimeout(self.deadline.left())
        try:
            return self.raw.readinto(buffer)
        except socket.timeout:  # it waited what was left
            raise self.deadline.error()

    def close(self):
        if not self.closed:
            self.raw.close()
        super(_DeadlineReader, self).close()


class _DeadlineSocket(object):
    """What http.client's response reads from: the socket, through _DeadlineReader."""

    def __init__(self, sock, deadline):
        self.sock, self.deadline = sock, deadline

    def makefile(self, mode, *args, **kwargs):
        return io.BufferedReader(_DeadlineReader(self.sock, self.deadline))


def _response_class(deadline):
    def response(sock, *args, **kwargs):
        return http_client.HTTPResponse(_DeadlineSocket(sock, deadline), *args, **kwargs)
    return response


class LightApi(object):
    """ApiClient.call_api's part the lab uses, over http.client with one kept-alive connection."""

    def __init__(self, server, context, token=None):
        parts = urlsplit(server)
        self.host = server.rstrip('/')
        self.scheme, self.netloc, self.prefix = parts.scheme, parts.netloc, parts.path.rstrip('/')
        self.context = context
        self.token = token
        self.connection = None

    @classmethod
    def from_kubeconfig(cls, path, context_name=None):
        """A LightApi for the kubeconfig's context, or None when it needs the kubernetes client (or is broken:
        the kubernetes client then says what is wrong with it)."""
        if http_client is None:
            return None
        if path is None:
            paths = [p for p in os.environ.get('KUBECONFIG', '').split(os.pathsep) if p]
            if len(paths) > 1:
                return None  # merged kubeconfigs: the kubernetes client's rules
            path = paths[0] if paths else '~/.kube/config'
        path = os.path.expanduser(path)
        try:
            import yaml
            with open(path) as handle:
                config = yaml.safe_load(handle)
            name = context_name or config['current-context']
            context = _named(config.get('contexts'), name)['context']
            cluster = _named(config.get('clusters'), context['cluster'])['cluster']
            user = _named(config.get('users'), context['user'])['user'] if context.get('user') else {}
            if set(cluster) - _LIGHT_CLUSTER_KEYS or set(user or {}) - _LIGHT_USER_KEYS or \
                    set(context) - set(('cluster', 'user', 'namespace', 'extensions')):
                return None
            server = cluster['server']
            if urlsplit(server).scheme == 'http':
                return cls(server, None, user.get('token'))
            if urlsplit(server).scheme != 'https':
                return None
            return cls(server, _tls_context(os.path.dirname(path), cluster, user or {}), user.get('token'))
        except Exception:  # anything unexpected: the kubernetes client reads it and names the problem
            return None

    def _connect(self, timeout):
        if self.scheme == 'https':
            return http_client.HTTPSConnection(self.netloc, timeout=timeout, context=self.context)
        return http_client.HTTPConnection(self.netloc, timeout=timeout)

    def call_api(self, path, method, query_params=None, header_params=None, body=None, _request_timeout=None,
                 _deadline=None, _limit=answer.MAX_BYTES, **kwargs):
        """_Answer(body bytes); the whole request within _deadline (an answer.Deadline; else _request_timeout
        seconds from now), its body at most _limit bytes (else answer.AnswerTooLarge)."""
        url = self.prefix + path + ('?' + urlencode(query_params) if query_params else '')
        deadline = _deadline or answer.Deadline(_request_timeout or 60, '%s %s' % (method, path))
        headers = dict(header_params or {})
        if self.token:
            headers['Authorization'] = 'Bearer ' + self.token
        payload = None if body is None else json.dumps(body).encode('utf-8')
        for attempt in (1, 2):
            reused = self.connection is not None
            if not reused:
                self.connection = self._connect(deadline.left())
            try:
                self.connection.timeout = deadline.left()  # connecting (and TLS) and sending
                if self.connection.sock is not None:
                    self.connection.sock.settimeout(self.connection.timeout)
                self.connection.response_class = _response_class(deadline)  # every read of the answer
                self.connection.request(method, url, body=payload, headers=headers)
                response = self.connection.getresponse()
                data = answer.read_body(response.read, deadline, _limit, response.getheader('Content-Length'))
            except (http_client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.close()
                if reused and attempt == 1:
                    continue  # a kept-alive connection the server closed meanwhile: once more on a new one
                raise
            except socket.timeout:  # connecting or sending waited what was left
                self.close()
                raise deadline.error()
            except BaseException:
                self.close()  # the answer is not read to its end: the connection cannot carry another
                raise
            if response.status >= 400:
                raise ApiException(response.status, response.reason, bytes(data).decode('utf-8', 'replace'))
            return _Answer(data)

    def call_many(self, calls, _deadline, _limit=answer.MAX_BYTES):
        """The answers of calls ([(path, method, body)]), in order, each an _Answer or the ApiException of its
        status: sent back to back on the kept-alive connection (HTTP/1.1 pipelining, at most PIPELINE of them
        before their answers are read), all within _deadline. A connection the server closes is opened again
        for the calls it did not answer (once when it closes before any answer)."""
        answers, retried = [], False
        while len(answers) < len(calls):
            reused = self.connection is not None and self.connection.sock is not None
            batch = calls[len(answers):len(answers) + PIPELINE]
            try:
                done, closing = self._pipeline(batch, _deadline, _limit)
            except (http_client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.close()
                if reused and not retried:
                    retried = True
                    continue  # a kept-alive connection the server closed meanwhile: once more on a new one
                raise
            except socket.timeout:
                self.close()
                raise _deadline.error()
            except BaseException:
                self.close()  # answers not read to their end: the connection cannot carry another
                raise
            answers.extend(done)
            if closing:
                self.close()
        return answers

    def _pipeline(self, batch, deadline, limit):
        """Sends batch, reads its answers until one says the connection closes: (answers, closing)."""
        if self.connection is None:
            self.connection = self._connect(deadline.left())
        if self.connection.sock is None:
            self.connection.timeout = deadline.left()
            self.connection.connect()
        sock = self.connection.sock
        sock.settimeout(deadline.left())
        sock.sendall(b''.join(self._request_bytes(path, method, body) for path, method, body in batch))
        reader = _SharedReader(io.BufferedReader(_DeadlineReader(sock, deadline)))
        answers = []
        try:
            for _path, method, _body in batch:
                response = http_client.HTTPResponse(reader, method=method)
                try:
                    response.begin()
                except (http_client.RemoteDisconnected, ConnectionResetError):
                    if not answers:
                        raise
                    return answers, True  # closed after some answers (an idle timeout): the rest on a new one
                data = answer.read_body(response.read, deadline, limit, response.getheader('Content-Length'))
                answers.append(_Answer(data) if response.status < 400 else ApiException(
                    response.status, response.reason, bytes(data).decode('utf-8', 'replace')))
                if response.will_close:
                    return answers, True
        finally:
            reader.reader.detach().close()  # the socket's raw file only: the connection keeps the socket
        return answers, False

    def _request_bytes(self, path, method, body):
        """One request of a pipeline, as http.client writes it (JSON in, JSON out)."""
        payload = b'' if body is None else json.dumps(body).encode('utf-8')
        headers = [('Host', self.netloc), ('Accept-Encoding', 'identity'), ('Accept', 'application/json'),
                   ('Content-Length', str(len(payload)))]
        if body is not None:
            headers.append(('Content-Type', 'application/json'))
        if self.token:
            headers.append(('Authorization', 'Bearer ' + self.token))
        lines = ['%s %s HTTP/1.1' % (method, self.prefix + path)] + ['%s: %s' % header for header in headers]
        if any(c in line for line in lines for c in '\r\n'):
            raise ValueError('a request line or header holds a line break')
        return ('\r\n'.join(lines) + '\r\n\r\n').encode('latin-1') + payload

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None


class _SharedReader(object):
    """What each HTTPResponse of a pipeline reads from: one buffered reader of the socket, so that bytes of the
    next answer read ahead stay for it (an HTTPResponse closes its file once its body is read: not this one)."""

    def __init__(self, reader):
        self.reader = reader

    def makefile(self, mode, *args, **kwargs):
        return self

    def __getattr__(self, name):
        return getattr(self.reader, name)

    def close(self):
        pass


def _named(entries, name):
    for entry in entries or []:
        if entry.get('name') == name:
            return entry
    raise KeyError(name)


def _tls_context(base, cluster, user):
    """The TLS context of a kubeconfig's cluster and user (paths relative to the kubeconfig's directory)."""
    def path_of(value):
        return os.path.join(base, os.path.expanduser(value))

    if cluster.get('insecure-skip-tls-verify'):
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif cluster.get('certificate-authority-data'):
        context = ssl.create_default_context(cadata=base64.b64decode(cluster['certificate-authority-data']).decode())
    elif cluster.get('certificate-authority'):
        context = ssl.create_default_context(cafile=path_of(cluster['certificate-authority']))
    else:
        context = ssl.create_default_context()
    if user.get('client-certificate-data') or user.get('client-certificate'):
        scratch = tempfile.mkdtemp()  # mode 0700: the key is there only while it is loaded
        try:
            files = []
            for key in ('client-certificate', 'client-key'):
                if user.get(key + '-data'):
                    name = os.path.join(scratch, key)
                    with open(name, 'wb') as handle:
                        handle.write(base64.b64decode(user[key + '-data']))
                    files.append(name)
                else:
                    files.append(path_of(user[key]))
            context.load_cert_chain(files[0], files[1])
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return context
