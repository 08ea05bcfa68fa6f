"""Provision's record and state check beside objects the lab does not own (issue 34, row 1).

A ConfigMap nested 1,500 levels deep, or lists of them larger than the
client reads in one answer, in a namespace the lab does not use, made the
sim's record (module kai_lab_sim_state, mode record, at the end of every
full provision) fail, and the fast path never came back: the state code
listed every kind it names across every namespace. Now it lists the
namespaced kinds in the lab's namespaces only, and a list of a
cluster-wide kind that cannot be read is read again name by name
(a Table of names, then each object), so only the objects the lab names
(or the kinds it watches whole) are read, and one that cannot be read is
named.

The record and the lists are those of tests/unit/test_sim_state.py
(fixtures/sim-provision, a full provision of the sim with KAI v0.12.0),
served over HTTP as the API server serves them (tests/unit/fake_api.py,
start_recorded) and read with the lab's own client.
"""

from __future__ import annotations

import copy
import datetime
import json
import os
import subprocess
import sys

import pytest
from conftest import COLLECTION_PATH, FIXTURES, load_json

import fake_api
from test_sim_state_drift import watched_kinds
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import Cluster
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim import differences as sim_differences
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim import state as sim_state

RECORDED = FIXTURES / "sim-provision"
TODAY = datetime.datetime(2026, 12, 1, 21, 0, tzinfo=datetime.timezone.utc)
CONFIGMAPS = "/api/v1/configmaps"
CLUSTERROLES = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
POLICIES = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
# The namespaced kinds the record names (the topology ConfigMap, KAI's ServiceAccounts and RoleBinding)
# or watches (quotas and limit ranges).
NAMESPACED = ("configmaps", "serviceaccounts", "rolebindings", "resourcequotas", "limitranges")


@pytest.fixture
def recorded():
    record = load_json(RECORDED / "provisioned.json")
    kinds = watched_kinds()
    record["spec"]["kinds"] = record["spec"]["kinds"] + kinds
    for ref in kinds:
        record["kinds"][ref["kind"]] = {}
    return record


@pytest.fixture
def serve(tmp_path):
    servers = []

    def start(texts=(), lists=None):
        server = fake_api.start_recorded(lists or load_json(RECORDED / "provisioned-objects.json"), texts)
        servers.append(server)
        config = fake_api.kubeconfig(tmp_path / ("kubeconfig-%d" % len(servers)), server.url)
        return server, Cluster(config, light=True), config

    yield start
    for server in servers:
        fake_api.stop(server)


def state_of(recorded, cluster):
    return sim_state.cluster_state(dict(recorded["spec"], fingerprint=None), cluster, None)


def check(recorded, cluster):
    now = copy.deepcopy(recorded)
    for key in ("version", "spec"):
        now.pop(key)
    now.update(state_of(recorded, cluster))
    return sim_differences.differences(recorded, now, 30, TODAY)


def deep_configmap(namespace, name="deep"):
    return (CONFIGMAPS, namespace, name, fake_api.deep_object("ConfigMap", name, namespace))


def cluster_wide_lists_of_namespaced_kinds(server):
    return [p for p in server.seen if p.split("?")[0].rsplit("/", 1)[1] in NAMESPACED and "/namespaces/" not in p]


def test_the_recorded_lab_served_over_http_is_unchanged(recorded, serve):
    _, cluster, _ = serve()
    assert check(recorded, cluster) == []


@pytest.mark.parametrize("namespace", ["default", "gpu-operator"])
def test_a_deep_configmap_outside_the_lab_neither_fails_the_record_nor_is_a_difference(recorded, serve, namespace):
    """In default, or beside the lab's own topology ConfigMap in gpu-operator (not an object of the lab)."""
    _, cluster, _ = serve(texts=[deep_configmap(namespace)])
    assert check(recorded, cluster) == []


def test_configmaps_elsewhere_larger_than_one_answer_are_not_read(recorded, serve):
    # Ten of 1 MB each (the API server keeps objects up to 1.5 MB): more than the 8 MiB of one answer.
    big = [(CONFIGMAPS, "elsewhere", "big-%d" % i, json.dumps({
        "metadata": {"name": "big-%d" % i, "namespace": "elsewhere"}, "data": {"blob": "x" * (1 << 20)}}))
        for i in range(10)]
    server, cluster, _ = serve(texts=big)
    assert check(recorded, cluster) == []
    assert not any(p.startswith("/api/v1/namespaces/elsewhere/") for p in server.seen)


def test_no_namespaced_kind_is_listed_across_every_namespace(recorded, serve):
    server, cluster, _ = serve()
    state_of(recorded, cluster)
    assert cluster_wide_lists_of_namespaced_kinds(server) == []
    # One list per kind and namespace, as before one per kind.
    assert len(server.pages) == len(set(server.pages))


def test_a_quota_in_a_namespace_the_lab_does_not_use_is_no_difference(recorded, serve):
    lists = load_json(RECORDED / "provisioned-objects.json")
    lists["/api/v1/resourcequotas"] = [{"metadata": {"name": "team", "namespace": "elsewhere"},
                                        "spec": {"hard": {"pods": "10"}}}]
    _, cluster, _ = serve(lists=lists)
    assert check(recorded, cluster) == []


def test_a_deep_object_of_a_cluster_wide_kind_the_lab_names_is_read_past(recorded, serve):
    """A learner's ClusterRole nested too deep: the lab's own ClusterRoles are read one by one, unchanged."""
    deep = (CLUSTERROLES, None, "learner-deep", fake_api.deep_object("ClusterRole", "learner-deep", None))
    server, cluster, _ = serve(texts=[deep])
    assert check(recorded, cluster) == []
    own = [o["name"] for o in recorded["spec"]["objects"] if o["kind"] == "ClusterRole"]
    assert all(any(p == "%s/%s" % (CLUSTERROLES, name) for p in server.seen) for name in own)
    assert not any(p.endswith("/learner-deep") for p in server.seen)


def test_a_deep_admission_policy_is_named_and_takes_the_full_path(recorded, serve):
    """A kind the record watches whole: the policy that cannot be read is a difference naming it, every time."""
    deep = (POLICIES, None, "deny-all", fake_api.deep_object("ValidatingAdmissionPolicy", "deny-all", None))
    readable = {"metadata": {"name": "deny-queues"}, "spec": {"validations": [{"expression": "false"}]}}
    lists = load_json(RECORDED / "provisioned-objects.json")
    lists[POLICIES] = [readable]
    _, cluster, _ = serve(texts=[deep], lists=lists)
    state = state_of(recorded, cluster)
    assert state["kinds"]["ValidatingAdmissionPolicy"]["deny-queues"] == sim_state.object_hash(readable)
    recorded["kinds"] = state["kinds"]  # recorded so by the last full provision
    found = check(recorded, cluster)
    assert len(found) == 1, found
    assert found[0].startswith("ValidatingAdmissionPolicy deny-all: cannot be read (ValidatingAdmissionPolicy "
                               "deny-all nests more than 100 levels deep (at metadata.managedFields[].fieldsV1")
    assert found[0].endswith("(kubectl delete validatingadmissionpolicy deny-all))")


# ---- through the module, as provision.yml runs it --------------------------------------

def run_module(tmp_path, args):
    path = tmp_path / ("args-%s.json" % args["mode"])
    path.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    module = COLLECTION_PATH / "ansible_collections/gsb/kai_lab/plugins/modules/kai_lab_sim_state.py"
    done = subprocess.run([sys.executable, str(module), str(path)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(COLLECTION_PATH)), check=False)
    return json.loads(done.stdout)


def test_provision_records_beside_a_deep_configmap_and_the_next_is_fast(recorded, serve, tmp_path):
    _, _, config = serve(texts=[deep_configmap("default")])
    spec = {key: recorded["spec"][key] for key in ("objects", "kinds", "crds")}
    args = {"state_dir": str(tmp_path / "state"), "kubeconfig": config, "inputs": {"lab": 1}}
    (tmp_path / "state").mkdir(mode=0o700)
    done = run_module(tmp_path, dict(args, mode="record", spec=spec))
    assert not done.get("failed"), done.get("msg")
    assert not done.get("warnings")
    done = run_module(tmp_path, dict(args, mode="check"))
    assert done["unchanged"] is True, done["differences"]


def test_provision_records_beside_a_deep_admission_policy_naming_it(recorded, serve, tmp_path):
    deep = (POLICIES, None, "deny-all", fake_api.deep_object("ValidatingAdmissionPolicy", "deny-all", None))
    _, _, config = serve(texts=[deep])
    spec = {key: recorded["spec"][key] for key in ("objects", "kinds", "crds")}
    args = {"state_dir": str(tmp_path / "state"), "kubeconfig": config, "inputs": {"lab": 1}}
    (tmp_path / "state").mkdir(mode=0o700)
    done = run_module(tmp_path, dict(args, mode="record", spec=spec))
    assert not done.get("failed"), done.get("msg")
    warnings = [w if isinstance(w, str) else w["event"]["msg"] for w in done.get("warnings") or []]
    assert len(warnings) == 1 and warnings[0].startswith(
        "The record of the provisioned sim could not read ValidatingAdmissionPolicy deny-all: ")
    assert "(kubectl delete validatingadmissionpolicy deny-all)" in warnings[0]
    done = run_module(tmp_path, dict(args, mode="check"))
    assert done["unchanged"] is False
    assert done["differences"][0].startswith("ValidatingAdmissionPolicy deny-all: cannot be read")


def test_a_kind_with_more_objects_than_are_read_one_by_one_gives_the_lists_own_error(serve, monkeypatch):
    """Read one by one only as many as a lab's list holds; past that, the error names the object out of bounds."""
    from ansible_collections.gsb.kai_lab.plugins.module_utils.client import readable
    from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import AnswerTooDeep
    monkeypatch.setattr(readable, "MAX_ONE_BY_ONE", 2)
    deep = (POLICIES, None, "deny-all", fake_api.deep_object("ValidatingAdmissionPolicy", "deny-all", None))
    lists = {POLICIES: [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}]}
    server, cluster, _ = serve(texts=[deep], lists=lists)
    with pytest.raises(AnswerTooDeep, match="ValidatingAdmissionPolicy deny-all nests more than 100 levels deep"):
        sim_state.sim_reads.Reader(cluster).every("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy")
    assert not any(p.startswith(POLICIES + "/") for p in server.seen), "none read one by one"
