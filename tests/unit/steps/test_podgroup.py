# -*- coding: utf-8 -*-
"""Step 2, p1 and its PodGroup: the default-scheduler and namespace mistakes."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.gsb.kai_lab.plugins.module_utils.solving.solver import StepFailed, StepRunner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import FAILED, UNVERIFIED

from lab_testing import NS, RECORDED_KAI, HANGUL, checks, ids_with, solved, both_langs, erased


def default_scheduled_p1(fixtures, state):
    """p1 as the default scheduler leaves it: schedulerName default-scheduler,
    no PodGroup annotation, and the default scheduler's Scheduled event
    (recorded in mistakes.json for pod no-kai)."""
    bad = fixtures.mistakes()
    p1 = fixtures.find(state["pods"], "p1")
    p1["spec"]["schedulerName"] = bad["default_scheduler_pod"]["spec"]["schedulerName"]
    del p1["metadata"]["annotations"]["pod-group-name"]
    # KAI's binder never bound it: no PodBound condition (as on the real sim, molecule mistakes).
    p1["status"]["conditions"] = [c for c in p1["status"].get("conditions") or [] if c.get("type") != "PodBound"]
    state["events"] = [e for e in state["events"] if e["involvedObject"]["name"] != "p1"]
    for event in copy.deepcopy(bad["default_scheduler_events"]):
        event["involvedObject"]["name"] = "p1"
        event["message"] = event["message"].replace("no-kai", "p1")
        state["events"].append(event)
    return state


def test_p1_without_scheduler_name(grade, fixtures):
    state, files = solved(fixtures)
    state = default_scheduled_p1(fixtures, state)
    files["p1.yaml"] = files["p1.yaml"].replace("  schedulerName: kai-scheduler\n", "")
    assert "schedulerName" not in files["p1.yaml"]
    en, ko = both_langs(grade, state, files)
    # podgroup.file fails too: a pod the default scheduler placed has no PodGroup.
    expected = ["podgroup.file", "podgroup.manifest", "podgroup.running"]
    assert ids_with(en, FAILED) == ids_with(ko, FAILED) == expected
    en_c, ko_c = checks(en), checks(ko)
    assert "has no schedulerName: kai-scheduler, so the default scheduler would place it" in \
        en_c["podgroup.manifest"]["message"]
    assert u"기본 스케줄러가 배치합니다" in ko_c["podgroup.manifest"]["message"]
    assert "Pod p1 was placed by default-scheduler, not KAI" in en_c["podgroup.running"]["message"]
    assert u"KAI가 아닌 default-scheduler 가 배치했습니다" in ko_c["podgroup.running"]["message"]
    assert 'Add "schedulerName: kai-scheduler" under spec' in en_c["podgroup.running"]["hint"]
    assert u"schedulerName: kai-scheduler" in ko_c["podgroup.running"]["hint"] and \
        HANGUL.search(ko_c["podgroup.running"]["hint"])
    # The file's check names what the learner can see: p1 has no PodGroup (not a spec.nodeName story).
    assert "but p1 has no PodGroup: KAI gives a pod one" in en_c["podgroup.file"]["message"]
    assert u"p1 파드에는 PodGroup 이 없습니다" in ko_c["podgroup.file"]["message"]
    assert "None" not in en_c["podgroup.file"]["message"] + ko_c["podgroup.file"]["message"]


def test_p1_in_namespace_default(grade, fixtures):
    state, files = solved(fixtures)
    for obj in [fixtures.find(state["pods"], "p1")] + \
            [pg for pg in state["podgroups"] if pg["metadata"]["name"].startswith("pg-p1-")]:
        obj["metadata"]["namespace"] = "default"
    # The API lists p1's PodGroup and events in default, not in kai-lab.
    state["podgroups"] = [pg for pg in state["podgroups"] if pg["metadata"]["namespace"] == NS]
    state["events"] = [e for e in state["events"] if e["involvedObject"]["name"] != "p1"]
    files["p1.yaml"] = files["p1.yaml"].replace("namespace: kai-lab", "namespace: default")
    en, ko = both_langs(grade, state, files)
    assert ids_with(en, FAILED) == ids_with(ko, FAILED) == ["podgroup.manifest", "podgroup.running"]
    assert checks(en)["podgroup.file"]["status"] == UNVERIFIED
    running_en, running_ko = checks(en)["podgroup.running"], checks(ko)["podgroup.running"]
    assert "Pod p1 is in namespace default, but the lab works in kai-lab" in running_en["message"]
    assert "metadata.namespace: kai-lab" in running_en["hint"]
    assert u"default 네임스페이스에 있습니다" in running_ko["message"]
    assert "kai-lab" in running_ko["message"] and "kai-lab" in running_ko["hint"]
    assert running_en["evidence"] == {"namespaces": ["default"]}
    assert "p1 is for namespace default, the lab works in kai-lab" in checks(en)["podgroup.manifest"]["message"]


def test_erased_podgroups_do_not_fail_a_correct_podgroup_txt(grade, fixtures):
    state, files = erased(fixtures)
    result, _ = grade(state, files)
    assert ids_with(result, FAILED) == []
    assert checks(result)["podgroup.file"]["status"] == UNVERIFIED


def default_scheduled_p1_pod(fixtures):
    pod = copy.deepcopy(fixtures.mistakes()["default_scheduler_pod"])
    pod["metadata"]["name"] = "p1"
    return pod


def test_podgroup_step_fails_for_default_scheduled_p1(tmp_path, fixtures, fake_cluster):
    cluster = fake_cluster({"pods": [default_scheduled_p1_pod(fixtures)],
                            "queues": fixtures.after("queues")["queues"]})
    with pytest.raises(StepFailed) as info:
        StepRunner(cluster, NS, str(tmp_path), RECORDED_KAI, timeout=1).run("podgroup")
    exc = info.value
    message = str(exc)
    assert message.startswith("step podgroup (2): expected p1 scheduled by kai-scheduler; observed ")
    assert "likely cause: pod scheduled by default-scheduler" in message
    assert exc.observed["scheduler"] == "default-scheduler"
    assert exc.observed["phase"] == "Running"
    assert '"scheduler": "default-scheduler"' in message
    assert cluster.writes == [], "p1 exists: the solver must not replace the learner's pod"
