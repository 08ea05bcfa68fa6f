# -*- coding: utf-8 -*-
"""The grader runner: whole-lab grades of recorded states, read-only, bounded in
time, never raising on a learner's bad file or an unreachable cluster."""

from __future__ import annotations

import json
import time

import pytest

from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.grader import Grader, Snapshot
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import FAILED, PASSED, UNVERIFIED

from lab_testing import (
    NS, RECORDED_KAI, STEP_CHECKS, FILE_ONLY, TOTAL_WEIGHT, CLUSTER_DOWN, HANGUL, checks, ids_with, solved, both_langs, erased)
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry
import lab_states


@pytest.mark.parametrize("source", ["recorded", "conditions-cleared"])
def test_solved_lab_grades_100(grade, fixtures, source):
    state = fixtures.finished() if source == "recorded" else lab_states.conditions_cleared(fixtures.finished())
    result, workdir = grade(state, state["files"])
    assert result["schema_version"] == 1
    assert result["score"] == 100.0
    assert result["passed"] is True
    assert result["points"] == result["max_points"] == TOTAL_WEIGHT
    assert result["counts"] == {PASSED: len(STEP_CHECKS), FAILED: 0, UNVERIFIED: 0}
    assert ids_with(result, PASSED) == sorted(STEP_CHECKS)
    assert all(c["message"] == "OK" for c in checks(result).values())
    assert [(s["id"], s["number"], s["passed"]) for s in result["steps"]] == [
        (s.id, s.number, True) for s in registry.STEPS]
    assert result["namespace"] == NS and result["workdir"] == workdir


def test_grade_is_json_serialisable_and_titles_follow_the_language(grade, fixtures):
    state, files = solved(fixtures)
    en, ko = both_langs(grade, state, files)
    json.dumps(en)
    assert en["steps"][0]["title"] == "Queue hierarchy"
    assert ko["steps"][0]["title"] == u"큐 계층"
    assert ko["lang"] == "ko"


def test_grading_is_read_only(grade, fixtures, fake_cluster):
    state, files = solved(fixtures)
    cluster = fake_cluster(state)
    grade(state, files, cluster=cluster)
    assert cluster.calls, "it did read the cluster"
    assert cluster.writes == []


def test_empty_lab_grades_0_with_every_check_failing_and_naming_what_is_missing(grade):
    expected = {
        "queues.file": "queues.yaml", "queues.hierarchy": "queues.yaml", "queues.applied": "lab",
        "podgroup.manifest": "p1.yaml", "podgroup.running": "p1", "podgroup.file": "podgroup.txt",
        "nolimit.queue": "nolimit", "nolimit.reason": "nolimit.txt",
        "limit_fix.queue": "nolimit", "limit_fix.running": "nl-1",
        "gang.reason": "gang.txt",
        "preempt.build_running": "bd-1", "preempt.evicted": "Evict",
        "fraction.manifest": "fraction.yaml", "fraction.shared": "fr-1",
        "report.file": "report.json", "report.values": "report.json",
    }
    # Each check of the lab names what it misses; a step added to the step list fails all the same (below).
    assert set(expected) <= set(STEP_CHECKS)
    en, ko = both_langs(grade, {}, {})
    for result in (en, ko):
        assert result["score"] == 0.0
        assert result["points"] == 0
        assert result["passed"] is False
        assert result["counts"] == {PASSED: 0, FAILED: len(STEP_CHECKS), UNVERIFIED: 0}
        for cid, check in checks(result).items():
            assert expected.get(cid, "") in check["message"] and check["message"], (cid, check["message"])
            assert check["hint"], cid
    en_checks, ko_checks = checks(en), checks(ko)
    assert "does not exist in" in en_checks["queues.file"]["message"]
    assert u"파일이 없습니다" in ko_checks["queues.file"]["message"]
    assert "not in the cluster" in en_checks["queues.applied"]["message"]
    assert "research" in en_checks["queues.applied"]["message"] and "ops" in en_checks["queues.applied"]["message"]
    assert "pod bd-1 does not exist in kai-lab" in en_checks["preempt.build_running"]["message"]
    for cid in STEP_CHECKS:
        assert HANGUL.search(ko_checks[cid]["message"]), cid
        assert not HANGUL.search(en_checks[cid]["message"]), cid


@pytest.mark.parametrize("name, content, failing, words", [
    ("queues.yaml", "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: lab\n",
     ["queues.file", "queues.hierarchy"], "cannot be read as YAML"),
    ("queues.yaml", None, ["queues.file", "queues.hierarchy"], "a document is v1 ConfigMap"),
    ("p1.yaml", "- just\n- a list\n", ["podgroup.manifest"], "a document is not a mapping"),
    ("fraction.yaml", "\tkind: Pod\n", ["fraction.manifest"], "cannot be read as YAML"),
    ("report.json", "[4, 1, \"GPU-x\"]\n", ["report.file", "report.values"], "the top level is not a JSON object"),
    ("report.json", "{\"gpu_allocated\": 4,", ["report.file", "report.values"], "cannot be read as JSON"),
    ("report.json", "{\"gpu_allocated\": \"4\", \"reservation_pods\": true, \"shared_gpu\": 7, \"x\": 1}",
     ["report.file", "report.values"], "gpu_allocated must be a number"),
    ("gang.txt", "  \n", ["gang.reason"], "the file is empty"),
    ("podgroup.txt", "pg-a\npg-b\n", ["podgroup.file"], "found 2 lines"),
    ("nolimit.txt", "it just stays Pending\n", ["nolimit.reason"], "does not hold KAI's OverLimit reason"),
    ("gang.txt", "Resources were found for 1 pods while 2 are required for gang scheduling\n",
     ["gang.reason"], "the gang was not of 3 pods"),
])
def test_bad_learner_files_fail_their_checks_without_raising(grade, fixtures, name, content, failing, words):
    state, files = solved(fixtures)
    if content is None:  # extra documents of another kind
        content = files[name] + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\n"
    files[name] = content
    result, _ = grade(state, files)
    assert ids_with(result, FAILED) == failing
    assert ids_with(result, UNVERIFIED) == []
    assert words in checks(result)[failing[0]]["message"]


def test_binary_garbage_file_does_not_raise(fixtures, fake_cluster, tmp_path):
    state, files = solved(fixtures)
    workdir = fixtures.write_files(tmp_path / "w", files)
    with open(workdir + "/podgroup.txt", "wb") as handle:
        handle.write(b"\xff\xfe\x00pg\x80\n")
    result = Grader(Snapshot(fake_cluster(state), NS, workdir, kai_version=RECORDED_KAI), lang="en").run()
    assert ids_with(result, FAILED) == ["podgroup.file"]
    assert "says" in checks(result)["podgroup.file"]["message"]


def test_unreachable_cluster_fails_every_cluster_check_with_the_cluster_message(grade, fixtures, fake_cluster):
    """Cluster checks fail naming the API server; checks of the learner's files alone still grade the files."""
    state, files = solved(fixtures)
    for lang, words, hint in (("en", "The cluster could not be read: ", "ansible-playbook playbooks/provision.yml"),
                              ("ko", u"클러스터를 읽을 수 없습니다: ", "ansible-playbook playbooks/provision.yml")):
        result, _ = grade(state, files, lang=lang, cluster=fake_cluster(state, error=CLUSTER_DOWN))
        assert result["passed"] is False
        assert result["counts"][FAILED] == len(STEP_CHECKS) - len(FILE_ONLY)
        assert sorted(ids_with(result, PASSED)) == sorted(FILE_ONLY)
        for check in [c for c in checks(result).values() if c["id"] not in FILE_ONLY] + result["environment"]:
            assert check["status"] == FAILED, check["id"]
            assert check["message"] == words + CLUSTER_DOWN
            assert hint in check["hint"]


def test_deadline_in_the_past_leaves_cluster_checks_unverified(grade, fixtures):
    """Past the time limit, cluster checks say so; the learner's files are still graded."""
    state, files = solved(fixtures)
    past = time.monotonic() - 1
    en, ko = both_langs(grade, state, files, deadline=past, deadline_seconds=30)
    for result in (en, ko):
        assert result["counts"] == {PASSED: len(FILE_ONLY), FAILED: 0, UNVERIFIED: len(STEP_CHECKS) - len(FILE_ONLY)}
        assert result["passed"] is False
        assert all(c["status"] == UNVERIFIED for c in result["environment"])
    late = [c for c in checks(en).values() if c["id"] not in FILE_ONLY]
    assert all(c["message"] == "Not checked: grading ran out of its 30 s time limit." for c in late)
    assert all(u"채점 제한 시간 30초를 넘었습니다" in c["message"]
               for c in checks(ko).values() if c["id"] not in FILE_ONLY)


def test_deadline_in_the_future_changes_nothing(grade, fixtures):
    state, files = solved(fixtures)
    result, _ = grade(state, files, deadline=time.monotonic() + 60, deadline_seconds=60)
    assert result["score"] == 100.0


def test_erased_evidence_leaves_affected_checks_unverified(grade, fixtures):
    state, files = erased(fixtures)
    en, ko = both_langs(grade, state, files)
    for cid in ("nolimit.reason", "gang.reason", "preempt.evicted"):
        assert checks(en)[cid]["status"] == UNVERIFIED, cid
        assert checks(en)[cid]["message"].startswith("Could not be verified: ")
        assert checks(ko)[cid]["message"].startswith(u"확인할 수 없습니다: ")
    assert "tr-1, tr-2" in checks(en)["preempt.evicted"]["message"]
    # Checks that need no events or PodGroups still pass.
    for cid in ("queues.applied", "podgroup.running", "limit_fix.running", "preempt.build_running",
                "fraction.shared", "report.values"):
        assert checks(en)[cid]["status"] == PASSED, cid
    assert en["passed"] is False
    assert 0 < en["score"] < 100


def test_components_down_fail_the_environment_and_the_grade(grade, fixtures):
    state, files = solved(fixtures)
    result, _ = grade(state, files, health={"kai-scheduler": True, "binder": False, "pod-grouper": False})
    env = result["environment"][0]
    assert env["status"] == FAILED
    assert "binder, pod-grouper" in env["message"]
    assert result["score"] == 100.0
    assert result["passed"] is False


@pytest.mark.parametrize("name,content", [
    ("queues.yaml", "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: lab}\nspec: {resources: {gpu: 4}}\n"),
    ("queues.yaml", "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: lab\n"),
    ("queues.yaml", "a: 2020-13-45\n"),
    ("p1.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p1, labels: [a]}\n"
                "spec: {containers: [{name: m, resources: {limits: {nvidia.com/gpu: one}}}]}\n"),
    ("p1.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p1}\nspec: {containers: {name: a}}\n"),
    ("report.json", "[" * 100000),
])
def test_files_of_unexpected_shape_fail_their_checks_instead_of_crashing(grade, fixtures, name, content):
    state, files = solved(fixtures)
    files[name] = content
    result, _ = grade(state, files)
    failed = ids_with(result, FAILED)
    assert failed, "a malformed %s must fail a check" % name
    assert all(c["message"] for c in checks(result).values() if c["status"] == FAILED)
