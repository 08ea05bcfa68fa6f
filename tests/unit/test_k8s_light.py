# -*- coding: utf-8 -*-
"""Cluster(light=True): the grade's transport over the standard library.

The kubernetes client's import takes most of a second, more than a step
check of the lab; the grade (module kai_lab_grade and kai-lab) talks to the
API server over http.client when the kubeconfig holds only a server, a CA,
a client certificate and key or a token, and through the kubernetes client
otherwise. Served here by the local API server (fake_api.py) recording each request.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading

import pytest

import fake_api
from conftest import COLLECTION_PATH, FakeCluster
from ansible_collections.gsb.kai_lab.plugins.module_utils.client import access, answer, light
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import Cluster, ClusterError, LightApi
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import ApiException

P1 = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "kai-lab", "labels": {"app": "x y"}}}


@pytest.fixture
def api_server(serve):
    """The local API server (fake_api.py), holding pod kai-lab/p1."""
    return serve(FakeCluster({"pods": [P1]}))


def test_light_cluster_reads_objects_over_one_kept_alive_connection(tmp_path, api_server):
    cluster = Cluster(fake_api.kubeconfig(tmp_path / "kc", api_server.url, {"token": "s3cret"}), request_timeout=3,
                      light=True)
    assert isinstance(cluster.api, LightApi) and cluster.host == api_server.url
    assert cluster.get("v1", "Pod", "p1", "kai-lab") == P1
    assert cluster.get("v1", "Pod", "p2", "kai-lab") is None
    assert cluster.list("v1", "Pod", "kai-lab", label_selector="app=x y") == [P1]
    api_server.refuse["/api/v1/nodes"] = (404, "not found here")
    with pytest.raises(ClusterError) as info:
        cluster.list("v1", "Node")
    assert str(info.value) == "cannot list Node: 404 not found here"
    paths = [seen.path for seen in api_server.seen]
    assert paths[2] == "/api/v1/namespaces/kai-lab/pods?limit=500&labelSelector=app%3Dx+y"
    assert set(seen.headers["Authorization"] for seen in api_server.seen) == {"Bearer s3cret"}
    assert len(set(seen.port for seen in api_server.seen)) == 1, "one connection for every request"


def test_a_connection_the_server_closed_is_opened_again(tmp_path, api_server):
    cluster = Cluster(fake_api.kubeconfig(tmp_path / "kc", api_server.url, {}), light=True)
    # An idle timeout: the server drops the kept-alive connection after its answer without saying so.
    api_server.raw["/api/v1/namespaces/kai-lab/pods/p1"] = lambda handler: handler.answer(200, P1)
    assert cluster.get("v1", "Pod", "p1", "kai-lab")
    assert cluster.get("v1", "Pod", "p1", "kai-lab") == P1
    assert len(set(seen.port for seen in api_server.seen)) == 2


def test_a_stopped_api_server_is_one_clear_error(tmp_path, api_server):
    port = api_server.server_address[1]
    cluster = Cluster(fake_api.kubeconfig(tmp_path / "kc", api_server.url, {}), request_timeout=2, light=True)
    fake_api.stop(api_server)
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
    path = fake_api.kubeconfig(tmp_path / "kc", "https://127.0.0.1:6443", user)
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
    path = fake_api.kubeconfig(tmp_path / "kc", api_server.url, {})
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
    assert any(seen.path == "/api/v1/namespaces/kai-lab" for seen in api_server.seen)


def test_the_solver_creates_what_is_absent_and_applies_what_exists(tmp_path, api_server):
    """Issue 33: a learner's own account may create pods but not patch them; the solver run with it creates an
    absent object (POST, the create right alone) and applies one that exists (server-side apply, PATCH)."""
    cluster = Cluster(fake_api.kubeconfig(tmp_path / "kc", api_server.url, {}), light=True)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p2", "namespace": "kai-lab"}}
    assert cluster.apply(pod, create_absent=True) == (True, pod)
    last = api_server.seen[-1]
    assert (last.method, last.path, last.headers["Content-Type"], last.body) == (
        "POST", "/api/v1/namespaces/kai-lab/pods?fieldManager=gsb.kai_lab", "application/json", pod)
    cluster.apply(dict(pod, metadata={"name": "p1", "namespace": "kai-lab"}), create_absent=True)
    last = api_server.seen[-1]
    assert (last.method, last.path, last.headers["Content-Type"]) == ("PATCH", "/api/v1/namespaces/kai-lab/pods/p1"
                                                                      "?fieldManager=gsb.kai_lab&force=true",
                                                                      "application/apply-patch+yaml")
    cluster.apply(dict(pod, metadata={"name": "p3", "namespace": "kai-lab"}))
    assert api_server.seen[-1].method == "PATCH", "without create_absent an absent object is applied too"


# ---------------------------------------------------------------- many requests back to back (issue 40)

def _answering_in_batches(count, batch):
    """A one-connection HTTP/1.1 server for count requests that answers none until batch of them (or all that are
    left) have come, as a server does with requests a client sent back to back; (url, the requests it read)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    seen = []

    def serve():
        connection, _ = listener.accept()
        listener.close()
        data, pending = b"", []
        with connection:
            while len(seen) < count:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                data += chunk
                while b"\r\n\r\n" in data:
                    head, rest = data.split(b"\r\n\r\n", 1)
                    length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
                    if len(rest) < length:
                        break
                    pending.append(head + b"\r\n\r\n" + rest[:length])
                    data = rest[length:]
                if len(pending) == min(batch, count - len(seen)):
                    for request in pending:
                        body = json.dumps({"status": {"allowed": len(seen) % 3 == 0}}).encode()
                        seen.append(request)
                        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                           b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
                    pending = []

    threading.Thread(target=serve, daemon=True).start()
    return "http://127.0.0.1:%d" % listener.getsockname()[1], seen


def test_many_requests_go_out_back_to_back_and_their_answers_are_read_in_order(tmp_path):
    """The grade's access reviews: a server that answers only once it has a whole batch still answers them all, in
    order, on one connection (sent one by one, the client would wait for the first answer until its deadline)."""
    count = light.PIPELINE + 8  # more than one batch
    url, seen = _answering_in_batches(count, light.PIPELINE)
    cluster = Cluster(fake_api.kubeconfig(tmp_path / "kc", url, {"token": "s3cret"}), request_timeout=3, light=True)
    questions = [({"verb": "create", "resource": "events", "namespace": "ns-%d" % n}, "user-%d" % n)
                 for n in range(count)]
    assert [a["allowed"] for a in access.reviews(cluster, questions)] == [n % 3 == 0 for n in range(count)]
    first = seen[0].decode()
    assert first.startswith("POST /apis/authorization.k8s.io/v1/subjectaccessreviews HTTP/1.1\r\n")
    assert "Authorization: Bearer s3cret\r\n" in first
    asked = [json.loads(request.split(b"\r\n\r\n", 1)[1])["spec"] for request in seen]
    assert [(spec["user"], spec["resourceAttributes"]["namespace"]) for spec in asked] == [
        ("user-%d" % n, "ns-%d" % n) for n in range(count)]


def _many(cluster, paths):
    found = cluster.api.call_many([(path, "GET", None) for path in paths], _deadline=answer.Deadline(3, "read"))
    return [one if isinstance(one, ApiException) else json.loads(one.data) for one in found]


def test_a_refused_request_among_many_is_its_own_answer_on_the_same_connection(tmp_path, api_server):
    cluster = Cluster(fake_api.kubeconfig(tmp_path / "kc", api_server.url, {}), request_timeout=3, light=True)
    api_server.refuse["/api/v1/nodes"] = (403, "nodes is forbidden")
    found = _many(cluster, ["/api/v1/namespaces/kai-lab/pods/p1", "/api/v1/nodes", "/api/v1/namespaces/kai-lab/pods/p1"])
    assert found[0] == P1 and found[2] == P1
    assert isinstance(found[1], ApiException) and found[1].status == 403 and "nodes is forbidden" in found[1].body
    assert len(api_server.seen) == 3 and len(set(seen.port for seen in api_server.seen)) == 1
    # The connection carries the next request as well.
    assert cluster.get("v1", "Pod", "p1", "kai-lab") == P1 and len(set(s.port for s in api_server.seen)) == 1


def test_a_connection_closed_amid_many_requests_is_opened_again_for_the_rest(tmp_path, api_server):
    cluster = Cluster(fake_api.kubeconfig(tmp_path / "kc", api_server.url, {}), request_timeout=3, light=True)
    # An idle timeout after the first answer: the server drops the connection without saying so.
    api_server.raw["/api/v1/namespaces/kai-lab/pods/first"] = lambda handler: handler.answer(200, P1)
    assert _many(cluster, ["/api/v1/namespaces/kai-lab/pods/first"] + ["/api/v1/namespaces/kai-lab/pods/p1"] * 3) \
        == [P1] * 4
    assert len(set(seen.port for seen in api_server.seen)) == 2
