# -*- coding: utf-8 -*-
"""Cluster(light=True): the grade's transport over the standard library.

The kubernetes client's import takes most of a second, more than a step
check of the lab; the grade (module kai_lab_grade and kai-lab) talks to the
API server over http.client when the kubeconfig holds only a server, a CA,
a client certificate and key or a token, and through the kubernetes client
otherwise. Served here by a local HTTP server recording each request.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml

from conftest import COLLECTION_PATH
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import Cluster, ClusterError, LightApi


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # kept alive, as the API server does

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.server.seen.append((self.command, self.path, self.headers.get("Authorization"),
                                 self.client_address[1]))
        if self.path.startswith("/api/v1/namespaces/kai-lab/pods/p1"):
            self.answer(200, {"metadata": {"name": "p1"}})
            # An idle timeout: the server drops the kept-alive connection without saying so.
            self.close_connection = self.server.drop_next
            self.server.drop_next = False
        elif self.path.startswith("/api/v1/namespaces/kai-lab/pods?"):
            self.answer(200, {"items": [{"metadata": {"name": "p1"}}]})
        else:
            self.answer(404, {"kind": "Status", "message": "not found here"})

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.seen.append((self.command, self.path, self.headers.get("Content-Type"), json.loads(body)))
        self.answer(201, json.loads(body))

    do_PATCH = do_POST

    def answer(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def api_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.seen = []
    server.drop_next = False
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def kubeconfig(path, server, user):
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "lab",
        "clusters": [{"name": "lab", "cluster": {"server": server}}],
        "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "lab"}}],
        "users": [{"name": "lab", "user": user}]}))
    return str(path)


def test_light_cluster_reads_objects_over_one_kept_alive_connection(tmp_path, api_server):
    server = "http://127.0.0.1:%d" % api_server.server_address[1]
    cluster = Cluster(kubeconfig(tmp_path / "kc", server, {"token": "s3cret"}), request_timeout=3, light=True)
    assert isinstance(cluster.api, LightApi) and cluster.host == server
    assert cluster.get("v1", "Pod", "p1", "kai-lab") == {"metadata": {"name": "p1"}}
    assert cluster.get("v1", "Pod", "p2", "kai-lab") is None
    assert cluster.list("v1", "Pod", "kai-lab", label_selector="app=x y") == [{"metadata": {"name": "p1"}}]
    with pytest.raises(ClusterError) as info:
        cluster.list("v1", "Node")
    assert str(info.value) == "cannot list Node: 404 not found here"
    paths = [seen[1] for seen in api_server.seen]
    assert paths[2] == "/api/v1/namespaces/kai-lab/pods?limit=500&labelSelector=app%3Dx+y"
    assert set(seen[2] for seen in api_server.seen) == {"Bearer s3cret"}
    assert len(set(seen[3] for seen in api_server.seen)) == 1, "one connection for every request"


def test_a_connection_the_server_closed_is_opened_again(tmp_path, api_server):
    cluster = Cluster(kubeconfig(tmp_path / "kc", "http://127.0.0.1:%d" % api_server.server_address[1], {}),
                      light=True)
    api_server.drop_next = True
    assert cluster.get("v1", "Pod", "p1", "kai-lab")
    assert cluster.get("v1", "Pod", "p1", "kai-lab") == {"metadata": {"name": "p1"}}
    assert len(set(seen[3] for seen in api_server.seen)) == 2


def test_a_stopped_api_server_is_one_clear_error(tmp_path, api_server):
    port = api_server.server_address[1]
    cluster = Cluster(kubeconfig(tmp_path / "kc", "http://127.0.0.1:%d" % port, {}), request_timeout=2, light=True)
    api_server.shutdown()
    api_server.server_close()
    with pytest.raises(ClusterError) as info:
        cluster.list("v1", "Pod", "kai-lab")
    assert str(info.value).startswith("cannot reach the Kubernetes API server at http://127.0.0.1:%d "
                                      "(connection refused). Is the lab running?" % port)


@pytest.mark.parametrize("user", [
    {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "get-token"}},
    {"auth-provider": {"name": "oidc"}},
    {"username": "admin", "password": "x"},
], ids=["exec", "auth-provider", "basic"])
def test_other_kubeconfigs_go_through_the_kubernetes_client(tmp_path, user):
    path = kubeconfig(tmp_path / "kc", "https://127.0.0.1:6443", user)
    assert LightApi.from_kubeconfig(path) is None
    assert not isinstance(Cluster(path, light=True).api, LightApi)


def test_a_broken_kubeconfig_is_named_by_the_kubernetes_client(tmp_path):
    path = tmp_path / "kc"
    path.write_text("clusters: [")
    with pytest.raises(ClusterError) as info:
        Cluster(str(path), light=True)
    assert str(info.value).startswith("cannot load kubeconfig %s: " % path)


def test_the_grade_does_not_import_the_kubernetes_client(tmp_path, api_server):
    """What a step check saves: the kubernetes client's import (most of a second)."""
    path = kubeconfig(tmp_path / "kc", "http://127.0.0.1:%d" % api_server.server_address[1], {})
    code = (
        "import sys; sys.path.insert(0, %r)\n"
        "from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import session as grade_session\n"
        "from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import running as kai_running\n"
        "import json; record = %r\n"
        "open(record, 'w').write(json.dumps(kai_running.sim_record('v0.12.0', '', {})))\n"
        "result = grade_session.grade({'kubeconfig': %r, 'workdir': %r, 'kai_record': record, 'lang': 'en'},"
        " ['queues'], write=False)\n"
        "print(result['grade']['steps'][0]['id'], 'kubernetes.client' in sys.modules)\n"
        % (str(COLLECTION_PATH), str(tmp_path / "kai-version.json"), path, str(tmp_path)))
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["queues", "False"]
    assert any(seen[1] == "/api/v1/namespaces/kai-lab" for seen in api_server.seen)


def test_the_solver_creates_what_is_absent_and_applies_what_exists(tmp_path, api_server):
    """Issue 33: a learner's own account may create pods but not patch them; the solver run with it creates an
    absent object (POST, the create right alone) and applies one that exists (server-side apply, PATCH)."""
    cluster = Cluster(kubeconfig(tmp_path / "kc", "http://127.0.0.1:%d" % api_server.server_address[1], {}), light=True)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p2", "namespace": "kai-lab"}}
    assert cluster.apply(pod, create_absent=True) == (True, pod)
    method, path, content_type, body = api_server.seen[-1]
    assert (method, path, content_type, body) == (
        "POST", "/api/v1/namespaces/kai-lab/pods?fieldManager=gsb.kai_lab", "application/json", pod)
    cluster.apply(dict(pod, metadata={"name": "p1", "namespace": "kai-lab"}), create_absent=True)
    assert api_server.seen[-1][:3] == ("PATCH", "/api/v1/namespaces/kai-lab/pods/p1?fieldManager=gsb.kai_lab&force=true",
                                       "application/apply-patch+yaml")
    cluster.apply(pod)
    assert api_server.seen[-1][0] == "PATCH", "without create_absent an absent object is applied too"
