# -*- coding: utf-8 -*-
"""client/api.py: paths, errors a learner can act on, and the bounded client.

No cluster: an unreachable API server is a closed port on 127.0.0.1; the
request layer is exercised through a fake ApiClient.
"""

from __future__ import annotations

import json
import socket
import time

import pytest
from kubernetes.client.rest import ApiException

from ansible_collections.gsb.kai_lab.plugins.module_utils.client import api as k8s
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import Cluster, ClusterError, comparable
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import NotSupportedKind, admission_denial
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.kinds import kind_path

DENIAL = "cannot have both GPU fraction request and whole GPU resource request/limit"


# ---------------------------------------------------------------- kind_path

@pytest.mark.parametrize("args, path", [
    (("v1", "Pod", "kai-lab", "p1"), "/api/v1/namespaces/kai-lab/pods/p1"),
    (("v1", "Pod", "kai-lab"), "/api/v1/namespaces/kai-lab/pods"),
    (("v1", "Pod"), "/api/v1/pods"),
    (("scheduling.run.ai/v2alpha2", "PodGroup", "kai-lab"), "/apis/scheduling.run.ai/v2alpha2/namespaces/kai-lab/podgroups"),
    (("batch/v1", "Job", "kai-lab", "gang"), "/apis/batch/v1/namespaces/kai-lab/jobs/gang"),
    # Cluster-scoped kinds ignore a namespace.
    (("scheduling.run.ai/v2", "Queue", "kai-lab", "research"), "/apis/scheduling.run.ai/v2/queues/research"),
    (("scheduling.run.ai/v2", "Queue"), "/apis/scheduling.run.ai/v2/queues"),
    (("v1", "Node", None, "kai-lab-vm"), "/api/v1/nodes/kai-lab-vm"),
    # The controllers reset follows up from a pod (targets/reset_workloads.py).
    (("apps/v1", "ReplicaSet", "team", "web-5d8f7c9b6"), "/apis/apps/v1/namespaces/team/replicasets/web-5d8f7c9b6"),
    (("apps/v1", "StatefulSet", "team", "db"), "/apis/apps/v1/namespaces/team/statefulsets/db"),
    (("apps/v1", "DaemonSet", "team", "agent"), "/apis/apps/v1/namespaces/team/daemonsets/agent"),
    (("batch/v1", "CronJob", "team", "nightly"), "/apis/batch/v1/namespaces/team/cronjobs/nightly"),
])
def test_kind_path(args, path):
    assert kind_path(*args) == path


@pytest.mark.parametrize("api_version, kind", [
    ("networking.k8s.io/v1", "Ingress"),
    ("scheduling.run.ai/v1", "Queue"),  # right kind, wrong version
    ("v1", "pod"),
])
def test_unknown_kind_raises_not_supported_kind(api_version, kind):
    with pytest.raises(NotSupportedKind) as info:
        kind_path(api_version, kind, "kai-lab", "x")
    assert isinstance(info.value, ClusterError)
    assert "%s %s" % (api_version, kind) in str(info.value)


@pytest.mark.parametrize("namespace, name", [
    ("kai-lab", "runai/shared-gpu-configmap"),           # the crafted annotation of issue 13
    ("kai-lab", "../../kube-system/secrets/admin-token"),
    ("kai-lab", ".."),
    ("kai-lab", "p1%2Fx"),                              # the API server decodes %2F back to /
    ("kai-lab", "p1?watch=true"),
    ("kai-lab", "P1"),
    ("kai-lab", "p" * 254),
    ("kube-system/secrets", "admin-token"),
    ("..", "p1"),
    ("kai-lab", 5),
])
def test_names_that_could_leave_their_path_are_refused(namespace, name):
    with pytest.raises(k8s.InvalidName) as info:
        kind_path("v1", "ConfigMap", namespace, name)
    assert isinstance(info.value, ClusterError)
    assert "is not a valid Kubernetes name" in str(info.value) and 'no "/"' in str(info.value)


def test_real_names_pass_unchanged():
    # Names as the recorded sim objects carry them: a PodGroup with its uid, an Event, a dotted node.
    assert kind_path("scheduling.run.ai/v2alpha2", "PodGroup", "kai-lab",
                     "pg-p1-0d0a2d43-6c1e-4b8e-9d4c-2b1b9bb6a5e1") == (
        "/apis/scheduling.run.ai/v2alpha2/namespaces/kai-lab/podgroups/pg-p1-0d0a2d43-6c1e-4b8e-9d4c-2b1b9bb6a5e1")
    assert kind_path("v1", "Event", "kai-lab", "p1.187d0c1a2b3c4d5e").endswith("/events/p1.187d0c1a2b3c4d5e")
    assert kind_path("v1", "Node", None, "kai-node-0.lab") == "/api/v1/nodes/kai-node-0.lab"


def _recorded_names():
    from conftest import SIM
    found = set()
    stack = [json.loads(path.read_text()) for path in sorted(SIM.rglob("*.json"))]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            meta = item.get("metadata")
            if isinstance(meta, dict) and isinstance(meta.get("name"), str):
                found.add((meta.get("namespace") or None, meta["name"]))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def test_every_name_of_the_recorded_sim_objects_is_accepted():
    names = _recorded_names()
    assert len(names) > 50
    for namespace, name in names:
        assert kind_path("v1", "Event", namespace, name).endswith("/" + name)


def test_get_with_a_crafted_name_requests_nothing_and_finds_nothing():
    cluster = cluster_with()
    assert cluster.get("v1", "ConfigMap", "runai/shared-gpu-configmap", "kai-lab") is None
    assert cluster.get("v1", "ConfigMap", "x", "kube-system/secrets/admin-token#") is None
    assert cluster.api.calls == []


@pytest.mark.parametrize("call", [
    lambda c: c.delete("v1", "Pod", "../secrets/admin-token", "kai-lab"),
    lambda c: c.patch("v1", "Pod", "a/b", {}, "kai-lab"),
    lambda c: c.list("v1", "Pod", "kai-lab/../kube-system"),
    lambda c: c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a/b", "namespace": "kai-lab"}}),
])
def test_writes_and_lists_with_a_crafted_name_fail_clearly_without_a_request(call):
    cluster = cluster_with()
    with pytest.raises(k8s.InvalidName):
        call(cluster)
    assert cluster.api.calls == []


# ---------------------------------------------------------------- admission denial

def test_admission_denial_extracts_kais_message_from_recorded_error(fixtures):
    error = fixtures.mistakes()["fraction_with_gpu_limit_error"]
    assert admission_denial(error) == DENIAL
    assert admission_denial(ClusterError(error)) == DENIAL


def test_admission_denial_is_none_for_other_errors():
    assert admission_denial("cannot reach the Kubernetes API server at https://127.0.0.1:6443") is None
    assert admission_denial(ClusterError("cannot apply Pod p1: 409 conflict")) is None


def test_admission_denial_strips_json_quoting():
    raw = '{"kind":"Status","message":"admission webhook \\"x\\" denied the request: no GPUs for you"}'
    assert admission_denial(raw) == "no GPUs for you"


def test_comparable_ignores_server_bookkeeping():
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "resourceVersion": "5", "uid": "u",
                                                           "generation": 2, "creationTimestamp": "t",
                                                           "managedFields": [{}], "labels": {"a": "b"}},
           "spec": {"x": 1}, "status": {"phase": "Running"}}
    assert comparable(obj) == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}},
                               "spec": {"x": 1}}
    assert obj["status"] == {"phase": "Running"}, "the original is left alone"


# ---------------------------------------------------------------- real Cluster, no server

def _closed_port():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def _kubeconfig(path, server):
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        "clusters:\n- name: lab\n  cluster:\n    server: %s\n    insecure-skip-tls-verify: true\n"
        "users:\n- name: learner\n  user:\n    token: not-a-real-token\n"
        "contexts:\n- name: lab\n  context:\n    cluster: lab\n    user: learner\n"
        "current-context: lab\n" % server)
    return str(path)


@pytest.mark.parametrize("call", [
    lambda c: c.list("v1", "Pod", "kai-lab"),
    lambda c: c.get("scheduling.run.ai/v2", "Queue", "research"),
], ids=["list", "get"])
def test_unreachable_api_server_is_one_clear_error_within_5s(tmp_path, call):
    host = "https://127.0.0.1:%d" % _closed_port()
    cluster = Cluster(_kubeconfig(tmp_path / "kubeconfig", host), request_timeout=2)
    assert cluster.host == host
    started = time.monotonic()
    with pytest.raises(ClusterError) as info:
        call(cluster)
    assert time.monotonic() - started < 5
    message = str(info.value)
    assert host in message
    assert "connection refused" in message
    assert "provision" in message.lower()
    assert "Traceback" not in message


def test_missing_kubeconfig_names_the_file(tmp_path):
    missing = str(tmp_path / "no-such-kubeconfig.yaml")
    with pytest.raises(ClusterError) as info:
        Cluster(missing)
    assert missing in str(info.value)
    assert "provision" in str(info.value)


# ---------------------------------------------------------------- request layer, fake ApiClient

class Response(object):
    def __init__(self, obj):
        self.data = json.dumps(obj).encode() if obj is not None else b""


def api_error(status, reason, message=None):
    exc = ApiException(status=status, reason=reason)
    exc.body = json.dumps({"kind": "Status", "message": message}) if message else None
    return exc


class FakeApi(object):
    """ApiClient.call_api answering from a queue of results (dict or ApiException)."""

    def __init__(self, *results):
        self.results = list(results)
        self.calls = []

    def call_api(self, path, method, query_params=None, header_params=None, body=None, **kwargs):
        self.calls.append({"path": path, "method": method, "query": dict(query_params or []),
                           "headers": header_params, "body": body, "timeout": kwargs.get("_request_timeout")})
        result = self.results.pop(0)
        if isinstance(result, Exception):
            raise result
        return (Response(result), 200, {})


def cluster_with(*results):
    cluster = Cluster.__new__(Cluster)
    cluster.host = "https://10.0.0.1:6443"
    cluster.timeout = 7
    cluster.api = FakeApi(*results)
    return cluster


def test_get_returns_the_object_or_none_when_absent():
    cluster = cluster_with({"metadata": {"name": "p1"}}, api_error(404, "Not Found"))
    assert cluster.get("v1", "Pod", "p1", "kai-lab") == {"metadata": {"name": "p1"}}
    assert cluster.get("v1", "Pod", "p2", "kai-lab") is None
    assert cluster.api.calls[0]["path"] == "/api/v1/namespaces/kai-lab/pods/p1"
    assert 6 < cluster.api.calls[0]["timeout"] <= 7, "every request is bounded (what is left of its 7 s)"


def test_get_other_api_error_uses_the_servers_message():
    cluster = cluster_with(api_error(403, "Forbidden", 'pods "p1" is forbidden: User "learner" cannot get'))
    with pytest.raises(ClusterError) as info:
        cluster.get("v1", "Pod", "p1", "kai-lab")
    assert str(info.value) == 'cannot read Pod p1: 403 pods "p1" is forbidden: User "learner" cannot get'


def test_list_of_kai_kind_without_crd_says_kai_is_not_installed():
    cluster = cluster_with(api_error(404, "Not Found"))
    with pytest.raises(ClusterError) as info:
        cluster.list("scheduling.run.ai/v2", "Queue")
    assert "CRDs are not installed" in str(info.value)
    assert "Provision the lab" in str(info.value)


def test_list_passes_selectors_and_returns_items():
    cluster = cluster_with({"items": [{"metadata": {"name": "gang-0"}}]}, {"items": None})
    assert cluster.list("v1", "Pod", "kai-lab", label_selector="job-name=gang") == [{"metadata": {"name": "gang-0"}}]
    assert cluster.api.calls[0]["query"] == {"labelSelector": "job-name=gang", "limit": 500}
    assert cluster.list("v1", "Event", "kai-lab", field_selector="involvedObject.name=p1") == []
    assert cluster.api.calls[1]["query"] == {"fieldSelector": "involvedObject.name=p1", "limit": 500}


def test_apply_unchanged_object_reports_no_change():
    live = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
            "metadata": {"name": "research", "resourceVersion": "10", "managedFields": [{"manager": "kubectl"}]},
            "spec": {"parentQueue": "lab"}}
    after = json.loads(json.dumps(live))
    after["metadata"]["resourceVersion"] = "11"
    after["metadata"]["managedFields"].append({"manager": k8s.FIELD_MANAGER})
    manifest = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "research"},
                "spec": {"parentQueue": "lab"}}
    cluster = cluster_with(live, after)
    changed, result = cluster.apply(manifest)
    assert changed is False
    assert result == after
    patch = cluster.api.calls[1]
    assert patch["method"] == "PATCH"
    assert patch["path"] == "/apis/scheduling.run.ai/v2/queues/research"
    assert patch["headers"]["Content-Type"] == "application/apply-patch+yaml"
    assert patch["query"] == {"fieldManager": "gsb.kai_lab", "force": "true"}


def test_apply_new_or_different_object_reports_change_and_dry_run_is_passed():
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "kai-lab"}, "spec": {}}
    cluster = cluster_with(api_error(404, "Not Found"), dict(manifest))
    changed, _ = cluster.apply(manifest, dry_run=True)
    assert changed is True
    assert cluster.api.calls[1]["query"]["dryRun"] == "All"
    old = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "kai-lab"}, "data": {"a": "1"}}
    new = dict(old, data={"a": "2"})
    cluster = cluster_with(old, new)
    assert cluster.apply(new)[0] is True


def test_apply_denied_by_kai_webhook_gives_the_recorded_error_text(fixtures):
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "fr-bad", "namespace": "kai-lab"}}
    cluster = cluster_with(api_error(404, "Not Found"), api_error(
        403, "Forbidden", 'admission webhook "admission.kai-scheduler.svc" denied the request: ' + DENIAL))
    with pytest.raises(ClusterError) as info:
        cluster.apply(manifest, dry_run=True)
    assert str(info.value) == fixtures.mistakes()["fraction_with_gpu_limit_error"]
    assert admission_denial(info.value) == DENIAL


def test_patch_is_a_merge_patch():
    cluster = cluster_with({"spec": {"resources": {"gpu": {"limit": -1}}}})
    cluster.patch("scheduling.run.ai/v2", "Queue", "nolimit", {"spec": {"resources": {"gpu": {"limit": -1}}}})
    call = cluster.api.calls[0]
    assert call["headers"]["Content-Type"] == "application/merge-patch+json"
    assert call["body"] == {"spec": {"resources": {"gpu": {"limit": -1}}}}
    assert call["path"] == "/apis/scheduling.run.ai/v2/queues/nolimit"


def test_delete_reports_whether_something_was_deleted():
    cluster = cluster_with({}, api_error(404, "Not Found"), api_error(500, "Internal Server Error"))
    assert cluster.delete("batch/v1", "Job", "gang", "kai-lab") is True
    assert cluster.api.calls[0]["method"] == "DELETE"
    assert cluster.api.calls[0]["query"] == {"propagationPolicy": "Background"}
    assert cluster.delete("batch/v1", "Job", "gang", "kai-lab") is False
    with pytest.raises(ClusterError) as info:
        cluster.delete("batch/v1", "Job", "gang", "kai-lab")
    assert "cannot delete Job gang: 500 Internal Server Error" == str(info.value)


def test_transport_failure_becomes_cluster_error_naming_the_host():
    cluster = cluster_with(OSError("[Errno 111] Connection refused"))
    with pytest.raises(ClusterError) as info:
        cluster.get("v1", "Pod", "p1", "kai-lab")
    assert "https://10.0.0.1:6443" in str(info.value)
    assert "(connection refused)" in str(info.value)


def test_grader_snapshot_with_a_crafted_configmap_annotation_never_requests_another_path():
    """Issue 13 item 8, through the grader's Snapshot and the real request path."""
    from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
    from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.grader import Snapshot
    pod = {"metadata": {"name": "fr-1", "namespace": "kai-lab", "annotations": {
        kai_gpu.FRACTION_ANNOTATION: "0.5",
        kai_gpu.SHARED_GPU_CONFIGMAP_ANNOTATION: "../../kube-system/secrets/admin-token#"}}}
    # The lab namespace (its uid tells the grader's record of this lab), queues, pods, PodGroups, events,
    # and the namespace's ConfigMaps, listed once (issue 18): the crafted name is looked up among them.
    cluster = cluster_with({"metadata": {"name": "kai-lab", "uid": "ns-uid"}},
                           {"items": []}, {"items": [pod]}, {"items": []}, {"items": []}, {"items": []})
    snapshot = Snapshot(cluster, "kai-lab", "/nonexistent")
    assert snapshot.error is None and snapshot.configmaps == {}
    paths = [call["path"] for call in cluster.api.calls]
    assert len(paths) == 6 and not any("secrets" in path or "kube-system" in path for path in paths)
    assert paths[-1].endswith("/namespaces/kai-lab/configmaps")
