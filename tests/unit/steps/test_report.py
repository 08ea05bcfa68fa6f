# -*- coding: utf-8 -*-
"""Step 8, who holds the GPUs: report.json from the cluster, and reports copied
or mistyped."""

from __future__ import annotations

import json
import os

from ansible_collections.gsb.kai_lab.plugins.module_utils.solving.solver import StepRunner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import FAILED

from lab_testing import NS, RECORDED_KAI, SHARED_GPU, OTHER_CLUSTER_GPU, checks, ids_with, solved, both_langs


def test_report_written_from_the_cluster_equals_the_recorded_file(tmp_path, fixtures, fake_cluster):
    state = fixtures.finished()
    cluster = fake_cluster(state)
    workdir = str(tmp_path / "fresh")
    result = StepRunner(cluster, NS, workdir, RECORDED_KAI, timeout=1).run("report")
    assert result["changed"] is True
    assert open(os.path.join(workdir, "report.json")).read() == state["files"]["report.json"]
    assert cluster.writes == []


def test_report_copied_from_another_cluster(grade, fixtures):
    state, files = solved(fixtures)
    report = json.loads(files["report.json"])
    report["shared_gpu"] = OTHER_CLUSTER_GPU
    files["report.json"] = json.dumps(report)
    en, ko = both_langs(grade, state, files)
    assert ids_with(en, FAILED) == ids_with(ko, FAILED) == ["report.values"]
    assert checks(en)["report.values"]["message"] == (
        "report.json: shared_gpu is %s, a GPU this cluster never handed out: this report.json was not computed from "
        "this cluster. Read the NVIDIA_VISIBLE_DEVICES that fr-1 got here" % OTHER_CLUSTER_GPU)
    assert u"이 클러스터에서 계산한 report.json 이 아닙니다" in checks(ko)["report.values"]["message"]
    # The device fr-1 got is the learner's to find: only grade.json's evidence (the instructor's) has it.
    assert SHARED_GPU not in checks(en)["report.values"]["message"] + checks(ko)["report.values"]["message"]
    assert checks(en)["report.values"]["evidence"]["cluster"]["shared_gpu"] == SHARED_GPU


def test_report_with_wrong_count_names_the_key_and_where_to_count_never_the_count(grade, fixtures):
    state, files = solved(fixtures)
    files["report.json"] = json.dumps({"gpu_allocated": 3, "reservation_pods": 1, "shared_gpu": SHARED_GPU})
    result, _ = grade(state, files)
    assert ids_with(result, FAILED) == ["report.values"]
    message = checks(result)["report.values"]["message"]
    assert "gpu_allocated is 3, not what this cluster shows: add up the nvidia.com/gpu limits of the pods" in message
    assert "4" not in message and checks(result)["report.values"]["evidence"]["cluster"]["gpu_allocated"] == 4


def test_a_mistyped_shared_gpu_is_not_called_copied(grade, fixtures):
    state, files = solved(fixtures)
    report = json.loads(files["report.json"])
    report["shared_gpu"] = "0"
    files["report.json"] = json.dumps(report)
    result, _ = grade(state, files)
    message = checks(result)["report.values"]["message"]
    assert "not computed from this cluster" not in message and 'shared_gpu is "0"' in message
