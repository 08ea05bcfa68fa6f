# -*- coding: utf-8 -*-
"""Issue 33 rows 3 and 5: what a learner who may write every object (root with the admin kubeconfig) can
not pass off as KAI's doing.

Row 3: a pod counts as placed by KAI only if KAI's binder bound it. Every pod KAI placed in the
recordings (fixtures/sim, KAI v0.12.0; fixtures/kai-v0.17.0, copied from shared/fixtures/kai-v0.17.0)
carries the binder's PodBound condition; a pod created with spec.nodeName never does: the reservation
pods the binder itself creates with spec.nodeName show it (Initialized, Ready, ContainersReady only), as
does gpu-reservation-d7bc805b3ef82134 of the solve run (fixtures/kai-v0.17.0/solve2-reservation-pod.json,
from shared/fixtures/kai-v0.17.0/solve2-watch/pods-kai-resource-reservation-watch.json, its last state).
The forged pods below are the real ones as a pod created with spec.nodeName is on the sim (KWOK): no
PodBound, no PodScheduled, no Scheduled or Bound event.

Row 5: a fraction pair counts only with one reservation pod of KAI holding the shared GPU.
"""

from __future__ import annotations

import copy
import json

import pytest

import kai_v017 as hand
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry
import lab_states
from lab_testing import HANGUL, NS, OTHER_CLUSTER_GPU, by_name, checks

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import provenance
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.grader import Grader, Snapshot
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import FAILED, PASSED

RESERVATION_POD = hand.FIXTURE / "solve2-reservation-pod.json"


@pytest.fixture
def graded(tmp_path, fake_cluster, fixtures):
    counter = {"n": 0}

    def run(state, kai_version, lang="en"):
        counter["n"] += 1
        workdir = fixtures.write_files(tmp_path / ("w%d" % counter["n"]), state["files"])
        return Grader(Snapshot(fake_cluster(state), NS, workdir, kai_version=kai_version), lang=lang).run()

    return run


def finished(fixtures, version):
    """The finished lab as recorded on the sim (v0.12.0) or by hand on real v0.17.0."""
    return copy.deepcopy(fixtures.finished()) if version == "v0.12.0" else lab_states.finished(lab_states.KAI_V017)


def created_with_node_name(state, name):
    """Pod `name` as it is when created with spec.nodeName: KAI's binder never bound it (no PodBound, no
    PodScheduled on KWOK, no Scheduled or Bound event)."""
    pod = by_name(state["pods"])[name]
    pod["status"]["conditions"] = [c for c in pod["status"]["conditions"] if c["type"] not in ("PodBound", "PodScheduled")]
    state["events"] = [e for e in state["events"] if (e["involvedObject"]["kind"], e["involvedObject"]["name"]) != ("Pod", name)]
    return pod


# ---------------------------------------------------------------- the rule, on real objects

@pytest.mark.parametrize("version", ["v0.12.0", hand.KAI_VERSION])
def test_every_pod_kai_placed_carries_the_binders_podbound_condition(fixtures, version):
    state = finished(fixtures, version)
    running = [p for p in state["pods"] if p["status"]["phase"] == "Running"]
    assert len(running) == 5
    for pod in running:
        assert provenance.bound_at(pod), pod["metadata"]["name"]
        assert provenance.bound_at(pod) >= pod["metadata"]["creationTimestamp"]
    assert provenance.bound_at(by_name(hand.hand_state("limit_fix")["pods"])["nl-1"]) == "2026-12-01T06:43:09Z"


def test_pods_created_with_node_name_are_not_bound_by_kai(fixtures):
    """The binder's own reservation pods (created with spec.nodeName), recorded on both KAI versions."""
    created = [json.loads(RESERVATION_POD.read_text()), lab_states.finished(lab_states.KAI_V017)["reservation_pods"][0],
               fixtures.finished()["reservation_pods"][0]]
    for pod in created:
        assert pod["spec"]["nodeName"] == "kai-lab-vm"
        assert provenance.bound_at(pod) is None, pod["metadata"]["name"]


def test_a_podbound_condition_naming_another_node_or_before_the_pod_is_not_the_binders():
    pod = by_name(lab_states.finished(lab_states.KAI_V017)["pods"])["p1"]
    bound = [c for c in pod["status"]["conditions"] if c["type"] == "PodBound"][0]
    for change in ({"message": "Pod bound successfully to node other-node"}, {"status": "False"},
                   {"lastTransitionTime": "2026-12-01T05:00:00Z"}, {"reason": "BindingError"}):
        forged = copy.deepcopy(pod)
        [c for c in forged["status"]["conditions"] if c["type"] == "PodBound"][0].update(change)
        assert provenance.bound_at(forged) is None, change
    assert provenance.bound_at(pod) == bound["lastTransitionTime"]


# ---------------------------------------------------------------- row 3: placed by KAI

NOT_PLACED = "runs on kai-lab-vm, but KAI did not place it"
NOT_PLACED_KO = u"KAI가 배치하지 않았습니다"


@pytest.mark.parametrize("version", ["v0.12.0", hand.KAI_VERSION])
@pytest.mark.parametrize("name, check_id", [
    ("p1", "podgroup.running"), ("nl-1", "limit_fix.running"), ("bd-1", "preempt.build_running"),
    ("fr-1", "fraction.shared"), ("fr-2", "fraction.shared")])
def test_a_pod_created_with_node_name_is_not_placed_by_kai(graded, fixtures, version, name, check_id):
    state = finished(fixtures, version)
    created_with_node_name(state, name)
    en, ko = graded(state, version), graded(copy.deepcopy(state), version, lang="ko")
    check = checks(en)[check_id]
    assert check["status"] == FAILED, (name, check["message"])
    assert "%s %s: it has no PodBound condition from KAI's binder" % (name, NOT_PLACED) in check["message"]
    assert "without spec.nodeName" in check["hint"]
    assert NOT_PLACED_KO in checks(ko)[check_id]["message"] and HANGUL.search(checks(ko)[check_id]["hint"])


@pytest.mark.parametrize("version", ["v0.12.0", hand.KAI_VERSION])
def test_p1_with_node_name_and_no_research_queue_fails_all_three_podgroup_checks(graded, fixtures, version):
    """Row 3 as tried: p1 with schedulerName kai-scheduler and spec.nodeName, no queue research at all."""
    state = finished(fixtures, version)
    created_with_node_name(state, "p1")
    state["queues"] = [q for q in state["queues"] if q["metadata"]["name"] != "research"]
    state["files"]["p1.yaml"] = state["files"]["p1.yaml"].replace(
        "  schedulerName: kai-scheduler\n", "  schedulerName: kai-scheduler\n  nodeName: kai-lab-vm\n")
    assert "nodeName: kai-lab-vm" in state["files"]["p1.yaml"]
    en, ko = graded(state, version), graded(copy.deepcopy(state), version, lang="ko")
    result, result_ko = checks(en), checks(ko)
    assert [result[c.id]["status"] for c in registry.step("podgroup").checks] == [FAILED] * len(registry.step("podgroup").checks)
    assert "p1 sets spec.nodeName kai-lab-vm: a pod that names its node is started without KAI" in \
        result["podgroup.manifest"]["message"]
    assert u"spec.nodeName" in result_ko["podgroup.manifest"]["message"] and HANGUL.search(
        result_ko["podgroup.manifest"]["message"])
    assert "p1 %s" % NOT_PLACED in result["podgroup.running"]["message"]
    assert "p1 %s" % NOT_PLACED in result["podgroup.file"]["message"]
    assert NOT_PLACED_KO in result_ko["podgroup.file"]["message"]


# ---------------------------------------------------------------- row 5: one reservation pod

def second_reservation_pod():
    """A second reservation pod of KAI on the node (the solve run's, real v0.17.0), holding another GPU: what
    is left of fr-2's own GPU once fr-2 is relabelled into fr-1's group and its ConfigMap pointed at fr-1's
    device."""
    pod = json.loads(RESERVATION_POD.read_text())
    pod["metadata"]["annotations"][kai_gpu.RESERVATION_GPU_ANNOTATION] = OTHER_CLUSTER_GPU
    return pod


@pytest.mark.parametrize("version", ["v0.12.0", hand.KAI_VERSION])
def test_fr2_moved_into_fr1s_gpu_group_fails_with_two_reservation_pods(graded, fixtures, version):
    state = finished(fixtures, version)
    groups = set(kai_gpu.gpu_group(p) for p in state["pods"] if p["metadata"]["name"] in ("fr-1", "fr-2"))
    assert len(groups) == 1  # fr-2 carries fr-1's group, and its ConfigMap fr-1's device, as the forger set them
    held = state["reservation_pods"][0]["metadata"]["name"]
    state["reservation_pods"].append(second_reservation_pod())
    en, ko = graded(state, version), graded(copy.deepcopy(state), version, lang="ko")
    check = checks(en)["fraction.shared"]
    assert check["status"] == FAILED, check["message"]
    assert ("2 reservation pods of KAI hold GPUs on kai-lab-vm (gpu-reservation-d7bc805b3ef82134, %s); fr-1 and "
            "fr-2 share one GPU only when one reservation pod holds it" % held) in check["message"] \
        or ("2 reservation pods of KAI hold GPUs on kai-lab-vm (%s, gpu-reservation-d7bc805b3ef82134); fr-1 and "
            "fr-2 share one GPU only when one reservation pod holds it" % held) in check["message"]
    assert u"예약 파드" in checks(ko)["fraction.shared"]["message"]


@pytest.mark.parametrize("version", ["v0.12.0", hand.KAI_VERSION])
def test_only_kais_reservation_pods_hold_the_shared_gpu(graded, fixtures, version):
    """A pod in the reservation namespace without the binder's app label is not KAI's reservation pod: it
    neither holds the GPU nor counts as a second one."""
    state = finished(fixtures, version)
    stranger = copy.deepcopy(state["reservation_pods"][0])
    stranger["metadata"].update(name="learners-pod", uid="learners-pod-uid",
                                labels={kai_gpu.GPU_GROUP_LABEL: kai_gpu.gpu_group(stranger)})
    state["reservation_pods"].append(stranger)
    assert checks(graded(copy.deepcopy(state), version))["fraction.shared"]["status"] == PASSED
    state["reservation_pods"] = [stranger]
    check = checks(graded(state, version))["fraction.shared"]
    assert check["status"] == FAILED
    assert "no reservation pod of KAI holds a GPU on kai-lab-vm" in check["message"], check["message"]
