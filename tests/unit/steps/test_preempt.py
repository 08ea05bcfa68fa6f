# -*- coding: utf-8 -*-
"""Step 6, build evicts train: the pods, the victim KAI chose, expired events."""

from __future__ import annotations

import copy

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import preempt
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import FAILED, PASSED, UNVERIFIED

from lab_testing import NS, both_langs, by_name, checks, ids_with, solved
import lab_states


def test_train_and_build_pods():
    trains = by_name(preempt.train_pods(NS))
    assert sorted(trains) == ["tr-1", "tr-2"]
    assert all(p["spec"]["priorityClassName"] == "train" for p in trains.values())
    build = preempt.build_pod(NS)
    assert build["metadata"]["name"] == "bd-1"
    assert build["spec"]["priorityClassName"] == "build"
    for pod in list(trains.values()) + [build]:
        assert kai.pod_queue(pod) == "research"
        assert kai_gpu.gpu_limit(pod) == 1
        assert pod["spec"]["schedulerName"] == "kai-scheduler"


def test_p1_evicted_by_kai_in_step_6_is_not_held_against_the_learner(grade, fixtures):
    """KAI may pick p1 (also priority train, queue research) as the victim."""
    state, files = solved(fixtures)
    p1 = fixtures.find(state["pods"], "p1")
    state["pods"].remove(p1)
    state["podgroups"] = [pg for pg in state["podgroups"] if not pg["metadata"]["name"].startswith("pg-p1-")]
    tr2 = copy.deepcopy(fixtures.find(fixtures.after("preempt")["pods"], "tr-1"))
    tr2["metadata"]["name"] = "tr-2"
    state["pods"].append(tr2)  # tr-1 was deleted in step 7, tr-2 remains
    evict = [e for e in state["events"] if e["reason"] == "Evict"][0]
    evict["message"] = evict["message"].replace("kai-lab/tr-2", "kai-lab/p1")
    # KAI reports the eviction on the victim's PodGroup (issue 18: an Evict about another PodGroup is no proof).
    evict["involvedObject"]["name"] = p1["metadata"]["annotations"]["pod-group-name"]
    result, _ = grade(state, files)
    assert checks(result)["podgroup.running"]["status"] == PASSED
    assert "preempted" in checks(result)["podgroup.running"]["evidence"]["evicted"]
    assert checks(result)["preempt.evicted"]["status"] == PASSED
    assert checks(result)["preempt.evicted"]["evidence"]["victim"] == "p1"
    assert ids_with(result, FAILED) == []
    # podgroup.txt is matched with the PodGroup KAI's Evict event names (the shared record of evictions).
    assert ids_with(result, UNVERIFIED) == []
    assert checks(result)["podgroup.file"]["evidence"]["podgroup"] == p1["metadata"]["annotations"]["pod-group-name"]
    assert "kai-lab/p1 was preempted" in checks(result)["podgroup.file"]["evidence"]["evicted"]


def test_build_pod_with_wrong_priority(grade, fixtures):
    state, files = solved(fixtures)
    fixtures.find(state["pods"], "bd-1")["spec"]["priorityClassName"] = "train"
    result, _ = grade(state, files)
    assert "preempt.build_running" in ids_with(result, FAILED)
    assert "priorityClassName is train, expected build" in checks(result)["preempt.build_running"]["message"]


def test_expired_step6_events_leave_preempt_unverified_not_failed(grade, fixtures):
    """An hour after step 6 the Evict event is gone while later events remain."""
    state, files = solved(fixtures)
    state["events"] = [e for e in state["events"] if e["involvedObject"]["name"].startswith("fr-")]
    result, _ = grade(state, files)
    assert checks(result)["preempt.evicted"]["status"] == UNVERIFIED
    assert checks(result)["preempt.build_running"]["status"] == PASSED


# ---------------------------------------------------------------- expired events name the one evicted

def test_expired_events_with_one_train_pod_gone_name_that_one(grade, fixtures):
    """After step 6 (tr-2 evicted, tr-1 still running) the events expire."""
    state = fixtures.after("preempt")
    assert fixtures.find(state["pods"], "tr-1") and not fixtures.find(state["pods"], "tr-2")
    state["events"] = []
    en, ko = both_langs(grade, state, state["files"])
    assert checks(en)["preempt.evicted"]["status"] == UNVERIFIED
    assert checks(en)["preempt.evicted"]["message"] == \
        "Could not be verified: no events are left to show that KAI evicted tr-2 for bd-1"
    assert "tr-1" not in checks(ko)["preempt.evicted"]["message"]
    assert u"bd-1 을 위해 tr-2 를 밀어냈다는" in checks(ko)["preempt.evicted"]["message"]


def test_expired_events_on_real_kai_v017_say_one_of_the_two_was_evicted(grade, fixtures):
    """The finished lab on real KAI v0.17.0 with kai-lab's events deleted (the 1 h event TTL):
    tr-2 was evicted, tr-1 deleted in step 7; nothing left says which."""
    state = fixtures.finished(lab_states.KAI_V017)
    evicted = [e for e in state["events"] if e["reason"] == "Evict"]
    assert [e["message"].split()[1] for e in evicted] == ["kai-lab/tr-2"]
    state["events"] = []
    result, _ = grade(state, state["files"], kai_version="v0.17.0")
    assert checks(result)["preempt.evicted"]["message"] == (
        "Could not be verified: no events are left to show which one of tr-1, tr-2 KAI evicted for bd-1 "
        "(the other is deleted in step 7)")
