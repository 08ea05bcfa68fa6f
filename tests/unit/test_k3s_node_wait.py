"""The wait for the k3s VM's node after k3s starts (issue 43): under QEMU
without KVM it took 196 s, which the role printed as 18 lines of "FAILED -
RETRYING: ... (43 retries left)". The action gsb.kai_lab.k3s_node_wait
prints instead what a person reads: the API server not answering yet, the
node not registered yet, the kubelet's own reason, with the time; a line per
change (targets/k3s/progress.py), and the reason when it gives up.

The node objects are the shape `k3s kubectl get node -o json` answers (only
the fields read); the kubelet's reason and message are k3s's own words
before flannel runs."""

from __future__ import annotations

import json

import yaml

from conftest import REPO
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s import node
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s.progress import Progress

CNI = ("container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady "
       "message:Network plugin returns error: cni plugin not initialized")


def _answer(ready=None, reason="KubeletNotReady", message=CNI):
    conditions = [{"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory"}]
    if ready is not None:
        conditions.append({"type": "Ready", "status": ready, "reason": reason, "message": message})
    return {"rc": 0, "stdout": json.dumps({"kind": "Node", "metadata": {"name": "kai-lab-vm"},
                                           "status": {"conditions": conditions}}), "stderr": ""}


def test_each_stage_before_the_node_is_ready_is_said_in_words():
    refused = {"rc": 1, "stdout": "", "stderr": "The connection to the server 127.0.0.1:6443 was refused - "
                                                "did you specify the right host or port?"}
    assert node.status(refused) == (False, "the API server does not answer yet (The connection to the server "
                                           "127.0.0.1:6443 was refused - did you specify the right host or port?)")
    missing = {"rc": 1, "stdout": "", "stderr": 'Error from server (NotFound): nodes "kai-lab-vm" not found'}
    assert node.status(missing) == (False, "not registered yet (the kubelet registers it once k3s runs)")
    assert node.status(_answer()) == (False, "registered, no Ready condition yet")
    ready, why = node.status(_answer("False"))
    assert not ready and why == "not Ready: KubeletNotReady: " + CNI
    assert node.status(_answer("True", "KubeletReady", "kubelet is posting ready status")) == (True, "Ready")
    assert node.status({"rc": 0, "stdout": "<html>", "stderr": ""})[0] is False
    line = node.line("kai-lab-vm", why, 40, 300)
    assert line.startswith("k3s node kai-lab-vm: not Ready: KubeletNotReady: container runtime network not ready")
    assert line.endswith("; 40 s of at most 300 s") and "retries" not in line


def test_giving_up_names_the_reason_and_where_to_look_in_both_languages():
    message = node.failure("kai-lab-vm", "not registered yet (the kubelet registers it once k3s runs)", 300)
    assert message.startswith("Node kai-lab-vm was not Ready within 300 s (not registered yet")
    assert "journalctl -u k3s" in message and "k3s kubectl describe node kai-lab-vm" in message
    assert "kai-lab-vm 노드가 300 초 안에 Ready 가 되지 않았습니다" in message


def test_a_line_is_shown_per_change_and_an_unchanged_one_every_30_s():
    shown, now = [], [0.0]
    progress = Progress(shown.append, clock=lambda: now[0])
    for second, why in [(0, "the API server does not answer yet"), (5, "the API server does not answer yet"),
                        (10, "not registered yet"), (15, "not registered yet"), (44, "not registered yet"),
                        (50, "not Ready: KubeletNotReady")]:
        now[0] = second
        progress.line(node.line("kai-lab-vm", why, second, 300))
    assert [line.split(": ", 1)[1] for line in shown] == [
        "the API server does not answer yet; 0 s of at most 300 s", "not registered yet; 10 s of at most 300 s",
        "not registered yet; 44 s of at most 300 s", "not Ready: KubeletNotReady; 50 s of at most 300 s"]


def test_the_role_waits_for_the_node_with_the_action_and_its_timeout():
    tasks = yaml.safe_load((REPO / "roles" / "k3s" / "tasks" / "main.yml").read_text())
    block = next(task for task in tasks if task.get("name") == "Install k3s, Helm and the Python environment as root")
    wait = next(task for task in block["block"] if task.get("name") == "Wait for the node to be Ready")
    assert wait["gsb.kai_lab.k3s_node_wait"] == {
        "name": "{{ k3s_node_name }}", "k3s": "{{ k3s_install_dir }}/k3s", "kubeconfig": "{{ k3s_kubeconfig }}",
        "timeout": "{{ k3s_ready_timeout }}"}
    # Only a read: it runs in check mode too, on a VM that has k3s; no retry loop of Ansible's around it.
    assert wait["check_mode"] is False and "until" not in wait and "retries" not in wait
