# -*- coding: utf-8 -*-
"""roles/fake_gpu_operator/files/fake_gpu_operator_sim.py: the pure parts of
the sim's fake GPU operator (ids, topology, allocation, labels)."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import pytest

SIM_FILE = Path(__file__).resolve().parents[2] / "roles" / "fake_gpu_operator" / "files" / "fake_gpu_operator_sim.py"


def _load():
    spec = importlib.util.spec_from_file_location("fake_gpu_operator_sim_under_test", str(SIM_FILE))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sim = _load()
NODE = "kai-lab-vm"


def pod(name, gpus, namespace="kai-lab", created="2026-11-29T20:08:00Z", node=NODE, phase="Running"):
    container = {"name": "main"}
    if gpus is not None:
        container["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    return {"metadata": {"name": name, "namespace": namespace, "creationTimestamp": created},
            "spec": {"nodeName": node, "containers": [container]}, "status": {"phase": phase}}


def owners(topology):
    return [g["status"]["allocatedBy"]["pod"] or None for g in topology["gpus"]]


# ---------------------------------------------------------------- ids

def test_gpu_id_is_deterministic():
    assert sim.gpu_id("kwok-node-0", 0) == "GPU-78e893ca-f584-5717-ba7f-4e256b599bab"
    assert sim.gpu_id("kwok-node-0", 0) == sim.gpu_id("kwok-node-0", 0)
    assert sim.gpu_id("kwok-node-0", 1) != sim.gpu_id("kwok-node-0", 0)
    assert sim.gpu_id("kwok-node-1", 0) != sim.gpu_id("kwok-node-0", 0)


def test_recorded_shared_gpu_is_a_gpu_of_the_lab_node(fixtures):
    reservation = fixtures.finished()["reservation_pods"][0]
    recorded = reservation["metadata"]["annotations"]["run.ai/reserve_for_gpu_index"]
    assert recorded == sim.gpu_id(NODE, 2)


def test_node_topology_starts_unallocated():
    topology = sim.node_topology(NODE, 4, "Tesla-K80", 11441)
    assert [g["id"] for g in topology["gpus"]] == [sim.gpu_id(NODE, i) for i in range(4)]
    assert owners(topology) == [None] * 4
    assert topology["gpuProduct"] == "Tesla-K80" and topology["gpuMemory"] == 11441


# ---------------------------------------------------------------- pools

def test_pool_of_old_format_as_the_role_writes_it():
    topology = {"nodePools": {"default": {"gpuProduct": "Tesla-K80", "gpuCount": 4, "gpuMemory": 11441}},
                "nodePoolLabelKey": "run.ai/simulated-gpu-node-pool"}
    assert sim.pool_of(topology, "default") == (4, "Tesla-K80", 11441)


def test_pool_of_old_format_defaults():
    assert sim.pool_of({"nodePools": {"default": {}}}, "default") == (2, "Tesla-K80", 11441)
    assert sim.pool_of({"nodePools": {"default": None}}, "default") == (2, "Tesla-K80", 11441)


def test_pool_of_new_cluster_config_format():
    topology = {"nodePools": {"a100": {"gpu": {"overrides": {
        "device_defaults": {"name": "NVIDIA A100-SXM4-40GB", "memory": {"total_bytes": 40 * 1024 ** 3}},
        "devices": [{"index": i} for i in range(8)]}}}}}
    assert sim.pool_of(topology, "a100") == (8, "NVIDIA A100-SXM4-40GB", 40960)


def test_pool_of_unknown_pool_names_it():
    with pytest.raises(KeyError) as info:
        sim.pool_of({"nodePools": {"default": {}}}, "h100")
    assert "h100" in str(info.value)


def test_the_pool_label_is_the_topologys_and_none_is_named():
    """The nodes served are those of the topology's nodePoolLabelKey (the role writes kai/gpu.py's); no copy of
    the key in the process: a topology without it is named, not served under a guessed key."""
    class Core(object):
        def __init__(self, data):
            self.data = data

        def read_namespaced_config_map(self, name, namespace):
            return type("ConfigMap", (), {"data": self.data})()

    operator = sim.Operator(Core({"topology.yml": "nodePoolLabelKey: x-example.org/pool\nnodePools: {}\n"}),
                            {"TOPOLOGY_CM_NAMESPACE": "gpu-operator"})
    assert operator.pool_label is None
    operator.cluster_topology()
    assert operator.pool_label == "x-example.org/pool"
    with pytest.raises(ValueError) as info:
        sim.Operator(Core({"topology.yml": "nodePools: {}\n"}), {"TOPOLOGY_CM_NAMESPACE": "gpu-operator"}).cluster_topology()
    assert "gpu-operator/topology" in str(info.value) and "nodePoolLabelKey" in str(info.value)


# ---------------------------------------------------------------- allocation

def test_first_free_gpus_in_order_then_freed_when_pods_go():
    topology = sim.node_topology(NODE, 4, "Tesla-K80", 11441)
    a = pod("a", 1, created="2026-11-29T20:00:01Z")
    b = pod("b", 2, created="2026-11-29T20:00:02Z")
    assert sim.reconcile_allocations(topology, [b, a]) is True  # oldest first, whatever the order given
    assert owners(topology) == ["a", "b", "b", None]
    assert sim.gpu_of(topology, "kai-lab", "b") == sim.gpu_id(NODE, 1)
    # Nothing new: nothing changes.
    assert sim.reconcile_allocations(topology, [a, b]) is False
    # a is gone: its GPU is free again and the next pod takes it.
    c = pod("c", 1, created="2026-11-29T20:00:03Z")
    assert sim.reconcile_allocations(topology, [b, c]) is True
    assert owners(topology) == ["c", "b", "b", None]
    assert sim.gpu_of(topology, "kai-lab", "a") is None


def test_more_gpus_asked_than_free_takes_what_is_free():
    topology = sim.node_topology(NODE, 2, "Tesla-K80", 11441)
    sim.reconcile_allocations(topology, [pod("big", 3)])
    assert owners(topology) == ["big", "big"]


def test_same_name_in_another_namespace_is_another_pod():
    topology = sim.node_topology(NODE, 2, "Tesla-K80", 11441)
    sim.reconcile_allocations(topology, [pod("x", 1, namespace="a")])
    sim.reconcile_allocations(topology, [pod("x", 1, namespace="b")])
    assert [g["status"]["allocatedBy"]["namespace"] for g in topology["gpus"]] == ["b", ""]


def test_replaying_the_lab_gives_the_recorded_shared_gpu(fixtures):
    """The lab's sequence of GPU holders on the node, replayed through
    reconcile_allocations, hands the reservation pod the card the real sim
    annotated (GPU index 2)."""
    final = fixtures.finished()
    pods = dict((p["metadata"]["name"], p) for p in final["pods"])
    tr1 = fixtures.find(fixtures.after("preempt")["pods"], "tr-1")
    tr2 = copy.deepcopy(tr1)
    tr2["metadata"]["name"] = "tr-2"
    reservation = final["reservation_pods"][0]
    p1, nl1, bd1 = pods["p1"], pods["nl-1"], pods["bd-1"]
    # Fraction pods hold no whole GPU; the reservation pod does.
    assert not sim.holds_gpus(pods["fr-1"]) and sim.holds_gpus(reservation)
    topology = sim.node_topology(NODE, 4, "Tesla-K80", 11441)
    for holders in ([p1], [p1, nl1], [p1, nl1, tr1, tr2], [p1, nl1, tr1, bd1], [p1, nl1, bd1, reservation]):
        sim.reconcile_allocations(topology, [p for p in holders if sim.holds_gpus(p)])
    recorded = reservation["metadata"]["annotations"]["run.ai/reserve_for_gpu_index"]
    assert sim.gpu_of(topology, "kai-resource-reservation", reservation["metadata"]["name"]) == recorded


def test_holds_gpus_only_for_placed_unfinished_whole_gpu_pods():
    assert sim.holds_gpus(pod("a", 1))
    assert not sim.holds_gpus(pod("a", None))
    assert not sim.holds_gpus(pod("a", 1, node=None))
    assert not sim.holds_gpus(pod("a", 1, phase="Succeeded"))
    leaving = pod("a", 1)
    leaving["metadata"]["deletionTimestamp"] = "2026-11-29T20:09:00Z"
    assert not sim.holds_gpus(leaving)
    garbled = pod("a", 1)
    garbled["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "lots"
    assert sim.whole_gpu_limit(garbled) == 0


# ---------------------------------------------------------------- labels

@pytest.mark.parametrize("product, label", [
    ("Tesla-K80", "Tesla-K80"),
    ("NVIDIA A100-SXM4-40GB", "NVIDIA-A100-SXM4-40GB"),
    ("(Tesla) K80!", "Tesla--K80"),
    ("NVIDIA H100 80GB HBM3 " + "x" * 80, ("NVIDIA-H100-80GB-HBM3-" + "x" * 80)[:63]),
])
def test_gpu_labels_sanitize_the_product_name(product, label):
    labels = sim.gpu_labels(sim.node_topology(NODE, 4, product, 11441))
    value = labels["nvidia.com/gpu.product"]
    assert value == label
    assert len(value) <= 63
    assert value[0].isalnum() and value[-1].isalnum()


def test_gpu_labels_values():
    labels = sim.gpu_labels(sim.node_topology(NODE, 4, "Tesla-K80", 11441))
    assert labels["nvidia.com/gpu.count"] == "4"
    assert labels["nvidia.com/gpu.memory"] == "11441"
    assert labels["run.ai/fake.gpu"] == "true"
    assert labels["nvidia.com/gpu.present"] == "true"
    assert all(isinstance(v, str) for v in labels.values())
