# -*- coding: utf-8 -*-
"""Issue 33: the grade says what protects KAI's word (grading/protection.py, client/access.py).

At each grade the grader asks the API server, one SubjectAccessReview per
kind of evidence, whether the learner's identity may write it, and reads the
admission policies and the lab namespace's Pod Security label. Served here
by the local API server (fake_api.py) whose authorizer is a table and whose
policies are the ones the role renders (test_learner_access.py); the real
API server answers the same questions in molecule/learner.
"""

from __future__ import annotations

import time

import pytest

import fake_api
from conftest import FakeCluster
from ansible_collections.gsb.kai_lab.plugins.module_utils.client import access
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import Cluster
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import class_report, output, protection

from test_learner_access import by_kind, render

IDENTITY = "system:serviceaccount:kai-lab-learner:learner"
POLICIES = ["gsb-kai-lab-learner-queues", "gsb-kai-lab-learner-pods", "gsb-kai-lab-learner-jobs"]
SETTINGS = {"namespace": "kai-lab", "learner_identity": IDENTITY, "learner_policies": POLICIES}


def learner_objects():
    """What the role applies for a learner (the sim's KAI v0.12.0), by kind."""
    return by_kind(render(kai_lab_learner_user="learner"))


def holding(objects):
    """A FakeCluster holding objects (by kind)."""
    return FakeCluster(objects=[obj for kind in objects.values() for obj in kind])


@pytest.fixture
def api_server(serve):
    return serve(holding(learner_objects()))


@pytest.fixture
def cluster(tmp_path, api_server):
    return Cluster(fake_api.kubeconfig(tmp_path / "kubeconfig", api_server.url, {"token": "admin"}), request_timeout=3,
                   light=True)


def reviews(server):
    return [seen.body["spec"] for seen in server.seen if seen.method == "POST"]


def test_a_learner_who_may_write_none_of_it_is_protected(api_server, cluster):
    result = protection.protection(cluster, SETTINGS, "v0.12.0", time.monotonic() + 30, "en")
    assert result["protected"] is True and result["holds"] == [] and "error" not in result
    assert result["line"].startswith("KAI's word is protected: the learner (%s) cannot create or change Events "
                                     "(KAI's reasons, steps 3, 5, 6), write pods/status, " % IDENTITY)
    assert result["line"].endswith("admission policies gsb-kai-lab-learner-queues, gsb-kai-lab-learner-pods, "
                                   "gsb-kai-lab-learner-jobs and Pod Security baseline on namespace kai-lab are in place")
    asked = reviews(api_server)
    # Each review is for the learner's identity with the groups its token carries, in the lab namespace.
    assert all(spec["user"] == IDENTITY and spec["groups"] == [
        "system:serviceaccounts", "system:serviceaccounts:kai-lab-learner", "system:authenticated"] for spec in asked)
    assert all(spec["resourceAttributes"]["namespace"] == "kai-lab" for spec in asked)
    assert [(s["resourceAttributes"]["verb"], s["resourceAttributes"].get("group", ""), s["resourceAttributes"]["resource"],
             s["resourceAttributes"].get("subresource", "")) for s in asked] == [
        ("create", "", "events", ""), ("patch", "", "events", ""), ("update", "", "events", ""),
        ("create", "events.k8s.io", "events", ""), ("patch", "events.k8s.io", "events", ""),
        ("update", "events.k8s.io", "events", ""),
        ("patch", "", "pods", "status"), ("update", "", "pods", "status"),
        ("patch", "scheduling.run.ai", "podgroups", "status"), ("update", "scheduling.run.ai", "podgroups", "status"),
        ("create", "", "pods", "binding"), ("patch", "", "pods", ""), ("update", "", "pods", "")]
    # KAI v0.12.0 makes no gang of a Job: the learner's own PodGroup is step 5's form, not asked about.
    # Thirteen reviews and three reads, one kept-alive connection.
    assert len(api_server.seen) == 16 and len(set(seen.port for seen in api_server.seen)) == 1


@pytest.mark.parametrize("write, hold", [
    (("update", "", "events"), "events.create"),
    (("update", "events.k8s.io", "events"), "events.create"),
    (("update", "", "pods/status"), "pods.status"),
    (("update", "scheduling.run.ai", "podgroups/status"), "podgroups.status"),
    (("patch", "", "pods"), "pods.update"),
])
def test_either_verb_that_changes_kais_word_is_a_hole(api_server, cluster, write, hold):
    """RBAC grants patch and update apart, and either rewrites what KAI wrote (KAI's own scheduler patches
    a PodGroup's status and a pod's labels): a learner holding only the other verb is not protected."""
    api_server.allowed[IDENTITY] = {write}
    result = protection.protection(cluster, SETTINGS, "v0.12.0", None, "en")
    assert result["protected"] is False and [h["id"] for h in result["holds"]] == [hold]


def test_where_kai_makes_the_gang_a_learners_podgroup_create_is_a_hole(api_server, cluster):
    api_server.allowed[IDENTITY] = {("create", "scheduling.run.ai", "podgroups")}
    result = protection.protection(cluster, SETTINGS, "v0.18.6", None, "ko")
    assert result["protected"] is False
    assert [h["id"] for h in result["holds"]] == ["podgroups.create"]
    assert result["line"] == ("KAI 의 증거는 보호되지 않습니다. 학습자(%s)가 할 수 있는 것: PodGroup 생성 (이 버전에서는 "
                              "KAI 가 만듦). 채점은 하지만 이 객체들은 학습자가 직접 쓴 것일 수 있습니다" % IDENTITY)


def test_each_write_the_learner_holds_is_named(api_server, cluster):
    api_server.allowed[IDENTITY] = {("create", "", "events"), ("create", "", "pods/binding")}
    result = protection.protection(cluster, SETTINGS, "v0.12.0", None, "en")
    assert result["protected"] is False
    assert [h["id"] for h in result["holds"]] == ["events.create", "pods.binding"]
    events = result["reviews"][0]
    assert events["allowed"] is True and events["writes"] == ["create events"]
    assert "may create or change Events (KAI's reasons, steps 3, 5, 6), bind pods to a node" in result["line"]


def test_a_root_learner_with_the_labs_kubeconfig_is_asked_about_as_the_grader_and_not_protected(api_server, cluster):
    every = {("create", "", "events"), ("patch", "", "events"), ("create", "events.k8s.io", "events"),
             ("patch", "", "pods/status"), ("patch", "scheduling.run.ai", "podgroups/status"),
             ("create", "", "pods/binding"), ("update", "", "pods"), ("patch", "", "pods")}
    api_server.allowed[None] = every  # the admin's own credentials
    result = protection.protection(cluster, {"namespace": "kai-lab"}, "v0.12.0", None, "en")
    assert result["protected"] is False and result["identity"] is None
    assert [h["id"] for h in result["holds"]] == ["own_kubeconfig", "events.create", "pods.status",
                                                  "podgroups.status", "pods.binding", "pods.update"]
    assert result["line"].startswith("KAI's word is NOT protected: the learner (the lab's own kubeconfig) may use "
                                     "the lab's own kubeconfig (no Kubernetes identity of its own: kai_lab_learner_user)")
    assert {seen.path for seen in api_server.seen} == {"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"}
    assert all("user" not in spec and "groups" not in spec for spec in reviews(api_server))


@pytest.mark.parametrize("change, hold", [
    (lambda o: o["ValidatingAdmissionPolicy"].pop(1), "policy.gsb-kai-lab-learner-pods"),
    (lambda o: o["ValidatingAdmissionPolicyBinding"][0]["spec"].update(validationActions=["Warn"]),
     "policy.gsb-kai-lab-learner-queues"),
    (lambda o: o["ValidatingAdmissionPolicy"][1]["spec"].update(failurePolicy="Ignore"), "policy.gsb-kai-lab-learner-pods"),
    (lambda o: o["ValidatingAdmissionPolicy"][0]["spec"]["matchConditions"][0].update(
        expression="request.userInfo.username == 'someone-else'"), "policy.gsb-kai-lab-learner-queues"),
    (lambda o: o["Namespace"][0]["metadata"].pop("labels"), "pod_security"),
])
def test_a_policy_or_the_pod_security_label_not_in_place_is_named(api_server, cluster, change, hold):
    objects = learner_objects()
    change(objects)
    api_server.cluster = holding(objects)
    result = protection.protection(cluster, SETTINGS, "v0.12.0", None, "en")
    assert result["protected"] is False and [h["id"] for h in result["holds"]] == [hold]


def test_an_api_server_that_refuses_the_question_leaves_the_grade_unprotected_saying_why(api_server, cluster):
    api_server.refuse[access.AUTHORIZATION + "subjectaccessreviews"] = (403, "subjectaccessreviews is forbidden")
    result = protection.protection(cluster, SETTINGS, "v0.12.0", None, "en")
    assert result["protected"] is False
    assert result["error"] == "cannot ask the API server (SubjectAccessReview): 403 subjectaccessreviews is forbidden"
    assert result["line"].startswith("KAI's word is NOT known to be protected: the API server could not be asked what "
                                     "the learner (%s) may write (cannot ask the API server" % IDENTITY)
    assert len(api_server.seen) == 1, "stops at the first refusal"


def test_no_time_left_asks_nothing(api_server, cluster):
    result = protection.protection(cluster, SETTINGS, "v0.12.0", time.monotonic(), "en")
    assert result["protected"] is False and result["error"] == "no time was left in the grade to ask"
    assert api_server.seen == []


def test_a_cluster_the_grade_could_not_read_is_not_asked(api_server, cluster):
    result = protection.protection(cluster, SETTINGS, "v0.12.0", None, "en", error="cannot reach the API server")
    assert result["error"] == "cannot reach the API server" and api_server.seen == []


def test_table_junit_and_class_summary_say_it(api_server, cluster):
    api_server.allowed[IDENTITY] = {("create", "", "events")}
    unprotected = protection.protection(cluster, SETTINGS, "v0.12.0", None, "en")
    api_server.allowed[IDENTITY] = set()
    protected = protection.protection(cluster, SETTINGS, "v0.12.0", None, "en")
    grades = {}
    for name, block in (("learner1", protected), ("learner2", unprotected)):
        grades[name] = {"grade": {"steps": [], "environment": [], "counts": {"passed": 0, "failed": 0, "unverified": 0},
                                  "duration": 0.1, "score": 100.0, "points": 0, "max_points": 0, "passed": True,
                                  "protection": block}}
        grade = grades[name]["grade"]
        assert output.summary_table(grade)[0] == block["line"]
        junit = output.junit_xml(dict(grade, steps=[{"number": 1, "id": "queues", "checks": []}]))
        assert '<property name="kai_word_protected" value="%s"/>' % str(block["protected"]).lower() in junit
    summary = class_report.class_summary(grades, "t")
    lines = class_report.console_lines(summary)
    assert lines[0].endswith("[KAI's word is protected]")
    assert lines[1].endswith("[KAI's word is NOT protected: the learner may create or change Events (KAI's reasons, "
                             "steps 3, 5, 6)]")
    assert [row["protected"] for row in summary["learners"]] == [True, False]
