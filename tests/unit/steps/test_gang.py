# -*- coding: utf-8 -*-
"""Step 5, the gang: the Job of the lab text, the explicit PodGroup before KAI
v0.14.7, and a stale gang.txt."""

from __future__ import annotations

import pytest

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kai_profiles
from ansible_collections.gsb.kai_lab.plugins.module_utils.solving.solver import StepFailed, StepRunner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import gang
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import FAILED, PASSED

from lab_testing import HANGUL, NS, RECORDED_KAI, all_gpu_resources, both_langs, by_name, checks, ids_with, solved
import lab_states


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
    recorded = by_name(fixtures.after("gang")["podgroups"])["gang"]
    assert recorded["spec"] == podgroup["spec"]


def test_stale_gang_txt_from_another_cluster_does_not_skip_the_gang(tmp_path, fixtures, fake_cluster):
    """A gang.txt left from an earlier lab must not make step 5 count as done
    on a cluster that never saw the gang (no gang events, no later pods)."""
    state = fixtures.after("limit_fix")
    workdir = fixtures.write_files(tmp_path / "gsb-kai", fixtures.finished()["files"])
    cluster = fake_cluster(state)
    runner = StepRunner(cluster, NS, workdir, RECORDED_KAI, timeout=0.2)
    with pytest.raises(StepFailed):
        runner.run("gang")  # the fake cluster never decides; what matters is it tried
    assert any(call[0] == "apply" and call[1] == "PodGroup" for call in cluster.writes), cluster.writes


# ---------------------------------------------------------------- the form the KAI version asks for

V017 = "v0.17.0"


def test_the_lab_job_on_real_kai_v017_passes_from_its_podgroup(grade, fixtures):
    """Step 5 as the lab text says it, on real KAI v0.17.0: PodGroup pg-gang-<job uid>, minMember 3."""
    state = fixtures.after("gang", lab_states.KAI_V017)
    job_uid = state["jobs"][0]["metadata"]["uid"]
    assert fixtures.find(state["podgroups"], "pg-gang-%s" % job_uid)["spec"]["minMember"] == 3
    result, _ = grade(state, state["files"], kai_version=V017)
    check = checks(result)["gang.reason"]
    assert check["status"] == PASSED
    assert "while 3 are required for gang scheduling" in check["evidence"]["kai"]


def test_the_finished_lab_on_real_kai_v017_grades_100(grade, fixtures):
    """After step 6 the Job and its PodGroup are gone; the events of both remain."""
    state = fixtures.finished(lab_states.KAI_V017)
    assert state["jobs"] == [] and not [pg for pg in state["podgroups"] if pg["metadata"]["name"].startswith("pg-gang-")]
    result, _ = grade(state, state["files"], kai_version=V017)
    assert result["score"] == 100.0
    assert checks(result)["gang.reason"]["status"] == PASSED


def test_a_bare_podgroup_gang_fails_where_kai_groups_the_job(grade, fixtures):
    """The gang written as PodGroup gang by hand (recorded on KAI v0.12.0), graded for a KAI that
    groups the lab's Job: the form the text asks for is missing."""
    state, files = solved(fixtures)
    en, ko = both_langs(grade, state, files, kai_version=V017)
    assert ids_with(en, FAILED) == ids_with(ko, FAILED) == ["gang.reason"]
    check_en, check_ko = checks(en)["gang.reason"], checks(ko)["gang.reason"]
    assert check_en["message"] == (
        "gang.txt: the gang KAI reported is PodGroup gang, not Job gang's: on KAI v0.17.0 the lab asks for Job "
        "gang (parallelism 3, annotation kai.scheduler/batch-min-member: \"3\"), which KAI groups into PodGroup "
        "pg-gang-<job uid>")
    assert "create Job gang as the lab text says" in check_en["hint"]
    assert u"Job gang 의 것이 아니라 PodGroup gang 입니다" in check_ko["message"]
    assert HANGUL.search(check_ko["hint"])
    assert check_en["evidence"]["gang_of"] == ["PodGroup gang"]


def test_the_bare_podgroup_form_is_right_on_the_sim_kai(grade, fixtures):
    state, files = solved(fixtures)
    result, _ = grade(state, files, kai_version=RECORDED_KAI)
    assert checks(result)["gang.reason"]["status"] == PASSED


def test_the_lab_job_on_the_sim_kai_is_named_as_grouped_pod_by_pod(grade, fixtures):
    """Recorded on the sim (KAI v0.12.0): the lab's Job gets a PodGroup of one per pod, all
    three run and the Job completes; the grader says why and what to do on the sim."""
    state = fixtures.sim("gang-job-on-v0.12.0")
    job_pods = sorted(p["metadata"]["name"] for p in state["pods"] if p["metadata"]["name"].startswith("gang-"))
    assert [p["spec"]["minMember"] for p in state["podgroups"] if p["metadata"]["name"].startswith("pg-gang-")] == [1] * 3
    assert state["jobs"][0]["status"]["succeeded"] == 3
    files = dict(state["files"], **{"gang.txt": "nothing stayed Pending\n"})
    en, ko = both_langs(grade, state, files)
    check_en, check_ko = checks(en)["gang.reason"], checks(ko)["gang.reason"]
    assert check_en["status"] == check_ko["status"] == FAILED
    assert check_en["message"] == (
        "gang.txt: this KAI (v0.12.0) groups each pod of a Job alone, before v0.14.7 it ignores "
        "kai.scheduler/batch-min-member: Job gang's pods %s got a PodGroup of one each and were placed one by one, "
        "so there was no gang and no gang reason to copy" % ", ".join(job_pods))
    assert "explicit PodGroup" in check_en["hint"] and "pod-group-name: gang" in check_en["hint"]
    assert u"갱이 없었고" in check_ko["message"] and HANGUL.search(check_ko["hint"])
    assert sorted(check_en["evidence"]["podgroups"]) == job_pods
    # Without gang.txt the learner is told the same, not just that the file is missing.
    result, _ = grade(state, state["files"])
    assert "groups each pod of a Job alone" in checks(result)["gang.reason"]["message"]


def test_the_job_grouped_as_one_is_no_mistake_on_any_kai(grade, fixtures):
    """Real KAI v0.17.0's one PodGroup for the Job is not the grouped-alone shape, whatever version is given."""
    state = fixtures.after("gang", lab_states.KAI_V017)
    for version in (RECORDED_KAI, V017):
        result, _ = grade(state, state["files"], kai_version=version)
        assert checks(result)["gang.reason"]["status"] == PASSED, version


@pytest.mark.parametrize("version, job_gang", [
    ("v0.12.0", False), ("v0.17.0", True), ("v0.17.1", True), ("v0.18.6", True), ("0.18.6", True)])
def test_the_gang_form_follows_the_kai_profile(version, job_gang):
    assert gang.job_gang_supported(version) is job_gang
    assert gang.gang_form(version) is (gang.JOB_FORM if job_gang else gang.PODGROUP_FORM)


@pytest.mark.parametrize("version", ["main", None, "v0.14.6", "v0.14.7", "v1.0.0"])
def test_a_version_no_profile_covers_is_refused_not_read_as_an_old_kai(version):
    with pytest.raises(kai_profiles.KaiProfileError, match="Known KAI lines"):
        gang.job_gang_supported(version)
