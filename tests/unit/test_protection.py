# -*- coding: utf-8 -*-
"""Issues 33 and 40: the grade says what protects KAI's word (grading/protection.py, grading/admission.py,
client/access.py).

At each grade the grader asks the API server, one SubjectAccessReview per
write that could forge a kind of evidence or act as someone who can, whether
each identity the learner can use may make it (its own, and the lab
namespace's ServiceAccounts a pod of it may run under), and reads the
admission policies, compared with what provision applies, and the lab
namespace's Pod Security label. Served here by the local API server
(fake_api.py) whose authorizer is a table and whose policies are the ones
the role renders (test_learner_access.py); the real API server answers the
same questions in molecule/learner.
"""

from __future__ import annotations

import json
import pathlib
import time

import pytest

import fake_api
from ansible.template import trust_as_template
from conftest import FakeCluster
from ansible_collections.gsb.kai_lab.plugins.module_utils.client import access
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import Cluster
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import class_report, output, protection

from test_learner_access import by_kind, render, templar

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
IDENTITY = "system:serviceaccount:kai-lab-learner:learner"
DEFAULT_SA = "system:serviceaccount:kai-lab:default"
POLICIES = ["gsb-kai-lab-learner-queues", "gsb-kai-lab-learner-pods", "gsb-kai-lab-learner-jobs"]
# What provision applies, as the role gives it to the grade (kai-lab's settings, grade.yml).
POLICY_OBJECTS = templar(kai_lab_learner_user="learner").template(
    trust_as_template("{{ kai_lab_learner_policy_objects }}"))
SETTINGS = {"namespace": "kai-lab", "learner_identity": IDENTITY, "learner_policies": POLICIES,
            "learner_policy_objects": POLICY_OBJECTS, "kai_namespace": "kai-scheduler"}
# What the role lets the learner write that makes a pod of the lab namespace (its ClusterRole "-lab").
LEARNER_RIGHTS = {("create", "", "pods", "kai-lab"), ("create", "batch", "jobs", "kai-lab")}


def learner_objects():
    """What the role applies for a learner (the sim's KAI v0.12.0), by kind."""
    return by_kind(render(kai_lab_learner_user="learner"))


def holding(objects, extra=()):
    """A FakeCluster holding objects (by kind) and extra ones."""
    return FakeCluster(objects=[obj for kind in objects.values() for obj in kind] + list(extra))


@pytest.fixture
def api_server(serve):
    server = serve(holding(learner_objects()))
    server.allowed[IDENTITY] = set(LEARNER_RIGHTS)
    return server


@pytest.fixture
def cluster(tmp_path, api_server):
    return Cluster(fake_api.kubeconfig(tmp_path / "kubeconfig", api_server.url, {"token": "admin"}), request_timeout=3,
                   light=True)


def reviews(server, user=None):
    return [seen.body["spec"] for seen in server.seen if seen.method == "POST"
            and (user is None or seen.body["spec"].get("user") == user)]


def attributes(spec):
    attrs = spec["resourceAttributes"]
    return (attrs["verb"], attrs.get("group", ""), attrs["resource"], attrs.get("subresource", ""),
            attrs.get("namespace", ""))


# Every write asked of an identity on KAI v0.12.0 (no podgroups.create: the learner makes step 5's PodGroup), in order.
ASKED = [
    ("create", "", "events", "", "kai-lab"), ("patch", "", "events", "", "kai-lab"),
    ("update", "", "events", "", "kai-lab"),
    ("create", "events.k8s.io", "events", "", "kai-lab"), ("patch", "events.k8s.io", "events", "", "kai-lab"),
    ("update", "events.k8s.io", "events", "", "kai-lab"),
    ("patch", "", "pods", "status", "kai-lab"), ("update", "", "pods", "status", "kai-lab"),
    ("patch", "scheduling.run.ai", "podgroups", "status", "kai-lab"),
    ("update", "scheduling.run.ai", "podgroups", "status", "kai-lab"),
    ("create", "", "pods", "binding", "kai-lab"), ("create", "", "bindings", "", "kai-lab"),
    ("patch", "", "pods", "", "kai-lab"), ("update", "", "pods", "", "kai-lab"),
    ("impersonate", "", "users", "", ""), ("impersonate", "", "groups", "", ""),
    ("impersonate", "", "serviceaccounts", "", ""), ("impersonate", "", "serviceaccounts", "", "kai-scheduler"),
    ("create", "", "serviceaccounts", "token", "kai-lab"), ("create", "", "serviceaccounts", "token", "kai-lab-learner"),
    ("create", "", "serviceaccounts", "token", "kai-scheduler"),
    ("create", "scheduling.run.ai", "bindrequests", "", "kai-lab"),
    ("patch", "scheduling.run.ai", "bindrequests", "", "kai-lab"),
    ("update", "scheduling.run.ai", "bindrequests", "", "kai-lab"),
    ("create", "", "configmaps", "", "kai-lab"), ("patch", "", "configmaps", "", "kai-lab"),
    ("update", "", "configmaps", "", "kai-lab"),
    ("create", "", "pods", "", "kai-resource-reservation"), ("patch", "", "pods", "", "kai-resource-reservation"),
    ("update", "", "pods", "", "kai-resource-reservation"), ("delete", "", "pods", "", "kai-resource-reservation"),
]


# What may make a pod of the lab namespace (so run it under any of its ServiceAccounts), asked of the learner.
MAKERS = [("create", "", "pods", "", "kai-lab"), ("create", "batch", "jobs", "", "kai-lab"),
          ("create", "batch", "cronjobs", "", "kai-lab"), ("create", "apps", "deployments", "", "kai-lab"),
          ("create", "apps", "replicasets", "", "kai-lab"), ("create", "apps", "statefulsets", "", "kai-lab"),
          ("create", "apps", "daemonsets", "", "kai-lab"), ("create", "", "replicationcontrollers", "", "kai-lab")]


def test_a_learner_who_may_write_none_of_it_is_protected(api_server, cluster):
    result = protection.protection(cluster, SETTINGS, "v0.12.0", time.monotonic() + 30, "en")
    assert result["protected"] is True and result["holds"] == [] and "error" not in result
    assert result["line"].startswith(
        "KAI's word is protected: the learner (%s) and the ServiceAccounts its pods may run under (kai-lab/default) "
        "cannot create or change Events (KAI's reasons, steps 3, 5, 6), write pods/status, " % IDENTITY)
    assert "impersonate users, groups or ServiceAccounts (act as KAI or an admin), create ServiceAccount tokens " \
        "(serviceaccounts/token: act as another account, KAI's too), create or change BindRequests" in result["line"]
    assert result["line"].endswith("admission policies gsb-kai-lab-learner-queues, gsb-kai-lab-learner-pods, "
                                   "gsb-kai-lab-learner-jobs and Pod Security baseline on namespace kai-lab are in place")
    # The learner's own identity with the groups its token carries; then whether it may make a pod (it may: the
    # lab's steps), so the lab namespace's ServiceAccounts are listed and each asked the same, with its own groups.
    mine = reviews(api_server, IDENTITY)
    assert all(spec["groups"] == ["system:serviceaccounts", "system:serviceaccounts:kai-lab-learner",
                                  "system:authenticated"] for spec in mine)
    assert [attributes(spec) for spec in mine] == ASKED + MAKERS
    assert result["pod_route"] == "create pods -n kai-lab"
    assert [p["identity"] for p in result["pod_identities"]] == [DEFAULT_SA]
    theirs = reviews(api_server, DEFAULT_SA)
    assert all(spec["groups"] == ["system:serviceaccounts", "system:serviceaccounts:kai-lab",
                                  "system:authenticated"] for spec in theirs)
    assert [attributes(spec) for spec in theirs] == ASKED + [
        ("create", "", "pods", "", "kai-lab"), ("create", "batch", "jobs", "", "kai-lab")]
    # 31 + 8 reviews in one batch, the ServiceAccounts listed once, 33 reviews in one batch, two lists of policies,
    # the namespace: one connection.
    assert len(api_server.seen) == 76 and len(set(seen.port for seen in api_server.seen)) == 1
    assert [seen.path.split("?")[0] for seen in api_server.seen if seen.method == "GET"] == [
        "/api/v1/namespaces/kai-lab/serviceaccounts", access.POLICIES, access.BINDINGS, "/api/v1/namespaces/kai-lab"]


@pytest.mark.parametrize("write, hold", [
    (("update", "", "events"), "events.create"),
    (("update", "events.k8s.io", "events"), "events.create"),
    (("update", "", "pods/status"), "pods.status"),
    (("update", "scheduling.run.ai", "podgroups/status"), "podgroups.status"),
    (("patch", "", "pods", "kai-lab"), "pods.update"),
])
def test_either_verb_that_changes_kais_word_is_a_hole(api_server, cluster, write, hold):
    """RBAC grants patch and update apart, and either rewrites what KAI wrote (KAI's own scheduler patches
    a PodGroup's status and a pod's labels): a learner holding only the other verb is not protected."""
    api_server.allowed[IDENTITY] = {write}
    result = protection.protection(cluster, SETTINGS, "v0.12.0", None, "en")
    assert result["protected"] is False and [h["id"] for h in result["holds"]] == [hold]


@pytest.mark.parametrize("write, hold, words", [
    (("impersonate", "", "users", ""), "impersonate", "impersonate users, groups or ServiceAccounts"),
    (("impersonate", "", "serviceaccounts", "kai-scheduler"), "impersonate", "act as KAI or an admin"),
    (("create", "", "serviceaccounts/token", "kai-scheduler"), "serviceaccounts.token", "create ServiceAccount tokens"),
    (("create", "", "serviceaccounts/token", "kai-lab-learner"), "serviceaccounts.token", "serviceaccounts/token"),
    (("patch", "scheduling.run.ai", "bindrequests", "kai-lab"), "bindrequests.write",
     "create or change BindRequests (KAI's binder binds pods as they say)"),
    (("update", "", "configmaps", "kai-lab"), "configmaps.write", "create or change ConfigMaps in the lab namespace"),
    (("delete", "", "pods", "kai-resource-reservation"), "reservation.pods",
     "write pods in KAI's reservation namespace (step 7's reservation pods)"),
])
def test_a_write_that_acts_as_kai_or_rewrites_its_other_objects_is_a_hole(api_server, cluster, write, hold, words):
    """Issue 40: acting as another identity (impersonation, a ServiceAccount's token), KAI's bind requests, the
    binder's ConfigMaps and the reservation pods are KAI's word as much as its Events."""
    api_server.allowed[IDENTITY] |= {write}
    result = protection.protection(cluster, SETTINGS, "v0.12.0", None, "en")
    assert result["protected"] is False
    assert [(h["id"], h["holder"]) for h in result["holds"]] == [(hold, IDENTITY)]
    assert words in result["holds"][0]["en"] and words in result["line"]
    assert "(를)" not in result["holds"][0]["ko"] and result["holds"][0]["ko"] != result["holds"][0]["en"]


def test_creating_pods_in_the_lab_namespace_is_not_writing_kais_reservation_pods(api_server, cluster):
    """The learner may create pods in the lab namespace (its steps); the same write in KAI's reservation
    namespace is asked there, and it is refused."""
    result = protection.protection(cluster, SETTINGS, "v0.12.0", None, "en")
    assert result["protected"] is True
    [reservation] = [r for r in result["reviews"] if r["id"] == "reservation.pods"]
    assert reservation["allowed"] is False


def test_a_serviceaccount_a_pod_of_the_learner_may_run_under_is_asked_the_same(api_server, cluster):
    """A pod runs under any ServiceAccount of its namespace and holds its token: what the lab namespace's default
    ServiceAccount may write, the learner may, by creating a pod under it, and the grade names it."""
    api_server.allowed[DEFAULT_SA] = {("create", "", "events", "kai-lab")}
    result = protection.protection(cluster, SETTINGS, "v0.12.0", None, "en")
    assert result["protected"] is False
    [hold] = result["holds"]
    assert (hold["id"], hold["holder"], hold["writes"]) == ("pods.other_serviceaccount", DEFAULT_SA, ["events.create"])
    assert hold["en"] == ("run a pod under ServiceAccount default of namespace kai-lab, which may create or change "
                          "Events (KAI's reasons, steps 3, 5, 6)")
    assert hold["ko"] == ("네임스페이스 kai-lab 의 ServiceAccount default 권한으로 파드 실행 (그 계정이 할 수 있는 것: "
                          "이벤트 생성·변경 (KAI 의 이유, 3·5·6단계))")
    assert result["line"].startswith("KAI's word is NOT protected: the learner (%s) may run a pod under ServiceAccount "
                                     "default of namespace kai-lab, which may create or change Events" % IDENTITY)
    [default] = result["pod_identities"]
    assert default["identity"] == DEFAULT_SA and default["reviews"][0]["writes"] == ["create events -n kai-lab"]


def test_every_serviceaccount_of_the_lab_namespace_is_asked_and_none_of_another(serve, tmp_path):
    builder = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "builder", "namespace": "kai-lab"}}
    elsewhere = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "binder", "namespace": "kai-scheduler"}}
    server = serve(holding(learner_objects(), [builder, elsewhere]))
    server.allowed[IDENTITY] = set(LEARNER_RIGHTS)
    server.allowed["system:serviceaccount:kai-lab:builder"] = {("update", "", "pods/status", "kai-lab"),
                                                                ("patch", "", "configmaps", "kai-lab")}
    server.allowed["system:serviceaccount:kai-scheduler:binder"] = {("update", "", "pods/status", "kai-lab")}
    cluster = Cluster(fake_api.kubeconfig(tmp_path / "kubeconfig", server.url, {"token": "admin"}), light=True)
    result = protection.protection(cluster, SETTINGS, "v0.12.0", None, "en")
    assert [p["identity"] for p in result["pod_identities"]] == ["system:serviceaccount:kai-lab:builder", DEFAULT_SA]
    assert [(h["id"], h["holder"], h["writes"]) for h in result["holds"]] == [
        ("pods.other_serviceaccount", "system:serviceaccount:kai-lab:builder", ["pods.status", "configmaps.write"])]
    assert "run a pod under ServiceAccount builder of namespace kai-lab, which may write pods/status, create or " \
        "change ConfigMaps in the lab namespace" in result["line"]
    assert reviews(server, "system:serviceaccount:kai-scheduler:binder") == []


@pytest.mark.parametrize("write", [("create", "", "pods", "kai-lab"), ("create", "batch", "jobs", "kai-lab")])
def test_a_serviceaccount_that_may_create_pods_itself_passes_no_admission_policy(api_server, cluster, write):
    """The policies check the learner's user name: a pod or Job a ServiceAccount of the lab namespace creates (from a
    pod of the learner) may name its node, so that right makes it a hold too, naming the ServiceAccount."""
    api_server.allowed[DEFAULT_SA] = {write}
    result = protection.protection(cluster, SETTINGS, "v0.12.0", None, "en")
    assert result["protected"] is False
    assert [(h["id"], h["holder"], h["writes"]) for h in result["holds"]] == [
        ("pods.other_serviceaccount", DEFAULT_SA, ["pods.unchecked"])]
    assert result["holds"][0]["en"] == ("run a pod under ServiceAccount default of namespace kai-lab, which may create "
                                        "pods or Jobs that no admission policy checks (spec.nodeName: pods placed by "
                                        "hand)")


def test_a_learner_who_cannot_make_a_pod_takes_on_no_serviceaccount(api_server, cluster):
    api_server.allowed[IDENTITY] = set()
    api_server.allowed[DEFAULT_SA] = {("create", "", "events", "kai-lab")}
    result = protection.protection(cluster, SETTINGS, "v0.12.0", None, "en")
    assert result["protected"] is True and result["pod_route"] is None and result["pod_identities"] == []
    assert reviews(api_server, DEFAULT_SA) == []
    # Asked whether anything of the learner's makes a pod: pods, Jobs, CronJobs and the apps' controllers.
    assert [attributes(spec) for spec in reviews(api_server, IDENTITY)][len(ASKED):] == MAKERS


def test_a_learner_who_may_make_pods_through_a_controller_takes_on_the_serviceaccounts(api_server, cluster):
    api_server.allowed[IDENTITY] = {("create", "apps", "deployments", "kai-lab")}
    api_server.allowed[DEFAULT_SA] = {("create", "", "events", "kai-lab")}
    result = protection.protection(cluster, SETTINGS, "v0.12.0", None, "en")
    assert result["pod_route"] == "create apps/deployments -n kai-lab"
    assert [(h["id"], h["holder"]) for h in result["holds"]] == [("pods.other_serviceaccount", DEFAULT_SA)]


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
    assert events["allowed"] is True and events["writes"] == ["create events -n kai-lab"]
    assert "may create or change Events (KAI's reasons, steps 3, 5, 6), bind pods to a node" in result["line"]


def test_a_root_learner_with_the_labs_kubeconfig_is_asked_about_as_the_grader_and_not_protected(api_server, cluster):
    # The admin's own credentials (cluster-admin): every write.
    api_server.allowed[None] = set((verb, group, resource + ("/" + sub if sub else "")) for verb, group, resource, sub, _
                                   in ASKED)
    result = protection.protection(cluster, {"namespace": "kai-lab"}, "v0.12.0", None, "en")
    assert result["protected"] is False and result["identity"] is None
    assert [h["id"] for h in result["holds"]] == [
        "own_kubeconfig", "events.create", "pods.status", "podgroups.status", "pods.binding", "pods.update",
        "impersonate", "serviceaccounts.token", "bindrequests.write", "configmaps.write", "reservation.pods"]
    assert result["line"].startswith("KAI's word is NOT protected: the learner (the lab's own kubeconfig) may use "
                                     "the lab's own kubeconfig (no Kubernetes identity of its own: kai_lab_learner_user)")
    assert {seen.path for seen in api_server.seen} == {"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"}
    assert all("user" not in spec and "groups" not in spec for spec in reviews(api_server))
    # Every write but the learner's own namespace's token (it has none), and no pod route (it is the admin already).
    assert len(api_server.seen) == len(ASKED) - 1 and result["pod_identities"] == []
    [events] = [r for r in result["reviews"] if r["id"] == "events.create"]
    assert events["writes"] == ["create events -n kai-lab", "patch events -n kai-lab", "update events -n kai-lab",
                                "create events.k8s.io/events -n kai-lab", "patch events.k8s.io/events -n kai-lab",
                                "update events.k8s.io/events -n kai-lab"]


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


def _policy(objects, index):
    return objects["ValidatingAdmissionPolicy"][index]["spec"]


def _binding(objects, index):
    return objects["ValidatingAdmissionPolicyBinding"][index]["spec"]


def _rule(objects, index):
    return _policy(objects, index)["matchConstraints"]["resourceRules"][0]


JOBS_CREATE = {"apiGroups": ["batch"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["jobs"]}


# A cluster widened after provision: each policy or binding changed so that the learner now passes what
# provision's refuses (0 queues, 1 pods, 2 jobs), and the words the grade says it with.
@pytest.mark.parametrize("change, index, said", [
    (lambda o: _rule(o, 1).update(operations=["CREATE"]), 1, "its match rules leave out UPDATE pods"),
    (lambda o: _rule(o, 1).update(resourceNames=["fr-1"]), 1, "its match rules leave out CREATE pods, UPDATE pods"),
    (lambda o: _rule(o, 0).update(apiGroups=["other.example"]), 0,
     "its match rules leave out CREATE queues, DELETE queues, UPDATE queues"),
    (lambda o: _policy(o, 2)["matchConstraints"].update(excludeResourceRules=[JOBS_CREATE]), 2,
     "narrowed by excludeResourceRules (CREATE jobs)"),
    (lambda o: _policy(o, 1)["matchConstraints"].update(objectSelector={"matchLabels": {"checked": "yes"}}), 1,
     "narrowed by objectSelector"),
    (lambda o: _policy(o, 1)["matchConstraints"].update(namespaceSelector={"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kai-lab"]}]}), 1,
     "narrowed by namespaceSelector"),
    (lambda o: _policy(o, 0)["matchConstraints"].update(matchPolicy="Exact"), 0, "narrowed by matchPolicy Exact"),
    (lambda o: _policy(o, 1)["matchConditions"].append({"name": "not-fr", "expression": "object.metadata.name != 'fr-1'"}),
     1, "its matchConditions are not provision's (the-learner, not-fr)"),
    (lambda o: _policy(o, 1)["validations"][0].update(expression="true"), 1,
     "a check provision wrote is gone or changed: validations[0] (1 of 2)"),
    (lambda o: _policy(o, 1)["validations"].pop(1), 1,
     "a check provision wrote is gone or changed: validations[1] (1 of 2)"),
    (lambda o: _policy(o, 0).update(paramKind={"apiVersion": "v1", "kind": "ConfigMap"}), 0,
     "parameters it did not have (paramKind: a missing one may allow)"),
    (lambda o: _binding(o, 1).update(validationActions=["Warn", "Audit"]), 1,
     "its bindings only warn or audit (validationActions Audit, Warn, no Deny)"),
    (lambda o: _binding(o, 1).update(matchResources={"namespaceSelector": {"matchLabels": {"graded": "no"}}}), 1,
     "its binding leaves requests out: gsb-kai-lab-learner-pods: namespaceSelector"),
    (lambda o: _binding(o, 2).update(matchResources={"excludeResourceRules": [JOBS_CREATE]}), 2,
     "its binding leaves requests out: gsb-kai-lab-learner-jobs: excludeResourceRules (CREATE jobs)"),
    (lambda o: _binding(o, 2).update(matchResources={"resourceRules": [dict(JOBS_CREATE, operations=["UPDATE"])]}), 2,
     "its binding leaves requests out: gsb-kai-lab-learner-jobs: resourceRules (CREATE jobs)"),
    (lambda o: _binding(o, 0).update(paramRef={"name": "none", "parameterNotFoundAction": "Allow"}), 0,
     "its binding leaves requests out: gsb-kai-lab-learner-queues: paramRef"),
    (lambda o: o["ValidatingAdmissionPolicyBinding"].pop(2), 2, "no binding with validationActions Deny"),
])
def test_a_policy_or_binding_widened_after_provision_is_named_with_what_now_passes(api_server, cluster, change, index,
                                                                                  said):
    """Issue 40: found by name, a policy whose match rules, conditions or checks were changed, or whose binding
    only warns or narrows it, was still called in place. Compared with what provision applies, it is not."""
    objects = learner_objects()
    change(objects)
    api_server.cluster = holding(objects)
    result = protection.protection(cluster, SETTINGS, "v0.12.0", None, "en")
    name = POLICIES[index]
    assert result["protected"] is False
    assert [(h["id"], h["holder"]) for h in result["holds"]] == [("policy." + name, IDENTITY)]
    assert result["holds"][0]["en"] == "pass what admission policy %s refuses (%s)" % (name, said)
    assert result["holds"][0]["ko"].startswith("어드미션 정책 %s 가 막는 요청 (" % name)
    assert "(를)" not in result["holds"][0]["ko"].split(" (", 1)[1]


def test_the_policies_as_the_api_server_keeps_them_are_in_place(api_server, cluster):
    """The sim's API server's copy (fixtures/sim-learner/, its defaults filled in) is what provision applied."""
    recorded = json.loads((FIXTURES / "sim-learner" / "admission-policies.json").read_text())["items"]
    objects = learner_objects()
    for kind in ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"):
        objects[kind] = [item for item in recorded if item["kind"] == kind]
    assert len(objects["ValidatingAdmissionPolicy"]) == 3 and objects["ValidatingAdmissionPolicy"] != \
        learner_objects()["ValidatingAdmissionPolicy"]
    api_server.cluster = holding(objects)
    result = protection.protection(cluster, SETTINGS, "v0.12.0", None, "en")
    assert result["protected"] is True, result["holds"]
    assert [p["problems"] for p in result["policies"]] == [[], [], []]


@pytest.mark.parametrize("change", [
    lambda o: _rule(o, 1).update(operations=["*"]),
    lambda o: _rule(o, 2).update(resources=["jobs", "cronjobs"], apiVersions=["*"]),
    lambda o: _policy(o, 1)["validations"].append({"expression": "true", "message": "more"}),
    lambda o: o["ValidatingAdmissionPolicyBinding"].append({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "audit-too"}, "spec": {"policyName": POLICIES[1], "validationActions": ["Audit"],
                                                    "matchResources": {"objectSelector": {"matchLabels": {"a": "b"}}}}}),
    lambda o: _binding(o, 1).update(validationActions=["Deny", "Audit"]),
])
def test_a_policy_that_refuses_more_than_provisions_is_still_in_place(api_server, cluster, change):
    objects = learner_objects()
    change(objects)
    api_server.cluster = holding(objects)
    result = protection.protection(cluster, SETTINGS, "v0.12.0", None, "en")
    assert result["protected"] is True, result["holds"]


def test_an_api_server_that_refuses_the_question_leaves_the_grade_unprotected_saying_why(api_server, cluster):
    api_server.refuse[access.AUTHORIZATION + "subjectaccessreviews"] = (403, "subjectaccessreviews is forbidden")
    result = protection.protection(cluster, SETTINGS, "v0.12.0", None, "en")
    assert result["protected"] is False
    assert result["error"] == "cannot ask the API server (SubjectAccessReview): 403 subjectaccessreviews is forbidden"
    assert result["line"].startswith("KAI's word is NOT known to be protected: the API server could not be asked what "
                                     "the learner (%s) may write (cannot ask the API server" % IDENTITY)
    # The learner's writes go out in one batch; a refusal among them ends the asking: nothing is read after it.
    assert len(api_server.seen) == len(ASKED) + len(MAKERS)
    assert all(seen.path == access.AUTHORIZATION + "subjectaccessreviews" for seen in api_server.seen)


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
