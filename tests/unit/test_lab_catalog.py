# -*- coding: utf-8 -*-
"""lab_catalog.py: the manifests say what the lab text (shared/lab/lab.en.md)
asks for, and the real cluster kept them as written."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.gsb.kai_lab.plugins.module_utils import kai
from ansible_collections.gsb.kai_lab.plugins.module_utils import lab_catalog as cat

NS = "kai-lab"


def by_name(objs):
    return dict((o["metadata"]["name"], o) for o in objs)


def all_gpu_resources(pod_spec):
    """Every nvidia.com/gpu under any container's limits or requests."""
    found = []
    for container in pod_spec.get("containers") or []:
        for part in ("limits", "requests"):
            value = ((container.get("resources") or {}).get(part) or {}).get(kai.GPU_RESOURCE)
            if value is not None:
                found.append((container["name"], part, value))
    return found


# ---------------------------------------------------------------- step 1

@pytest.mark.parametrize("name, parent, quota, limit", [
    ("lab", None, 4, -1),
    ("research", "lab", 2, 4),
    ("ops", "lab", 2, -1),
])
def test_lab_queues_as_in_the_lab_text(name, parent, quota, limit):
    queue = by_name(cat.lab_queues())[name]
    assert queue["apiVersion"] == "scheduling.run.ai/v2"
    assert queue["kind"] == "Queue"
    assert queue["spec"].get("parentQueue") == parent
    assert queue["spec"]["resources"]["gpu"] == {"quota": quota, "limit": limit}
    for resource in ("cpu", "memory"):
        assert queue["spec"]["resources"][resource] == {"quota": -1, "limit": -1}


def test_exactly_three_lab_queues():
    assert sorted(by_name(cat.lab_queues())) == ["lab", "ops", "research"]


def test_recorded_cluster_kept_the_queues_as_written(fixtures):
    live = by_name(fixtures.sim("01-queues")["queues"])
    for name, manifest in by_name(cat.lab_queues()).items():
        assert live[name]["spec"] == manifest["spec"]


def test_queues_file_of_a_perfect_learner_holds_the_catalog(fixtures):
    written = list(yaml.safe_load_all(fixtures.sim("01-queues")["files"]["queues.yaml"]))
    assert by_name(written) == by_name(cat.lab_queues())


# ---------------------------------------------------------------- steps 2-4

def test_nolimit_queue_has_no_gpu_limit_key():
    queue = cat.nolimit_queue()
    gpu = queue["spec"]["resources"]["gpu"]
    assert "limit" not in gpu
    assert gpu == {"quota": 1}
    assert queue["spec"]["parentQueue"] == "lab"
    assert queue["metadata"]["name"] == "nolimit"
    # KAI reads it as 0 GPUs: nothing can run in it.
    assert kai.effective_gpu_limit(queue) == 0


def test_recorded_nolimit_queue_matches_the_manifest(fixtures):
    live = by_name(fixtures.sim("03-nolimit")["queues"])["nolimit"]
    assert live["spec"] == cat.nolimit_queue()["spec"]


@pytest.mark.parametrize("make, name, queue", [
    (cat.p1, "p1", "research"),
    (cat.nl1, "nl-1", "nolimit"),
])
def test_one_gpu_pods_for_kai(make, name, queue):
    pod = make(NS)
    assert pod["metadata"]["name"] == name
    assert pod["metadata"]["namespace"] == NS
    assert pod["spec"]["schedulerName"] == "kai-scheduler"
    assert pod["metadata"]["labels"] == {"kai.scheduler/queue": queue}
    assert pod["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": 1}}


# ---------------------------------------------------------------- step 5

def test_gang_job_annotation_on_the_job_itself():
    job = cat.gang_job(NS)
    assert job["apiVersion"] == "batch/v1" and job["kind"] == "Job"
    assert job["metadata"]["name"] == "gang" and job["metadata"]["namespace"] == NS
    assert job["metadata"]["annotations"] == {"kai.scheduler/batch-min-member": "3"}
    assert isinstance(job["metadata"]["annotations"]["kai.scheduler/batch-min-member"], str)
    assert job["spec"]["parallelism"] == 3
    # The queue label on both the Job and the pod template.
    assert job["metadata"]["labels"] == {"kai.scheduler/queue": "research"}
    template = job["spec"]["template"]
    assert template["metadata"]["labels"] == {"kai.scheduler/queue": "research"}
    assert template["spec"]["schedulerName"] == "kai-scheduler"
    assert template["spec"]["restartPolicy"] == "Never"
    assert all_gpu_resources(template["spec"]) == [("main", "limits", 1)]


def test_explicit_gang_podgroup_for_old_kai(fixtures):
    podgroup = cat.gang_podgroup(NS)
    assert podgroup["spec"] == {"minMember": 3, "queue": "research", "priorityClassName": "train"}
    pods = cat.gang_pods(NS)
    assert [p["metadata"]["name"] for p in pods] == ["gang-0", "gang-1", "gang-2"]
    assert all(kai.podgroup_name_of_pod(p) == "gang" for p in pods)
    recorded = by_name(fixtures.sim("05-gang")["podgroups"])["gang"]
    assert recorded["spec"] == podgroup["spec"]


@pytest.mark.parametrize("version, supported", [
    ("v0.12.0", False),
    ("v0.14.6", False),
    ("v0.14.7", True),
    ("v0.18.6", True),
    ("0.18.6", True),
    ("v1.0.0", True),
    (None, False),
])
def test_job_gang_version_gate(version, supported):
    assert cat.job_gang_supported(version) is supported


def test_version_tuple():
    assert cat.version_tuple("v0.18.6") == (0, 18, 6)
    assert cat.version_tuple("v0.14") == (0, 14, 0)
    assert cat.version_tuple("v0.17.1-rc.2") == (0, 17, 1)


# ---------------------------------------------------------------- steps 6-7

def test_train_and_build_pods():
    trains = by_name(cat.train_pods(NS))
    assert sorted(trains) == ["tr-1", "tr-2"]
    assert all(p["spec"]["priorityClassName"] == "train" for p in trains.values())
    build = cat.build_pod(NS)
    assert build["metadata"]["name"] == "bd-1"
    assert build["spec"]["priorityClassName"] == "build"
    for pod in list(trains.values()) + [build]:
        assert kai.pod_queue(pod) == "research"
        assert kai.gpu_limit(pod) == 1
        assert pod["spec"]["schedulerName"] == "kai-scheduler"


def test_fraction_pods_have_the_annotation_and_no_gpu_resource():
    pods = by_name(cat.fraction_pods(NS))
    assert sorted(pods) == ["fr-1", "fr-2"]
    for pod in pods.values():
        assert pod["metadata"]["annotations"] == {"gpu-fraction": "0.5"}
        assert isinstance(pod["metadata"]["annotations"]["gpu-fraction"], str)
        assert all_gpu_resources(pod["spec"]) == []
        assert "resources" not in pod["spec"]["containers"][0]
        assert pod["spec"]["schedulerName"] == "kai-scheduler"
        assert kai.pod_queue(pod) == "research"


def test_fraction_yaml_keeps_the_annotation_a_string(fixtures):
    """yaml.safe_dump quotes '0.5' so kubectl does not reject a float annotation."""
    docs = list(yaml.safe_load_all(fixtures.sim("07-fraction")["files"]["fraction.yaml"]))
    assert [d["metadata"]["annotations"]["gpu-fraction"] for d in docs] == ["0.5", "0.5"]


def test_steps_are_the_lab_eight_in_order():
    assert [s["id"] for s in cat.STEPS] == list(cat.STEP_IDS)
    assert [s["number"] for s in cat.STEPS] == list(range(1, 9))
    assert all(set(s["title"]) == {"en", "ko"} for s in cat.STEPS)
    assert cat.step("fraction")["files"] == ["fraction.yaml"]
    with pytest.raises(KeyError):
        cat.step("nope")
