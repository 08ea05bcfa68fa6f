# -*- coding: utf-8 -*-
"""Step 3, the empty-limit trap: the manifest, the captured reason, and v0.17's
cleared conditions."""

from __future__ import annotations

import os

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.solving.solver import StepRunner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import nolimit
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import PASSED

from lab_testing import NS, RECORDED_KAI, by_name, checks
import lab_states


def test_nolimit_queue_has_no_gpu_limit_key():
    queue = nolimit.nolimit_queue()
    gpu = queue["spec"]["resources"]["gpu"]
    assert "limit" not in gpu
    assert gpu == {"quota": 1}
    assert queue["spec"]["parentQueue"] == "lab"
    assert queue["metadata"]["name"] == "nolimit"
    # KAI reads it as 0 GPUs: nothing can run in it.
    assert kai.effective_gpu_limit(queue) == 0


def test_recorded_nolimit_queue_matches_the_manifest(fixtures):
    live = by_name(fixtures.after("nolimit")["queues"])["nolimit"]
    assert live["spec"] == nolimit.nolimit_queue()["spec"]


def test_nolimit_step_captures_the_over_limit_sentence(tmp_path, fixtures, fake_cluster):
    state = fixtures.after("nolimit")
    cluster = fake_cluster(state)
    workdir = str(tmp_path / "w")
    result = StepRunner(cluster, NS, workdir, RECORDED_KAI, timeout=1).run("nolimit")
    assert open(os.path.join(workdir, "nolimit.txt")).read() == state["files"]["nolimit.txt"]
    assert [r["reason"] for r in result["evidence"]["reasons"]] == ["OverLimit"]
    # The queue already is as the step writes it: apply reports no change, nl-1 is not re-created.
    assert [w[:3] for w in cluster.writes] == [("apply", "Queue", "nolimit")]


def test_v017_cleared_conditions_nolimit_reason_matched_from_events(grade, fixtures):
    state = lab_states.conditions_cleared(fixtures.finished())
    result, _ = grade(state, state["files"])
    check = checks(result)["nolimit.reason"]
    assert check["status"] == PASSED
    assert check["evidence"]["kai"].startswith("OverLimit: nolimit quota has reached the allowable limit of GPUs")
