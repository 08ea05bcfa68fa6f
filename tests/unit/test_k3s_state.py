"""An unchanged k3s VM told "unchanged" from what the last provision
recorded (issue 43: a second provision that changed nothing took 765 s on a
slow VM, hashing the 411 MB of image archives again and waiting for KAI's
Deployments): targets/k3s/state.py compares the record with one snapshot of
the VM, file sizes and times, the Deployments' observed generations, the
pods' uids and restarts, the Helm releases' revisions and the learner's
objects' resourceVersions; anything else is a full provision."""

from __future__ import annotations

import copy
import json
import os

import yaml

from conftest import REPO
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s import state as k3s_state

NODE = {"metadata": {"name": "kai-lab-vm", "labels": {"run.ai/simulated-gpu-node-pool": "default",
                                                      "run.ai/fake.gpu": "true"}},
        "status": {"conditions": [{"type": "Ready", "status": "True"}], "allocatable": {"nvidia.com/gpu": "4"}}}


# Objects provision owns and puts back (kai_lab_owned_objects), as kubectl lists them, and the references
# that module returns for them.
OWNED = [
    {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
     "metadata": {"name": "queues.scheduling.run.ai", "resourceVersion": "7", "generation": 1},
     "spec": {"group": "scheduling.run.ai"}, "status": {"conditions": [{"type": "Established", "status": "True"}]}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "topology", "namespace": "gpu-operator",
                                                           "resourceVersion": "8"}, "data": {"topology.yml": "x"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "someone-elses", "namespace": "gpu-operator",
                                                           "resourceVersion": "9"}, "data": {}},
]
OWNED_REFERENCES = [
    {"resource": "customresourcedefinitions.apiextensions.k8s.io", "group": "apiextensions.k8s.io",
     "kind": "CustomResourceDefinition", "namespace": "", "name": "queues.scheduling.run.ai"},
    {"resource": "configmaps", "group": "", "kind": "ConfigMap", "namespace": "gpu-operator", "name": "topology"},
]


def _deployment(name, generation=1, observed=1, available=1):
    return {"kind": "Deployment", "metadata": {"name": name, "generation": generation}, "spec": {"replicas": 1},
            "status": {"observedGeneration": observed, "availableReplicas": available}}


def _pod(name, uid, restarts=0):
    return {"kind": "Pod", "metadata": {"name": name, "uid": uid},
            "status": {"phase": "Running", "containerStatuses": [{"restartCount": restarts}]}}


class VM:
    """What the VM's commands answer, as the snapshot asks them (k3s kubectl, systemctl)."""

    def __init__(self, tmp_path):
        self.files = tmp_path / "vm"
        (self.files / "images").mkdir(parents=True)
        (self.files / "images" / "kai-scheduler-v0.17.0.tar.zst").write_bytes(b"x" * 100)
        (self.files / "images" / ".cache.json").write_text("{}")
        (self.files / "k3s").write_bytes(b"k3s")
        self.node = copy.deepcopy(NODE)
        self.kai = [_deployment("binder"), _pod("binder-1", "u1")]
        self.invocation = "InvocationID=abc\nActiveState=active\n"
        self.releases = "kai-scheduler kai-scheduler 1\ngpu-operator fake-gpu-operator 1\n"
        self.learner = "Namespace <none> kai-lab 100\nClusterRole <none> gsb-kai-lab-learner 101\n"
        self.owned = copy.deepcopy(OWNED)

    def spec(self):
        return {"k3s": "/usr/local/bin/k3s", "kubeconfig": "/root/.kube/config", "node": "kai-lab-vm",
                "node_labels": ["run.ai/simulated-gpu-node-pool", "run.ai/fake.gpu"],
                "files": [str(self.files / "k3s"), str(self.files / "missing")],
                "archive_dirs": [str(self.files / "images")], "namespaces": ["kai-scheduler"],
                "learner_labels": {"app.kubernetes.io/part-of": "gsb-kai-lab"}, "owned": OWNED_REFERENCES}

    def run(self, argv):
        if argv[0] == "systemctl":
            return self.invocation
        args = argv[3:]
        if args[:2] == ["get", "nodes"]:
            return json.dumps({"items": [self.node]})
        if args[:1] == ["-n"]:
            return json.dumps({"items": self.kai})
        if "--selector=owner=helm,status=deployed" in args:
            return self.releases
        if args[1].startswith("namespaces,"):
            return self.learner
        if args == ["get", ",".join(sorted(set(r["resource"] for r in OWNED_REFERENCES))), "--all-namespaces",
                    "-o", "json"]:
            return json.dumps({"items": self.owned})
        raise AssertionError(argv)


def _record(vm, digest="d1", sources=None):
    return {"schema": k3s_state.SCHEMA, "inputs_digest": digest, "sources": sources or {"k3s": [10, 1]},
            "spec": vm.spec(), "snapshot": k3s_state.snapshot(vm.spec(), vm.run)}


def test_an_unchanged_vm_is_told_unchanged_from_the_record_alone(tmp_path):
    vm = VM(tmp_path)
    record = _record(vm)
    now = k3s_state.snapshot(record["spec"], vm.run)
    assert k3s_state.differences(record, "d1", {"k3s": [10, 1]}, now) == []
    # What it reads: file sizes and times (no hashing), k3s's own cache of the images directory left out.
    assert set(now["archives"][vm.spec()["archive_dirs"][0]]) == {"kai-scheduler-v0.17.0.tar.zst"}
    assert now["files"][str(vm.files / "missing")] is None


def test_each_change_is_named(tmp_path):
    vm = VM(tmp_path)
    record = _record(vm)

    def found(**change):
        changed = copy.copy(vm)
        for key, value in change.items():
            setattr(changed, key, value)
        return k3s_state.differences(record, "d1", {"k3s": [10, 1]}, k3s_state.snapshot(record["spec"], changed.run))

    assert found(kai=[_deployment("binder"), _pod("binder-1", "u1", restarts=1)]) == [
        "namespaces kai-scheduler pods binder-1: [\"u1\", 0] -> [\"u1\", 1]"]
    assert found(kai=[_deployment("binder", generation=2, observed=1), _pod("binder-1", "u1")]) == [
        'namespaces kai-scheduler workloads Deployment/binder: [1, 1, true] -> [2, 1, true]',
        "kai-scheduler Deployment/binder is not ready (generation 2, observed 1)"]
    assert found(invocation="InvocationID=def\nActiveState=active\n")[0].startswith("k3s: ")
    assert found(releases="kai-scheduler kai-scheduler 2\ngpu-operator fake-gpu-operator 1\n") == [
        'releases kai-scheduler/kai-scheduler: "1" -> "2"']
    assert found(learner="Namespace <none> kai-lab 100\n")[0].startswith("learner ClusterRole//gsb-kai-lab-learner")
    node = copy.deepcopy(NODE)
    node["metadata"]["labels"].pop("run.ai/simulated-gpu-node-pool")
    assert found(node=node) == ['node labels run.ai/simulated-gpu-node-pool: "default" -> null']
    # A file provision wrote, changed; the settings; an airgap file on the control host.
    (vm.files / "k3s").write_bytes(b"k3s, another build")
    assert [d for d in k3s_state.differences(record, "d2", {"k3s": [11, 2]}, k3s_state.snapshot(
        record["spec"], vm.run))] == [
        "the settings or the collection differ from the last full provision",
        "airgap file k3s: [10, 1] -> [11, 2]",
        "files %s: %s -> %s" % (vm.files / "k3s", json.dumps(record["snapshot"]["files"][str(vm.files / "k3s")]),
                                json.dumps(k3s_state.file_state(str(vm.files / "k3s"))))]


def test_an_owned_object_changed_by_hand_makes_a_full_provision_which_puts_it_back(tmp_path):
    """Issue 42 on k3s: what provision owns (a CRD, fake-gpu-operator's topology) changed or deleted after the
    last full provision is found by the check, so the next provision takes the path that puts it back; what the
    cluster writes itself (a status, a resourceVersion) and objects provision does not own are no change."""
    vm = VM(tmp_path)
    record = _record(vm)
    assert set(record["snapshot"]["owned"]) == {"apiextensions.k8s.io/CustomResourceDefinition//queues.scheduling.run.ai",
                                                "/ConfigMap/gpu-operator/topology"}

    def found(owned):
        vm.owned = owned
        return k3s_state.differences(record, "d1", {"k3s": [10, 1]}, k3s_state.snapshot(record["spec"], vm.run))

    written_by_the_cluster = copy.deepcopy(OWNED)
    written_by_the_cluster[0]["status"]["conditions"].append({"type": "NamesAccepted", "status": "True"})
    written_by_the_cluster[0]["metadata"]["resourceVersion"] = "70"
    written_by_the_cluster[2]["data"] = {"changed": "by its owner"}
    assert found(written_by_the_cluster) == []
    poisoned = copy.deepcopy(OWNED)
    poisoned[0]["spec"]["x-kubernetes-validations"] = [{"rule": "false"}]
    changed = found(poisoned)
    assert len(changed) == 1 and changed[0].startswith(
        "owned apiextensions.k8s.io/CustomResourceDefinition//queues.scheduling.run.ai: "), changed
    deleted = found([OWNED[0], OWNED[2]])
    assert len(deleted) == 1 and deleted[0].startswith("owned /ConfigMap/gpu-operator/topology: ") \
        and deleted[0].endswith("-> null"), deleted


def test_the_learners_kubectl_marking_its_token_used_is_no_change(tmp_path):
    """The API server labels a token Secret whose token was used (once a day): the learner's kubectl after the
    last full provision leaves the VM unchanged; a label anyone else adds to it does not."""
    token = {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
             "metadata": {"name": "learner-token", "namespace": "kai-lab-learner", "resourceVersion": "5",
                          "labels": {"app.kubernetes.io/part-of": "gsb-kai-lab"}}, "data": {"token": "dA=="}}
    used = copy.deepcopy(token)
    used["metadata"]["resourceVersion"] = "6"
    used["metadata"]["labels"]["kubernetes.io/legacy-token-last-used"] = "2026-12-06"
    assert k3s_state.owned_hash(used) == k3s_state.owned_hash(token)
    other = copy.deepcopy(token)
    other["metadata"]["labels"]["learner"] = "was-here"
    assert k3s_state.owned_hash(other) != k3s_state.owned_hash(token)
    assert "secrets" not in k3s_state.LEARNER_KINDS.split(",")


def test_a_link_planted_at_a_recorded_path_is_a_change_and_never_followed(tmp_path):
    """The record lists the learner's ~/.kube/config: a link the learner puts there is recorded as the link
    (lstat), so root never reads what it leads to, and the next provision is a full one."""
    target = tmp_path / "root-only"
    target.write_bytes(b"secret" * 100)
    config = tmp_path / "config"
    config.write_text("kubeconfig")
    before = k3s_state.file_state(str(config))
    config.unlink()
    config.symlink_to(target)
    after = k3s_state.file_state(str(config))
    assert after != before and after[0] == len(str(target)) != os.stat(target).st_size


def test_no_record_or_an_old_one_is_a_full_provision():
    assert k3s_state.differences(None, "d1", {}, {}) == ["no record of a full provision on the VM"]
    assert k3s_state.differences({"schema": 0}, "d1", {}, {}) == ["the record is of another version of the collection"]


def test_provision_skips_its_work_only_when_the_vm_is_unchanged_and_records_at_its_end():
    plays = yaml.safe_load((REPO / "playbooks" / "provision.yml").read_text())
    tasks = plays[1]["tasks"]
    check = next(t for t in tasks if t["name"] == "Check whether the k3s lab is already as provision would make it")
    assert check["ansible.builtin.include_role"]["tasks_from"] == "k3s_state" and check["when"] == "kai_lab_target == 'k3s'"
    work = next(t for t in tasks if t["name"] == "Provision the lab")
    assert work["when"] == "not kai_lab_state_unchanged | bool"
    record = work["block"][-1]
    assert record["ansible.builtin.include_role"]["tasks_from"] == "{{ kai_lab_target }}_state_record"
    assert (REPO / "roles" / "kai_lab" / "tasks" / "k3s_state_record.yml").is_file()
    variables = yaml.safe_load((REPO / "roles" / "kai_lab" / "vars" / "main.yml").read_text())
    assert "kai_lab_k3s_state_check.unchanged" in variables["kai_lab_k3s_state_unchanged"]
    assert os.path.dirname(variables["kai_lab_k3s_state_record"]) == "/var/lib/gsb-kai-lab"
