# -*- coding: utf-8 -*-
"""A local Kubernetes API server for the tests, over HTTP on 127.0.0.1.

Serves a FakeCluster's objects on the paths the client's table of kinds
(client/kinds.py) gives them, and the admission policies and their bindings
on the paths client/access.py reads, as the API server answers: a GET of one
object, or a list ({"kind": "<Kind>List", "items": [...]}) of one namespace
or of every namespace, paged by `limit` and `continue` as the API server
pages; a POST creates an object (409 when it exists), a PATCH with
application/apply-patch+yaml applies one (FakeCluster.apply). Its authorizer
is a table: a (Self)SubjectAccessReview is allowed when server.allowed[user]
holds (verb, group, resource[/subresource]) (in every namespace) or (verb,
group, resource[/subresource], namespace) (in that one; "" cluster-wide);
user None is the requester's own credentials (a SelfSubjectAccessReview).

What a test may set on the running server (each read at every request):
server.cluster, the objects served; server.allowed, the authorizer's table;
server.refuse, a path prefix -> (status, message) answered as a Status on
a connection kept alive (a 403 or a 404 of the API server); server.raw, a
path prefix -> a function writing its own answer (a huge, deep or trickling
one) after which the connection is closed without a word (as after an idle
timeout). Each request is recorded in server.seen as a Request (method, path
with its query, headers, body parsed, client port: one port a connection).
"""

from __future__ import annotations

import collections
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import yaml

from ansible_collections.gsb.kai_lab.plugins.module_utils.client import access
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.kinds import KINDS

# path prefix + plural -> (apiVersion, kind, namespaced)
PLURALS = dict(((prefix, plural), (api, kind, namespaced)) for (api, kind), (prefix, plural, namespaced) in KINDS.items())
# The admission policies, which access.py reads by their paths (they are no kind of the client's table).
PLURALS.update((tuple(path.strip("/").rsplit("/", 1)), (access.POLICY_API, kind, False)) for path, kind in (
    (access.POLICIES, "ValidatingAdmissionPolicy"), (access.BINDINGS, "ValidatingAdmissionPolicyBinding")))
APPLY = "application/apply-patch+yaml"

Request = collections.namedtuple("Request", "method path headers body port")
# How often the serving thread looks for stop(server): socketserver's 0.5 s made every stop wait about that long.
POLL_SECONDS = 0.02


def route(path):
    """(apiVersion, kind, namespace, name) of an API path, or None."""
    parts = [p for p in path.strip("/").split("/") if p]
    prefix_len = 2 if parts[:1] == ["api"] else 3
    prefix, rest = "/".join(parts[:prefix_len]), parts[prefix_len:]
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    if not rest or (prefix, rest[0]) not in PLURALS:
        return None
    api, kind, _ = PLURALS[(prefix, rest[0])]
    return (api, kind, namespace, rest[1] if len(rest) > 1 else None)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY, as the API server's (Go's) sockets: an answer's headers and body are two writes, and with
    # Nagle's algorithm the body waited for the client's delayed ACK of the headers, about 40 ms every request.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self._received(None):
            return
        for prefix, answer in self.server.raw.items():
            if self.path.startswith(prefix):
                try:
                    answer(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading, as it should
                self.close_connection = True
                return
        parts = urlsplit(self.path)
        where = route(parts.path)
        if where is None:
            return self.status(404, "the server could not find the requested resource")
        api, kind, namespace, name = where
        cluster = self.server.cluster
        texts = [t for t in self.server.texts if t[:2] == (api, kind) and (namespace is None or t[2] == namespace)]
        if name is not None:
            for text in texts:
                if text[3] == name and text[2] == namespace:
                    return self.answer(200, None, text[4])
            obj = cluster.objects.get(cluster._key(api, kind, name, namespace))
            if obj is None and kind == "Namespace":
                obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "uid": "uid-" + name}}
            if obj is None:
                return self.status(404, '%s "%s" not found' % (kind, name))
            return self.answer(200, obj)
        query = parse_qs(parts.query)
        selector = query.get("labelSelector", [None])[0]
        items = [json.dumps(item) for item in cluster.list(api, kind, namespace, label_selector=selector)]
        items += [text[4] for text in texts if not selector]
        start = int(query.get("continue", ["0"])[0])
        limit = int(query.get("limit", ["0"])[0])
        page = items[start:start + limit] if limit else items[start:]
        more = str(start + len(page)) if limit and start + len(page) < len(items) else ""
        self.server.pages.append((kind, namespace, start, len(page)))
        # With a continue token the API server says how many objects remain (remainingItemCount).
        meta = {"continue": more, "remainingItemCount": len(items) - start - len(page)} if more else {}
        head = json.dumps({"kind": kind + "List", "apiVersion": api, "metadata": meta})
        # Written piece by piece, as the API server streams a list: a long one is never held whole here.
        self.answer_parts(200, [head[:-1] + ', "items": ['] + [p for n, item in enumerate(page)
                                                               for p in ((", ", item) if n else (item,))] + ["]}"])

    def do_POST(self):
        body = self._read_body()
        if self._received(body):
            return
        path = urlsplit(self.path).path
        if path.startswith(access.AUTHORIZATION):
            return self._review(body)
        where = route(path)
        if where is None or where[3] is not None or not isinstance(body, dict):
            return self.status(404 if where is None else 405, "a POST here creates no object")
        api, kind, namespace, _ = where
        meta = body.get("metadata") or {}
        cluster = self.server.cluster
        if cluster.objects.get(cluster._key(api, kind, meta.get("name"), namespace)) is not None:
            return self.status(409, '%s "%s" already exists' % (kind, meta.get("name")))
        if namespace and not meta.get("namespace"):
            body = dict(body, metadata=dict(meta, namespace=namespace))
        self.answer(201, cluster.apply(body)[1])

    def do_PATCH(self):
        body = self._read_body()
        if self._received(body):
            return
        parts = urlsplit(self.path)
        where = route(parts.path)
        if where is None or where[3] is None:
            return self.status(404 if where is None else 405, "a PATCH here names no object")
        if self.headers.get("Content-Type") != APPLY:
            return self.status(415, "this API server applies only (%s)" % APPLY)
        api, kind, namespace, name = where
        cluster = self.server.cluster
        created = cluster.objects.get(cluster._key(api, kind, name, namespace)) is None
        self.answer(201 if created else 200, cluster.apply(body, dry_run="dryRun" in parse_qs(parts.query))[1])

    def _read_body(self):
        data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not data:
            return None
        return yaml.safe_load(data) if self.headers.get("Content-Type") == APPLY else json.loads(data)

    def _received(self, body):
        """Records the request; True when it was refused (server.refuse), its answer sent."""
        self.server.seen.append(Request(self.command, self.path, self.headers, body, self.client_address[1]))
        for prefix, (status, message) in self.server.refuse.items():
            if self.path.startswith(prefix):
                self.status(status, message)
                return True
        return False

    def _review(self, body):
        """The authorizer: server.allowed, a table of (verb, group, resource[/subresource][, namespace]) for each user."""
        spec = body["spec"]
        attrs = spec["resourceAttributes"]
        key = (attrs["verb"], attrs.get("group", ""),
               attrs["resource"] + ("/" + attrs["subresource"] if attrs.get("subresource") else ""))
        table = self.server.allowed.get(spec.get("user"), set())
        allowed = key in table or key + (attrs.get("namespace", ""),) in table
        status = {"allowed": allowed}
        if allowed:
            status["reason"] = 'RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y"'
        self.answer(201, dict(body, status=status))

    def status(self, code, message):
        """An error answered as the API server does: a Status."""
        self.answer(code, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "code": code})

    def answer_parts(self, status, parts):
        """An answer of JSON text in parts, each encoded and written apart."""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(sum(len(part.encode()) for part in parts)))
        self.end_headers()
        try:
            for part in parts:
                self.wfile.write(part.encode())
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client stopped reading at its bound, as it should

    def answer(self, status, obj, text=None):
        data = (json.dumps(obj) if text is None else text).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client stopped reading at its bound, as it should


def start(cluster, raw=None, texts=()):
    """A running server for cluster (a FakeCluster); stop it with stop(server)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.cluster = cluster
    server.raw = dict(raw or {})
    server.texts = list(texts)
    server.allowed, server.refuse = {}, {}
    server.seen = []
    server.pages = []
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, daemon=True)
    thread.start()
    server.url = "http://127.0.0.1:%d" % server.server_address[1]
    return server


def stop(server):
    server.shutdown()
    server.server_close()


def kubeconfig(path, server_url, user=None):
    """A kubeconfig for server_url (user: what the kubeconfig says of the user; a token by default)."""
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "lab",
        "clusters": [{"name": "lab", "cluster": {"server": server_url}}],
        "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "lab"}}],
        "users": [{"name": "lab", "user": {"token": "t"} if user is None else user}]}))
    return str(path)


def nested(depth):
    """JSON text of a fieldsV1-like value nested depth levels deep ({"f:a": {"f:a": ... {}}})."""
    return '{"f:a": ' * (depth - 1) + "{}" + "}" * (depth - 1)


def deep_object(kind, name, namespace, depth=1500):
    """JSON text of an object whose metadata.managedFields[0].fieldsV1 nests depth levels deep, as the API
    server keeps one written with kubectl (it accepts up to 10,000 levels)."""
    head = json.dumps({"metadata": {"name": name, "namespace": namespace, "uid": "uid-" + name,
                                    "creationTimestamp": "2026-12-01T10:00:00Z"}, "spec": {}})
    field = ', "managedFields": [{"manager": "kubectl", "operation": "Update", "fieldsV1": %s}]}' % nested(depth)
    meta_end = head.index("}")  # the end of metadata: its fields hold no object
    return head[:meta_end] + field + head[meta_end + 1:]


# ---------------------------------------------------------------- recorded lists by path

# The plurals the API server serves cluster-wide only (its discovery says namespaced: false): a list of one
# of these under /namespaces/<ns>/ is a 404, as there.
CLUSTER_SCOPED_PLURALS = {
    "namespaces", "nodes", "clusterroles", "clusterrolebindings", "priorityclasses", "queues", "configs",
    "schedulingshards", "customresourcedefinitions", "mutatingwebhookconfigurations",
    "validatingwebhookconfigurations", "validatingadmissionpolicies", "validatingadmissionpolicybindings",
}
TABLE = "as=Table"


def _split(path):
    """(cluster-wide list path, namespace, name) of an API path, or None when it is no list or object path."""
    parts = [p for p in path.strip("/").split("/") if p]
    prefix_len = 2 if parts[:1] == ["api"] else 3
    prefix, rest = parts[:prefix_len], parts[prefix_len:]
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 2:
        return None
    return "/" + "/".join(prefix + [rest[0]]), namespace, (rest[1] if len(rest) > 1 else None)


class RecordedHandler(Handler):
    """Answers from recorded lists keyed by their cluster-wide path (as sim_state.list_path gives them), as
    the API server does: a list of every namespace or of one, one object, or a Table of names (kubectl's
    `Accept: application/json;as=Table`, with includeObject=None: the names only)."""

    def do_GET(self):
        self.server.seen.append(self.path)
        parts = urlsplit(self.path)
        where = _split(parts.path)
        if where is None:
            return self.answer(404, {"kind": "Status", "message": "the server could not find the requested resource"})
        path, namespace, name = where
        plural = path.rsplit("/", 1)[1]
        if namespace is not None and plural in CLUSTER_SCOPED_PLURALS:
            return self.answer(404, {"kind": "Status", "message": "the server could not find the requested resource"})
        entries = [(meta, text) for meta, text in self.entries(path)
                   if namespace is None or meta.get("namespace") == namespace]
        selector = parse_qs(parts.query).get("labelSelector", [None])[0]
        if selector and name is None:
            entries = [(meta, text) for meta, text in entries if selected(meta.get("labels") or {}, selector)]
        if name is not None:
            for meta, text in entries:
                if meta.get("name") == name:
                    return self.answer(200, None, text)
            return self.answer(404, {"kind": "Status", "message": 'not found: "%s"' % name})
        self.server.pages.append((path, namespace))
        if TABLE in (self.headers.get("Accept") or ""):
            assert parse_qs(parts.query).get("includeObject") == ["None"], "a Table of names only"
            return self.answer(200, {
                "kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {},
                "columnDefinitions": [{"name": "Name", "type": "string", "format": "name"},
                                      {"name": "Age", "type": "string", "format": ""}],
                "rows": [{"cells": [meta.get("name"), "1d"]} for meta, _ in entries]})
        head = json.dumps({"kind": "List", "apiVersion": "v1", "metadata": {}})
        self.answer(200, None, head[:-1] + ', "items": [' + ", ".join(text for _, text in entries) + "]}")


    def entries(self, path):
        """(metadata, JSON text) of every object of a cluster-wide list path; a text's metadata as given with it."""
        found = [(obj.get("metadata") or {}, json.dumps(obj)) for obj in self.server.lists.get(path, [])]
        for entry in self.server.texts:
            if entry[0] == path:
                found.append(({"namespace": entry[1], "name": entry[2], "labels": (entry[4:] or [{}])[0]}, entry[3]))
        return found

    def do_DELETE(self):
        self.server.seen.append("DELETE " + self.path)
        where = _split(urlsplit(self.path).path)
        if where is None or where[2] is None:
            return self.answer(405, {"kind": "Status", "message": "only one object is deleted here"})
        path, namespace, name = where

        def this(meta):
            return meta.get("name") == name and meta.get("namespace") == namespace
        before = len(self.server.lists.get(path, [])) + len(self.server.texts)
        self.server.lists[path] = [o for o in self.server.lists.get(path, []) if not this(o.get("metadata") or {})]
        self.server.texts = [t for t in self.server.texts if not (t[0] == path and this({"name": t[2], "namespace": t[1]}))]
        if len(self.server.lists[path]) + len(self.server.texts) == before:
            return self.answer(404, {"kind": "Status", "message": 'not found: "%s"' % name})
        self.server.deleted.append((path, namespace, name))
        self.answer(200, {"kind": "Status", "status": "Success"})


def selected(labels, selector):
    """Whether labels match a label selector of "key=value" and "key in (a,b)" terms, as the API server matches."""
    for term in re.findall(r"[^,(]+(?:\([^)]*\))?", selector):
        term = term.strip()
        if " in (" in term:
            key, values = term.split(" in (", 1)
            if labels.get(key.strip()) not in [v.strip() for v in values.rstrip(")").split(",")]:
                return False
        elif "=" in term:
            key, value = term.split("=", 1)
            if labels.get(key.strip()) != value.strip():
                return False
    return True


def start_recorded(lists, texts=()):
    """A running server answering from lists (cluster-wide list path -> items) and texts ((cluster-wide list
    path, namespace, name, JSON text[, labels]): objects given as text, a deep or huge one); stop it with
    stop(server). It deletes too (server.deleted: (path, namespace, name) of each)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), RecordedHandler)
    server.daemon_threads = True
    server.lists = lists
    server.texts = list(texts)
    server.raw = {}
    server.seen = []
    server.pages = []
    server.deleted = []
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, daemon=True)
    thread.start()
    server.url = "http://127.0.0.1:%d" % server.server_address[1]
    return server


def recorded_answer(lists, path):
    """What the API server answers a GET of path from lists (cluster-wide list path -> items), in-process: the
    stand-in clusters of the sim's state tests. A cluster-wide kind under /namespaces/ is a 404 (ApiException)."""
    from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import ApiException
    where = _split(path.split("?")[0])
    if where is None:
        raise ApiException(404, "Not Found")
    listed, namespace, name = where
    if namespace is not None and listed.rsplit("/", 1)[1] in CLUSTER_SCOPED_PLURALS:
        raise ApiException(404, "Not Found")
    items = [item for item in lists.get(listed, [])
             if namespace is None or (item.get("metadata") or {}).get("namespace") == namespace]
    if name is None:
        return {"items": items}
    for item in items:
        if (item.get("metadata") or {}).get("name") == name:
            return item
    raise ApiException(404, "Not Found")
