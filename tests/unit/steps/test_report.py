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
    state = fixtures.sim("08-report")
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


def test_a_mistyped_shared_gpu_is_not_called_copied(grade, fixtures):
    state, files = solved(fixtures)
    report = json.loads(files["report.json"])
    report["shared_gpu"] = "0"
    files["report.json"] = json.dumps(report)
    result, _ = grade(state, files)
    message = checks(result)["report.values"]["message"]
    assert "not computed from this cluster" not in message and "shared_gpu is '0'" in message
