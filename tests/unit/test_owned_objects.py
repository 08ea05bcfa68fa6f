# -*- coding: utf-8 -*-
"""Provision puts back whatever it owns (issue 42): targets/owned/ and module kai_lab_owned_objects.

Every object here is one a real sim kept, and every answer one its API
server gave (fixtures/owned, tests/record_owned_fixtures.py): what provision
writes, what the server kept, the replace the module sends and the server's
dry-run answer to it, the server's refusals (the issue's replace without a
resourceVersion, an immutable field, a learner's admission policy). The
stand-in server below answers from those recordings and keeps what a real
replace would leave; each test changes a recorded object as root can (a
field added, removed, changed) and checks what the module finds, sends and
leaves, and that a second put-back finds nothing. molecule/default's
test_zyy_provision_repairs.py does the same on the real sim through provision.
"""

from __future__ import annotations

import copy
import json
import re

import pytest
from conftest import FIXTURES, load_json

from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import comparable
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import (
    AnswerTooDeep, ApiException, ClusterError)
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.owned import compare, owner, words
from ansible_collections.gsb.kai_lab.plugins.modules import kai_lab_owned_objects

RECORDED = FIXTURES / "owned"
CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/queues.scheduling.run.ai"
LAB_NS = "/api/v1/namespaces/kai-lab"
CONFIG = "/apis/kai.scheduler/v1/configs/kai-config"
RESERVATION_BINDING = ("/apis/rbac.authorization.k8s.io/v1/namespaces/kai-resource-reservation/rolebindings/"
                       "kai-resource-reservation")
PRIORITY = "/apis/scheduling.k8s.io/v1/priorityclasses/train"
TOKEN = "/api/v1/namespaces/kai-lab-learner/secrets/learner-token"
QUEUES_POLICY = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/gsb-kai-lab-learner-queues"
LEARNER_ROLE = "/apis/rbac.authorization.k8s.io/v1/clusterroles/gsb-kai-lab-learner-lab"
TOPOLOGY = "/api/v1/namespaces/gpu-operator/configmaps/topology"
# The issue's poisoned CRD: no Queue can be created.
ISSUE_RULE = [{"rule": "false"}]


class RecordedServer(object):
    """The recorded sim's API server, in process: answers the Cluster.request()s the module makes."""

    def __init__(self):
        self.items = dict((item["path"], item) for item in load_json(RECORDED / "objects.json"))
        self.live = dict((path, copy.deepcopy(item["live"])) for path, item in self.items.items())
        self.discovery = load_json(RECORDED / "discovery.json")
        self.refusals = load_json(RECORDED / "refusals.json")
        self.seen = []
        self.deny_crd_updates = False
        self.conflicts = 0
        self.vanish = set()
        self.deep = set()
        self.version = 10000

    def refuse(self, name):
        answer = self.refusals[name]
        return ApiException(answer["status"], "refused", json.dumps(answer["body"]))

    def request(self, method, path, query=None, body=None, content_type=None, what=None, kind=None, deadline=None,
                accept="application/json"):
        query = dict(query or {})
        self.seen.append((method, path, query, copy.deepcopy(body)))
        dry_run = query.get("dryRun") == "All"
        if method == "GET":
            return self.get(path, accept)
        if method == "PUT":
            return self.put(path, body, dry_run)
        if method == "POST":
            return self.post(path, body, dry_run)
        if method == "DELETE":
            if self.live.pop(path, None) is None:
                raise ApiException(404, "Not Found", json.dumps({"message": "not found"}))
            return {"kind": "Status", "status": "Success"}
        raise AssertionError(method)

    def get(self, path, accept):
        api = path[len("/apis/"):] if path.startswith("/apis/") else path[1:]
        if path == "/api/v1" or api in self.discovery:
            return copy.deepcopy(self.discovery["v1" if path == "/api/v1" else api])
        if path in self.live:
            if path in self.deep and owner.METADATA_ONLY != accept:
                raise AnswerTooDeep("cannot read %s: nested deeper than 100 levels" % path)
            return copy.deepcopy(self.live[path]) if owner.METADATA_ONLY != accept else {
                "metadata": copy.deepcopy(self.live[path]["metadata"])}
        listed = [obj for key, obj in self.live.items() if key.rsplit("/", 1)[0] == path]
        if listed:
            return {"items": copy.deepcopy(listed)}
        raise ApiException(404, "Not Found", json.dumps({"message": "not found"}))

    def put(self, path, body, dry_run):
        if path in self.vanish:  # deleted by someone between the read and the replace
            self.vanish.discard(path)
            del self.live[path]
        live = self.live.get(path)
        if live is None:
            raise ApiException(404, "Not Found", json.dumps({"message": "not found"}))
        version = body["metadata"].get("resourceVersion")
        if not version and body["kind"] == "CustomResourceDefinition":
            raise self.refuse("crd_without_resource_version")
        if self.conflicts or (version and version != live["metadata"]["resourceVersion"]):
            self.conflicts = max(0, self.conflicts - 1)
            raise self.refuse("crd_old_resource_version")
        if self.deny_crd_updates and body["kind"] == "CustomResourceDefinition":
            raise self.refuse("crd_denied_by_policy")
        if body["kind"] == "RoleBinding" and body["roleRef"] != live["roleRef"]:
            raise self.refuse("rolebinding_other_role")
        if body["kind"] == "PriorityClass" and body["value"] != live["value"]:
            raise self.refuse("priorityclass_other_value")
        if body["kind"] == "CustomResourceDefinition" and body["spec"]["scope"] != live["spec"]["scope"]:
            raise self.refuse("crd_other_scope")
        recorded = self.items[path]
        if comparable(body) == comparable(recorded["sent"]):
            answer = copy.deepcopy(recorded["dry_run"])  # what the server made of this replace, its defaults in
        else:
            answer = copy.deepcopy(body)  # a replace the recording did not send: kept as sent
        for key in ("uid", "creationTimestamp", "resourceVersion"):
            answer["metadata"][key] = live["metadata"].get(key)
        answer.pop("status", None)
        if "status" in live:
            answer["status"] = copy.deepcopy(live["status"])
        if not dry_run and comparable(answer) != comparable(live):
            self.version += 1
            answer["metadata"]["resourceVersion"] = str(self.version)
            self.live[path] = answer
        return copy.deepcopy(answer)

    def post(self, collection, body, dry_run):
        meta = body["metadata"]
        if "generateName" in meta:
            item = next(i for p, i in self.items.items() if p.rsplit("/", 1)[0] == collection and "dry_run_create" in i
                        and i["wanted"]["metadata"]["name"] + "-" == meta["generateName"])
            assert dry_run
            return copy.deepcopy(item["dry_run_create"])
        path = "%s/%s" % (collection, meta["name"])
        if path in self.live:
            raise ApiException(409, "Conflict", json.dumps({"message": "already exists"}))
        created = copy.deepcopy(self.items[path]["dry_run"]) if path in self.items else copy.deepcopy(body)
        self.version += 1
        created["metadata"].update(resourceVersion=str(self.version), uid="uid-%d" % self.version)
        if not dry_run:
            self.live[path] = created
        return copy.deepcopy(created)

    def sent(self, method, dry_run=False):
        return [(m, p) for m, p, q, _ in self.seen if m == method and (q.get("dryRun") == "All") == dry_run]


def wanted(server, *paths):
    return [copy.deepcopy(server.items[path]["wanted"]) for path in paths]


def put_back(server, *paths, check_mode=False, create_only=()):
    return owner.Owner(server, check_mode=check_mode, kubectl="kubectl").put_back(wanted(server, *paths), create_only)


def as_provision_left(server, path):
    """The live object equals the API server's answer to the replace provision sends (its recorded dry run)."""
    return comparable(server.live[path]) == comparable(server.items[path]["dry_run"])


@pytest.fixture
def server():
    return RecordedServer()


# ---------------------------------------------------------------- nothing changed

def test_every_recorded_object_as_provision_left_it_is_unchanged_and_nothing_is_written(server):
    outcome = put_back(server, *server.items)
    assert outcome["unchanged"] == [words.display_name(server.items[p]["dry_run"]) for p in server.items]
    assert outcome["repaired"] == outcome["created"] == outcome["refused"] == []
    # Only reads and dry runs: an unchanged lab is not written.
    assert server.sent("PUT") == [] and server.sent("POST") == [] and server.sent("DELETE") == []


def test_the_servers_defaults_are_no_difference(server):
    # What provision writes lacks what the API server adds (a policy's matchPolicy and selectors, a namespace's
    # finalizers and name label): compared locally they would all be "added"; the dry run has them too.
    policy = server.items[QUEUES_POLICY]
    assert compare.differences(policy["live"], policy["wanted"]) != []
    assert compare.differences(policy["live"], policy["dry_run"]) == []
    assert put_back(server, QUEUES_POLICY, LAB_NS)["unchanged"] == [
        "ValidatingAdmissionPolicy gsb-kai-lab-learner-queues", "Namespace kai-lab"]


# ---------------------------------------------------------------- the issue's case

def test_the_issues_poisoned_crd_is_put_back_by_a_replace_with_the_live_resource_version(server):
    live = server.live[CRD]
    live["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-validations"] = ISSUE_RULE
    outcome = put_back(server, CRD)
    assert outcome["repaired"] == [{
        "object": "CustomResourceDefinition queues.scheduling.run.ai", "action": "replaced",
        "differences": ['spec.versions[name=v2].schema.openAPIV3Schema.x-kubernetes-validations: added '
                        '([{"rule":"false"}])']}]
    (method, path, query, body), = [s for s in server.seen if s[0] == "PUT" and not s[2].get("dryRun")]
    # kubernetes.core's force sent no resourceVersion, which the API server refuses for a CRD (the issue's error).
    assert body["metadata"]["resourceVersion"] == live["metadata"]["resourceVersion"]
    assert as_provision_left(server, CRD)
    assert "x-kubernetes-validations" not in json.dumps(server.live[CRD])
    assert put_back(server, CRD)["unchanged"] == ["CustomResourceDefinition queues.scheduling.run.ai"]


# ---------------------------------------------------------------- a field added, removed, changed, per kind

def _labels(obj):
    return obj["metadata"].setdefault("labels", {})


CHANGES = {
    # The learner's lab namespace: its Pod Security label.
    (LAB_NS, "add"): (lambda o: _labels(o).update({"learner": "was-here"}),
                      'metadata.labels.learner: added ("was-here")'),
    (LAB_NS, "remove"): (lambda o: _labels(o).pop("pod-security.kubernetes.io/enforce"),
                         'metadata.labels["pod-security.kubernetes.io/enforce"]: removed (provision writes "baseline")'),
    (LAB_NS, "change"): (lambda o: _labels(o).update({"pod-security.kubernetes.io/enforce": "privileged"}),
                         'metadata.labels["pod-security.kubernetes.io/enforce"]: "privileged", provision writes '
                         '"baseline"'),
    # KAI's Config.
    (CONFIG, "add"): (lambda o: o["spec"]["global"].update({"requireDefaultPodAntiAffinityTerm": True}),
                      "spec.global.requireDefaultPodAntiAffinityTerm: added (true)"),
    (CONFIG, "remove"): (lambda o: o["spec"]["admission"].pop("gpuSharing"),
                         "spec.admission.gpuSharing: removed (provision writes true)"),
    (CONFIG, "change"): (lambda o: o["spec"]["global"].update({"replicaCount": 7}),
                         "spec.global.replicaCount: 7, provision writes 1"),
    # The learner's role in the lab namespace.
    (LEARNER_ROLE, "add"): (lambda o: o["rules"].append({"apiGroups": [""], "resources": ["secrets"],
                                                         "verbs": ["get"]}),
                            'rules[6]: added ({"apiGroups":[""],"resources":["secrets"],"verbs":["get"]})'),
    (LEARNER_ROLE, "remove"): (lambda o: o["rules"][0]["verbs"].remove("delete"),
                               'rules[0].verbs[1]: removed (provision writes "delete")'),
    (LEARNER_ROLE, "change"): (lambda o: o["rules"][1].update({"resources": ["pods"]}),
                               'rules[1].resources[0]: "pods", provision writes "jobs"'),
    # The queues' admission policy.
    (QUEUES_POLICY, "add"): (lambda o: o["spec"]["matchConditions"].append({"name": "never", "expression": "false"}),
                             'spec.matchConditions[name=never]: added ({"expression":"false","name":"never"})'),
    (QUEUES_POLICY, "remove"): (lambda o: o["spec"].pop("validations"),
                                "spec.validations: removed (provision writes [{\"expression\":\"(request.operation == "
                                "'DELETE' ? oldObjec...)"),
    (QUEUES_POLICY, "change"): (lambda o: o["spec"].update({"failurePolicy": "Ignore"}),
                                'spec.failurePolicy: "Ignore", provision writes "Fail"'),
    # fake-gpu-operator's topology.
    (TOPOLOGY, "add"): (lambda o: o["data"].update({"learner": "was-here"}), 'data.learner: added ("was-here")'),
    (TOPOLOGY, "remove"): (lambda o: o.pop("data"), 'data: removed (provision writes {"topology.yml":"nodePools:\\n  '
                                                   'default:\\n    gpuProduct: ...)'),
    (TOPOLOGY, "change"): (lambda o: o["data"].update({"topology.yml": "nodePools: {}\n"}),
                           'data["topology.yml"]: "nodePools: {}\\n", provision writes "nodePools:\\n  default:\\n'
                           '    gpuProduct: Tesla-K80\\n    g...'),
}


@pytest.mark.parametrize("path, way", sorted(CHANGES), ids=["%s-%s" % (p.rsplit("/", 2)[-2], w) for p, w in sorted(CHANGES)])
def test_a_field_added_removed_or_changed_is_named_and_put_back(server, path, way):
    change, named = CHANGES[(path, way)]
    change(server.live[path])
    outcome = put_back(server, path)
    assert [(r["action"], r["differences"]) for r in outcome["repaired"]] == [("replaced", [named])]
    assert as_provision_left(server, path)
    assert put_back(server, path)["repaired"] == []


# ---------------------------------------------------------------- what the cluster writes itself stays

def test_the_token_controllers_data_stays_and_a_label_added_goes(server):
    token = server.live[TOKEN]
    data = copy.deepcopy(token["data"])
    assert "data" not in server.items[TOKEN]["wanted"] and set(data) == {"ca.crt", "namespace", "token"}
    assert put_back(server, TOKEN)["unchanged"] == ["Secret kai-lab-learner/learner-token"]
    _labels(token)["learner"] = "was-here"
    outcome = put_back(server, TOKEN)
    assert outcome["repaired"][0]["differences"] == ['metadata.labels.learner: added ("was-here")']
    assert server.live[TOKEN]["data"] == data
    assert server.live[TOKEN]["metadata"]["annotations"]["kubernetes.io/service-account.uid"] == \
        token["metadata"]["annotations"]["kubernetes.io/service-account.uid"]


def test_the_api_servers_record_of_the_tokens_last_use_stays(server):
    # molecule/learner: the learner's kubectl used the token, the API server marked the Secret; a put-back that
    # dropped the mark changed the Secret each provision.
    _labels(server.live[TOKEN])["kubernetes.io/legacy-token-last-used"] = "2026-12-06"
    assert put_back(server, TOKEN)["unchanged"] == ["Secret kai-lab-learner/learner-token"]
    _labels(server.live[TOKEN])["learner"] = "was-here"
    assert put_back(server, TOKEN)["repaired"][0]["differences"] == ['metadata.labels.learner: added ("was-here")']
    assert _labels(server.live[TOKEN]).get("kubernetes.io/legacy-token-last-used") == "2026-12-06"
    assert "learner" not in _labels(server.live[TOKEN])


def test_helms_ownership_on_a_vm_stays(server):
    meta = server.live[LEARNER_ROLE]["metadata"]
    _labels(server.live[LEARNER_ROLE])["app.kubernetes.io/managed-by"] = "Helm"
    meta["annotations"] = {"meta.helm.sh/release-name": "kai-scheduler", "meta.helm.sh/release-namespace": "kai"}
    assert put_back(server, LEARNER_ROLE)["unchanged"] == ["ClusterRole gsb-kai-lab-learner-lab"]
    meta["annotations"]["learner"] = "was-here"
    assert put_back(server, LEARNER_ROLE)["repaired"][0]["differences"] == ['metadata.annotations.learner: added '
                                                                            '("was-here")']
    assert server.live[LEARNER_ROLE]["metadata"]["annotations"] == {
        "meta.helm.sh/release-name": "kai-scheduler", "meta.helm.sh/release-namespace": "kai"}


# ---------------------------------------------------------------- missing, immutable, refused

def test_a_deleted_object_is_created_and_create_only_leaves_an_existing_one_as_it_is(server):
    del server.live[PRIORITY]
    server.live[LAB_NS]["metadata"]["labels"]["learner"] = "was-here"
    outcome = put_back(server, PRIORITY, create_only=wanted(server, LAB_NS))
    assert outcome["created"] == ["PriorityClass train"] and outcome["unchanged"] == ["Namespace kai-lab"]
    assert server.live[PRIORITY]["value"] == 50
    assert server.live[LAB_NS]["metadata"]["labels"]["learner"] == "was-here"


@pytest.mark.parametrize("path, change, named", [
    (RESERVATION_BINDING, lambda o: o["roleRef"].update({"name": "view"}),
     'roleRef.name: "view", provision writes "kai-resource-reservation"'),
    (PRIORITY, lambda o: o.update({"value": 5}), "value: 5, provision writes 50"),
])
def test_an_immutable_field_is_put_back_by_deleting_and_creating_the_object(server, path, change, named):
    change(server.live[path])
    outcome = put_back(server, path)
    assert [(r["action"], r["differences"]) for r in outcome["repaired"]] == [("recreated", [named])]
    # A dry-run create first (it would be taken), then the delete and the create.
    assert [m for m, p in server.sent("POST", dry_run=True)] == ["POST"]
    assert server.sent("DELETE") == [("DELETE", path)] and server.sent("POST") == [("POST", path.rsplit("/", 1)[0])]
    assert comparable(server.live[path])["metadata"]["name"] == path.rsplit("/", 1)[1]
    assert put_back(server, path)["repaired"] == []


def test_a_crd_is_never_deleted_the_refusal_says_what_differs_and_the_command_in_both_languages(server):
    server.live[CRD]["spec"]["scope"] = "Namespaced"
    outcome = put_back(server, CRD)
    assert server.sent("DELETE") == [] and server.sent("PUT") == []
    (refusal,) = outcome["refused"]
    assert refusal["object"] == "CustomResourceDefinition queues.scheduling.run.ai"
    assert refusal["differences"] == ['spec.scope: "Namespaced", provision writes "Cluster"']
    assert refusal["command"] == ("kubectl delete customresourcedefinitions.apiextensions.k8s.io "
                                  "queues.scheduling.run.ai (this deletes every Queue in the cluster)")
    assert refusal["msg"] == (
        'Provision cannot put back CustomResourceDefinition queues.scheduling.run.ai as it writes it: the API server '
        'refused it as invalid (CustomResourceDefinition.apiextensions.k8s.io "queues.scheduling.run.ai" is invalid: '
        'spec.scope: Invalid value: "Namespaced": field is immutable). What differs from what provision writes: '
        'spec.scope: "Namespaced", provision writes "Cluster". To fix it by hand: kubectl delete '
        'customresourcedefinitions.apiextensions.k8s.io queues.scheduling.run.ai (this deletes every Queue in the '
        'cluster), then run provision again. / 프로비전이 CustomResourceDefinition queues.scheduling.run.ai 를 '
        '되돌리지 못했습니다: API 서버가 유효하지 않다며 거부했습니다 (CustomResourceDefinition.apiextensions.k8s.io '
        '"queues.scheduling.run.ai" is invalid: spec.scope: Invalid value: "Namespaced": field is immutable). '
        '프로비전이 쓰는 것과 다른 점: spec.scope: "Namespaced", provision writes "Cluster". 직접 고치려면 다음을 '
        '실행한 뒤 프로비전을 다시 실행하세요: kubectl delete customresourcedefinitions.apiextensions.k8s.io '
        'queues.scheduling.run.ai (this deletes every Queue in the cluster)')


def test_a_learners_policy_that_denies_the_put_back_is_named_with_the_binding_to_delete(server):
    server.live[CRD]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-validations"] = ISSUE_RULE
    server.live[CONFIG]["spec"]["global"]["replicaCount"] = 7
    server.deny_crd_updates = True
    outcome = put_back(server, CRD, CONFIG)
    (refusal,) = outcome["refused"]
    assert refusal["command"] == "kubectl delete validatingadmissionpolicybinding learner-keeps-crds-binding"
    assert refusal["why"] == (
        "an admission policy or webhook refused it (customresourcedefinitions.apiextensions.k8s.io "
        "\"queues.scheduling.run.ai\" is forbidden: ValidatingAdmissionPolicy 'learner-keeps-crds' with binding "
        "'learner-keeps-crds-binding' denied request: CRDs stay as the learner left them)")
    assert refusal["differences"] == ['spec.versions[name=v2].schema.openAPIV3Schema.x-kubernetes-validations: added '
                                      '([{"rule":"false"}])']
    assert "어드미션 정책이나 웹훅이 거부했습니다" in refusal["msg"]
    # Never a raw API error; and never taken for an immutable field (nothing deleted). The rest is put back.
    assert '{"kind"' not in refusal["msg"] and "b'" not in refusal["msg"] and server.sent("DELETE") == []
    assert [r["object"] for r in outcome["repaired"]] == ["Config kai-config"]


def test_a_replace_that_meets_a_newer_version_reads_the_object_again(server):
    server.live[CONFIG]["spec"]["global"]["replicaCount"] = 7
    server.conflicts = 1
    assert [r["object"] for r in put_back(server, CONFIG)["repaired"]] == ["Config kai-config"]
    assert as_provision_left(server, CONFIG)
    assert [m for m, p, q, b in server.seen if m == "GET" and p == CONFIG] == ["GET", "GET"]


def test_an_object_deleted_between_the_read_and_the_replace_is_created(server):
    server.vanish.add(PRIORITY)
    assert put_back(server, PRIORITY)["created"] == ["PriorityClass train"]
    assert server.live[PRIORITY]["value"] == 50


def test_check_mode_reports_and_writes_nothing(server):
    server.live[CONFIG]["spec"]["global"]["replicaCount"] = 7
    server.live[RESERVATION_BINDING]["roleRef"]["name"] = "view"
    del server.live[PRIORITY]
    outcome = put_back(server, CONFIG, RESERVATION_BINDING, PRIORITY, check_mode=True)
    assert [(r["object"], r["action"]) for r in outcome["repaired"]] == [
        ("Config kai-config", "replaced"),
        ("RoleBinding kai-resource-reservation/kai-resource-reservation", "recreated")]
    assert outcome["created"] == ["PriorityClass train"]
    assert server.sent("PUT") == [] and server.sent("POST") == [] and server.sent("DELETE") == []
    assert server.live[CONFIG]["spec"]["global"]["replicaCount"] == 7 and PRIORITY not in server.live


def test_an_object_too_deep_to_read_is_replaced_by_its_resource_version(server):
    server.deep.add(TOPOLOGY)
    outcome = put_back(server, TOPOLOGY)
    assert outcome["repaired"] == [{"object": "ConfigMap gpu-operator/topology", "action": "replaced", "differences": [
        "the object in the cluster cannot be read whole (nested too deep or too large)"]}]
    (body,) = [b for m, p, q, b in server.seen if m == "PUT" and not q.get("dryRun")]
    assert body["metadata"]["resourceVersion"] == server.items[TOPOLOGY]["live"]["metadata"]["resourceVersion"]


class Down(object):
    def request(self, *args, **kwargs):
        raise ClusterError("cannot reach the Kubernetes API server at https://127.0.0.1:16443 (connection refused)")


def test_an_api_server_that_does_not_answer_is_said_with_what_to_run(server):
    outcome = owner.Owner(Down(), kubectl="kubectl").put_back(wanted(server, CONFIG))
    (refusal,) = outcome["refused"]
    assert refusal["why"] == "cannot reach the Kubernetes API server at https://127.0.0.1:16443 (connection refused)"
    assert refusal["command"].startswith("kubectl get --raw /readyz")


def test_a_kind_the_server_does_not_serve_is_named(server):
    obj = {"apiVersion": "example.org/v1", "kind": "Widget", "metadata": {"name": "w"}}
    (refusal,) = owner.Owner(server).put_back([obj])["refused"]
    assert refusal["object"] == "Widget w"
    assert "does not serve example.org/v1 Widget" in refusal["why"]


# ---------------------------------------------------------------- the module's own parts

def test_the_modules_lines_and_kubectl_command():
    outcome = {"created": ["PriorityClass train"], "repaired": [
        {"object": "Namespace kai-lab", "action": "replaced", "differences": ["a: added (1)", "b: removed (2)"]}],
        "unchanged": [], "refused": []}
    assert words.outcome_lines(outcome) == ["PriorityClass train: created",
                                            "Namespace kai-lab: replaced (a: added (1); b: removed (2))"]
    assert kai_lab_owned_objects.kubectl_command({"kubectl": "/s/kubectl", "kubeconfig": "/s/k.yaml"}) == \
        "/s/kubectl --kubeconfig=/s/k.yaml"
    assert kai_lab_owned_objects.kubectl_command({"kubectl": "kubectl", "kubeconfig": None}) == "kubectl"


def test_many_differences_are_cut_with_how_many_more():
    was = {"data": dict(("k%d" % i, "x") for i in range(9))}
    found = compare.differences(was, {"data": {}})
    assert len(found) == 9 and compare.limited(found)[-1] == "and 3 more"
    assert re.match(r'^data\.k0: added \("x"\)$', found[0])


# ---------------------------------------------------------------- what the k3s record finds them by

def test_each_object_put_back_is_referenced_as_the_k3s_record_lists_it(server):
    """The k3s target records a hash of each object provision owns (targets/k3s/state.py): the module names
    every object it compared (not one it only creates when missing), by the resource kubectl lists and the key
    the listed object is found again by."""
    from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s import state as k3s_state
    paths = [p for p in server.items if p != LAB_NS]
    outcome = put_back(server, *paths, create_only=wanted(server, LAB_NS))
    references = outcome["references"]
    assert len(references) == len(paths)
    assert [k3s_state.owned_key(ref) for ref in references] == [k3s_state.owned_key(server.live[p]) for p in paths]
    by_name = dict((ref["name"], ref) for ref in references)
    assert by_name["queues.scheduling.run.ai"] == {
        "resource": "customresourcedefinitions.apiextensions.k8s.io", "group": "apiextensions.k8s.io",
        "kind": "CustomResourceDefinition", "namespace": "", "name": "queues.scheduling.run.ai"}
    assert by_name["learner-token"]["resource"] == "secrets" and by_name["learner-token"]["namespace"] == "kai-lab-learner"
    assert "kai-lab" not in by_name
