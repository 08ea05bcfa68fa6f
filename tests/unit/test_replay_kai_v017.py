# -*- coding: utf-8 -*-
"""The grader and the solver on what REAL KAI-Scheduler v0.17.0 showed.

The objects are fixtures/kai-v0.17.0/ (the lab done by hand on v0.17.0, see
its README). v0.17.0 differs from the sim's v0.12.0 where it hurts evidence:
it clears a PodGroup's schedulingConditions once scheduled, it groups the
lab's Job into one PodGroup pg-gang-<job uid> and deletes it with the Job, and
it reports the eviction on the victim's PodGroup.
"""

from __future__ import annotations

import copy
import json
import os

import pytest

import kai_v017 as hand
import lab_states
from ansible_collections.gsb.kai_lab.plugins.module_utils.record import proofs as gr
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import events as kai_events
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.grader import Grader, Snapshot
from ansible_collections.gsb.kai_lab.plugins.module_utils.solving.lab_view import LabView
from ansible_collections.gsb.kai_lab.plugins.module_utils.solving.solver import StepRunner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import PASSED, UNVERIFIED
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.gang import gang_form

NS = hand.NAMESPACE
JOB_UID = "32a0d145-93cf-44a3-93e7-4208aeaffe55"  # the Job gang of hand-gang


def recorded_checks(grade):
    return dict((c["id"], c) for s in grade["steps"] for c in s["checks"])


@pytest.fixture
def grade_hand(tmp_path, fake_cluster, fixtures):
    """grade_hand(state) -> the grade of a hand-<step> state, as the playbook grades it."""
    health = hand.recorded_grade()["environment"][0]["evidence"]

    def run(state, lang="en"):
        workdir = fixtures.write_files(tmp_path / ("w%d" % len(os.listdir(str(tmp_path)))), state["files"])
        snapshot = Snapshot(fake_cluster(state), NS, workdir, health=dict(health), kai_version=hand.KAI_VERSION)
        return Grader(snapshot, lang=lang).run()

    return run


def test_loader_gives_each_step_its_objects_and_files():
    step3, step8 = hand.hand_state("nolimit"), hand.hand_state("report")
    assert sorted(step3["files"]) == ["nolimit.txt", "p1.yaml", "podgroup.txt", "queues.yaml"]
    assert sorted(step8["files"]) == ["fraction.yaml", "gang.txt", "nolimit.txt", "p1.yaml", "podgroup.txt",
                                      "queues.yaml", "report.json"]
    assert sorted(kai.name_of(p) for p in step8["pods"]) == ["bd-1", "fr-1", "fr-2", "nl-1", "p1"]
    assert [kai.name_of(p) for p in step8["reservation_pods"]] == ["gpu-reservation-3e0fa543b4448f93"]
    assert hand.hand_state("report", events=False)["events"] == [] and len(step8["events"]) > 30
    with pytest.raises(ValueError):
        hand.hand_state("nope")


# ---------------------------------------------------------------- the grader

def test_finished_hand_lab_grades_as_recorded_check_by_check(grade_hand):
    recorded = hand.recorded_grade()
    result = grade_hand(lab_states.finished(lab_states.KAI_V017))
    total = registry.total_weight()
    assert (result["score"], result["points"], result["max_points"], result["passed"]) == (100.0, total, total, True)
    live, then = recorded_checks(result), recorded_checks(recorded)
    # The recorded grade knows the steps of its day; a step added since is graded too (and passes: the lab is done).
    assert set(then) <= set(live) and all(c["status"] == PASSED for c in then.values())
    assert result["counts"] == dict(recorded["counts"], passed=len(live))
    for check_id, check in then.items():
        assert (live[check_id]["status"], live[check_id]["message"]) == (check["status"], check["message"]), check_id
        # What the grade record keeps (KAI's proofs, the pods they are about) came after that grade.
        evidence = json.loads(json.dumps(live[check_id]["evidence"]))
        kept = dict((k, evidence.pop(k)) for k in (gr.PROOF_KEY, gr.SUBJECTS_KEY) if isinstance(evidence, dict) and k in evidence)
        assert evidence == check["evidence"], check_id
        assert bool(kept) == (check_id in ("nolimit.reason", "gang.reason", "preempt.evicted")), check_id
    assert live["preempt.evicted"]["evidence"]["victim"] == "tr-2"


def test_hand_lab_without_events_is_unverified_where_recorded(grade_hand):
    recorded = hand.recorded_grade(events_deleted=True)
    result = grade_hand(lab_states.finished(lab_states.KAI_V017, events=False))
    live, then = recorded_checks(result), recorded_checks(recorded)
    gone = sorted(c for c, v in then.items() if v["status"] == UNVERIFIED)
    points = registry.total_weight() - sum(live[c]["weight"] for c in gone)
    assert (result["score"], result["points"], result["passed"]) == (
        round(100.0 * points / registry.total_weight(), 1), points, False)
    assert result["counts"] == dict(recorded["counts"], passed=len(live) - len(gone))
    # preempt.evicted's message names the candidates now (issue 10): both
    # train pods are gone (tr-2 evicted, tr-1 deleted in step 7).
    evicted = "Could not be verified: no events are left to show which one of tr-1, tr-2 KAI evicted for bd-1"
    assert then["preempt.evicted"]["message"] == "Could not be verified: no events are left to show who removed tr-1, tr-2"
    assert live["preempt.evicted"]["message"].startswith(evicted)
    for check_id, check in then.items():
        if check_id != "preempt.evicted":
            assert (live[check_id]["status"], live[check_id]["message"]) == (check["status"], check["message"]), check_id
        assert live[check_id]["status"] == check["status"], check_id
    assert sorted(c for c, v in live.items() if v["status"] == UNVERIFIED) == [
        "gang.reason", "nolimit.reason", "preempt.evicted"]


@pytest.mark.parametrize("step_id", registry.STEP_IDS)
def test_each_step_passes_while_it_happens(grade_hand, step_id):
    """Graded right after step N on v0.17.0, every check of steps 1..N passes."""
    result = grade_hand(lab_states.lab_after(step_id, lab_states.KAI_V017))
    done = [c for s in result["steps"] if s["number"] <= registry.step(step_id).number for c in s["checks"]]
    assert done and all(c["status"] == PASSED for c in done), [(c["id"], c["message"]) for c in done]


def test_cleared_overlimit_condition_is_read_from_events(grade_hand):
    """Three seconds after nl-1 runs, v0.17.0 has cleared its PodGroup's conditions."""
    state = hand.hand_state("limit_fix")
    later = hand.later_object("hand-limit_fix/podgroup-nl-1-3s-later.yaml")
    assert "schedulingConditions" not in later["status"]
    state["podgroups"] = [later if kai.name_of(pg) == kai.name_of(later) else pg for pg in state["podgroups"]]
    checks = recorded_checks(grade_hand(state))
    assert checks["nolimit.reason"]["status"] == PASSED
    assert kai.OVER_LIMIT_MESSAGE_MARK in checks["nolimit.reason"]["evidence"]["kai"]
    state["events"] = []
    checks = recorded_checks(grade_hand(state))
    assert checks["nolimit.reason"]["status"] == UNVERIFIED


# ---------------------------------------------------------------- the solver

def test_gang_is_one_podgroup_named_after_the_job(fake_cluster):
    state = hand.hand_state("gang")
    cluster = hand.add_jobs(fake_cluster(state), state)
    view = LabView(cluster, NS)
    names = gang_form(hand.KAI_VERSION).pod_names(view)
    assert len(names) == 3 and all(n.startswith("gang-") for n in names)
    groups = set(kai.podgroup_name_of_pod(view.pod(n)) for n in names)
    assert groups == {"pg-gang-%s" % JOB_UID}
    podgroup = view.podgroup("pg-gang-%s" % JOB_UID)
    assert podgroup["spec"]["minMember"] == 3
    assert any(kai.GANG_MESSAGE_MARK in r["message"] for r in kai.scheduling_reasons(podgroup))


def test_solver_writes_the_gang_reason_the_learner_copied(tmp_path, fake_cluster, fixtures):
    state = hand.hand_state("gang")
    files = dict(state["files"])
    del files["gang.txt"]
    workdir = fixtures.write_files(tmp_path / "gsb-kai", files)
    cluster = hand.add_jobs(fake_cluster(state), state)
    result = StepRunner(cluster, NS, workdir, hand.KAI_VERSION, timeout=1).run("gang")
    assert open(os.path.join(workdir, "gang.txt")).read() == state["files"]["gang.txt"]
    assert result["evidence"]["podgroup"]["name"] == "pg-gang-%s" % JOB_UID
    assert [w[:3] for w in cluster.writes] == [("apply", "Job", "gang")]


def test_solver_finds_the_eviction_on_the_victims_podgroup(fake_cluster):
    state = hand.hand_state("preempt")
    evictions = kai_events.eviction_events(state["events"])
    assert [(e["victim"], e["object"]) for e in evictions] == [
        ("tr-2", "PodGroup/pg-tr-2-02f5c0ab-b593-4c84-b792-9f1648f6f512")]
    cluster = fake_cluster(state)
    result = StepRunner(cluster, NS, "/nonexistent", hand.KAI_VERSION, timeout=1).run("preempt")
    assert result["changed"] is False and cluster.writes == []
    assert result["evidence"]["evicted"] == ["tr-2"]


# The learner wrote these manifests in their own layout; the solver writes its
# own and keeps the learner's as a backup (same objects, nothing lost).
MANIFEST_STEPS = {"queues": "queues.yaml", "podgroup": "p1.yaml", "fraction": "fraction.yaml"}


@pytest.mark.parametrize("step_id", registry.STEP_IDS)
def test_solver_rerun_on_the_finished_hand_lab_changes_nothing_in_the_cluster(tmp_path, fake_cluster, fixtures,
                                                                               step_id):
    state = lab_states.finished(lab_states.KAI_V017)
    workdir = fixtures.write_files(tmp_path / "gsb-kai", state["files"])
    cluster = fake_cluster(copy.deepcopy(state))
    result = StepRunner(cluster, NS, workdir, hand.KAI_VERSION, timeout=1).run(step_id)
    assert cluster.writes == []
    if step_id in MANIFEST_STEPS:
        name = MANIFEST_STEPS[step_id]
        assert [os.path.basename(b).split(".bak-")[0] for b in result["backups"]] == [name]
        assert open(result["backups"][0]).read() == state["files"][name]
    else:
        assert result["changed"] is False and result["files"] == [] and result["backups"] == []
        assert sorted(os.listdir(workdir)) == sorted(state["files"])
        for name, content in state["files"].items():
            assert open(os.path.join(workdir, name)).read() == content
    if step_id == "preempt":
        assert result["evidence"]["evicted"] == ["tr-2"]
    if step_id == "report":
        assert result["evidence"]["report"] == json.loads(state["files"]["report.json"])
