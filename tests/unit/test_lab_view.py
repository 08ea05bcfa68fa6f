# -*- coding: utf-8 -*-
"""The solver's read side: pod states and the likely cause, on recorded objects."""

from __future__ import annotations

import pytest

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.solving.lab_view import LabView

from lab_testing import NS


def test_diagnose_default_scheduler_pod(fixtures, fake_cluster):
    bad = fixtures.mistakes()
    cluster = fake_cluster({"pods": [bad["default_scheduler_pod"]], "events": bad["default_scheduler_events"]})
    cause = LabView(cluster, NS).diagnose("no-kai")
    assert cause == "pod scheduled by default-scheduler, not KAI: spec.schedulerName must be kai-scheduler"


@pytest.mark.parametrize("mutate, cause", [
    (None, "pod fr-1 does not exist (never created, rejected by admission, or evicted)"),
    ("no-annotation", "no PodGroup annotation: KAI's pod-grouper is not running or not reaching the API server"),
    ("no-podgroup", "PodGroup pg-fr-1-94fb6486-f6e2-4b98-acfb-6ab33251a5d0 is missing: KAI's pod-grouper is not running"),
    ("unbound", "no decision from KAI yet: the KAI scheduler is not running, or the queue research does not exist"),
    ("scheduled-not-bound", "KAI scheduled it but nothing bound it: KAI's binder is not running"),
    ("running", "pod is Running on kai-lab-vm"),
])
def test_diagnose_names_the_component_at_fault(fixtures, fake_cluster, mutate, cause):
    state = fixtures.finished()
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
    view = LabView(fake_cluster(fixtures.after("nolimit")), NS)
    state = view.pod_state("nl-1")
    assert state["phase"] == "Pending" and state["node"] is None
    assert state["reasons"] == ["OverLimit"]
    assert state["scheduler"] == "kai-scheduler"
    assert state["last_events"][-1].startswith("Warning Unschedulable: OverLimit: nolimit quota")
    assert view.pod_state("nope") == {"name": "nope", "exists": False}
