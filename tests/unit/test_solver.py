# -*- coding: utf-8 -*-
"""The solver runner against a fake cluster serving recorded snapshots.

Idempotence: on a finished lab (the state after step 8 and the files a perfect
learner wrote) every step is verified, not redone: no write call, changed
False, no file rewritten. Failures say which step, what was expected, what was
seen and the likely cause."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry as steps
from ansible_collections.gsb.kai_lab.plugins.module_utils.solving.solver import StepFailed, StepRunner

from lab_testing import NS, RECORDED_KAI, snapshot_files


@pytest.mark.parametrize("step_id", steps.STEP_IDS)
def test_rerun_on_finished_lab_changes_nothing(finished_lab, step_id):
    cluster, workdir, state, version = finished_lab
    before = snapshot_files(workdir)
    runner = StepRunner(cluster, NS, workdir, version, timeout=1)
    result = runner.run(step_id)
    assert result["changed"] is False
    assert result["files"] == [] and result["backups"] == []
    assert snapshot_files(workdir) == before
    assert result["number"] == steps.step(step_id).number


@pytest.mark.parametrize("step_id", steps.STEP_IDS)
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


def test_changed_file_is_rewritten_with_a_backup(finished_lab):
    cluster, workdir, state, _ = finished_lab
    with open(os.path.join(workdir, "report.json"), "w") as handle:
        handle.write('{"gpu_allocated": 3}\n')
    result = StepRunner(cluster, NS, workdir, RECORDED_KAI, timeout=1).run("report")
    assert result["changed"] is True
    assert open(os.path.join(workdir, "report.json")).read() == state["files"]["report.json"]
    assert len(result["backups"]) == 1
    assert open(result["backups"][0]).read() == '{"gpu_allocated": 3}\n'


def test_check_mode_writes_no_file_and_only_dry_runs(tmp_path, fake_cluster):
    cluster = fake_cluster({})
    workdir = str(tmp_path / "w")
    result = StepRunner(cluster, NS, workdir, RECORDED_KAI, timeout=1, check_mode=True).run("queues")
    assert result["changed"] is True
    assert not os.path.exists(workdir)
    assert cluster.writes and all(w[0] == "apply" and w[-1] is True for w in cluster.writes)
    assert cluster.list("scheduling.run.ai/v2", "Queue") == []


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


def test_check_mode_on_a_blank_lab_reports_changes_without_failing(tmp_path, fake_cluster):
    cluster = fake_cluster({"pods": [], "podgroups": [], "events": [], "queues": [], "configmaps": {},
                            "reservation_pods": []})
    workdir = str(tmp_path / "gsb-kai")
    for step_id in steps.STEP_IDS[:steps.STEP_IDS.index("limit_fix") + 1]:
        result = StepRunner(cluster, NS, workdir, RECORDED_KAI, timeout=1, check_mode=True).run(step_id)
        assert result["files"] == []
    assert not os.path.exists(workdir)


# ---------------------------------------------------------------- hostile workdirs (issue 13 item 7)

def test_non_utf8_learner_file_is_backed_up_byte_for_byte_and_replaced(finished_lab):
    cluster, workdir, _, _ = finished_lab
    with open(os.path.join(workdir, "report.json"), "wb") as handle:
        handle.write(b"\xff\xfe{not utf-8}\n")
    result = StepRunner(cluster, NS, workdir, RECORDED_KAI, timeout=1).run("report")
    (backup,) = result["backups"]
    assert open(backup, "rb").read() == b"\xff\xfe{not utf-8}\n"
    assert json.loads(open(os.path.join(workdir, "report.json")).read())


def test_directory_where_a_learner_file_belongs_fails_the_step_naming_it(finished_lab):
    cluster, workdir, _, _ = finished_lab
    os.unlink(os.path.join(workdir, "report.json"))
    os.mkdir(os.path.join(workdir, "report.json"))
    with pytest.raises(StepFailed) as info:
        StepRunner(cluster, NS, workdir, RECORDED_KAI, timeout=1).run("report")
    assert "report.json is a directory where the lab writes a file: move or rename it" in str(info.value)
    assert os.path.isdir(os.path.join(workdir, "report.json"))


def test_two_rewrites_in_one_second_keep_every_original(finished_lab):
    cluster, workdir, _, _ = finished_lab
    originals = []
    for number in range(3):
        content = '{"gpu_allocated": %d}\n' % number
        originals.append(content)
        with open(os.path.join(workdir, "report.json"), "w") as handle:
            handle.write(content)
        StepRunner(cluster, NS, workdir, RECORDED_KAI, timeout=1).run("report")
    kept = sorted(name for name in os.listdir(workdir) if name.startswith("report.json.bak-"))
    assert len(kept) == 3
    assert sorted(open(os.path.join(workdir, name)).read() for name in kept) == sorted(originals)


def test_planted_tmp_link_next_to_a_learner_file_is_never_written_through(finished_lab, tmp_path):
    cluster, workdir, _, _ = finished_lab
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    os.symlink(str(victim), os.path.join(workdir, "report.json.tmp"))
    os.unlink(os.path.join(workdir, "report.json"))
    StepRunner(cluster, NS, workdir, RECORDED_KAI, timeout=1).run("report")
    assert victim.read_text() == "precious\n"
    assert json.loads(open(os.path.join(workdir, "report.json")).read())
