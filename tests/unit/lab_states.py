# -*- coding: utf-8 -*-
"""The lab after a step, from each step's own recorded state: what the tests grade and solve against.

Every state is one step's recording (FakeCluster's state dict: pods,
reservation_pods, podgroups, events, queues, configmaps, files), found by the
step's id, never by a fixed file or number of the last step:

- sim: tests/unit/fixtures/sim/steps/<id>.json, recorded from the sim's KAI
  v0.12.0 by tests/record_fixtures.py (one command per step: --step <id>);
- kai-v0.17.0: tests/unit/fixtures/kai-v0.17.0/steps/<id>.json as
  record_fixtures.py writes it for a sim running KAI v0.17.0, else the lab
  done by hand on real KAI v0.17.0, hand-<id>/ (kai_v017.py).

lab_after(step_id, source) is the lab after that step; finished(source) the
lab after the last step of the step list (steps/registry.py), whatever it is.
A step defined in a test (a lab author's new step, tests/unit/test_added_step.py)
adds how its state follows from the lab before it (ADDED); a registered step
with no recording fails naming the command that records it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SIM, KAI_V017 = "sim", "kai-v0.17.0"
# The KAI each source's recordings come from.
KAI = {SIM: "v0.12.0", KAI_V017: "v0.17.0"}
RECORDINGS = {SIM: FIXTURES / "sim" / "steps", KAI_V017: FIXTURES / "kai-v0.17.0" / "steps"}
# Steps defined in a test: step id -> builder(the lab before it, source) -> the lab after it.
ADDED = {}


class NotRecorded(LookupError):
    """A step of the step list whose state has no recording of this source."""


def _recorded(step_id, source):
    path = RECORDINGS[source] / ("%s.json" % step_id)
    if path.exists():
        return json.loads(path.read_text())
    if source == KAI_V017:
        import kai_v017  # the lab done by hand on v0.17.0 (hand-<id>/)
        if kai_v017.recorded(step_id):
            return kai_v017.hand_state(step_id)
    return None


def lab_after(step_id, source=SIM, events=True):
    """The lab after step step_id (its id) as its recording shows it; a fresh copy each call.

    events=False: the same lab once the API server's event TTL has run out.
    """
    if step_id not in registry.STEP_IDS:
        raise NotRecorded("%s is not a step of the step list (%s)" % (step_id, ", ".join(registry.STEP_IDS)))
    if step_id in ADDED:
        state = ADDED[step_id](before(step_id, source), source)
    else:
        state = _recorded(step_id, source)
    if state is None:
        raise NotRecorded("no %s recording of step %s: record it with python tests/record_fixtures.py --kubeconfig "
                          "<sim kubeconfig> --step %s (tests guide)" % (source, step_id, step_id))
    state = copy.deepcopy(state)
    if not events:
        state["events"] = []
    return state


def before(step_id, source=SIM):
    """The lab before step step_id: after the step before it, or nothing at all before the first."""
    index = registry.STEP_IDS.index(step_id)
    return lab_after(registry.STEP_IDS[index - 1], source) if index else {"files": {}}


def finished(source=SIM, events=True):
    """The finished lab: after the last step of the step list."""
    return lab_after(registry.STEP_IDS[-1], source, events)


def last():
    """The last step of the step list."""
    return registry.STEPS[-1]


def conditions_cleared(state):
    """The state as KAI v0.17+ shows it once every PodGroup is scheduled: a copy with each PodGroup's
    status.schedulingConditions removed, nothing else changed (the sim's KAI v0.12.0 never clears them)."""
    state = copy.deepcopy(state)
    for podgroup in state.get("podgroups") or []:
        (podgroup.get("status") or {}).pop("schedulingConditions", None)
    return state


def sources():
    """The sources with a recording of every step of the step list (a test-defined step counts as recorded)."""
    found = []
    for source in (SIM, KAI_V017):
        try:
            for step_id in registry.STEP_IDS:
                if step_id not in ADDED and _recorded(step_id, source) is None:
                    raise NotRecorded(step_id)
        except NotRecorded:
            continue
        found.append(source)
    return found
