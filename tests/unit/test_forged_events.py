# -*- coding: utf-8 -*-
"""Issue 18 row 2: KAI's word must be about the learner's real objects.

A learner may create Events (kubectl create -f) with any reason, message,
source.component and involvedObject. An Event is proof only when it is about
an object of this lab that exists now with the same uid (or that the
grader's record saw, or, once gone, that its own Events stored before step 6
name), was stored after that object was created, and is reported by KAI's
scheduler; for step 6 the victim's own PodGroup and bd-1's as the preemptor.

The forged Events here are the real recorded ones (fixtures/sim, KAI
v0.12.0; fixtures/kai-v0.17.0, copied from shared/fixtures/kai-v0.17.0) with
only what a forger would change, stored "now" as the API server would
store an Event created after the lab (metadata.creationTimestamp, which the
creator cannot set).
"""

from __future__ import annotations

import copy
import json

import pytest

import kai_v017 as hand
import lab_states
from lab_testing import NS, by_name, checks, solved

from ansible_collections.gsb.kai_lab.plugins.module_utils.record import proofs as gr
from ansible_collections.gsb.kai_lab.plugins.module_utils.record import store
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import events as kai_events
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.grader import Grader, Snapshot
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import FAILED, PASSED, UNVERIFIED

NOW = "2026-12-01T21:00:00Z"  # after every recorded lab: when a learner creates the Event
FORGED = "this Event is not about any PodGroup of your pods"
FORGED_KO = u"이 이벤트는 여러분 파드의 어떤 PodGroup 에 대한 것도 아닙니다"


def forge(event, name, stored=NOW, **changes):
    """A learner's copy of a real Event: a new name and uid, stored now, with changes."""
    forged = copy.deepcopy(event)
    forged["metadata"] = dict(forged["metadata"], name=name, uid="uid-%s" % name, creationTimestamp=stored)
    for key, value in changes.items():
        if key == "involvedObject":
            forged["involvedObject"] = dict(forged["involvedObject"], **value)
            forged["involvedObject"] = dict((k, v) for k, v in forged["involvedObject"].items() if v is not None)
        else:
            forged[key] = value
    return forged


def without(events, reason, mark=""):
    return [e for e in events if not (e.get("reason") == reason and mark in (e.get("message") or ""))]


def real(events, reason, kind, mark=""):
    return [e for e in events if e.get("reason") == reason and e["involvedObject"]["kind"] == kind
            and mark in (e.get("message") or "")][0]


def clear_conditions(state, prefix):
    for podgroup in state["podgroups"]:
        if podgroup["metadata"]["name"].startswith(prefix):
            podgroup.get("status", {}).pop("schedulingConditions", None)


@pytest.fixture
def graded(tmp_path, fake_cluster, fixtures):
    counter = {"n": 0}

    def run(state, kai_version, lang="en", record_path=None):
        counter["n"] += 1
        workdir = fixtures.write_files(tmp_path / ("w%d" % counter["n"]), state["files"])
        snapshot = Snapshot(fake_cluster(state), NS, workdir, kai_version=kai_version)
        grader = Grader(snapshot, lang=lang)
        if record_path:
            return gr.grade_with_record(snapshot, lambda: grader.run(), record_path, workdir)
        return grader.run()

    return run


# ---------------------------------------------------------------- step 3, nolimit.reason

@pytest.mark.parametrize("what, changes, why", [
    ("an Event with no object behind it", {"involvedObject": {"kind": "PodGroup", "name": "pg-nl-1-forged", "uid": None}},
     "PodGroup/pg-nl-1-forged is no object of this step"),
    ("nl-1 named without its uid", {"involvedObject": {"uid": None}}, "it names no object uid"),
    ("nl-1 named with another uid", {"involvedObject": {"uid": "0000"}}, "the Event names uid 0000"),
    ("nl-1 by another reporter", {"source": {"component": "kubectl"}, "reportingComponent": "kubectl"},
     "its reporter is not KAI's scheduler"),
])
def test_a_forged_overlimit_event_is_named_and_fails_nolimit_reason(graded, what, changes, why):
    """Step 3 on real v0.17.0 with KAI's word gone (events deleted, conditions cleared) and a forged Event."""
    state = hand.hand_state("nolimit")
    event = real(state["events"], "Unschedulable", "Pod", kai.REASON_OVER_LIMIT)
    state["events"] = without(state["events"], "Unschedulable") + [forge(event, "nl-1.forged", **changes)]
    clear_conditions(state, "pg-nl-1-")
    en, ko = graded(state, hand.KAI_VERSION), graded(copy.deepcopy(state), hand.KAI_VERSION, lang="ko")
    check = checks(en)["nolimit.reason"]
    assert check["status"] == FAILED, (what, check["message"])
    assert FORGED in check["message"] and "nl-1.forged" in check["message"] and why in check["message"]
    assert FORGED_KO in checks(ko)["nolimit.reason"]["message"]
    assert "Events you created" in check["hint"]


def test_an_event_stored_before_nl1_was_created_is_not_about_it(graded):
    state = hand.hand_state("nolimit")
    event = real(state["events"], "Unschedulable", "Pod", kai.REASON_OVER_LIMIT)
    early = forge(event, "nl-1.early", stored="2026-12-01T06:00:00Z")
    state["events"] = without(state["events"], "Unschedulable") + [early]
    clear_conditions(state, "pg-nl-1-")
    check = checks(graded(state, hand.KAI_VERSION))["nolimit.reason"]
    assert check["status"] == FAILED and "before Pod/nl-1 was created at 2026-12-01T06:43:00Z" in check["message"]


def test_a_forged_event_for_a_gone_nl1_after_step_6_is_no_proof(graded):
    """nl-1 deleted after the lab (real v0.17.0 step 8), its real events gone, a copy stored now."""
    state = lab_states.finished(lab_states.KAI_V017)
    event = real(state["events"], "Unschedulable", "Pod", kai.REASON_OVER_LIMIT)
    state["pods"] = [p for p in state["pods"] if p["metadata"]["name"] != "nl-1"]
    state["podgroups"] = [p for p in state["podgroups"] if not p["metadata"]["name"].startswith("pg-nl-1-")]
    state["events"] = without(state["events"], "Unschedulable") + [forge(event, "nl-1.forged")]
    check = checks(graded(state, hand.KAI_VERSION))["nolimit.reason"]
    assert check["status"] == FAILED and FORGED in check["message"]
    assert "after the lab moved on to step 6" in check["message"]


def test_real_events_of_a_gone_nl1_still_pass(graded):
    """The same nl-1 deleted, KAI's real events kept (stored in step 3, before bd-1 came): still KAI's word."""
    state = lab_states.finished(lab_states.KAI_V017)
    state["pods"] = [p for p in state["pods"] if p["metadata"]["name"] != "nl-1"]
    state["podgroups"] = [p for p in state["podgroups"] if not p["metadata"]["name"].startswith("pg-nl-1-")]
    check = checks(graded(state, hand.KAI_VERSION))["nolimit.reason"]
    assert check["status"] == PASSED and gr.SUBJECTS_KEY in check["evidence"]
    assert check["evidence"][gr.SUBJECTS_KEY] == {"nl-1": "7b6a2555-c3a7-4b31-94ec-f54d68a0124c"}


def test_a_forged_event_beside_kais_real_word_is_named_in_the_evidence(graded):
    state = hand.hand_state("nolimit")
    event = real(state["events"], "Unschedulable", "Pod", kai.REASON_OVER_LIMIT)
    state["events"].append(forge(event, "nl-1.forged", involvedObject={"uid": None}))
    check = checks(graded(state, hand.KAI_VERSION))["nolimit.reason"]
    assert check["status"] == PASSED
    assert [p["uid"] for p in check["evidence"][gr.PROOF_KEY] if p["kind"] == "event"] == [
        e["metadata"]["uid"] for e in sorted(state["events"], key=kai_events.event_time)
        if e.get("reason") == "Unschedulable" and e["metadata"]["name"] != "nl-1.forged"]
    assert any("nl-1.forged" in line and FORGED in line for line in check["evidence"]["not_proof"])


# ---------------------------------------------------------------- step 5, gang.reason

def test_a_forged_gang_event_with_no_objects_fails_gang_reason_on_the_sim(graded, fixtures):
    """Step 5 as the sim (KAI v0.12.0) recorded it, KAI's word gone, one forged Event with nothing behind it."""
    state = fixtures.after("gang")
    event = real(state["events"], "Unschedulable", "PodGroup", kai.GANG_MESSAGE_MARK)
    state["events"] = without(state["events"], "Unschedulable", kai.GANG_MESSAGE_MARK) + [
        forge(event, "gang.forged", involvedObject={"name": "my-gang", "uid": "1234"})]
    clear_conditions(state, "gang")
    check = checks(graded(state, "v0.12.0"))["gang.reason"]
    assert check["status"] == FAILED and FORGED in check["message"] and "gang.forged" in check["message"]


def test_a_forged_gang_event_after_step_6_fails_gang_reason_on_the_sim(graded, fixtures):
    """The finished sim lab: PodGroup gang is gone (step 6); its real events replaced by one stored now."""
    state, _files = solved(fixtures)
    event = real(state["events"], "Unschedulable", "PodGroup", kai.GANG_MESSAGE_MARK)
    state["events"] = without(state["events"], "Unschedulable", kai.GANG_MESSAGE_MARK) + [forge(event, "gang.forged")]
    check = checks(graded(state, "v0.12.0"))["gang.reason"]
    assert check["status"] == FAILED and FORGED in check["message"]
    assert "PodGroup/gang is no object of this step that exists or existed" in check["message"]


def test_a_forged_event_on_the_jobs_podgroup_name_with_another_uid_fails_on_v017(graded):
    """Real v0.17.0 step 5, the Job's PodGroup there: an Event about it with another uid is not about it."""
    state = hand.hand_state("gang")
    event = real(state["events"], "Unschedulable", "PodGroup", kai.GANG_MESSAGE_MARK)
    state["events"] = without(state["events"], "Unschedulable", kai.GANG_MESSAGE_MARK) + [
        forge(event, "gang.forged", involvedObject={"uid": "0000"})]
    clear_conditions(state, "pg-gang-")
    check = checks(graded(state, hand.KAI_VERSION))["gang.reason"]
    assert check["status"] == FAILED and FORGED in check["message"] and "the Event names uid 0000" in check["message"]


# ---------------------------------------------------------------- step 6, preempt.evicted

@pytest.mark.parametrize("what, changes, why", [
    ("no pods at all", {"message": "Pod kai-lab/tr-1 was preempted by higher priority workload kai-lab/pg-bd-1-0000",
                        "involvedObject": {"name": "pg-tr-1-0000", "uid": "1111"}},
     "PodGroup/pg-tr-1-0000 is no object of this step"),
    ("another preemptor", {"message": "Pod kai-lab/tr-2 was preempted by higher priority workload kai-lab/pg-bd-1-0000"},
     "its preemptor is pg-bd-1-0000, not bd-1's PodGroup pg-bd-1-b5b1f6ff-cb3c-4859-844d-a466ceba1487"),
    ("a copy of KAI's Evict made after bd-1 ran", {"involvedObject": {"uid": "1111"}},
     "after bd-1 was scheduled at 2026-11-29T20:08:40Z"),
])
def test_a_forged_evict_with_kais_component_fails_preempt_evicted(graded, fixtures, what, changes, why):
    state, _files = solved(fixtures)
    event = real(state["events"], "Evict", "PodGroup")
    assert event["source"]["component"] == kai.SCHEDULER_NAME
    state["events"] = without(state["events"], "Evict") + [forge(event, "evict.forged", **changes)]
    check = checks(graded(state, "v0.12.0"))["preempt.evicted"]
    assert check["status"] == FAILED, (what, check["message"])
    assert FORGED in check["message"] and "evict.forged" in check["message"] and why in check["message"]


def test_the_recorded_evictions_of_both_kai_versions_still_pass(graded, fixtures):
    for state, version, victim in ((fixtures.after("preempt"), "v0.12.0", "tr-2"), (hand.hand_state("preempt"), "v0.17.0", "tr-2"),
                                   (lab_states.finished(lab_states.KAI_V017), "v0.17.0", "tr-2")):
        check = checks(graded(state, version))["preempt.evicted"]
        assert check["status"] == PASSED and check["evidence"]["victim"] == victim, (version, check["message"])
        assert "not_proof" not in check["evidence"]


# ---------------------------------------------------------------- the record

def test_a_forged_proof_is_never_recorded_so_it_does_not_outlive_its_event(graded, tmp_path):
    state = hand.hand_state("nolimit")
    event = real(state["events"], "Unschedulable", "Pod", kai.REASON_OVER_LIMIT)
    state["events"] = without(state["events"], "Unschedulable") + [
        forge(event, "nl-1.forged", involvedObject={"uid": None})]
    clear_conditions(state, "pg-nl-1-")
    path = store.record_path(str(tmp_path / "state"), NS)
    first = graded(state, hand.KAI_VERSION, record_path=path)
    assert checks(first)["nolimit.reason"]["status"] == FAILED
    record, _ = store.load(path, NS)
    assert "nolimit.reason" not in record["checks"]
    state["events"] = []
    later = graded(state, hand.KAI_VERSION, record_path=path)
    assert checks(later)["nolimit.reason"]["status"] == UNVERIFIED


def test_a_recorded_proof_of_an_old_grader_about_no_object_of_the_lab_is_not_used(graded, tmp_path):
    """A record written before issue 18 kept a forged Event's proof: it is tested again, and refused."""
    state = lab_states.finished(lab_states.KAI_V017, events=False)
    path = store.record_path(str(tmp_path / "state"), NS)
    nl1 = [p for p in state["pods"] if p["metadata"]["name"] == "nl-1"][0]
    record = store.empty(NS)
    record["checks"]["nolimit.reason"] = {
        "verified_at": "2026-12-01T06:50:00Z", "evidence": {},
        "subjects": {"nl-1": nl1["metadata"]["uid"]},
        "proofs": [{"kind": "event", "uid": "uid-forged", "reason": "Unschedulable",
                    "message": "OverLimit: nolimit quota has reached the allowable limit of GPUs. Limit is 0 GPUs",
                    "source": "kai-scheduler", "time": "2026-12-01T06:49:00Z", "object": "PodGroup/pg-forged",
                    "object_uid": ""}]}
    store.save(path, record)
    check = checks(graded(state, hand.KAI_VERSION, record_path=path))["nolimit.reason"]
    assert check["status"] == UNVERIFIED, check["message"]


def test_a_recorded_proof_whose_podgroup_is_now_another_object_is_not_used(graded, tmp_path):
    """Checked at step 3, then nl-1's PodGroup replaced (same name, another uid): the proof is stale."""
    path = store.record_path(str(tmp_path / "state"), NS)
    assert checks(graded(hand.hand_state("nolimit"), hand.KAI_VERSION, record_path=path))["nolimit.reason"]["status"] == PASSED
    record, _ = store.load(path, NS)
    record["checks"]["nolimit.reason"]["proofs"] = [
        p for p in record["checks"]["nolimit.reason"]["proofs"] if p["object"].startswith("PodGroup/")]
    store.save(path, record)
    state = lab_states.finished(lab_states.KAI_V017, events=False)
    for podgroup in state["podgroups"]:
        if podgroup["metadata"]["name"].startswith("pg-nl-1-"):
            podgroup["metadata"]["uid"] = "a-new-podgroup"
    check = checks(graded(state, hand.KAI_VERSION, record_path=path))["nolimit.reason"]
    assert check["status"] == UNVERIFIED and "a-new-podgroup" in check["message"]
    json.dumps(check, allow_nan=False)


def test_the_gang_proof_is_about_the_gang_pods_only(graded, fixtures):
    """v0.12.0 step 5: the record binds the proof to gang-1 and gang-2 (KAI's gang word is on them), not to
    every pod of the namespace, so replacing p1 later does not make it stale."""
    check = checks(graded(fixtures.after("gang"), "v0.12.0"))["gang.reason"]
    assert check["status"] == PASSED
    assert sorted(check["evidence"][gr.SUBJECTS_KEY]) == ["gang-1", "gang-2"]


def test_the_record_keeps_no_more_subjects_than_it_may_load(tmp_path):
    grade = {"steps": [{"checks": [{"id": "gang.reason", "status": PASSED, "evidence": {
        gr.PROOF_KEY: [], gr.SUBJECTS_KEY: dict(("pod-%02d" % n, "uid-%d" % n) for n in range(25))}}]}]}
    record, added = gr.remember(store.empty(NS), grade)
    path = store.save(str(tmp_path / "kai-lab.json"), record)
    loaded, notes = store.load(path, NS)
    assert added == ["gang.reason"] and notes == [] and len(loaded["checks"]["gang.reason"]["subjects"]) == 10


def test_a_recorded_evict_repeated_after_bd1_ran_is_still_used(graded, tmp_path):
    """KAI may repeat an Evict (count 2): the record keeps its last time, later than bd-1's scheduling."""
    path = store.record_path(str(tmp_path / "state"), NS)
    assert checks(graded(hand.hand_state("preempt"), hand.KAI_VERSION, record_path=path))["preempt.evicted"]["status"] == PASSED
    record, _ = store.load(path, NS)
    for proof in record["checks"]["preempt.evicted"]["proofs"]:
        proof["time"] = "2026-12-01T07:30:00Z"
    store.save(path, record)
    check = checks(graded(lab_states.finished(lab_states.KAI_V017, events=False), hand.KAI_VERSION, record_path=path))["preempt.evicted"]
    assert check["status"] == PASSED and check["evidence"]["victim"] == "tr-2", check["message"]


# ---------------------------------------------------------------- issue 33 row 1: the Event's own times

def hour_before(stamp):
    """The same RFC 3339 time stamp an hour earlier (all the recordings are on one day, after 01:00)."""
    return "%s%02d%s" % (stamp[:11], int(stamp[11:13]) - 1, stamp[13:])


def live_object(state, kind, name_prefix):
    objects = state["pods"] if kind == "Pod" else state["podgroups"]
    return [o for o in objects if o["metadata"]["name"].startswith(name_prefix)][0]


@pytest.mark.parametrize("field", ["firstTimestamp", "lastTimestamp", "eventTime"])
@pytest.mark.parametrize("kind, prefix", [("PodGroup", "pg-nl-1-"), ("Pod", "nl-1")])
def test_an_event_whose_own_time_is_an_hour_before_its_object_fails_nolimit_reason(graded, field, kind, prefix):
    """Real v0.17.0 step 3, KAI's word gone; a copy of KAI's OverLimit Event about the live nl-1 or its PodGroup
    (uid copied, stored now) whose own time is an hour before that object was created."""
    state = hand.hand_state("nolimit")
    created = live_object(state, kind, prefix)["metadata"]["creationTimestamp"]
    event = real(state["events"], "Unschedulable", kind, kai.REASON_OVER_LIMIT)
    early = hour_before(created) if field != "eventTime" else hour_before(created).replace("Z", ".000000Z")
    state["events"] = without(state["events"], "Unschedulable") + [forge(event, "nl-1.backdated", **{field: early})]
    clear_conditions(state, "pg-nl-1-")
    en, ko = graded(state, hand.KAI_VERSION), graded(copy.deepcopy(state), hand.KAI_VERSION, lang="ko")
    check = checks(en)["nolimit.reason"]
    assert check["status"] == FAILED, check["message"]
    assert FORGED in check["message"] and "nl-1.backdated" in check["message"]
    assert "its %s %s is before %s/%s was created at %s" % (
        field, early, kind, live_object(state, kind, prefix)["metadata"]["name"], created) in check["message"]
    # 일 (nl-1) ends in a consonant, 타임 (eventTime) too; 씨 (the recorded PodGroup's uid ends in c) and 스탬프
    # (firstTimestamp) do not.
    assert u"%s %s %s 에 만들어졌는데 이벤트의 %s %s 그 전인 %s 입니다" % (
        "%s/%s" % (kind, live_object(state, kind, prefix)["metadata"]["name"]), u"은" if kind == "Pod" else u"는",
        created, field, u"은" if field == "eventTime" else u"는", early) in checks(ko)["nolimit.reason"]["message"]


def test_a_backdated_event_is_never_kept_in_the_record(graded, tmp_path):
    state = hand.hand_state("nolimit")
    created = live_object(state, "PodGroup", "pg-nl-1-")["metadata"]["creationTimestamp"]
    event = real(state["events"], "Unschedulable", "PodGroup", kai.REASON_OVER_LIMIT)
    state["events"] = without(state["events"], "Unschedulable") + [
        forge(event, "nl-1.backdated", firstTimestamp=hour_before(created), lastTimestamp=hour_before(created))]
    clear_conditions(state, "pg-nl-1-")
    path = store.record_path(str(tmp_path / "state"), NS)
    assert checks(graded(state, hand.KAI_VERSION, record_path=path))["nolimit.reason"]["status"] == FAILED
    record, _ = store.load(path, NS)
    assert "nolimit.reason" not in record["checks"]


def test_an_overlimit_event_stored_after_nl1_ran_is_not_kais_word(graded, tmp_path):
    """nl-1 never Pending: real v0.17.0 step 4 (nl-1 placed at 06:43:09), KAI's word gone (event TTL, conditions
    cleared), and a copy of KAI's OverLimit Event about nl-1's PodGroup (uid and times copied) stored now.
    KAI reports a pod unschedulable only while it waits, so an Event stored after nl-1 was placed is not KAI's."""
    state = hand.hand_state("limit_fix")
    event = real(state["events"], "Unschedulable", "PodGroup", kai.REASON_OVER_LIMIT)
    state["events"] = without(state["events"], "Unschedulable") + [forge(event, "nl-1.after")]
    clear_conditions(state, "pg-nl-1-")
    path = store.record_path(str(tmp_path / "state"), NS)
    en = graded(state, hand.KAI_VERSION, record_path=path)
    ko = graded(copy.deepcopy(state), hand.KAI_VERSION, lang="ko")
    check = checks(en)["nolimit.reason"]
    assert check["status"] == FAILED, check["message"]
    assert "it was stored at %s, after nl-1 was placed at 2026-12-01T06:43:09Z" % NOW in check["message"]
    assert u"nl-1 이 2026-12-01T06:43:09Z 에 배치된 뒤인 %s 에 저장되었습니다" % NOW in checks(ko)["nolimit.reason"]["message"]
    record, _ = store.load(path, NS)
    assert "nolimit.reason" not in record["checks"]


def test_kais_real_overlimit_events_stay_kais_word_after_nl1_ran(graded):
    """The same step 4 with KAI's real Events (stored at 06:43:02, before nl-1 was placed): still proof."""
    state = hand.hand_state("limit_fix")
    clear_conditions(state, "pg-nl-1-")
    check = checks(graded(state, hand.KAI_VERSION))["nolimit.reason"]
    assert check["status"] == PASSED and "not_proof" not in check["evidence"], check["message"]


# ---------------------------------------------------------------- issue 33 row 2: the gang's PodGroup is its pods'

NOT_GANGS = "is not the gang's PodGroup"
NOT_GANGS_KO = u"갱의 PodGroup 이 아닙니다"


def test_a_hand_made_podgroup_gang_with_a_patched_status_and_no_pods_fails_on_the_sim(graded, fixtures):
    """v0.12.0 step 5 (the PodGroup form) without the gang's pods and their events: PodGroup gang keeps the gang
    condition (as `kubectl patch --subresource=status` would write it) but no pod names it."""
    state = fixtures.after("gang")
    state["pods"] = [p for p in state["pods"] if not p["metadata"]["name"].startswith("gang-")]
    state["events"] = [e for e in without(state["events"], "Unschedulable", kai.GANG_MESSAGE_MARK)
                       if not e["involvedObject"]["name"].startswith("gang-")]
    assert kai.GANG_MESSAGE_MARK in kai.condition_text(by_name(state["podgroups"])["gang"])
    en, ko = graded(state, "v0.12.0"), graded(copy.deepcopy(state), "v0.12.0", lang="ko")
    check = checks(en)["gang.reason"]
    assert check["status"] == FAILED, check["message"]
    assert "PodGroup gang %s: no pod names it in its pod-group-name annotation" % NOT_GANGS in check["message"]
    assert NOT_GANGS_KO in checks(ko)["gang.reason"]["message"]


def test_a_hand_made_podgroup_gang_with_no_pods_is_named_as_such_on_v017(graded, fixtures):
    """Real v0.17.0 step 5 without the Job's pods and PodGroup; a hand-made PodGroup gang with the gang condition."""
    state = hand.hand_state("gang")
    made = copy.deepcopy(by_name(fixtures.after("gang")["podgroups"])["gang"])
    state["pods"] = [p for p in state["pods"] if not kai.owner_uid(p, "Job", "gang")]
    state["podgroups"] = [p for p in state["podgroups"] if not p["metadata"]["name"].startswith("pg-gang-")] + [made]
    state["events"] = [e for e in without(state["events"], "Unschedulable", kai.GANG_MESSAGE_MARK)
                       if not e["involvedObject"]["name"].startswith("gang-")]
    check = checks(graded(state, hand.KAI_VERSION))["gang.reason"]
    assert check["status"] == FAILED
    assert "PodGroup gang %s: no pod names it" % NOT_GANGS in check["message"], check["message"]


@pytest.mark.parametrize("version, step", [("v0.12.0", "sim"), (hand.KAI_VERSION, "hand")])
def test_a_gang_event_about_p1s_podgroup_fails_gang_reason(graded, fixtures, version, step):
    """Step 5 (sim v0.12.0, real v0.17.0), KAI's gang word gone; a copy of KAI's gang Event about p1's real
    PodGroup (name and uid), stored now: p1 names it, but it is a PodGroup of one, not the gang's."""
    state = fixtures.after("gang") if step == "sim" else hand.hand_state("gang")
    event = real(state["events"], "Unschedulable", "PodGroup", kai.GANG_MESSAGE_MARK)
    p1_group = live_object(state, "PodGroup", "pg-p1-")
    state["events"] = without(state["events"], "Unschedulable", kai.GANG_MESSAGE_MARK) + [forge(
        event, "p1.gang", involvedObject={"name": p1_group["metadata"]["name"], "uid": p1_group["metadata"]["uid"]})]
    clear_conditions(state, "gang")
    clear_conditions(state, "pg-gang-")
    en, ko = graded(state, version), graded(copy.deepcopy(state), version, lang="ko")
    check = checks(en)["gang.reason"]
    assert check["status"] == FAILED, check["message"]
    assert "p1.gang" in check["message"] and "PodGroup %s %s: its minMember is 1, not 3" % (
        p1_group["metadata"]["name"], NOT_GANGS) in check["message"]
    assert NOT_GANGS_KO in checks(ko)["gang.reason"]["message"]


# ---------------------------------------------------------------- issue 33 row 4: bd-1 created again moves nothing

LATER = "2026-12-01T21:05:00Z"  # when the learner creates bd-1 again, after forging


def recreate_bd1(state, at=LATER, uid="bd1-created-again"):
    """bd-1 deleted and created again at `at` (new uid, placed by KAI then), its new PodGroup in place of the
    old one; the old bd-1's events stay, as the API server keeps them."""
    old = by_name(state["pods"])["bd-1"]
    new = copy.deepcopy(old)
    group = kai.workload_podgroup_name("bd-1", uid)
    new["metadata"].update(uid=uid, creationTimestamp=at, annotations=dict(
        new["metadata"]["annotations"], **{kai.PODGROUP_ANNOTATION: group}))
    for condition in new["status"]["conditions"]:
        condition["lastTransitionTime"] = at
    state["pods"] = [p for p in state["pods"] if p["metadata"]["name"] != "bd-1"] + [new]
    old_group = [g for g in state["podgroups"] if g["metadata"]["name"].startswith("pg-bd-1-")][0]
    new_group = copy.deepcopy(old_group)
    new_group["metadata"].update(name=group, uid="pg-" + uid, creationTimestamp=at,
                                 ownerReferences=[dict(old_group["metadata"]["ownerReferences"][0], uid=uid)])
    state["podgroups"] = [g for g in state["podgroups"] if g is not old_group] + [new_group]
    return state


def test_bd1_created_again_does_not_let_a_forged_event_for_a_gone_nl1_count(graded, tmp_path):
    """Real v0.17.0 step 8: nl-1 deleted, its events replaced by a copy stored now, then bd-1 deleted and created
    again: the time that tells which Events came before step 6 stays when bd-1 first came."""
    state = lab_states.finished(lab_states.KAI_V017)
    event = real(state["events"], "Unschedulable", "Pod", kai.REASON_OVER_LIMIT)
    state["pods"] = [p for p in state["pods"] if p["metadata"]["name"] != "nl-1"]
    state["podgroups"] = [p for p in state["podgroups"] if not p["metadata"]["name"].startswith("pg-nl-1-")]
    state["events"] = without(state["events"], "Unschedulable", kai.REASON_OVER_LIMIT) + [forge(event, "nl-1.forged")]
    recreate_bd1(state)
    path = store.record_path(str(tmp_path / "state"), NS)
    check = checks(graded(state, hand.KAI_VERSION, record_path=path))["nolimit.reason"]
    assert check["status"] == FAILED, check["message"]
    assert FORGED in check["message"] and "after the lab moved on to step 6 (2026-12-01T06:43:39Z)" in check["message"]
    record, _ = store.load(path, NS)
    assert "nolimit.reason" not in record["checks"]


def test_bd1_created_again_does_not_let_a_forged_gang_event_count_on_v017(graded, tmp_path):
    """Real v0.17.0 step 8 (the Job and its PodGroup gone in step 6): KAI's gang Events replaced by a copy stored
    now, bd-1 created again after it."""
    state = lab_states.finished(lab_states.KAI_V017)
    event = real(state["events"], "Unschedulable", "PodGroup", kai.GANG_MESSAGE_MARK)
    state["events"] = [e for e in without(state["events"], "Unschedulable", kai.GANG_MESSAGE_MARK)
                       if not e["involvedObject"]["name"].startswith("gang-")] + [forge(event, "gang.forged")]
    recreate_bd1(state)
    path = store.record_path(str(tmp_path / "state"), NS)
    check = checks(graded(state, hand.KAI_VERSION, record_path=path))["gang.reason"]
    assert check["status"] == FAILED, check["message"]
    # Only the copy names the gone PodGroup's uid, and it was stored after step 6 began: no uid is known.
    assert FORGED in check["message"] and "is no object of this step that exists or existed" in check["message"]
    record, _ = store.load(path, NS)
    assert "gang.reason" not in record["checks"]


def test_bd1_created_again_keeps_kais_real_words_of_steps_3_and_5(graded):
    state = recreate_bd1(lab_states.finished(lab_states.KAI_V017))
    result = checks(graded(state, hand.KAI_VERSION))
    assert result["nolimit.reason"]["status"] == PASSED and result["gang.reason"]["status"] == PASSED
