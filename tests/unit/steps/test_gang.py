# -*- coding: utf-8 -*-
"""Step 5, the gang: the Job of the lab text, the explicit PodGroup before KAI
v0.14.7, and a stale gang.txt."""

from __future__ import annotations

import pytest

from ansible_collections.gsb.kai_lab.plugins.module_utils import kai
from ansible_collections.gsb.kai_lab.plugins.module_utils import kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.solver import StepFailed, StepRunner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import gang

from lab_testing import NS, RECORDED_KAI


def by_name(objs):
    return dict((o["metadata"]["name"], o) for o in objs)


def all_gpu_resources(pod_spec):
    """Every nvidia.com/gpu under any container's limits or requests."""
    found = []
    for container in pod_spec.get("containers") or []:
        for part in ("limits", "requests"):
            value = ((container.get("resources") or {}).get(part) or {}).get(kai_gpu.GPU_RESOURCE)
            if value is not None:
                found.append((container["name"], part, value))
    return found


def test_gang_job_annotation_on_the_job_itself():
    job = gang.gang_job(NS)
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
    podgroup = gang.gang_podgroup(NS)
    assert podgroup["spec"] == {"minMember": 3, "queue": "research", "priorityClassName": "train"}
    pods = gang.gang_pods(NS)
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
    assert gang.job_gang_supported(version) is supported


def test_stale_gang_txt_from_another_cluster_does_not_skip_the_gang(tmp_path, fixtures, fake_cluster):
    """A gang.txt left from an earlier lab must not make step 5 count as done
    on a cluster that never saw the gang (no gang events, no later pods)."""
    state = fixtures.sim("04-limit_fix")
    workdir = fixtures.write_files(tmp_path / "gsb-kai", fixtures.sim("08-report")["files"])
    cluster = fake_cluster(state)
    runner = StepRunner(cluster, NS, workdir, RECORDED_KAI, timeout=0.2)
    with pytest.raises(StepFailed):
        runner.run("gang")  # the fake cluster never decides; what matters is it tried
    assert any(call[0] == "apply" and call[1] == "PodGroup" for call in cluster.writes), cluster.writes
