# -*- coding: utf-8 -*-
"""kai-lab doctor: each environment fault named, with what to do, on recorded objects; a healthy lab says so.

The objects: the sim's node, namespaces and KAI Config as its API server
listed them after a full provision (fixtures/sim-provision/, KAI v0.12.0),
KAI v0.17.0's applied Config (fixtures/kai-v0.17.0/kai-config.yaml, copied from
shared/fixtures/kai-v0.17.0/), and the reservation pod of the fraction step
(fixtures/sim/steps/fraction.json). The RuntimeClass is rendered as
fake-gpu-operator's chart makes it on k3s (handler runc), where only k3s has one;
the scheduler's ConfigMap as KAI's operator writes it on k3s (kai-scheduler-default,
key config.yaml: the version profile's scheduler configuration, without the plugins
the role turns off through the chart's values), which the sim does not have.
"""

from __future__ import annotations

import calendar
import copy
import io
import json
import time

import pytest
import yaml

import lab_states
from conftest import FIXTURES, FakeCluster, load_json
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import cli as kai_lab_cli
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import doctor
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import render as kai_render

PROVISIONED = load_json(FIXTURES / "sim-provision" / "provisioned-objects.json")
NODE = PROVISIONED["/api/v1/nodes"][0]
NAMESPACES = PROVISIONED["/api/v1/namespaces"]
CONFIG_V012 = PROVISIONED["/apis/kai.scheduler/v1/configs"][0]
# The ServiceAccount provision made for KAI's reservation pods, as the sim's API server listed it.
ACCOUNTS = [a for a in PROVISIONED["/api/v1/serviceaccounts"]
            if a["metadata"]["namespace"] == "kai-resource-reservation"]
with open(FIXTURES / "kai-v0.17.0" / "kai-config.yaml") as _handle:
    CONFIG_V017 = yaml.safe_load(_handle)
RUNTIME_CLASS = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "nvidia"},
                 "handler": "runc"}
# The plugins roles/kai_scheduler turns off (its default; KAI's chart value scheduler.plugins.<name>.enabled: false).
DISABLED_PLUGINS = yaml.safe_load((FIXTURES.parents[2] / "roles" / "kai_scheduler" / "defaults" / "main.yml")
                                  .read_text())["kai_scheduler_disabled_plugins"]


def scheduler_configmap(disabled=DISABLED_PLUGINS, version="v0.17.0", name="kai-scheduler-default"):
    """The ConfigMap KAI's operator writes the scheduler's configuration into (operands/scheduler/
    resources_for_shard.go configMapForShard): the version's plugins less the disabled ones."""
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "kai-scheduler"},
            "data": {"config.yaml": yaml.safe_dump(kai_render.scheduler_config(version, disabled))}}


# The reservation pod's creation plus an hour: it has settled.
NOW = calendar.timegm(time.strptime("2026-11-29T21:08:42", "%Y-%m-%dT%H:%M:%S"))


class DoctorCluster(FakeCluster):
    """A FakeCluster that answers the status-updater's SubjectAccessReview (allowed or not)."""

    def __init__(self, state, allowed=True):
        super().__init__(state)
        self.allowed = allowed

    def create(self, obj):
        self._check("create", obj["kind"], obj["spec"]["user"], json.dumps(obj["spec"]["resourceAttributes"]))
        return dict(obj, status={"allowed": self.allowed, "reason": "" if self.allowed else "no RBAC policy matched"})


def healthy(config=CONFIG_V017, allowed=True, reservation=True):
    state = {"reservation_pods": lab_states.lab_after("fraction")["reservation_pods"] if reservation else []}
    cluster = DoctorCluster(state, allowed)
    cluster._store("v1", "Node", copy.deepcopy(NODE))
    for namespace in NAMESPACES:
        cluster._store("v1", "Namespace", copy.deepcopy(namespace))
    for account in ACCOUNTS:
        cluster._store("v1", "ServiceAccount", copy.deepcopy(account))
    cluster._store("node.k8s.io/v1", "RuntimeClass", copy.deepcopy(RUNTIME_CLASS))
    cluster._store("v1", "ConfigMap", scheduler_configmap())
    if config is not None:
        cluster._store("kai.scheduler/v1", "Config", copy.deepcopy(config))
    return cluster


def obj(cluster, api, kind, name, namespace=None):
    return cluster.objects[cluster._key(api, kind, name, namespace)]


def run(tmp_path, cluster, target="k3s", lang="en", *args, **config):
    settings = {"version": "9.8.7", "target": target, "namespace": "kai-lab", "workdir": str(tmp_path), "lang": lang,
                "kubeconfig": str(tmp_path / "no-kubeconfig"), "health_urls": {}, "kai_deployments": [],
                "kai_namespace": "kai-scheduler"}
    settings.update(config)
    path = tmp_path / "kai-lab.json"
    path.write_text(json.dumps(settings))
    out, err = io.StringIO(), io.StringIO()
    code = kai_lab_cli.main(["doctor"] + list(args), config_path=str(path), stdout=out, stderr=err, cluster=cluster)
    return code, out.getvalue(), err.getvalue()


def faults(tmp_path, cluster, target="k3s", **config):
    code, out, _ = run(tmp_path, cluster, target, "en", "--json", **config)
    result = json.loads(out)
    assert code == (2 if result["faults"] else 0)
    return dict((f["id"], f["text"]) for f in result["faults"]), result


@pytest.mark.parametrize("config", [CONFIG_V017, CONFIG_V012], ids=["kai-v0.17.0", "kai-v0.12.0"])
@pytest.mark.parametrize("target", ["k3s", "sim"])
def test_a_healthy_lab_says_so_and_exits_0(tmp_path, monkeypatch, config, target):
    monkeypatch.setattr(time, "time", lambda: NOW)
    cluster = healthy(config)
    code, out, _ = run(tmp_path, cluster, target)
    assert code == 0, out
    assert out.splitlines()[0] == ("the lab's environment is healthy: nodes, fake GPUs and KAI-Scheduler are ready")
    asked = [c[:2] for c in cluster.calls]
    # Few requests, and no writes: nodes listed once; on the sim no RuntimeClass and no access review.
    assert asked.count(("list", "Node")) == 1 and not cluster.writes
    assert (("get", "RuntimeClass") in asked, ("create", "SubjectAccessReview") in asked) == ((target == "k3s",) * 2)
    # k3s: one more, the scheduler's ConfigMap (its plugins).
    assert len(cluster.calls) <= (9 if target == "k3s" else 8)
    if target == "sim":
        assert "not asked on the sim: the status-updater's RBAC" in out
    code, out, _ = run(tmp_path, healthy(config), target, "ko")
    assert code == 0 and out.startswith("실습 환경이 정상입니다")


def test_a_node_without_the_pool_label_is_named(tmp_path):
    cluster = healthy()
    del obj(cluster, "v1", "Node", "kai-lab-vm")["metadata"]["labels"]["run.ai/simulated-gpu-node-pool"]
    found, _ = faults(tmp_path, cluster)
    assert list(found) == ["node_pool_label"]
    assert "kai-lab-vm lack run.ai/simulated-gpu-node-pool=default" in found["node_pool_label"]
    assert "kubectl label node NODE run.ai/simulated-gpu-node-pool=default" in found["node_pool_label"]


def test_zero_allocatable_gpus_is_named(tmp_path):
    cluster = healthy()
    obj(cluster, "v1", "Node", "kai-lab-vm")["status"]["allocatable"]["nvidia.com/gpu"] = "0"
    found, _ = faults(tmp_path, cluster)
    assert list(found) == ["no_gpus"]
    assert found["no_gpus"].startswith("no allocatable nvidia.com/gpu on node(s) kai-lab-vm")


@pytest.mark.parametrize("handler", [None, "nvidia"])
def test_the_nvidia_runtime_class_missing_or_unrunnable_is_named_on_k3s_only(tmp_path, handler):
    cluster = healthy()
    key = cluster._key("node.k8s.io/v1", "RuntimeClass", "nvidia", None)
    if handler is None:
        del cluster.objects[key]
    else:
        cluster.objects[key]["handler"] = handler
    found, _ = faults(tmp_path, cluster)
    fault_id = "runtime_class_missing" if handler is None else "runtime_class_handler"
    assert list(found) == [fault_id]
    if handler:
        assert "RuntimeClass nvidia has handler nvidia, which this node cannot run" in found[fault_id]
    assert faults(tmp_path, cluster, "sim")[0] == {}


def test_the_reservation_namespace_missing_or_not_kais_is_named(tmp_path):
    cluster = healthy()
    del cluster.objects[cluster._key("v1", "Namespace", "kai-resource-reservation", None)]
    found, _ = faults(tmp_path, cluster)
    assert list(found) == ["reservation_namespace"]
    assert "kai-resource-reservation does not exist" in found["reservation_namespace"]
    config = copy.deepcopy(CONFIG_V017)
    config["spec"]["binder"]["resourceReservation"]["namespace"] = "runai-reservation"
    found, _ = faults(tmp_path, healthy(config))
    assert list(found) == ["reservation_namespace_kai"]
    assert "KAI reserves GPUs in namespace runai-reservation" in found["reservation_namespace_kai"]


@pytest.mark.parametrize("config", [CONFIG_V017, CONFIG_V012], ids=["kai-v0.17.0", "kai-v0.12.0"])
def test_the_reservation_pods_service_account_missing_is_named(tmp_path, config):
    # Seen on the sim: the namespace deleted and made again without it, every GPU fraction pod stayed unbound
    # ("error looking up service account kai-resource-reservation/kai-resource-reservation") while the doctor
    # said healthy.
    cluster = healthy(config)
    del cluster.objects[cluster._key("v1", "ServiceAccount", "kai-resource-reservation", "kai-resource-reservation")]
    found, _ = faults(tmp_path, cluster)
    assert list(found) == ["reservation_service_account"]
    assert found["reservation_service_account"].startswith(
        "the reservation namespace kai-resource-reservation has no ServiceAccount kai-resource-reservation: ")
    # A Config that names another account: that one is asked for.
    renamed = copy.deepcopy(CONFIG_V017)
    renamed["spec"]["binder"]["resourceReservation"]["serviceAccountName"] = "reserver"
    found, _ = faults(tmp_path, healthy(renamed))
    assert "has no ServiceAccount reserver: " in found["reservation_service_account"]
    # Without the namespace, the namespace is the fault, not its account as well.
    cluster = healthy(config)
    del cluster.objects[cluster._key("v1", "Namespace", "kai-resource-reservation", None)]
    del cluster.objects[cluster._key("v1", "ServiceAccount", "kai-resource-reservation", "kai-resource-reservation")]
    assert list(faults(tmp_path, cluster)[0]) == ["reservation_namespace"]


def test_the_status_updaters_missing_pod_patch_rights_are_named_by_a_subject_access_review(tmp_path):
    cluster = healthy(allowed=False)
    found, _ = faults(tmp_path, cluster)
    assert list(found) == ["status_updater_rights"]
    assert "status-updater (gpu-operator/status-updater) may not patch pods in kai-resource-reservation" \
        in found["status_updater_rights"]
    review = [c for c in cluster.calls if c[0] == "create"][0]
    assert review[2] == "system:serviceaccount:gpu-operator/status-updater".replace("/", ":")
    assert json.loads(review[3]) == {"namespace": "kai-resource-reservation", "verb": "patch", "resource": "pods"}
    # On the sim the status-updater is a process: not asked, and said so.
    found, result = faults(tmp_path, healthy(allowed=False), "sim")
    assert found == {} and "status_updater_sim" in [n["id"] for n in result["notes"]]


def test_kais_queue_label_key_not_the_labs_is_named(tmp_path):
    config = copy.deepcopy(CONFIG_V017)
    config["spec"]["global"]["queueLabelKey"] = "runai/queue"
    found, _ = faults(tmp_path, healthy(config))
    assert list(found) == ["queue_label_key"]
    assert found["queue_label_key"].startswith("KAI reads a pod's queue from label runai/queue, the lab uses "
                                               "kai.scheduler/queue")
    found, _ = faults(tmp_path, healthy(None))
    assert list(found) == ["kai_config_missing"]


def test_kais_snapshot_plugin_on_is_named_on_k3s_with_the_fix(tmp_path):
    """Issue 40: KAI's chart turns on every scheduler plugin unless its values say otherwise; the snapshot plugin
    serves the whole cluster, ConfigMaps of every namespace included, to whoever reaches the plugin server."""
    assert "snapshot" in DISABLED_PLUGINS
    cluster = healthy()
    cluster._store("v1", "ConfigMap", scheduler_configmap(disabled=[]))
    found, _ = faults(tmp_path, cluster)
    assert list(found) == ["snapshot_plugin"]
    assert found["snapshot_plugin"] == (
        "KAI's scheduler runs its snapshot plugin (ConfigMap kai-scheduler/kai-scheduler-default): whoever reaches "
        "its plugin server gets the whole cluster at /get-snapshot, ConfigMaps of every namespace included, without "
        "authentication. Keep snapshot in kai_scheduler_disabled_plugins (KAI's chart value "
        "scheduler.plugins.snapshot.enabled: false, KAI v0.13 and later) and provision again.")
    code, out, _ = run(tmp_path, cluster, "k3s", "ko")
    assert code == 2 and "- snapshot_plugin: KAI 스케줄러가 snapshot 플러그인을 켜 두었습니다" in out
    # v0.12's operator renders the same plugin, in its own order.
    cluster._store("v1", "ConfigMap", scheduler_configmap(disabled=[], version="v0.12.0"))
    assert list(faults(tmp_path, cluster)[0]) == ["snapshot_plugin"]
    # The ConfigMap follows the scheduler name of KAI's Config.
    renamed = copy.deepcopy(CONFIG_V017)
    renamed["spec"]["global"]["schedulerName"] = "kai-other"
    cluster = healthy(renamed)
    cluster._store("v1", "ConfigMap", scheduler_configmap(disabled=[], name="kai-other-default"))
    assert list(faults(tmp_path, cluster)[0]) == ["snapshot_plugin"]
    assert ("get", "ConfigMap", "kai-other-default", "kai-scheduler") in cluster.calls
    # On the sim the scheduler's configuration is a file provision writes: not asked, and said so.
    found, result = faults(tmp_path, healthy(), "sim")
    assert found == {} and "snapshot_plugin_sim" in [n["id"] for n in result["notes"]]
    assert ("get", "ConfigMap") not in [c[:2] for c in healthy().calls]


@pytest.mark.parametrize("data", [None, {"config.yaml": "tiers: [unclosed"}, {"config.yaml": "- a list"}])
def test_a_scheduler_configmap_missing_or_unreadable_is_not_judged(tmp_path, data):
    cluster = healthy()
    key = cluster._key("v1", "ConfigMap", "kai-scheduler-default", "kai-scheduler")
    if data is None:
        del cluster.objects[key]
    else:
        cluster.objects[key]["data"] = data
    assert faults(tmp_path, cluster)[0] == {}


@pytest.mark.parametrize("change, why", [
    ({"status": {"phase": "Pending", "conditions": []}}, "Pending"),
    ({"status": {"phase": "Failed", "reason": "Evicted"}}, "Failed (Evicted)"),
    ({"status": {"phase": "Pending", "containerStatuses": [{"state": {"waiting": {"reason": "ImagePullBackOff",
                                                                                  "message": "no such image"}}}]}},
     "ImagePullBackOff (no such image)"),
    ({"metadata": {"annotations": {}}}, "no run.ai/reserve_for_gpu_index annotation"),
])
def test_reservation_pods_pending_or_failing_are_named(tmp_path, monkeypatch, change, why):
    monkeypatch.setattr(time, "time", lambda: NOW)
    cluster = healthy()
    pod = obj(cluster, "v1", "Pod", "gpu-reservation-kai-lab-vm-9q27q", "kai-resource-reservation")
    for part, values in change.items():
        pod[part].update(values)
    found, _ = faults(tmp_path, cluster)
    assert list(found) == ["reservation_pods"]
    assert "gpu-reservation-kai-lab-vm-9q27q: %s" % why in found["reservation_pods"]


def test_a_reservation_pod_just_made_is_not_yet_a_fault(monkeypatch):
    pod = copy.deepcopy(lab_states.lab_after("fraction")["reservation_pods"][0])
    pod["status"]["phase"] = "Pending"
    assert doctor.reservation_pod_faults([pod], now=NOW - 3600 + 5) == []
    assert doctor.reservation_pod_faults([pod], now=NOW)[0]["id"] == "reservation_pods"


def test_a_kai_component_not_ready_is_named_as_kai_lab_check_names_it(tmp_path):
    cluster = healthy()
    found, _ = faults(tmp_path, cluster, kai_deployments=["binder"])
    assert list(found) == ["kai_not_ready"]
    assert found["kai_not_ready"].startswith("KAI component(s) not ready: binder.")


def test_every_fault_named_in_both_languages_and_an_unreadable_cluster_exits_2(tmp_path):
    cluster = FakeCluster({}, error="cannot reach the Kubernetes API server at https://127.0.0.1:1")
    code, out, _ = run(tmp_path, cluster, "k3s", "ko")
    assert code == 2 and "클러스터를 읽을 수 없습니다: cannot reach the Kubernetes API server" in out
    from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import cli_doctor
    for fault_id in doctor.FAULTS + doctor.NOTES:
        assert set(cli_doctor.WORDS[fault_id]) == {"en", "ko"}


def test_doctor_answers_a_healthy_lab_without_hanging(tmp_path):
    cluster = healthy()
    started = time.monotonic()
    code, _, _ = run(tmp_path, cluster)
    assert code == 0 and time.monotonic() - started < 5.0  # no hang; measured 0.06 s over the fake cluster
