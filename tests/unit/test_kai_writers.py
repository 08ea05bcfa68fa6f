# -*- coding: utf-8 -*-
"""Who writes KAI's word, by name, on the objects recorded from real KAI v0.17.0
(fixtures/kai-v0.17.0/hand-<step>/, from shared/fixtures/kai-v0.17.0/), and
the names the lab gives them.

KAI's scheduler has the status updater that writes the PodGroups' conditions
and the scheduling Events; it reports under its scheduler name, the name pods
give in spec.schedulerName (KAI's scheduler cache: EventSource{Component:
schedulerName}). Its binder reports as binder, its pod-grouper as pod-grouper.
The grader trusts the scheduler's Events only (kai/events.py), and the
learner's protection asks whether the learner could write each of these
kinds (grading/protection_writes.py). fake-gpu-operator's status-updater, a
ServiceAccount of the operator's own namespace, annotates the reservation
pods; kai-lab doctor asks whether it may (kai/doctor.py).
"""

from __future__ import annotations

import collections
import json

import pytest

import kai_v017 as hand
import lab_states
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import protection_writes
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import events as kai_events
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import provenance
from test_kai_lab_doctor import faults, healthy

# Each KAI component's Events as recorded: reason -> reporter.
SCHEDULER_REASONS = {"Scheduled", "Unschedulable", "Pipelined", "Evict"}


def recorded_events():
    seen = {}
    for step_id in registry.STEP_IDS:
        for event in lab_states.lab_after(step_id, lab_states.KAI_V017)["events"]:
            seen[kai.meta(event)["uid"]] = event
    return list(seen.values())


def reporters(event):
    return set(value for value in ((event.get("source") or {}).get("component"), event.get("reportingComponent"),
                                   event.get("reportingController")) if value)


def test_kais_scheduler_reports_under_the_scheduler_name_pods_give():
    by_reason = collections.defaultdict(set)
    for event in recorded_events():
        by_reason[event["reason"]] |= reporters(event)
    assert by_reason["Bound"] == {"binder"} and by_reason["PodGrouperWarning"] == {"pod-grouper"}
    assert set().union(*(by_reason[r] for r in SCHEDULER_REASONS)) == {kai.SCHEDULER_NAME}
    names = set(kai.scheduler_name(pod) for step_id in registry.STEP_IDS
                for pod in lab_states.lab_after(step_id, lab_states.KAI_V017)["pods"])
    assert names == {kai.SCHEDULER_NAME}
    # The grader takes the scheduler's Events as its word, and no other component's.
    for event in recorded_events():
        assert kai_events.reported_by_scheduler(event) == (event["reason"] in SCHEDULER_REASONS), event["reason"]


def test_the_scheduler_name_is_the_one_source_of_the_reporter_the_grader_trusts(monkeypatch):
    """A lab whose scheduler has another name: KAI reports under that name, and the grader follows."""
    monkeypatch.setattr(kai, "SCHEDULER_NAME", "gpu-scheduler")
    for event in recorded_events():
        if event["reason"] in SCHEDULER_REASONS:
            event["source"]["component"] = event["reportingComponent"] = "gpu-scheduler"
            assert kai_events.reported_by_scheduler(event), event["reason"]
    scheduled = [e for e in recorded_events() if e["reason"] == "Scheduled"][:1]
    scheduled[0]["source"]["component"] = scheduled[0]["reportingComponent"] = "gpu-scheduler"
    assert kai_events.scheduled_by(scheduled, scheduled[0]["involvedObject"]["name"]) == "gpu-scheduler"
    assert not kai_events.reported_by_scheduler(dict(scheduled[0], source={"component": "kai-scheduler"},
                                                     reportingComponent="kai-scheduler"))


def test_the_protection_asks_about_every_kind_of_kai_word_recorded():
    """What KAI wrote in the recording, each under the writes the learner's protection asks about: any
    write that could have made it (a change by either RBAC verb)."""
    state = lab_states.finished(lab_states.KAI_V017)
    asked = dict((entry["id"], [dict(r) for r in entry["reviews"]]) for entry in protection_writes.EVIDENCE)
    kinds = []
    if any(kai_events.reported_by_scheduler(e) for e in recorded_events()):
        kinds += [("events.create", verb, group, "events", None) for verb in ("create", "patch", "update")
                  for group in (None, "events.k8s.io")]
    if any(provenance.bound_at(p) for p in state["pods"]):
        # The binder binds (pods/binding) and writes PodBound into the pod's status.
        kinds += [("pods.binding", "create", None, "pods", "binding")]
        kinds += [("pods.status", verb, None, "pods", "status") for verb in ("patch", "update")]
    if any(kai_gpu.gpu_group(p) for p in hand.hand_state("fraction")["pods"]):
        # KAI labels a fraction pod with its GPU group after creation.
        kinds += [("pods.update", verb, None, "pods", None) for verb in ("patch", "update")]
    podgroups = [pg for step_id in registry.STEP_IDS
                 for pg in lab_states.lab_after(step_id, lab_states.KAI_V017)["podgroups"]]
    if any(kai.scheduling_reasons(pg) for pg in podgroups):
        kinds += [("podgroups.status", verb, protection_writes.KAI_GROUP, "podgroups", "status") for verb in ("patch", "update")]
    assert len(kinds) == 13
    for evidence_id, verb, group, resource, subresource in kinds:
        assert dict([("verb", verb), ("resource", resource)] + ([("group", group)] if group else [])
                    + ([("subresource", subresource)] if subresource else [])) in asked[evidence_id], \
            (evidence_id, verb, group, resource, subresource)


def test_the_doctor_asks_about_fake_gpu_operators_status_updater_where_it_runs(tmp_path):
    """fake-gpu-operator installed in another namespace (its role's fake_gpu_operator_namespace): its
    status-updater is asked about there, not in the default's."""
    cluster = healthy(allowed=False)
    found, _ = faults(tmp_path, cluster, fake_gpu_operator_namespace="fgo")
    assert "status-updater (fgo/status-updater) may not patch pods in kai-resource-reservation" \
        in found["status_updater_rights"]
    [review] = [c for c in cluster.calls if c[0] == "create"]
    assert review[2] == "system:serviceaccount:fgo:status-updater"
    assert json.loads(review[3]) == {"namespace": "kai-resource-reservation", "verb": "patch", "resource": "pods"}


@pytest.mark.parametrize("variables, written", [({}, None), ({"fake_gpu_operator_namespace": "fgo"}, "fgo")])
def test_provision_tells_kai_lab_where_fake_gpu_operator_runs(variables, written):
    import yaml
    from ansible.template import trust_as_template
    from test_learner_access import ROLE, templar
    cli = next(t for t in yaml.safe_load((ROLE / "tasks" / "cli.yml").read_text())
               if t["name"] == "Write kai-lab's settings")["vars"]["kai_lab_cli_settings"]
    assert templar(**variables).template(trust_as_template(cli["fake_gpu_operator_namespace"])) == written
