# -*- coding: utf-8 -*-
"""Step 4, fix the limit: only the GPU limit is patched; a Pending nl-1 names
KAI's reason."""

from __future__ import annotations

import pytest

from ansible_collections.gsb.kai_lab.plugins.module_utils.solving.solver import StepFailed, StepRunner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import FAILED, PASSED

from lab_testing import NS, RECORDED_KAI, checks


def test_limit_fix_patches_only_the_gpu_limit(tmp_path, fixtures, fake_cluster):
    state = fixtures.after("nolimit")
    # nl-1 as it ran after the fix (step 4's recorded pod).
    state["pods"] = fixtures.after("limit_fix")["pods"]
    cluster = fake_cluster(state)
    result = StepRunner(cluster, NS, str(tmp_path), RECORDED_KAI, timeout=1).run("limit_fix")
    assert result["changed"] is True
    assert cluster.writes == [("patch", "Queue", "nolimit", None, False,
                               '{"spec": {"resources": {"gpu": {"limit": -1}}}}')]
    assert result["evidence"]["queue"]["gpu"] == {"quota": 1, "limit": -1, "limit_set": True, "over_quota_weight": 1}


def test_limit_fix_times_out_naming_kais_reason(tmp_path, fixtures, fake_cluster):
    cluster = fake_cluster(fixtures.after("nolimit"))  # nl-1 stays Pending: nothing simulates KAI
    with pytest.raises(StepFailed) as info:
        StepRunner(cluster, NS, str(tmp_path), RECORDED_KAI, timeout=0.2).run("limit_fix")
    message = str(info.value)
    assert message.startswith("step limit_fix (4): expected nl-1 to run after the limit fix (Running); observed ")
    assert '"phase": "Pending"' in message
    assert "likely cause: KAI keeps it Pending: OverLimit: nolimit quota has reached the allowable limit" in message


def test_limit_fix_before_step_3_says_so(tmp_path, fixtures, fake_cluster):
    cluster = fake_cluster(fixtures.after("podgroup"))
    with pytest.raises(StepFailed) as info:
        StepRunner(cluster, NS, str(tmp_path), RECORDED_KAI, timeout=1).run("limit_fix")
    assert info.value.cause == "step 3 (nolimit) has not been done"
    assert str(info.value).startswith("step limit_fix (4): expected queue nolimit from step 3")
    assert cluster.writes == []


def test_pending_pod_reports_kais_reason(grade, fixtures):
    """nl-1 still Pending (limit not fixed): limit_fix fails with KAI's OverLimit reason."""
    state = fixtures.after("nolimit")
    result, _ = grade(state, state["files"])
    c = checks(result)
    assert c["nolimit.queue"]["status"] == PASSED and c["nolimit.reason"]["status"] == PASSED
    assert c["limit_fix.queue"]["status"] == FAILED
    assert "gpu limit is unset (0), expected -1" in c["limit_fix.queue"]["message"]
    assert c["limit_fix.running"]["status"] == FAILED
    assert "is Pending, not Running (OverLimit: nolimit quota has reached" in c["limit_fix.running"]["message"]
