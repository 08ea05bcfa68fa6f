# -*- coding: utf-8 -*-
"""Every answer of the API server is read within bounds (issue 34, rows 1 and 6).

Whoever may write an object chooses its fields: the API server keeps a
managedFields entry nested 1,500 levels deep (it accepts 10,000) and an Event
message of 1 MB; a busy or broken server answers slowly or at length. Over
both transports of the client (the standard library's, and the kubernetes
client's for other kubeconfigs) each request ends by one deadline, holds at
most answer.MAX_BYTES and decodes at most answer.MAX_DEPTH levels; what is out
of bounds is a ClusterError naming the object and the bound, which the grade
turns into a named unverified check, never a RecursionError or a traceback.
Served by a local API server (fake_api.py) answering from recorded objects.
"""

from __future__ import annotations

import io
import json
import threading
import time
import tracemalloc

import pytest

import fake_api
import kai_v017 as hand
import lab_states
from conftest import FakeCluster, write_files
from ansible_collections.gsb.kai_lab.plugins.module_utils.client import answer
from ansible_collections.gsb.kai_lab.plugins.module_utils.client import api as client_api
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import Cluster, ClusterError, LightApi
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import (
    AnswerTooDeep, AnswerTooLarge, RequestTimeout)
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import cli as kai_lab_cli
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import session as grade_session
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import running as kai_running

TIMEOUT = 3
# What a bounded case may take beyond its deadline on a busy shared machine.
SLACK = 5.0
MiB = 1024 * 1024
# The users of the kubeconfig that pick each transport (basic auth needs the kubernetes client).
TRANSPORTS = {"light": {"token": "t"}, "kubernetes": {"username": "learner", "password": "x"}}
DEEP_POD = ("v1", "Pod", "default", "deep", fake_api.deep_object("Pod", "deep", "default"))


def connect(tmp_path, server, transport, timeout=TIMEOUT):
    cluster = Cluster(fake_api.kubeconfig(tmp_path / ("kc-" + transport), server.url, TRANSPORTS[transport]),
                      request_timeout=timeout, light=True)
    assert isinstance(cluster.api, LightApi) == (transport == "light")
    return cluster


def measured(call):
    """(what call() returned or raised, seconds it took, the peak of Python's memory meanwhile in bytes)."""
    tracemalloc.start()
    started = time.monotonic()
    try:
        try:
            result = call()
        except Exception as exc:  # the test asserts what it is
            result = exc
        return result, time.monotonic() - started, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# ---------------------------------------------------------------- depth

@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
def test_a_pod_nested_1500_levels_deep_is_named_with_its_bound(tmp_path, serve, transport):
    server = serve(texts=[DEEP_POD])
    cluster = connect(tmp_path, server, transport)
    error, seconds, _peak = measured(lambda: cluster.list("v1", "Pod"))
    assert isinstance(error, AnswerTooDeep), error
    assert str(error) == (
        "cannot list Pod in every namespace: Pod default/deep nests more than 100 levels deep "
        "(at metadata.managedFields[].fieldsV1.f:a...), more than the lab reads in any object. "
        "Delete that object or remove its deep field (kubectl delete pod deep -n default)")
    assert error.limit == answer.MAX_DEPTH and seconds < TIMEOUT + SLACK


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
def test_a_configmap_nested_1500_levels_deep_anywhere_is_named(tmp_path, serve, transport):
    server = serve(texts=[("v1", "ConfigMap", "elsewhere", "deep", fake_api.deep_object("ConfigMap", "deep", "elsewhere"))])
    cluster = connect(tmp_path, server, transport)
    with pytest.raises(AnswerTooDeep) as info:
        cluster.get("v1", "ConfigMap", "deep", "elsewhere")
    assert str(info.value).startswith("cannot read ConfigMap elsewhere/deep: ConfigMap elsewhere/deep nests more "
                                      "than 100 levels deep (at metadata.managedFields[].fieldsV1.f:a...)")
    with pytest.raises(AnswerTooDeep):
        cluster.list("v1", "ConfigMap", "elsewhere")


def test_the_depth_is_counted_on_structure_not_on_brackets_in_strings():
    text = json.dumps({"message": "[" * 500 + "{" * 500, "quoted": '\\"[[[', "items": [[[]]]}).encode()
    assert answer.decode(text, "read x")["items"] == [[[]]]
    assert not answer.deeper_than(b"[" * 100 + b"]" * 100) and answer.deeper_than(b"[" * 101 + b"]" * 101)
    with pytest.raises(ClusterError) as info:
        answer.decode(b'{"items": [', "read x")
    assert str(info.value).startswith("cannot read x: the API server's answer is no JSON the lab reads")


# ---------------------------------------------------------------- size

def _events_answer(message_bytes):
    event = {"metadata": {"name": "big", "namespace": "kai-lab", "uid": "u1"}, "reason": "Noted",
             "involvedObject": {"kind": "Pod", "name": "p1"}, "message": "x" * message_bytes}
    return json.dumps({"kind": "EventList", "apiVersion": "v1", "metadata": {}, "items": [event]}).encode()


def _write(handler, data, length=True):
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    if length:
        handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
def test_a_1_MB_event_message_is_read_within_time_and_memory(tmp_path, serve, transport):
    data = _events_answer(MiB)
    server = serve(raw={"/api/v1/namespaces/kai-lab/events": lambda handler: _write(handler, data)})
    cluster = connect(tmp_path, server, transport)
    events, seconds, peak = measured(lambda: cluster.list("v1", "Event", "kai-lab"))
    assert [len(e["message"]) for e in events] == [MiB]
    assert seconds < TIMEOUT + SLACK
    assert peak < 16 * MiB, "a 1 MB answer held at most a few times over (peak %d bytes)" % peak


def _stream_100_mb(length):
    """An answer of 100 MB (written in 64 KiB pieces, never held): with its Content-Length or without one."""
    def write(handler):
        total = 100 * MiB
        head = b'{"kind": "EventList", "items": [{"message": "'
        piece = b"x" * (64 * 1024)
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        if length:
            handler.send_header("Content-Length", str(total))
        handler.end_headers()
        handler.wfile.write(head)
        handler.server.sent = len(head)
        while handler.server.sent < total and not getattr(handler.server, "stopping", False):
            handler.wfile.write(piece)
            handler.server.sent += len(piece)
    return write


@pytest.mark.parametrize("length", [True, False], ids=["content-length", "until-closed"])
@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
def test_a_100_MB_answer_is_refused_at_the_bound_within_time_and_memory(tmp_path, serve, transport, length):
    server = serve(raw={"/api/v1/namespaces/kai-lab/events": _stream_100_mb(length)})
    server.sent = 0
    cluster = connect(tmp_path, server, transport)
    error, seconds, peak = measured(lambda: cluster.list("v1", "Event", "kai-lab"))
    assert isinstance(error, AnswerTooLarge), error
    assert str(error).startswith("cannot list Event in kai-lab: the API server's answer is larger than 8 MiB, "
                                 "more than the lab reads in one answer")
    assert seconds < TIMEOUT + SLACK
    assert peak < 3 * answer.MAX_BYTES, "held no more than the bound, a few times over (peak %d bytes)" % peak
    time.sleep(0.2)
    assert server.sent < 40 * MiB, "the client stopped reading (the server wrote %d bytes)" % server.sent


# ---------------------------------------------------------------- one deadline

def _trickle(headers):
    """An answer that comes one byte every 0.1 s: its headers too (headers=True), or only its body."""
    def write(handler):
        status = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n"
                  b"Audit-Id: " + b"0" * 80 + b"\r\n\r\n")  # 17 s of headers, trickled
        body = b'{"items": [' + b" " * 1000
        if not headers:
            handler.wfile.write(status)
            handler.wfile.flush()
        for byte in (status if headers else b"") + body:
            if getattr(handler.server, "stopping", False):
                return
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            time.sleep(0.1)
    return write


@pytest.mark.parametrize("transport,headers", [("light", True), ("light", False), ("kubernetes", True),
                                               ("kubernetes", False)],
                         ids=["light-headers", "light-body", "kubernetes-headers", "kubernetes-body"])
def test_a_trickling_answer_ends_by_the_requests_one_deadline(tmp_path, serve, transport, headers):
    server = serve(raw={"/api/v1/namespaces/kai-lab/pods": _trickle(headers)})
    cluster = connect(tmp_path, server, transport, timeout=2)
    error, seconds, _peak = measured(lambda: cluster.list("v1", "Pod", "kai-lab"))
    assert isinstance(error, RequestTimeout), error
    assert str(error).startswith("cannot list Pod in kai-lab: the Kubernetes API server did not answer within 2.0 s")
    assert 1.5 < seconds < 2 + SLACK


def test_the_callers_deadline_ends_a_request_under_way(tmp_path, serve):
    server = serve(raw={"/api/v1/namespaces/kai-lab/pods": _trickle(False)})
    cluster = connect(tmp_path, server, "light", timeout=30)
    cluster.deadline = time.monotonic() + 1
    started = time.monotonic()
    with pytest.raises(RequestTimeout):
        cluster.list("v1", "Pod", "kai-lab")
    assert time.monotonic() - started < 1 + SLACK


# ---------------------------------------------------------------- pages

def _many_pods(count, namespace="default"):
    cluster = FakeCluster({})
    for n in range(count):
        cluster._store("v1", "Pod", {"metadata": {"name": "p-%04d" % n, "namespace": namespace}})
    return cluster


def test_a_list_is_read_in_pages_with_limit_and_continue(tmp_path, serve):
    server = serve(_many_pods(1200))
    pods = connect(tmp_path, server, "light").list("v1", "Pod")
    assert len(pods) == 1200 and len(set(p["metadata"]["name"] for p in pods)) == 1200
    assert server.pages == [("Pod", None, 0, 500), ("Pod", None, 500, 500), ("Pod", None, 1000, 200)]


def test_a_list_longer_than_the_bound_is_named(tmp_path, serve, monkeypatch):
    monkeypatch.setattr(client_api, "MAX_LIST_ITEMS", 1000)
    server = serve(_many_pods(1200))
    with pytest.raises(ClusterError) as info:
        connect(tmp_path, server, "light").list("v1", "Pod")
    assert str(info.value) == "cannot list Pod in every namespace: there are more than 1000, more than the lab reads of any kind"


# ---------------------------------------------------------------- the grade

def _lab(tmp_path, state, texts, raw=None, serve=None):
    """kai-lab's settings file for the by-hand lab state (lab_states), served with texts (objects as JSON text)."""
    server = serve(FakeCluster(state), raw, texts)
    workdir = write_files(tmp_path / "gsb-kai", state["files"])
    record = tmp_path / "kai-version.json"
    record.write_text(json.dumps(kai_running.sim_record(hand.KAI_VERSION, "", {})))
    config = {"version": "9.8.7", "target": "sim", "namespace": hand.NAMESPACE, "workdir": workdir, "lang": "en",
              "kai_record": str(record), "kubeconfig": fake_api.kubeconfig(tmp_path / "kc", server.url),
              "health_urls": {}, "kai_deployments": [], "kai_namespace": "kai-scheduler", "output_dir": workdir,
              "time_limit": 30, "record_path": str(tmp_path / "records" / "kai-lab.json"), "sim_state_dir": str(tmp_path)}
    path = tmp_path / "kai-lab.json"
    path.write_text(json.dumps(config))
    return server, str(path), config


def kai_lab(config, *argv):
    out, err = io.StringIO(), io.StringIO()
    code = kai_lab_cli.main(list(argv), config_path=config, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_kai_lab_check_queues_grades_beside_a_deep_pod_in_default(tmp_path, serve):
    server, config, _ = _lab(tmp_path, lab_states.lab_after("queues", lab_states.KAI_V017), [DEEP_POD], serve=serve)
    code, out, err = kai_lab(config, "check", "queues", "--lang", "en")
    assert (code, err) == (0, ""), out
    assert "step 1 queues (Queue hierarchy): PASSED" in out.splitlines()
    # Only the lab's namespace and the cluster's queues: never the pods of every namespace.
    assert not [seen for seen in server.seen if seen.path.startswith("/api/v1/pods")]


def test_step_8_beside_a_deep_pod_is_unverified_naming_the_pod(tmp_path, serve):
    server, config, _ = _lab(tmp_path, lab_states.finished(lab_states.KAI_V017), [DEEP_POD], serve=serve)
    code, out, err = kai_lab(config, "check", "report", "--lang", "en", "--json")
    assert (code, err) == (1, "")
    checks = dict((c["id"], c) for c in json.loads(out)["checks"])
    assert checks["report.file"]["status"] == "passed"
    values = checks["report.values"]
    assert values["status"] == "unverified"
    assert values["message"].startswith("Could not be verified: the pods of every namespace could not be read: "
                                        "cannot list Pod in every namespace: Pod default/deep nests more than 100 "
                                        "levels deep")
    assert values["hint"].startswith("Remove or fix what the message names")
    assert "/api/v1/pods?limit=500" in [seen.path for seen in server.seen]


def test_the_whole_grade_beside_a_deep_configmap_in_the_lab_namespace_names_it(tmp_path, serve):
    """grade.yml's core: every step graded, the checks that read the ConfigMaps unverified, grade.json written."""
    deep = ("v1", "ConfigMap", hand.NAMESPACE, "deep", fake_api.deep_object("ConfigMap", "deep", hand.NAMESPACE))
    _server, _config, settings = _lab(tmp_path, lab_states.finished(lab_states.KAI_V017), [deep], serve=serve)
    done = grade_session.grade(settings)
    checks = dict((c["id"], c) for s in done["grade"]["steps"] for c in s["checks"])
    for check_id in ("fraction.shared", "report.values"):
        assert checks[check_id]["status"] == "unverified"
        assert "ConfigMap kai-lab/deep nests more than 100 levels deep" in checks[check_id]["message"]
    assert checks["queues.applied"]["status"] == "passed" and done["cluster_error"] is None
    written = json.loads((tmp_path / "gsb-kai" / "grade.json").read_text())
    assert written["counts"]["unverified"] >= 2
