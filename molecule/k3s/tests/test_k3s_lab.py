"""The provisioned and solved k3s lab VM, as the learner finds it (runs
first; test_zz_lab_cycle.py grades, resets and tears down afterwards)."""

from __future__ import annotations

import json
import os

import pytest

pytestmark = pytest.mark.skipif(
    not os.environ.get("KAI_LAB_K3S_HOST"),
    reason="KAI_LAB_K3S_HOST is unset: no learner VM to verify (k3s scenario skipped)",
)

GPU_COUNT = int(os.environ.get("KAI_LAB_K3S_GPUS", "4"))
KAI_NAMESPACE = "kai-scheduler"


def kubectl_json(host, *args: str) -> dict:
    out = host.check_output("kubectl " + " ".join(args) + " -o json")
    return json.loads(out)


def _condition(obj: dict, kind: str) -> str | None:
    for condition in obj.get("status", {}).get("conditions", []):
        if condition["type"] == kind:
            return condition["status"]
    return None


def test_k3s_service_runs_and_is_enabled(host):
    service = host.service("k3s")
    assert service.is_running
    assert service.is_enabled


def test_kubeconfig_is_private(host):
    assert host.file("/root/.kube/config").mode == 0o600
    assert host.file("/etc/rancher/k3s/k3s.yaml").mode == 0o600


def test_k3s_runtime_class_is_disabled(host):
    config = host.file("/etc/rancher/k3s/config.yaml").content_string
    assert "- runtimes" in config


def test_node_is_ready(host):
    nodes = kubectl_json(host, "get", "nodes")["items"]
    assert nodes
    assert all(_condition(node, "Ready") == "True" for node in nodes)


def test_node_has_the_fake_gpus(host):
    nodes = kubectl_json(host, "get", "nodes", "-l", "run.ai/simulated-gpu-node-pool=default")["items"]
    assert nodes
    for node in nodes:
        assert node["status"]["allocatable"].get("nvidia.com/gpu") == str(GPU_COUNT)
        assert node["metadata"]["labels"].get("run.ai/fake.gpu") == "true"


def test_kai_pods_are_ready(host):
    pods = kubectl_json(host, "-n", KAI_NAMESPACE, "get", "pods")["items"]
    running = [p for p in pods if p["status"].get("phase") not in ("Succeeded", "Failed")]
    names = {p["metadata"].get("labels", {}).get("app") for p in running}
    assert {"binder", "pod-grouper", "admission", "queue-controller", "podgroup-controller"} <= names
    not_ready = [p["metadata"]["name"] for p in running if _condition(p, "Ready") != "True"]
    assert not_ready == []


def test_queues_crd_is_served(host):
    crd = kubectl_json(host, "get", "crd", "queues.scheduling.run.ai")
    assert _condition(crd, "Established") == "True"
    assert "v2" in [v["name"] for v in crd["spec"]["versions"] if v["served"]]
    host.check_output("kubectl get queues.scheduling.run.ai")


def test_runtime_classes_do_not_clash(host):
    runtime_class = kubectl_json(host, "get", "runtimeclass", "nvidia")
    assert runtime_class["handler"] == "runc"


def test_k3s_keeps_events_for_the_lab_and_runs_no_unused_addons(host):
    config = host.file("/etc/rancher/k3s/config.yaml").content_string
    assert "event-ttl=24h" in config
    for addon in ("traefik", "svclb", "metrics-server", "coredns", "local-path-provisioner"):
        pods = kubectl_json(host, "get", "pods", "-A")["items"]
        assert not [p["metadata"]["name"] for p in pods if p["metadata"]["name"].startswith(addon)], addon


def test_binder_runs_with_fake_gpu_nodes(host):
    deployment = kubectl_json(host, "-n", KAI_NAMESPACE, "get", "deployment", "binder")
    args = deployment["spec"]["template"]["spec"]["containers"][0].get("args", [])
    assert "--fake-gpu-nodes" in args
    pods = kubectl_json(host, "-n", KAI_NAMESPACE, "get", "pods", "-l", "app=binder")["items"]
    assert pods and all("--fake-gpu-nodes" in p["spec"]["containers"][0].get("args", []) for p in pods)


def test_fraction_pods_share_one_gpu_through_an_annotated_reservation_pod(host):
    pods = {p["metadata"]["name"]: p for p in kubectl_json(host, "-n", "kai-lab", "get", "pods")["items"]}
    fractions = [pods[name] for name in ("fr-1", "fr-2")]
    assert all(p["status"]["phase"] == "Running" for p in fractions)
    groups = {p["metadata"]["labels"].get("runai-gpu-group") for p in fractions}
    assert len(groups) == 1 and None not in groups
    reservations = kubectl_json(host, "-n", "kai-resource-reservation", "get", "pods")["items"]
    holders = [r for r in reservations if r["metadata"]["labels"].get("runai-gpu-group") in groups]
    assert len(holders) == 1
    assert holders[0]["metadata"]["annotations"].get("run.ai/reserve_for_gpu_index", "").startswith("GPU-")
    assert holders[0]["status"]["phase"] == "Running"


def test_every_pinned_image_is_on_the_vm(host):
    listed = json.loads(host.check_output("k3s crictl images -o json"))["images"]
    present = {tag for image in listed for tag in image.get("repoTags") or []}
    for image in ("docker.io/library/ubuntu:22.04", "docker.io/library/ubuntu:24.04",
                  "ghcr.io/kai-scheduler/kai-scheduler/binder:v0.18.6",
                  "ghcr.io/run-ai/fake-gpu-operator/status-updater:0.2.0"):
        assert image in present, image


def test_readiness_probes_left_nothing_behind(host):
    assert kubectl_json(host, "-n", "kai-lab-probe", "get", "pods")["items"] == []
    events = kubectl_json(host, "-n", "kai-lab", "get", "events")["items"]
    assert not [e for e in events if e["involvedObject"].get("name", "").startswith("kai-ready-")]


def test_the_untagged_ubuntu_of_reservation_pods_is_the_fixed_tag(host):
    # KAI's binder names "ubuntu" (ubuntu:latest, a moving tag): the role tags ubuntu:24.04 with it.
    listed = json.loads(host.check_output("k3s crictl images -o json"))["images"]
    fixed = [image for image in listed if "docker.io/library/ubuntu:24.04" in (image.get("repoTags") or [])]
    assert len(fixed) == 1 and "docker.io/library/ubuntu:latest" in fixed[0]["repoTags"]
