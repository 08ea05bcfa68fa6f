# -*- coding: utf-8 -*-
"""kai/objects.py and kai/events.py, KAI's meaning of its objects, against objects recorded from the
real sim cluster (KAI v0.12.0) after each lab step."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import events as kai_events
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu

import lab_states

NL1_PODGROUP = "pg-nl-1-fc2afa05-82bc-4911-b344-9ee5d9ef28cc"
P1_PODGROUP = "pg-p1-10e7334f-32cb-4415-9625-10ec1251729a"
SHARED_GPU = "GPU-8a252772-30e0-533f-9d07-32784ec7e87c"
OVER_LIMIT_TEXT = ("OverLimit: nolimit quota has reached the allowable limit of GPUs. Limit is 0 GPUs, "
                   "currently 0 GPUs allocated and workload requested 1 GPUs.")


# ---------------------------------------------------------------- queues

def test_unset_limit_of_nolimit_queue_means_zero_not_unlimited(fixtures):
    state = fixtures.after("nolimit")
    queue = fixtures.find(state["queues"], "nolimit")
    # The recorded object really has no limit key (the lab's trap).
    assert "limit" not in queue["spec"]["resources"]["gpu"]
    gpu = kai.queue_resource(queue)
    assert gpu["limit"] == 0
    assert gpu["limit_set"] is False
    assert gpu["quota"] == 1
    assert kai.effective_gpu_limit(queue) == 0


def test_patched_limit_minus_one_means_unlimited(fixtures):
    state = fixtures.after("limit_fix")
    queue = fixtures.find(state["queues"], "nolimit")
    gpu = kai.queue_resource(queue)
    assert gpu["limit"] == kai.UNLIMITED == -1
    assert gpu["limit_set"] is True
    assert kai.effective_gpu_limit(queue) is None
    # Only the limit changed between step 3 and step 4.
    before = kai.queue_summary(fixtures.find(fixtures.after("nolimit")["queues"], "nolimit"))
    after = kai.queue_summary(queue)
    assert (before["parent"], before["gpu"]["quota"]) == (after["parent"], after["gpu"]["quota"]) == ("lab", 1)


def test_queue_summary_of_recorded_lab_hierarchy(fixtures):
    queues = fixtures.after("queues")["queues"]
    summaries = dict((kai.name_of(q), kai.queue_summary(q)) for q in queues)
    assert summaries["research"]["parent"] == "lab"
    assert summaries["research"]["gpu"]["quota"] == 2
    assert kai.effective_gpu_limit(fixtures.find(queues, "research")) == 4
    assert summaries["lab"]["parent"] is None
    assert kai.effective_gpu_limit(fixtures.find(queues, "lab")) is None
    assert summaries["ops"]["cpu"] == {"quota": -1, "limit": -1, "limit_set": True, "over_quota_weight": 1}


def test_queue_numbers_written_as_strings_or_floats_are_normalised():
    queue = {"spec": {"resources": {"gpu": {"quota": "2", "limit": 4.0}}}}
    assert kai.queue_resource(queue) == {"quota": 2, "limit": 4, "limit_set": True, "over_quota_weight": 1}
    assert kai.queue_resource({"spec": {"resources": {"gpu": {"quota": 0.5}}}})["quota"] == 0.5


# ---------------------------------------------------------------- pods and podgroups

def test_podgroup_name_of_p1_is_what_the_learner_writes(fixtures):
    state = fixtures.after("podgroup")
    p1 = fixtures.find(state["pods"], "p1")
    assert kai.podgroup_name_of_pod(p1) == P1_PODGROUP
    assert state["files"]["podgroup.txt"].strip() == P1_PODGROUP
    podgroup = fixtures.find(state["podgroups"], P1_PODGROUP)
    summary = kai.podgroup_summary(podgroup)
    assert summary["owner"] == {"kind": "Pod", "name": "p1"}
    assert summary["queue"] == "research"
    assert kai.pod_queue(p1) == "research"
    assert kai_gpu.gpu_limit(p1) == 1
    assert kai.scheduler_name(p1) == kai.SCHEDULER_NAME


def test_podgroup_name_absent_for_default_scheduled_pod(fixtures):
    pod = fixtures.mistakes()["default_scheduler_pod"]
    assert kai.podgroup_name_of_pod(pod) is None
    assert kai.scheduler_name(pod) == "default-scheduler"


def test_scheduler_name_defaults_to_default_scheduler_when_missing():
    assert kai.scheduler_name({"spec": {}}) == "default-scheduler"
    assert kai.scheduler_name({"spec": {"schedulerName": "kai-scheduler"}}) == "kai-scheduler"


def test_over_limit_reason_of_nl1_podgroup(fixtures):
    state = fixtures.after("nolimit")
    nl1 = fixtures.find(state["pods"], "nl-1")
    assert kai.pod_phase(nl1) == "Pending"
    podgroup = fixtures.find(state["podgroups"], kai.podgroup_name_of_pod(nl1))
    assert kai.name_of(podgroup) == NL1_PODGROUP
    reasons = kai.scheduling_reasons(podgroup)
    assert [r["reason"] for r in reasons] == [kai.REASON_OVER_LIMIT]
    assert kai.OVER_LIMIT_MESSAGE_MARK in reasons[0]["message"]
    assert "Limit is 0 GPUs" in reasons[0]["message"]
    assert kai.has_reason(podgroup, kai.REASON_OVER_LIMIT)
    assert not kai.has_reason(podgroup, kai.REASON_POD_SCHEDULING_ERRORS)
    # The sentence the learner copies into nolimit.txt.
    assert kai.condition_text(podgroup) == OVER_LIMIT_TEXT
    assert state["files"]["nolimit.txt"].strip() == OVER_LIMIT_TEXT
    cond = kai.scheduling_conditions(podgroup)[0]
    assert cond["type"] == "UnschedulableOnNodePool"
    assert cond["node_pool"] == "default"


def test_running_podgroup_without_conditions_has_no_reasons(fixtures):
    podgroup = fixtures.find(fixtures.after("podgroup")["podgroups"], P1_PODGROUP)
    assert kai.scheduling_reasons(podgroup) == []
    assert kai.condition_text(podgroup) is None
    assert not kai.has_reason(podgroup, kai.REASON_OVER_LIMIT)


def test_gang_reason_text(fixtures):
    state = fixtures.after("gang")
    gang = fixtures.find(state["podgroups"], "gang")
    summary = kai.podgroup_summary(gang)
    assert summary["min_member"] == 3
    reasons = kai.scheduling_reasons(gang)
    assert [r["reason"] for r in reasons] == [kai.REASON_POD_SCHEDULING_ERRORS]
    assert kai.has_reason(gang, kai.REASON_POD_SCHEDULING_ERRORS)
    assert not kai.has_reason(gang, kai.REASON_OVER_LIMIT)
    assert kai.GANG_MESSAGE_MARK in reasons[0]["message"]
    assert "Resources were found for 2 pods while 3 are required for gang scheduling" in reasons[0]["message"]
    text = kai.condition_text(gang)
    assert text.startswith("PodSchedulingErrors: Resources were found for 2 pods while 3 are required")
    assert state["files"]["gang.txt"].strip() == text
    # All three gang pods point at the gang PodGroup and none is placed.
    gang_pods = [p for p in state["pods"] if kai.name_of(p).startswith("gang-")]
    assert sorted(kai.name_of(p) for p in gang_pods) == ["gang-0", "gang-1", "gang-2"]
    assert all(kai.podgroup_name_of_pod(p) == "gang" and not kai_gpu.is_placed(p) for p in gang_pods)


# ---------------------------------------------------------------- GPUs

@pytest.mark.parametrize("step", ["fraction", "report"])
def test_gpu_ledger_and_shared_device(fixtures, step):
    state = fixtures.after(step)
    all_pods = state["pods"] + state["reservation_pods"]
    assert kai_gpu.gpu_allocated(all_pods) == 4
    # The shared card is counted through the reservation pod only.
    assert kai_gpu.gpu_allocated(state["pods"]) == 3
    reservations = kai_gpu.reservation_pods(all_pods)
    assert len(reservations) == 1
    reserved = kai_gpu.reserved_gpu(reservations[0])
    assert reserved == SHARED_GPU
    fr1 = fixtures.find(state["pods"], "fr-1")
    fr2 = fixtures.find(state["pods"], "fr-2")
    assert kai_gpu.gpu_limit(fr1) == 0 and kai_gpu.gpu_fraction(fr1) == 0.5
    dev1 = kai_gpu.resolve_env(fr1, state["configmaps"])
    dev2 = kai_gpu.resolve_env(fr2, state["configmaps"])
    assert dev1 == dev2 == reserved
    assert kai_gpu.gpu_group(fr1) == kai_gpu.gpu_group(fr2) == kai_gpu.gpu_group(reservations[0]) is not None


def test_resolve_env_follows_the_configmap_reference(fixtures):
    state = fixtures.finished()
    fr1 = fixtures.find(state["pods"], "fr-1")
    source = kai_gpu.env_source(fr1)
    assert source == ("configmap", "fr-1-5dncjcp-shared-gpu-0", "NVIDIA_VISIBLE_DEVICES")
    assert kai_gpu.shared_gpu_configmap_names(fr1) == ["fr-1-5dncjcp-shared-gpu-0"]
    # Without the ConfigMap (not filled yet) there is no value, not an error.
    assert kai_gpu.resolve_env(fr1, {}) is None
    # A plain value wins directly.
    pod = {"spec": {"containers": [{"env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "GPU-x"}]}]}}
    assert kai_gpu.resolve_env(pod, {}) == "GPU-x"
    assert kai_gpu.resolve_env(fixtures.find(state["pods"], "p1"), state["configmaps"]) is None


@pytest.mark.parametrize("step", ["fraction", "report"])
def test_kais_shared_device_is_read_from_the_configmap_the_pod_owns_only(fixtures, step):
    """kai_shared_device on the recorded pair (KAI v0.12.0), then each way a pod's creator could name a device."""
    state = fixtures.after(step)
    configmaps = state["configmaps"]
    fr1, fr2 = fixtures.find(state["pods"], "fr-1"), fixtures.find(state["pods"], "fr-2")
    assert kai_gpu.kai_shared_device(fr1, configmaps) == kai_gpu.kai_shared_device(fr2, configmaps) == (SHARED_GPU, None)
    name = kai_gpu.env_source(fr1)[1]
    elsewhere = copy.deepcopy(configmaps)
    elsewhere[name]["metadata"]["namespace"] = "default"
    empty = copy.deepcopy(configmaps)
    empty[name]["data"].pop("NVIDIA_VISIBLE_DEVICES")
    plain = copy.deepcopy(fr1)
    plain["spec"]["containers"][0]["env"][0] = {"name": "NVIDIA_VISIBLE_DEVICES", "value": SHARED_GPU}
    secret = copy.deepcopy(fr1)
    secret["spec"]["containers"][0]["env"][0]["valueFrom"] = {"secretKeyRef": {"name": "s", "key": "k"}}
    second = copy.deepcopy(fr1)
    second["spec"]["containers"].append({"name": "side", "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "GPU-x"}]})
    other_pods = copy.deepcopy(fr1)
    other_pods["spec"]["containers"][0]["env"] = fr2["spec"]["containers"][0]["env"]
    assert kai_gpu.kai_shared_device(fr1, elsewhere) == (None, (kai_gpu.NO_CONFIGMAP, name))
    assert kai_gpu.kai_shared_device(fr1, {}) == (None, (kai_gpu.NO_CONFIGMAP, name))
    assert kai_gpu.kai_shared_device(fr1, empty) == (None, (kai_gpu.NO_VALUE, name))
    assert kai_gpu.kai_shared_device(plain, configmaps) == (None, (kai_gpu.NOT_FROM_CONFIGMAP, None))
    assert kai_gpu.kai_shared_device(secret, configmaps) == (None, (kai_gpu.NOT_FROM_CONFIGMAP, None))
    assert kai_gpu.kai_shared_device(second, configmaps) == (None, (kai_gpu.NOT_FROM_CONFIGMAP, None))
    assert kai_gpu.kai_shared_device(other_pods, configmaps) == (None, (kai_gpu.NOT_OWNED, kai_gpu.env_source(fr2)[1]))
    assert kai_gpu.kai_shared_device(fixtures.find(state["pods"], "p1"), configmaps) == (None, (kai_gpu.NO_VARIABLE, None))
    # The pod's own say-so, as the container would see it, is still what resolve_env reads.
    assert kai_gpu.resolve_env(plain, {}) == SHARED_GPU


def test_is_placed_excludes_unbound_finished_and_terminating_pods():
    base = {"spec": {"nodeName": "n", "containers": [{"resources": {"limits": {"nvidia.com/gpu": "2"}}}]},
            "status": {"phase": "Running"}}
    assert kai_gpu.gpu_allocated([base]) == 2
    unbound = copy.deepcopy(base)
    del unbound["spec"]["nodeName"]
    done = copy.deepcopy(base)
    done["status"]["phase"] = "Succeeded"
    leaving = copy.deepcopy(base)
    leaving["metadata"] = {"deletionTimestamp": "2026-01-01T00:00:00Z"}
    pending_on_node = copy.deepcopy(base)
    pending_on_node["status"]["phase"] = "Pending"
    assert kai_gpu.gpu_allocated([unbound, done, leaving]) == 0
    assert kai_gpu.gpu_allocated([pending_on_node]) == 2


def test_gang_pods_pending_hold_no_gpu(fixtures):
    state = fixtures.after("gang")
    # p1 and nl-1 run; the three gang pods are Pending without a node.
    assert kai_gpu.gpu_allocated(state["pods"]) == 2


# ---------------------------------------------------------------- events

def test_eviction_event_names_the_victim_that_is_gone(fixtures):
    state = fixtures.after("preempt")
    evictions = kai_events.eviction_events(state["events"])
    assert len(evictions) == 1
    assert evictions[0]["victim"] == "tr-2"
    assert evictions[0]["object"].startswith("PodGroup/pg-tr-2-")
    assert evictions[0]["source"] == "kai-scheduler"
    assert "pg-bd-1-" in evictions[0]["message"]
    names = [kai.name_of(p) for p in state["pods"]]
    assert "tr-2" not in names and "tr-1" in names


def test_no_eviction_before_preemption(fixtures):
    assert kai_events.eviction_events(fixtures.after("gang")["events"]) == []


def test_scheduled_by_tells_kai_from_default_scheduler(fixtures):
    bad = fixtures.mistakes()
    assert kai_events.scheduled_by(bad["default_scheduler_events"], "no-kai") == "default-scheduler"
    events = fixtures.after("podgroup")["events"]
    assert kai_events.scheduled_by(events, "p1") == kai.SCHEDULER_NAME
    # Never scheduled: no answer.
    assert kai_events.scheduled_by(fixtures.after("gang")["events"], "gang-0") is None


def test_events_for_orders_oldest_first(fixtures):
    events = kai_events.events_for(fixtures.after("limit_fix")["events"], "Pod", "nl-1")
    assert [e["reason"] for e in events] == ["Unschedulable", "Scheduled", "Bound"]


# ---------------------------------------------------------------- KAI v0.17+: conditions cleared

def test_cleared_conditions_differ_from_recorded_only_by_scheduling_conditions(fixtures):
    """KAI v0.17+'s view of a recorded v0.12.0 state (lab_states.conditions_cleared): every PodGroup is scheduled
    after the limit fix and in the finished lab, so only their schedulingConditions go."""
    for recorded in (fixtures.after("limit_fix"), fixtures.finished()):
        derived = lab_states.conditions_cleared(recorded)
        assert any("schedulingConditions" in pg.get("status", {}) for pg in recorded["podgroups"])
        assert not any("schedulingConditions" in pg.get("status", {}) for pg in derived["podgroups"])
        for pg in recorded["podgroups"]:
            pg.get("status", {}).pop("schedulingConditions", None)
        assert derived == recorded


def test_cleared_conditions_leave_no_reasons_but_events_keep_over_limit(fixtures):
    state = lab_states.conditions_cleared(fixtures.after("limit_fix"))
    nl1 = fixtures.find(state["pods"], "nl-1")
    assert kai.pod_phase(nl1) == "Running"
    podgroup = fixtures.find(state["podgroups"], kai.podgroup_name_of_pod(nl1))
    assert podgroup is not None
    assert kai.scheduling_conditions(podgroup) == []
    assert kai.scheduling_reasons(podgroup) == []
    assert kai.has_reason(podgroup, kai.REASON_OVER_LIMIT) is False
    assert kai.condition_text(podgroup) is None
    assert kai_events.unschedulable_messages(state["events"], "Pod", "nl-1") == [OVER_LIMIT_TEXT]
    assert kai_events.unschedulable_messages(state["events"], "PodGroup", NL1_PODGROUP) == [OVER_LIMIT_TEXT]
    # p1 was never unschedulable.
    assert kai_events.unschedulable_messages(state["events"], "Pod", "p1") == []
