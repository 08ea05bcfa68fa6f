# -*- coding: utf-8 -*-
"""Big is not broken (issue 40, row 4): a learner's flood of the lab namespace is graded, and named.

44 pods with 200 KB annotations in the lab namespace made every grade say
"could not grade ... larger than 8 MiB" (exit 2), which the lab platforms'
scripts take for a broken machine. Now the grade reads the lab's objects in
pages (limit and continue): a page larger than one answer is read again
smaller, the whole list has a bound of its own (client/api.py), fields no
check reads are dropped as the pages arrive, and a list longer than the bound
fails the checks that read it, naming the namespace, the kind, how many, who
made them and what to delete: exit 1, like any failed check.

Served by a local API server (fake_api.py) answering with the lab done by
hand on KAI v0.17.0 (fixtures/kai-v0.17.0/, from shared/fixtures/kai-v0.17.0/)
and a flood made from a pod recorded on the sim (fixtures/sim/flood-pod.json:
`kubectl create` of a pod flood-00 in kai-lab, queue research, annotation
flood: "x", then `kubectl get -o json --show-managed-fields` once KAI had
bound it; KAI v0.12.0, 2026-12-06), each copy with a 200 KB annotation of
its own.
"""

from __future__ import annotations

import copy
import json

import pytest

import kai_v017 as hand
import lab_states
from conftest import SIM, load_json
from lab_testing import HANGUL
from test_bounded_answers import _lab, _stream_100_mb, connect, kai_lab, measured
from ansible_collections.gsb.kai_lab.plugins.module_utils.client import answer
from ansible_collections.gsb.kai_lab.plugins.module_utils.client import api as client_api
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import AnswerTooLarge, ListTooLarge
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import session as grade_session
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry

MiB = 1024 * 1024
FLOOD = 44
ANNOTATION = 200 * 1000
PODS = "/api/v1/namespaces/kai-lab/pods"
# The lab's own pods after step 8 of the lab done by hand (p1, nl-1, bd-1, fr-1, fr-2) and the flood.
IN_LAB_NAMESPACE = 5 + FLOOD


def recorded_flood_pod():
    """The pod recorded on the sim as `kubectl create` left it (its managedFields too): fixtures/sim/flood-pod.json."""
    return load_json(SIM / "flood-pod.json")


def flood(count=FLOOD, size=ANNOTATION, kind="Pod", namespace=hand.NAMESPACE, shape=None):
    """(apiVersion, kind, namespace, name, JSON text) of count copies of the recorded flood pod, flood-00..., each
    with a size-byte annotation of its own; shape(obj, n) makes a copy of another kind of it."""
    texts = []
    for n in range(count):
        obj = copy.deepcopy(recorded_flood_pod())
        meta = obj["metadata"]
        meta.update(name="flood-%02d" % n, namespace=namespace, uid="%08d-flood" % n)
        meta["annotations"]["flood"] = ("%02d" % n + "x" * size)[:size]
        if shape:
            obj = shape(obj, n)
        texts.append((obj.get("apiVersion", "v1"), kind, namespace, obj["metadata"]["name"], json.dumps(obj)))
    return texts


def limits(server, path=PODS):
    """The limit of each request of path the server saw, in order."""
    return [int(seen.path.split("limit=")[1].split("&")[0]) for seen in server.seen
            if seen.path.split("?")[0] == path and "limit=" in seen.path]


def checks_of(out):
    graded = json.loads(out)
    return dict((c["id"], c) for s in graded.get("steps", [graded]) for c in s["checks"])


# ---------------------------------------------------------------- the grade

def test_44_pods_of_200_KB_fail_the_steps_that_read_pods_naming_the_flood_and_exit_1(tmp_path, serve):
    server, config, _ = _lab(tmp_path, lab_states.finished(lab_states.KAI_V017), flood(), serve=serve)
    code, out, err = kai_lab(config, "check", "podgroup", "--lang", "en", "--json")
    assert (code, err) == (1, "")
    checks = checks_of(out)
    assert checks["podgroup.manifest"]["status"] == "passed"  # the learner's file alone
    running = checks["podgroup.running"]
    assert running["status"] == "failed"
    read = running["evidence"]["flood"]["bytes"]
    assert 8 * MiB < read < 9 * MiB
    assert running["message"] == (
        "Namespace kai-lab holds 49 pods, more than the grade reads of one kind (8 MiB; the 49 read take %s): "
        "you created them (or Jobs of yours did); the lab asks for 10: p1, nl-1, tr-1, tr-2, bd-1, fr-1, fr-2 "
        "and the 3 of gang" % answer.size_text(read))
    assert running["hint"] == ("Delete the ones the lab does not ask for (kubectl -n kai-lab delete pod flood-00 "
                               "flood-01 flood-02 flood-03 flood-04 and 39 more), then check again.")
    assert running["evidence"]["flood"] == {"kind": "Pod", "namespace": "kai-lab", "read": IN_LAB_NAMESPACE,
                                            "bytes": running["evidence"]["flood"]["bytes"], "remaining": 0}
    # Each page within one answer's bound: too large at 500 and 125, then pages of 31.
    assert limits(server)[:4] == [500, 125, 31, 31]


def test_the_whole_lab_is_graded_beside_the_flood_step_1_passes_and_no_check_says_it_could_not_read(tmp_path, serve):
    _server, config, _ = _lab(tmp_path, lab_states.finished(lab_states.KAI_V017), flood(), serve=serve)
    code, out, err = kai_lab(config, "check", "--lang", "en", "--json")
    assert (code, err) == (1, "")
    graded = json.loads(out)
    steps = dict((s["id"], s) for s in graded["steps"])
    assert steps["queues"]["passed"] and graded["environment"][0]["status"] == "passed"
    for check in (c for s in graded["steps"] for c in s["checks"]):
        assert check["status"] != "unverified", check
        if check["status"] == "failed":
            assert "more than the grade reads of one kind" in check["message"], check
    # Every step after the first reads the lab's pods; each fails naming the flood, and grade.json is written.
    assert [s["id"] for s in graded["steps"] if not s["passed"]] == list(registry.STEP_IDS[1:])
    assert json.loads((tmp_path / "gsb-kai" / "grade.json").read_text())["counts"]["unverified"] == 0
    code, out, err = kai_lab(config, "check", "queues", "--lang", "en")
    assert (code, err) == (0, "") and "could not grade" not in out


def test_the_flood_is_named_in_korean_too(tmp_path, serve):
    _server, config, _ = _lab(tmp_path, lab_states.finished(lab_states.KAI_V017), flood(), serve=serve)
    code, out, err = kai_lab(config, "check", "nolimit", "--lang", "ko", "--json")
    assert (code, err) == (1, "")
    failed = [c for c in checks_of(out).values() if c["status"] == "failed"]
    assert failed and all(c["message"].startswith("네임스페이스 kai-lab의 파드: 49개, 채점이 한 종류에서 읽는 양(8 MiB)보다 "
                                                  "많습니다") for c in failed)
    assert all(HANGUL.search(c["hint"]) and "kubectl -n kai-lab delete pod flood-00" in c["hint"] for c in failed)


def test_the_grade_module_names_the_flood_and_the_cluster_counts_as_read(tmp_path, serve):
    """grade.yml's core: cluster_error None (the module says the grade, not that the cluster is unreachable)."""
    _server, _config, settings = _lab(tmp_path, lab_states.finished(lab_states.KAI_V017), flood(), serve=serve)
    done = grade_session.grade(settings)
    assert done["cluster_error"] is None
    graded = done["grade"]
    assert graded["counts"] == {"passed": graded["counts"]["passed"], "failed": graded["counts"]["failed"],
                                "unverified": 0}
    report = dict((c["id"], c) for s in graded["steps"] for c in s["checks"])["report.values"]
    # Step 8 reads the pods of every namespace: named by the namespace the flood is in.
    assert report["message"].startswith("Namespace kai-lab holds at least 49 pods, more than the grade reads of "
                                        "one kind (8 MiB; the 50 read take")


def _owned_by(kind, api_version):
    def shape(obj, n):
        obj = {"apiVersion": api_version, "kind": kind, "metadata": dict(obj["metadata"]), "spec": {}}
        obj["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "flood-%02d" % n,
                                               "uid": "%08d-flood" % n}]
        return obj
    return shape


def _event_about(obj, n):
    return {"apiVersion": "v1", "kind": "Event", "metadata": dict(obj["metadata"]), "reason": "Scheduled",
            "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": "flood-%02d" % n,
                               "namespace": hand.NAMESPACE}, "message": "x"}


def _in_job(obj, n):
    obj["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": "spam-%d" % (n % 2),
                                           "uid": "job-%d" % (n % 2), "controller": True}]
    return obj


@pytest.mark.parametrize("kind, shape, step, made, delete", [
    ("PodGroup", _owned_by("PodGroup", "scheduling.run.ai/v2alpha2"), "podgroup",
     "KAI-Scheduler makes one for each pod or Job you create",
     "Delete the pods and Jobs the lab does not ask for, and these go with them (kubectl -n kai-lab delete pod "
     "flood-00 flood-01 flood-02 flood-03 flood-04 and 7 more), then check again."),
    ("Event", _event_about, "nolimit", "Kubernetes and KAI-Scheduler wrote them about the objects you created",
     "Your account cannot delete Events; they go with time or with a reset of the lab. Delete the objects the lab "
     "does not ask for (kubectl -n kai-lab delete pod flood-00 flood-01 flood-02 flood-03 flood-04 and 7 more), "
     "then reset the lab (ansible-playbook playbooks/reset.yml keeps your files in a backup directory) or ask your "
     "instructor to."),
    ("ConfigMap", _owned_by("ConfigMap", "v1"), "report", "KAI-Scheduler's binder makes them for each fraction pod "
     "you create", "Delete the pods and Jobs the lab does not ask for, and these go with them (kubectl -n kai-lab "
     "delete pod flood-00 flood-01 flood-02 flood-03 flood-04 and 7 more), then check again."),
    ("Pod", _in_job, "fraction", "you created them (or Jobs of yours did)",
     "Delete the ones the lab does not ask for (kubectl -n kai-lab delete job spam-0 spam-1), then check again."),
])
def test_each_kind_of_flood_says_who_made_it_and_what_deletes_it(tmp_path, serve, monkeypatch, kind, shape, step,
                                                                  made, delete):
    """Past a smaller bound (1 MiB), so that 12 objects of 100 KB are a flood of any kind."""
    monkeypatch.setattr(client_api, "MAX_LIST_BYTES", MiB)
    _server, config, _ = _lab(tmp_path, lab_states.finished(lab_states.KAI_V017), flood(12, 100 * 1000, kind, shape=shape),
                              serve=serve)
    code, out, err = kai_lab(config, "check", step, "--lang", "en", "--json")
    assert (code, err) == (1, "")
    named = [c for c in checks_of(out).values() if "more than the grade reads of one kind (1 MiB" in c["message"]]
    assert named, out
    for check in named:
        assert check["status"] == "failed"
        assert made in check["message"] and check["hint"] == delete


# ---------------------------------------------------------------- the client's pages

def test_a_page_larger_than_one_answer_is_read_again_smaller_and_the_list_is_whole(tmp_path, serve, monkeypatch):
    monkeypatch.setattr(client_api, "MAX_LIST_BYTES", 64 * MiB)
    server = serve(texts=flood())
    pods, seconds, peak = measured(lambda: connect(tmp_path, server, "light").list("v1", "Pod", hand.NAMESPACE))
    assert [p["metadata"]["name"] for p in pods] == ["flood-%02d" % n for n in range(FLOOD)]
    # 500 and 125 (every pod, 8.8 MB: more than one answer), then 31 and the 13 left.
    assert limits(server) == [500, 125, 31, 31]
    assert server.pages == [("Pod", "kai-lab", 0, 44), ("Pod", "kai-lab", 0, 44), ("Pod", "kai-lab", 0, 31),
                            ("Pod", "kai-lab", 31, 13)]
    assert peak < 4 * answer.MAX_BYTES, "one answer's bound at a time, a few times over (peak %d bytes)" % peak


@pytest.mark.parametrize("transport", ["light", "kubernetes"])
def test_a_single_object_larger_than_one_answer_is_refused_once_read_alone(tmp_path, serve, transport):
    server = serve(raw={"/api/v1/namespaces/kai-lab/events": _stream_100_mb(True)})
    server.sent = 0
    error, _seconds, _peak = measured(lambda: connect(tmp_path, server, transport).list("v1", "Event", "kai-lab"))
    assert isinstance(error, AnswerTooLarge) and not isinstance(error, ListTooLarge), error
    assert limits(server, "/api/v1/namespaces/kai-lab/events") == [500, 125, 31, 7, 1]


def test_the_whole_list_is_bounded_and_its_reading_stops_at_the_bound(tmp_path, serve):
    server = serve(texts=flood(200))
    error, _seconds, peak = measured(lambda: connect(tmp_path, server, "light").list("v1", "Pod", hand.NAMESPACE))
    assert isinstance(error, ListTooLarge), error
    assert str(error) == ("cannot list Pod in kai-lab: the %d read are %s, more than the lab reads of any kind (8 MiB)"
                          % (len(error.items), answer.size_text(error.size)))
    assert (error.kind, error.namespace, error.count) == ("Pod", "kai-lab", 200)
    assert client_api.MAX_LIST_BYTES < error.size < client_api.MAX_LIST_BYTES + answer.MAX_BYTES
    # It stopped there: of 200 pods (40 MB), two pages of 31 (after 500 and 125 were more than one answer).
    assert limits(server) == [500, 125, 31, 31] and len(error.items) == 62
    assert peak < 4 * client_api.MAX_LIST_BYTES, "the bound, a few times over (peak %d bytes)" % peak


def test_a_lean_list_drops_only_what_no_check_reads(tmp_path, serve):
    texts = flood(2, 100)
    server = serve(texts=texts)
    cluster = connect(tmp_path, server, "light")
    full, lean = cluster.list("v1", "Pod", hand.NAMESPACE), cluster.list("v1", "Pod", hand.NAMESPACE, lean=True)
    assert all(p["metadata"]["managedFields"] for p in full)
    for whole, kept in zip(full, lean):
        assert "managedFields" not in kept["metadata"]
        del whole["metadata"]["managedFields"]
        assert kept == whole
    applied = next(p for p in hand.hand_state("report")["pods"] if p["metadata"]["name"] == "p1")
    assert client_api.LAST_APPLIED in applied["metadata"]["annotations"]
    kept = client_api.lean_object(copy.deepcopy(applied))
    assert client_api.LAST_APPLIED not in kept["metadata"]["annotations"]
    assert kept["metadata"]["annotations"] == dict((k, v) for k, v in applied["metadata"]["annotations"].items()
                                                   if k != client_api.LAST_APPLIED)
