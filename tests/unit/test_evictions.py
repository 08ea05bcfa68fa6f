# -*- coding: utf-8 -*-
"""What a step may do to earlier steps' pods is declared, and every step reads one record of KAI's evictions.

On real objects: the lab solved on the sim (KAI v0.12.0), then a step that is
not the lab's (tests/unit/reclaim_step.py: a pod of queue ops reclaims the
GPU research borrows) recorded by tests/record_fixtures.py in the same run,
fixtures/added/report.json and reclaim.json. KAI reclaimed both fraction pods
of step 7 for ops-1. The reclaim step declares that eviction (Evicts), step
7 says its pods may be evicted later (Step.evictable), and step 8's report
is compared with the allocation its check verified before the reclaim.
"""

from __future__ import annotations

import ast
import calendar
import copy
import json
import os

import pytest

import reclaim_step
from conftest import FIXTURES, FakeCluster, load_json, write_files
from lab_testing import NS, checks, registered
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.grader import Grader, Snapshot
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import events as kai_events
from ansible_collections.gsb.kai_lab.plugins.module_utils.record import proofs as gr
from ansible_collections.gsb.kai_lab.plugins.module_utils.record import store
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import evictions, registry
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import FAILED, PASSED, Step

ADDED = FIXTURES / "added"
KAI = "v0.12.0"
# The grade of the finished lab (step 8 done) ran before ops-1 came: the recording's last event then.
BEFORE_RECLAIM = calendar.timegm((2026, 12, 6, 14, 51, 23))


def recorded(name):
    return load_json(ADDED / ("%s.json" % name))


@pytest.fixture
def reclaim():
    """The reclaim step after the lab's own steps, as it was recorded (fixtures/added)."""
    with registered(reclaim_step.STEP, reclaim_step.TEXT, after=registry.LAB):
        yield reclaim_step.STEP


@pytest.fixture
def lab(tmp_path):
    """grade(state, now=None) of one learner's lab with the grader's record, over time."""

    class Lab(object):
        workdir = str(tmp_path / "gsb-kai")
        record_path = store.record_path(str(tmp_path / "state"), NS)

        def grade(self, state, now=None, record=True, lang="en"):
            write_files(self.workdir, state["files"])
            snapshot = Snapshot(FakeCluster(state), NS, self.workdir, kai_version=KAI)
            grader = Grader(snapshot, lang=lang)
            return gr.grade_with_record(snapshot, grader.run, self.record_path if record else None, self.workdir,
                                        now=now)

    return Lab()


def test_the_record_says_who_evicted_whom_by_which_action(reclaim):
    state = recorded("reclaim")
    snapshot = Snapshot(FakeCluster(state), NS, "/nonexistent", kai_version=KAI)
    seen = [(e.victim, e.action, e.by, e.step_id, e.step) for e in evictions.record(snapshot)]
    assert seen[0] == ("tr-2", "preempt", "bd-1", "preempt", registry.step("preempt").number)
    assert sorted(seen[1:]) == [("fr-1", "reclaim", "ops-1", "reclaim", reclaim.number),
                                ("fr-2", "reclaim", "ops-1", "reclaim", reclaim.number)]
    # KAI's own words: the action its Event carries, and the reclaim's message form.
    for event in [e for e in state["events"] if e["reason"] == "Evict"]:
        action = kai_events.eviction_action(event["message"])
        assert event["metadata"]["annotations"]["evictor-action-type"] == action
        assert kai_events.preemptor(event["message"]) == event["metadata"]["annotations"]["evictor-pod-group-name"]
    # Step 7 says its pods may be evicted later: the reclaim is expected; step 2's p1 was not touched.
    assert [e.victim for e in evictions.expected(snapshot, "fr-1")] == ["fr-1"]
    assert evictions.expected(snapshot, "p1") == []


def test_a_declared_reclaim_after_the_lab_is_no_mistake_of_the_steps_before(lab, reclaim):
    """Checked when step 8 was done, then ops-1 reclaims the shared GPU: the whole lab passes, and says why."""
    before = lab.grade(recorded("report"), now=BEFORE_RECLAIM)
    assert [c["id"] for c in checks(before).values() if c["status"] != PASSED] == [c.id for c in reclaim.checks]
    after = lab.grade(recorded("reclaim"))
    by_id = checks(after)
    assert after["passed"] and after["points"] == after["max_points"] == registry.total_weight(), \
        [(c["id"], c["message"]) for c in by_id.values() if c["status"] != PASSED]
    assert [s["id"] for s in after["steps"]] == list(registry.STEP_IDS) and after["steps"][-1]["id"] == "reclaim"
    assert by_id["fraction.shared"]["message"] == (
        "OK, as verified at 2026-12-06 14:51 UTC, before KAI evicted fr-1, fr-2 in step %d (reclaim for ops-1)"
        % reclaim.number)
    assert by_id["report.values"]["message"].startswith(
        "OK, equal to the cluster as verified at 2026-12-06 14:51 UTC, before step %d changed it: " % reclaim.number)
    assert by_id["reclaim.file"]["evidence"] == {"reclaimed": ["fr-1", "fr-2"]}
    # Step 6's own eviction is still its proof; the reclaim's Events are no forgery offered for it.
    assert by_id["preempt.evicted"]["evidence"]["victim"] == "tr-2" and "not_proof" not in by_id["preempt.evicted"]["evidence"]
    assert sorted(after["record"]["used"]) == ["fraction.shared", "report.values"]
    korean = checks(lab.grade(recorded("reclaim"), lang="ko"))
    assert "%d단계에서 KAI가 fr-1, fr-2 를 밀어내기 전 (ops-1 을 위한 reclaim)" % reclaim.number in \
        korean["fraction.shared"]["message"]


def test_nothing_is_assumed_an_undeclared_reclaim_fails_the_steps_it_broke(lab):
    """The same reclaim by a step that does not declare it: step 7's pods and step 8's allocation are gone."""
    quiet = copy.copy(reclaim_step.STEP)
    quiet.evicts = ()
    with registered(quiet, reclaim_step.TEXT, after=registry.LAB):
        lab.grade(recorded("report"), now=BEFORE_RECLAIM)
        by_id = checks(lab.grade(recorded("reclaim")))
    assert by_id["fraction.shared"]["status"] == FAILED
    assert by_id["reclaim.file"]["status"] == FAILED  # KAI's reclaim is in no step's declaration
    assert by_id["report.values"]["status"] == PASSED  # what ops-1 moved it compares with: its own begin, declared


def test_without_a_check_before_the_reclaim_the_grade_is_honest(lab, reclaim):
    by_id = checks(lab.grade(recorded("reclaim"), record=False))
    assert by_id["fraction.shared"]["status"] == FAILED and by_id["report.values"]["status"] == FAILED
    assert by_id["reclaim.file"]["status"] == PASSED and by_id["podgroup.running"]["status"] == PASSED


def test_a_check_verified_after_the_eviction_does_not_stand_for_before(lab, reclaim):
    """The record's proof must be older than KAI's eviction: one kept after it proves nothing about before."""
    lab.grade(recorded("report"), now=BEFORE_RECLAIM + 3600)
    assert checks(lab.grade(recorded("reclaim")))["fraction.shared"]["status"] == FAILED


def test_a_forged_reclaim_event_is_not_in_the_record(reclaim):
    state = recorded("reclaim")
    for event in state["events"]:
        if event["reason"] == "Evict" and "ops-1" in event["message"]:
            event["source"] = {"component": "kubectl"}
            event["reportingComponent"] = "kubectl"
    snapshot = Snapshot(FakeCluster(state), NS, "/nonexistent", kai_version=KAI)
    assert [e.victim for e in evictions.record(snapshot)] == ["tr-2"]
    assert evictions.expected(snapshot, "fr-1") == []


def test_step_2_reads_the_record_p1_evicted_by_a_declared_later_step(grade, fixtures):
    """p1 evicted by step 6 (the recorded Evict about tr-2 moved to p1): step 2's checks find it in the record,
    its PodGroup by the Event's name, and no step reads another step's internals for it."""
    state = fixtures.finished()
    p1 = fixtures.find(state["pods"], "p1")
    state["pods"].remove(p1)
    state["podgroups"] = [pg for pg in state["podgroups"] if not pg["metadata"]["name"].startswith("pg-p1-")]
    evict = [e for e in state["events"] if e["reason"] == "Evict"][0]
    evict["message"] = evict["message"].replace("kai-lab/tr-2", "kai-lab/p1")
    evict["involvedObject"]["name"] = p1["metadata"]["annotations"]["pod-group-name"]
    result, _ = grade(state, state["files"])
    assert checks(result)["podgroup.running"]["status"] == PASSED
    assert checks(result)["podgroup.file"]["status"] == PASSED
    # p1's step no longer says it may be evicted: the same eviction is p1 missing.
    podgroup = registry.step("podgroup")
    saved = podgroup.evictable
    podgroup.evictable = ()
    try:
        result, _ = grade(state, state["files"])
    finally:
        podgroup.evictable = saved
    assert checks(result)["podgroup.running"]["status"] != PASSED


def test_no_step_module_imports_another_step():
    """Steps share base.py's data and the record of evictions; a step module imports no other step's module."""
    package = "ansible_collections.gsb.kai_lab.plugins.module_utils.steps"
    step_modules = sorted(step.solve.__module__.rsplit(".", 1)[-1] for step in registry.LAB)
    for name in step_modules:
        with open(os.path.join(os.path.dirname(registry.__file__), name + ".py")) as handle:
            tree = ast.parse(handle.read())
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == package:
                imported.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(package + "."):
                imported.add(node.module.rsplit(".", 1)[-1])
        assert imported & (set(step_modules) - {name}) == set(), name
        assert imported, name  # it does import the shared ones (base at least): the walk saw its imports


def test_a_step_is_declared_with_its_effects():
    """What the lab's steps declare: the evicting step and the evictable pods, the gang's removal, the train pod
    step 7 deletes (the text's 'the other is deleted in step N')."""
    preempt = registry.step("preempt")
    assert [(e.action, e.by) for e in preempt.evicts] == [("preempt", "bd-1")] and preempt.began_by == ("bd-1",)
    assert preempt.clears == ("gang",) and registry.step("gang").remove is not None
    assert registry.step("fraction").deletes == ("tr-1", "tr-2")
    assert registry.step("limit_fix").needs == ("nolimit",)
    assert isinstance(preempt, Step)
    assert json.dumps(evictions.evictors("p1") and [(s.id, by) for s, by in evictions.evictors("p1")]) == \
        json.dumps([["preempt", "bd-1"]])
