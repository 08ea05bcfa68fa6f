# -*- coding: utf-8 -*-
"""grading.py: grades of recorded lab states and of the common mistakes, in
Korean and English, read-only, never raising on a learner's bad file."""

from __future__ import annotations

import copy
import json
import re
import time
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.gsb.kai_lab.plugins.module_utils import grading
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import (
    FAILED, PASSED, UNVERIFIED, Grader, Snapshot, junit_xml, summary_table)

NS = "kai-lab"
STEP_CHECKS = [c for _, checks in grading.CHECKS_BY_STEP for c in checks]
SHARED_GPU = "GPU-8a252772-30e0-533f-9d07-32784ec7e87c"
OTHER_CLUSTER_GPU = "GPU-78e893ca-f584-5717-ba7f-4e256b599bab"  # kwok-node-0's first GPU in another sim
DENIAL = "cannot have both GPU fraction request and whole GPU resource request/limit"
CLUSTER_DOWN = ("cannot reach the Kubernetes API server at https://127.0.0.1:6443 (connection refused). "
                "Is the lab running? Provision it with ansible-playbook playbooks/provision.yml.")
HANGUL = re.compile(u"[\uac00-\ud7a3]")


@pytest.fixture
def grade(tmp_path, fake_cluster, fixtures):
    """grade(state, files, lang='en', cluster=None, deadline=None, health=None) -> (grade dict, workdir)."""
    counter = {"n": 0}

    def run(state, files, lang="en", cluster=None, deadline=None, deadline_seconds=None, health=None,
            kai_version="v0.12.0"):
        counter["n"] += 1
        workdir = fixtures.write_files(tmp_path / ("w%d" % counter["n"]), files)
        snapshot = Snapshot(cluster or fake_cluster(state), NS, workdir, health=health)
        grader = Grader(snapshot, lang=lang, deadline=deadline, kai_version=kai_version, time_limit=deadline_seconds)
        return grader.run(), workdir

    return run


def checks(result):
    return dict((c["id"], c) for s in result["steps"] for c in s["checks"])


def ids_with(result, status):
    return sorted(cid for cid, c in checks(result).items() if c["status"] == status)


def solved(fixtures):
    state = fixtures.sim("08-report")
    return state, dict(state["files"])


def both_langs(grade, state, files, **kwargs):
    en, _ = grade(state, files, lang="en", **kwargs)
    ko, _ = grade(copy.deepcopy(state), files, lang="ko", **kwargs)
    return en, ko


# ---------------------------------------------------------------- whole lab

@pytest.mark.parametrize("source", ["recorded", "conditions-cleared"])
def test_solved_lab_grades_100(grade, fixtures, source):
    state = fixtures.sim("08-report") if source == "recorded" else fixtures.derived("08-report.conditions-cleared")
    result, workdir = grade(state, state["files"])
    assert result["schema_version"] == 1
    assert result["score"] == 100.0
    assert result["passed"] is True
    assert result["points"] == result["max_points"] == sum(grading.WEIGHTS.values())
    assert result["counts"] == {PASSED: 17, FAILED: 0, UNVERIFIED: 0}
    assert ids_with(result, PASSED) == sorted(STEP_CHECKS)
    assert all(c["message"] == "OK" for c in checks(result).values())
    assert [s["passed"] for s in result["steps"]] == [True] * 8
    assert result["namespace"] == NS and result["workdir"] == workdir


def test_v017_cleared_conditions_nolimit_reason_matched_from_events(grade, fixtures):
    state = fixtures.derived("08-report.conditions-cleared")
    result, _ = grade(state, state["files"])
    check = checks(result)["nolimit.reason"]
    assert check["status"] == PASSED
    assert check["evidence"]["kai"].startswith("OverLimit: nolimit quota has reached the allowable limit of GPUs")


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
    assert sorted(expected) == sorted(STEP_CHECKS)
    en, ko = both_langs(grade, {}, {})
    for result in (en, ko):
        assert result["score"] == 0.0
        assert result["points"] == 0
        assert result["passed"] is False
        assert result["counts"] == {PASSED: 0, FAILED: 17, UNVERIFIED: 0}
        for cid, check in checks(result).items():
            assert expected[cid] in check["message"], (cid, check["message"])
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


# ---------------------------------------------------------------- common mistakes

def default_scheduled_p1(fixtures, state):
    """p1 as the default scheduler leaves it: schedulerName default-scheduler,
    no PodGroup annotation, and the default scheduler's Scheduled event
    (recorded in mistakes.json for pod no-kai)."""
    bad = fixtures.mistakes()
    p1 = fixtures.find(state["pods"], "p1")
    p1["spec"]["schedulerName"] = bad["default_scheduler_pod"]["spec"]["schedulerName"]
    del p1["metadata"]["annotations"]["pod-group-name"]
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


def test_fraction_yaml_with_gpu_limits_names_kais_denial(grade, fixtures):
    state, files = solved(fixtures)
    files["fraction.yaml"] = files["fraction.yaml"].replace(
        "    - infinity\n", "    - infinity\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n")
    assert files["fraction.yaml"].count("nvidia.com/gpu") == 2
    en, ko = both_langs(grade, state, files)
    assert ids_with(en, FAILED) == ids_with(ko, FAILED) == ["fraction.manifest"]
    denial = fixtures.mistakes()["fraction_with_gpu_limit_error"].split("denied the request: ", 1)[1]
    assert denial == DENIAL
    for result, words in ((en, "admission webhook rejects it"), (ko, u"웹훅이 거부합니다")):
        message = checks(result)["fraction.manifest"]["message"]
        assert denial in message
        assert words in message
        assert "fr-1" in message and "fr-2" in message


def test_fraction_request_of_a_gpu_is_caught_too(grade, fixtures):
    state, files = solved(fixtures)
    files["fraction.yaml"] = files["fraction.yaml"].replace(
        "    - infinity\n", "    - infinity\n    resources:\n      requests:\n        nvidia.com/gpu: 1\n", 1)
    result, _ = grade(state, files)
    assert ids_with(result, FAILED) == ["fraction.manifest"]
    assert DENIAL in checks(result)["fraction.manifest"]["message"]
    assert "fr-2" not in checks(result)["fraction.manifest"]["message"]


def test_fraction_annotation_written_as_a_number_is_flagged(grade, fixtures):
    state, files = solved(fixtures)
    files["fraction.yaml"] = files["fraction.yaml"].replace("gpu-fraction: '0.5'", "gpu-fraction: 0.5")
    assert "gpu-fraction: 0.5\n" in files["fraction.yaml"]
    result, _ = grade(state, files)
    assert checks(result)["fraction.manifest"]["status"] == FAILED


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


def test_research_queue_without_gpu_limit_is_read_as_zero(grade, fixtures):
    state, files = solved(fixtures)
    research = "      quota: 2\n      limit: 4\n"
    assert files["queues.yaml"].count(research) == 1
    files["queues.yaml"] = files["queues.yaml"].replace(research, "      quota: 2\n")
    en, ko = both_langs(grade, state, files)
    assert ids_with(en, FAILED) == ids_with(ko, FAILED) == ["queues.hierarchy"]
    assert "queue research has no gpu limit; KAI reads an unset limit as 0" in checks(en)["queues.hierarchy"]["message"]
    assert u"research 큐에 gpu limit 이 없습니다" in checks(ko)["queues.hierarchy"]["message"]
    assert u"0으로 읽어" in checks(ko)["queues.hierarchy"]["message"]


def test_applied_research_queue_without_limit_fails_queues_applied(grade, fixtures):
    state, files = solved(fixtures)
    del fixtures.find(state["queues"], "research")["spec"]["resources"]["gpu"]["limit"]
    result, _ = grade(state, files)
    assert ids_with(result, FAILED) == ["queues.applied"]
    assert "KAI reads an unset limit as 0" in checks(result)["queues.applied"]["message"]


def test_report_copied_from_another_cluster(grade, fixtures):
    state, files = solved(fixtures)
    report = json.loads(files["report.json"])
    report["shared_gpu"] = OTHER_CLUSTER_GPU
    files["report.json"] = json.dumps(report)
    en, ko = both_langs(grade, state, files)
    assert ids_with(en, FAILED) == ids_with(ko, FAILED) == ["report.values"]
    assert checks(en)["report.values"]["message"] == (
        "report.json: shared_gpu is %s but fr-1 received %s: this report.json was not computed from this cluster"
        % (OTHER_CLUSTER_GPU, SHARED_GPU))
    assert u"이 클러스터에서 계산한 report.json 이 아닙니다" in checks(ko)["report.values"]["message"]
    assert checks(en)["report.values"]["evidence"]["cluster"]["shared_gpu"] == SHARED_GPU


def test_report_with_wrong_count_names_the_key_and_the_cluster_value(grade, fixtures):
    state, files = solved(fixtures)
    files["report.json"] = json.dumps({"gpu_allocated": 3, "reservation_pods": 1, "shared_gpu": SHARED_GPU})
    result, _ = grade(state, files)
    assert ids_with(result, FAILED) == ["report.values"]
    assert "gpu_allocated is 3, the cluster shows 4" in checks(result)["report.values"]["message"]


# ---------------------------------------------------------------- bad files never raise

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
    result = Grader(Snapshot(fake_cluster(state), NS, workdir), lang="en").run()
    assert ids_with(result, FAILED) == ["podgroup.file"]
    assert "says" in checks(result)["podgroup.file"]["message"]


# ---------------------------------------------------------------- cluster down, time limit, lost evidence

def test_unreachable_cluster_fails_every_cluster_check_with_the_cluster_message(grade, fixtures, fake_cluster):
    """Cluster checks fail naming the API server; checks of the learner's files alone still grade the files."""
    from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import FILE_ONLY
    state, files = solved(fixtures)
    for lang, words, hint in (("en", "The cluster could not be read: ", "ansible-playbook playbooks/provision.yml"),
                              ("ko", u"클러스터를 읽을 수 없습니다: ", "ansible-playbook playbooks/provision.yml")):
        result, _ = grade(state, files, lang=lang, cluster=fake_cluster(state, error=CLUSTER_DOWN))
        assert result["passed"] is False
        assert result["counts"][FAILED] == 17 - len(FILE_ONLY)
        assert sorted(ids_with(result, PASSED)) == sorted(FILE_ONLY)
        for check in [c for c in checks(result).values() if c["id"] not in FILE_ONLY] + result["environment"]:
            assert check["status"] == FAILED, check["id"]
            assert check["message"] == words + CLUSTER_DOWN
            assert hint in check["hint"]


def test_deadline_in_the_past_leaves_cluster_checks_unverified(grade, fixtures):
    """Past the time limit, cluster checks say so; the learner's files are still graded."""
    from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import FILE_ONLY
    state, files = solved(fixtures)
    past = time.monotonic() - 1
    en, ko = both_langs(grade, state, files, deadline=past, deadline_seconds=30)
    for result in (en, ko):
        assert result["counts"] == {PASSED: len(FILE_ONLY), FAILED: 0, UNVERIFIED: 17 - len(FILE_ONLY)}
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


def erased(fixtures):
    state, files = solved(fixtures)
    state["events"] = []
    state["podgroups"] = []
    return state, files


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


def test_erased_podgroups_do_not_fail_a_correct_podgroup_txt(grade, fixtures):
    state, files = erased(fixtures)
    result, _ = grade(state, files)
    assert ids_with(result, FAILED) == []
    assert checks(result)["podgroup.file"]["status"] == UNVERIFIED


def test_p1_evicted_by_kai_in_step_6_is_not_held_against_the_learner(grade, fixtures):
    """KAI may pick p1 (also priority train, queue research) as the victim."""
    state, files = solved(fixtures)
    state["pods"].remove(fixtures.find(state["pods"], "p1"))
    state["podgroups"] = [pg for pg in state["podgroups"] if not pg["metadata"]["name"].startswith("pg-p1-")]
    tr2 = copy.deepcopy(fixtures.find(fixtures.sim("06-preempt")["pods"], "tr-1"))
    tr2["metadata"]["name"] = "tr-2"
    state["pods"].append(tr2)  # tr-1 was deleted in step 7, tr-2 remains
    evict = [e for e in state["events"] if e["reason"] == "Evict"][0]
    evict["message"] = evict["message"].replace("kai-lab/tr-2", "kai-lab/p1")
    result, _ = grade(state, files)
    assert checks(result)["podgroup.running"]["status"] == PASSED
    assert "preempted" in checks(result)["podgroup.running"]["evidence"]["evicted"]
    assert checks(result)["preempt.evicted"]["status"] == PASSED
    assert checks(result)["preempt.evicted"]["evidence"]["victim"] == "p1"
    assert ids_with(result, FAILED) == []
    assert ids_with(result, UNVERIFIED) == ["podgroup.file"]


def test_build_pod_with_wrong_priority(grade, fixtures):
    state, files = solved(fixtures)
    fixtures.find(state["pods"], "bd-1")["spec"]["priorityClassName"] = "train"
    result, _ = grade(state, files)
    assert "preempt.build_running" in ids_with(result, FAILED)
    assert "priorityClassName is train, expected build" in checks(result)["preempt.build_running"]["message"]


def test_pending_pod_reports_kais_reason(grade, fixtures):
    """nl-1 still Pending (limit not fixed): limit_fix fails with KAI's OverLimit reason."""
    state = fixtures.sim("03-nolimit")
    result, _ = grade(state, state["files"])
    c = checks(result)
    assert c["nolimit.queue"]["status"] == PASSED and c["nolimit.reason"]["status"] == PASSED
    assert c["limit_fix.queue"]["status"] == FAILED
    assert "gpu limit is unset (0), expected -1" in c["limit_fix.queue"]["message"]
    assert c["limit_fix.running"]["status"] == FAILED
    assert "is Pending, not Running (OverLimit: nolimit quota has reached" in c["limit_fix.running"]["message"]


def test_components_down_fail_the_environment_and_the_grade(grade, fixtures):
    state, files = solved(fixtures)
    result, _ = grade(state, files, health={"kai-scheduler": True, "binder": False, "pod-grouper": False})
    env = result["environment"][0]
    assert env["status"] == FAILED
    assert "binder, pod-grouper" in env["message"]
    assert result["score"] == 100.0
    assert result["passed"] is False


# ---------------------------------------------------------------- reports

def test_junit_xml_counts_failures_and_skips(grade, fixtures):
    for state, files in ((fixtures.sim("08-report"), fixtures.sim("08-report")["files"]), ({}, {}), erased(fixtures)):
        result, _ = grade(state, files)
        root = ET.fromstring(junit_xml(result).encode("utf-8"))
        assert root.tag == "testsuites"
        cases = root.findall("./testsuite/testcase")
        assert len(cases) == int(root.get("tests")) == 17
        assert int(root.get("failures")) == len(root.findall(".//failure")) == result["counts"][FAILED]
        assert int(root.get("skipped")) == len(root.findall(".//skipped")) == result["counts"][UNVERIFIED]
        assert [s.get("name") for s in root.findall("testsuite")][:2] == ["1 queues", "2 podgroup"]
        failed = dict((c.get("name"), c.find("failure")) for c in cases if c.find("failure") is not None)
        assert sorted(failed) == ids_with(result, FAILED)
        for cid, element in failed.items():
            assert element.get("message") == checks(result)[cid]["message"]


def test_junit_xml_escapes_learner_text(grade, fixtures):
    state, files = solved(fixtures)
    files["nolimit.txt"] = 'pending <because> "quota" & stuff\n'
    result, _ = grade(state, files)
    root = ET.fromstring(junit_xml(result).encode("utf-8"))
    failure = [c for c in root.iter("testcase") if c.get("name") == "nolimit.reason"][0].find("failure")
    assert 'pending <because> "quota" & stuff' in failure.get("message")


def test_summary_table(grade, fixtures):
    state, files = solved(fixtures)
    rows = summary_table(grade(state, files)[0])
    assert len(rows) == 1 + 17 + 1 + 1
    total = sum(grading.WEIGHTS.values())
    assert rows[-1] == "score 100.0%% (%d/%d points), PASSED" % (total, total)
    rows = summary_table(grade({}, {})[0])
    assert rows[-1] == "score 0.0%% (0/%d points), NOT PASSED" % total
    assert sum(1 for r in rows if " FAIL " in r) == 17


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


def test_expired_step6_events_leave_preempt_unverified_not_failed(grade, fixtures):
    """An hour after step 6 the Evict event is gone while later events remain."""
    state, files = solved(fixtures)
    state["events"] = [e for e in state["events"] if e["involvedObject"]["name"].startswith("fr-")]
    result, _ = grade(state, files)
    assert checks(result)["preempt.evicted"]["status"] == UNVERIFIED
    assert checks(result)["preempt.build_running"]["status"] == PASSED


def test_a_mistyped_shared_gpu_is_not_called_copied(grade, fixtures):
    state, files = solved(fixtures)
    report = json.loads(files["report.json"])
    report["shared_gpu"] = "0"
    files["report.json"] = json.dumps(report)
    result, _ = grade(state, files)
    message = checks(result)["report.values"]["message"]
    assert "not computed from this cluster" not in message and "shared_gpu is '0'" in message
