"""The wait for a chart's workloads on the k3s VM (issue 43): under QEMU
without KVM the first container of each image waits for containerd to unpack
it (k3s imports images without unpacking), so fake-gpu-operator's init
container and KAI's Deployments first failed with "context deadline
exceeded" and came up on the kubelet's retry. The roles wait for that with
progress (action gsb.kai_lab.k3s_workloads_wait), not failing; an image an
airgapped VM does not have is named at once."""

from __future__ import annotations

import yaml

from conftest import REPO
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s import workloads

DEADLINE = ("failed to create containerd container: error unpacking image: context deadline exceeded")


def _deployment(name, ready=True, generation=1, observed=1):
    return {"kind": "Deployment", "metadata": {"name": name, "generation": generation},
            "spec": {"replicas": 1},
            "status": {"observedGeneration": observed, "updatedReplicas": 1,
                       "availableReplicas": 1 if ready else 0}}


def _daemonset(name, ready=True):
    return {"kind": "DaemonSet", "metadata": {"name": name, "generation": 1},
            "status": {"observedGeneration": 1, "desiredNumberScheduled": 1, "updatedNumberScheduled": 1,
                       "numberAvailable": 1 if ready else 0}}


def _pod(name, waiting=None, message="", image="ghcr.io/kai-scheduler/kai-scheduler/binder:v0.17.0", init=False):
    status = {"phase": "Pending" if waiting else "Running"}
    container = {"name": "c", "image": image, "ready": not waiting,
                 "state": {"waiting": {"reason": waiting, "message": message}} if waiting else {"running": {}}}
    status["initContainerStatuses" if init else "containerStatuses"] = [container]
    return {"kind": "Pod", "metadata": {"name": name}, "status": status}


KAI = ["kai-operator", "binder", "admission"]


def test_a_first_create_that_timed_out_is_waited_for_and_explained():
    items = [_deployment("kai-operator"), _deployment("binder", ready=False), _deployment("admission"),
             _pod("binder-5d8f", "CreateContainerError", DEADLINE), _pod("admission-77c", None)]
    state = workloads.status(items, KAI)
    assert not state["ready"] and state["counts"] == (2, 3) and state["missing_images"] == []
    assert state["waiting"] == [("binder-5d8f", "CreateContainerError: " + DEADLINE
                                 + " (its image is unpacked on first use on this VM; the kubelet retries)")]
    line = workloads.line("KAI-Scheduler v0.17.0", state, 95, 600)
    assert line.startswith("KAI-Scheduler v0.17.0: 2 of 3 workloads ready; binder-5d8f: CreateContainerError: ")
    assert line.endswith("; 95 s of at most 600 s")
    # The kubelet's retry came up: ready.
    assert workloads.status([_deployment(name) for name in KAI] + [_pod("binder-5d8f")], KAI)["ready"]


def test_a_deployment_the_operator_has_not_made_yet_is_waited_for():
    state = workloads.status([_deployment("kai-operator")], KAI)
    assert not state["ready"] and ("binder", "not created yet") in state["waiting"]
    # A Deployment changed but not yet rolled out (observedGeneration behind) is not ready.
    assert not workloads.status([_deployment(name, generation=2) for name in KAI], KAI)["ready"]


def test_an_image_an_airgapped_vm_lacks_is_named_at_once():
    items = [_daemonset("status-exporter", ready=False),
             _pod("status-exporter-x", "ErrImageNeverPull", 'Container image "docker.io/library/ubuntu:24.04" is '
                  "not present with pull policy of Never", image="docker.io/library/ubuntu:24.04", init=True)]
    state = workloads.status(items)
    assert state["missing_images"] == [("status-exporter-x", "docker.io/library/ubuntu:24.04", "ErrImageNeverPull")]
    message = workloads.failure("fake-gpu-operator 0.2.0", "gpu-operator", state, 12, airgap=True)
    assert "the image docker.io/library/ubuntu:24.04 is not on the VM (ErrImageNeverPull of pod status-exporter-x)" \
        in message and "<k3s_airgap_dir>/images/" in message and "다시 프로비저닝하세요" in message
    # Online the pull may come: it times out naming each pod.
    late = workloads.failure("fake-gpu-operator 0.2.0", "gpu-operator", state, 600, airgap=False)
    assert late.startswith("fake-gpu-operator 0.2.0 did not become ready within 600 s (0 of 1 workloads ready): "
                           "status-exporter-x: ErrImageNeverPull")


def test_a_namespace_without_workloads_is_not_ready_and_kubectl_errors_are_waited_for():
    assert not workloads.status([])["ready"]
    assert workloads.parse("The connection to the server 127.0.0.1:6443 was refused") is None
    assert workloads.parse('{"items": []}') == []


def test_the_roles_wait_with_progress_instead_of_helms_silent_wait():
    roles = REPO / "roles"
    fgo = yaml.safe_load((roles / "fake_gpu_operator" / "tasks" / "k3s.yml").read_text())
    kai = yaml.safe_load((roles / "kai_scheduler" / "tasks" / "k3s.yml").read_text())
    for tasks, namespace in ((fgo, "{{ fake_gpu_operator_namespace }}"), (kai, "{{ kai_scheduler_namespace }}")):
        helm = next(t for t in tasks if "kubernetes.core.helm" in t)
        assert helm["kubernetes.core.helm"]["wait"] is False
        wait = next(t for t in tasks if "gsb.kai_lab.k3s_workloads_wait" in t)["gsb.kai_lab.k3s_workloads_wait"]
        assert wait["namespace"] == namespace and wait["airgap"] == "{{ k3s_airgap_dir | default('') | length > 0 }}"
        assert tasks.index(next(t for t in tasks if "kubernetes.core.helm" in t)) < tasks.index(
            next(t for t in tasks if "gsb.kai_lab.k3s_workloads_wait" in t))
    kai_wait = next(t for t in kai if "gsb.kai_lab.k3s_workloads_wait" in t)["gsb.kai_lab.k3s_workloads_wait"]
    assert kai_wait["deployments"] == "{{ kai_scheduler_k3s_deployments }}"
