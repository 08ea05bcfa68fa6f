# -*- coding: utf-8 -*-
"""lab_steps.py: the solver against a fake cluster serving recorded snapshots.

Idempotence: on a finished lab (the state after step 8 and the files a perfect
learner wrote) every step is verified, not redone: no write call, changed
False, no file rewritten. Failures say which step, what was expected, what was
seen and the likely cause.
"""

from __future__ import annotations

import copy
import json
import os

import pytest

from ansible_collections.gsb.kai_lab.plugins.module_utils import kai
from ansible_collections.gsb.kai_lab.plugins.module_utils import lab_catalog as cat
from ansible_collections.gsb.kai_lab.plugins.module_utils.lab_steps import LabView, StepFailed, StepRunner

NS = "kai-lab"
RECORDED_KAI = "v0.12.0"  # the fixtures' KAI


def snapshot_files(workdir):
    return dict((name, open(os.path.join(workdir, name)).read()) for name in sorted(os.listdir(workdir)))


@pytest.fixture(params=["recorded", "conditions-cleared"])
def finished_lab(request, tmp_path, fixtures, fake_cluster):
    """The lab after step 8: as recorded (KAI v0.12.0), and as KAI v0.17+ shows it
    (PodGroup schedulingConditions cleared; derived fixture)."""
    if request.param == "recorded":
        state, version = fixtures.sim("08-report"), RECORDED_KAI
    else:
        state, version = fixtures.derived("08-report.conditions-cleared"), "v0.18.6"
    workdir = fixtures.write_files(tmp_path / "gsb-kai", state["files"])
    return fake_cluster(state), workdir, state, version


# ---------------------------------------------------------------- idempotence

@pytest.mark.parametrize("step_id", cat.STEP_IDS)
def test_rerun_on_finished_lab_changes_nothing(finished_lab, step_id):
    cluster, workdir, state, version = finished_lab
    before = snapshot_files(workdir)
    runner = StepRunner(cluster, NS, workdir, version, timeout=1)
    result = runner.run(step_id)
    assert result["changed"] is False
    assert result["files"] == [] and result["backups"] == []
    assert snapshot_files(workdir) == before
    assert result["number"] == cat.step(step_id)["number"]


@pytest.mark.parametrize("step_id", cat.STEP_IDS)
def test_rerun_on_finished_lab_makes_no_write_call(finished_lab, step_id):
    cluster, workdir, state, version = finished_lab
    StepRunner(cluster, NS, workdir, version, timeout=1).run(step_id)
    assert cluster.writes == []


def test_rerun_evidence_comes_from_the_cluster(finished_lab):
    cluster, workdir, state, _ = finished_lab
    report = StepRunner(cluster, NS, workdir, RECORDED_KAI, timeout=1).run("report")
    assert report["evidence"]["report"] == json.loads(state["files"]["report.json"])
    preempt = StepRunner(cluster, NS, workdir, RECORDED_KAI, timeout=1).run("preempt")
    assert preempt["evidence"]["evicted"] == ["tr-2"]
    fraction = StepRunner(cluster, NS, workdir, RECORDED_KAI, timeout=1).run("fraction")
    assert fraction["evidence"]["reservation_pods"] == 1
    assert set(fraction["evidence"]["devices"].values()) == {"GPU-8a252772-30e0-533f-9d07-32784ec7e87c"}


def test_report_written_from_the_cluster_equals_the_recorded_file(tmp_path, fixtures, fake_cluster):
    state = fixtures.sim("08-report")
    cluster = fake_cluster(state)
    workdir = str(tmp_path / "fresh")
    result = StepRunner(cluster, NS, workdir, RECORDED_KAI, timeout=1).run("report")
    assert result["changed"] is True
    assert open(os.path.join(workdir, "report.json")).read() == state["files"]["report.json"]
    assert cluster.writes == []


def test_changed_file_is_rewritten_with_a_backup(finished_lab):
    cluster, workdir, state, _ = finished_lab
    with open(os.path.join(workdir, "report.json"), "w") as handle:
        handle.write('{"gpu_allocated": 3}\n')
    result = StepRunner(cluster, NS, workdir, RECORDED_KAI, timeout=1).run("report")
    assert result["changed"] is True
    assert open(os.path.join(workdir, "report.json")).read() == state["files"]["report.json"]
    assert len(result["backups"]) == 1
    assert open(result["backups"][0]).read() == '{"gpu_allocated": 3}\n'


def test_nolimit_step_captures_the_over_limit_sentence(tmp_path, fixtures, fake_cluster):
    state = fixtures.sim("03-nolimit")
    cluster = fake_cluster(state)
    workdir = str(tmp_path / "w")
    result = StepRunner(cluster, NS, workdir, RECORDED_KAI, timeout=1).run("nolimit")
    assert open(os.path.join(workdir, "nolimit.txt")).read() == state["files"]["nolimit.txt"]
    assert [r["reason"] for r in result["evidence"]["reasons"]] == ["OverLimit"]
    # The queue already is as the step writes it: apply reports no change, nl-1 is not re-created.
    assert [w[:3] for w in cluster.writes] == [("apply", "Queue", "nolimit")]


def test_limit_fix_patches_only_the_gpu_limit(tmp_path, fixtures, fake_cluster):
    state = fixtures.sim("03-nolimit")
    # nl-1 as it ran after the fix (step 4's recorded pod).
    state["pods"] = fixtures.sim("04-limit_fix")["pods"]
    cluster = fake_cluster(state)
    result = StepRunner(cluster, NS, str(tmp_path), RECORDED_KAI, timeout=1).run("limit_fix")
    assert result["changed"] is True
    assert cluster.writes == [("patch", "Queue", "nolimit", None, False,
                               '{"spec": {"resources": {"gpu": {"limit": -1}}}}')]
    assert result["evidence"]["queue"]["gpu"] == {"quota": 1, "limit": -1, "limit_set": True, "over_quota_weight": 1}


def test_check_mode_writes_no_file_and_only_dry_runs(tmp_path, fake_cluster):
    cluster = fake_cluster({})
    workdir = str(tmp_path / "w")
    result = StepRunner(cluster, NS, workdir, RECORDED_KAI, timeout=1, check_mode=True).run("queues")
    assert result["changed"] is True
    assert not os.path.exists(workdir)
    assert cluster.writes and all(w[0] == "apply" and w[-1] is True for w in cluster.writes)
    assert cluster.list("scheduling.run.ai/v2", "Queue") == []


# ---------------------------------------------------------------- failures a learner can act on

def default_scheduled_p1(fixtures):
    pod = copy.deepcopy(fixtures.mistakes()["default_scheduler_pod"])
    pod["metadata"]["name"] = "p1"
    return pod


def test_diagnose_default_scheduler_pod(fixtures, fake_cluster):
    bad = fixtures.mistakes()
    cluster = fake_cluster({"pods": [bad["default_scheduler_pod"]], "events": bad["default_scheduler_events"]})
    cause = LabView(cluster, NS).diagnose("no-kai")
    assert cause == "pod scheduled by default-scheduler, not KAI: spec.schedulerName must be kai-scheduler"


def test_podgroup_step_fails_for_default_scheduled_p1(tmp_path, fixtures, fake_cluster):
    cluster = fake_cluster({"pods": [default_scheduled_p1(fixtures)],
                            "queues": fixtures.sim("01-queues")["queues"]})
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


def test_limit_fix_times_out_naming_kais_reason(tmp_path, fixtures, fake_cluster):
    cluster = fake_cluster(fixtures.sim("03-nolimit"))  # nl-1 stays Pending: nothing simulates KAI
    with pytest.raises(StepFailed) as info:
        StepRunner(cluster, NS, str(tmp_path), RECORDED_KAI, timeout=0.2).run("limit_fix")
    message = str(info.value)
    assert message.startswith("step limit_fix (4): expected nl-1 to run after the limit fix (Running); observed ")
    assert '"phase": "Pending"' in message
    assert "likely cause: KAI keeps it Pending: OverLimit: nolimit quota has reached the allowable limit" in message


def test_limit_fix_before_step_3_says_so(tmp_path, fixtures, fake_cluster):
    cluster = fake_cluster(fixtures.sim("02-podgroup"))
    with pytest.raises(StepFailed) as info:
        StepRunner(cluster, NS, str(tmp_path), RECORDED_KAI, timeout=1).run("limit_fix")
    assert info.value.cause == "step 3 (nolimit) has not been done"
    assert str(info.value).startswith("step limit_fix (4): expected queue nolimit from step 3")
    assert cluster.writes == []


def test_admission_denial_becomes_the_likely_cause(tmp_path, fixtures, fake_cluster):
    error = fixtures.mistakes()["fraction_with_gpu_limit_error"]
    cluster = fake_cluster({}, reject={"Pod": error})
    with pytest.raises(StepFailed) as info:
        StepRunner(cluster, NS, str(tmp_path), RECORDED_KAI, timeout=1).run("podgroup")
    assert info.value.cause == ("KAI admission webhook denied it: cannot have both GPU fraction request and "
                                "whole GPU resource request/limit")
    assert "step podgroup (2): expected the API server to accept Pod p1" in str(info.value)


def test_unreachable_webhook_is_named(tmp_path, fake_cluster):
    error = ('cannot apply Pod p1: 500 Internal error occurred: failed calling webhook '
             '"admission.kai-scheduler.svc": connection refused')
    cluster = fake_cluster({}, reject={"Pod": error})
    with pytest.raises(StepFailed) as info:
        StepRunner(cluster, NS, str(tmp_path), RECORDED_KAI, timeout=1).run("podgroup")
    assert info.value.cause == "KAI admission webhook not reachable"


@pytest.mark.parametrize("mutate, cause", [
    (None, "pod fr-1 does not exist (never created, rejected by admission, or evicted)"),
    ("no-annotation", "no PodGroup annotation: KAI's pod-grouper is not running or not reaching the API server"),
    ("no-podgroup", "PodGroup pg-fr-1-94fb6486-f6e2-4b98-acfb-6ab33251a5d0 is missing: KAI's pod-grouper is not running"),
    ("unbound", "no decision from KAI yet: the KAI scheduler is not running, or the queue research does not exist"),
    ("scheduled-not-bound", "KAI scheduled it but nothing bound it: KAI's binder is not running"),
    ("running", "pod is Running on kai-lab-vm"),
])
def test_diagnose_names_the_component_at_fault(fixtures, fake_cluster, mutate, cause):
    state = fixtures.sim("08-report")
    fr1 = fixtures.find(state["pods"], "fr-1")
    if mutate is None:
        state["pods"].remove(fr1)
    elif mutate == "no-annotation":
        del fr1["metadata"]["annotations"]["pod-group-name"]
    elif mutate == "no-podgroup":
        state["podgroups"] = [pg for pg in state["podgroups"] if not kai.name_of(pg).startswith("pg-fr-1-")]
    elif mutate in ("unbound", "scheduled-not-bound"):
        del fr1["spec"]["nodeName"]
        fr1["status"] = {"phase": "Pending"}
        if mutate == "unbound":
            state["events"] = [e for e in state["events"] if e["involvedObject"]["name"] != "fr-1"]
    assert LabView(fake_cluster(state), NS).diagnose("fr-1") == cause


def test_pod_state_summarises_for_messages(fixtures, fake_cluster):
    view = LabView(fake_cluster(fixtures.sim("03-nolimit")), NS)
    state = view.pod_state("nl-1")
    assert state["phase"] == "Pending" and state["node"] is None
    assert state["reasons"] == ["OverLimit"]
    assert state["scheduler"] == "kai-scheduler"
    assert state["last_events"][-1].startswith("Warning Unschedulable: OverLimit: nolimit quota")
    assert view.pod_state("nope") == {"name": "nope", "exists": False}


def test_stale_gang_txt_from_another_cluster_does_not_skip_the_gang(tmp_path, fixtures, fake_cluster):
    """A gang.txt left from an earlier lab must not make step 5 count as done
    on a cluster that never saw the gang (no gang events, no later pods)."""
    state = fixtures.sim("04-limit_fix")
    workdir = fixtures.write_files(tmp_path / "gsb-kai", fixtures.sim("08-report")["files"])
    cluster = fake_cluster(state)
    runner = StepRunner(cluster, NS, workdir, RECORDED_KAI, timeout=0.2)
    with pytest.raises(StepFailed):
        runner.run("gang")  # the fake cluster never decides; what matters is it tried
    assert any(call[0] == "apply" and call[1] == "PodGroup" for call in cluster.writes), cluster.writes


def test_check_mode_on_a_blank_lab_reports_changes_without_failing(tmp_path, fake_cluster):
    cluster = fake_cluster({"pods": [], "podgroups": [], "events": [], "queues": [], "configmaps": {},
                            "reservation_pods": []})
    workdir = str(tmp_path / "gsb-kai")
    for step_id in cat.STEP_IDS[:4]:
        result = StepRunner(cluster, NS, workdir, RECORDED_KAI, timeout=1, check_mode=True).run(step_id)
        assert result["files"] == []
    assert not os.path.exists(workdir)
