# -*- coding: utf-8 -*-
"""The lab done by hand on real KAI-Scheduler v0.17.0, as FakeCluster states.

fixtures/kai-v0.17.0/ holds `kubectl get -o yaml` lists taken after each step
(see its README). hand_state(n) turns the directory of step n into the state
dict FakeCluster takes, with the learner's files as they were after step n.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "kai-v0.17.0"
KAI_VERSION = "v0.17.0"
NAMESPACE = "kai-lab"
RESERVATION_NAMESPACE = "kai-resource-reservation"

# The learner's files each step of the lab text writes (none in steps 4 and 6).
FILES_WRITTEN = {
    1: ("queues.yaml",),
    2: ("p1.yaml", "podgroup.txt"),
    3: ("nolimit.txt",),
    5: ("gang.txt",),
    7: ("fraction.yaml",),
    8: ("report.json",),
}
LAST_STEP = 8


def items(path):
    """The items of a kubectl List file; a missing file is an empty list."""
    if not path.exists():
        return []
    document = yaml.safe_load(path.read_text()) or {}
    return list(document.get("items") or [])


def learner_files(step=LAST_STEP):
    """name -> content of every file the learner had written after step."""
    names = [name for n in sorted(FILES_WRITTEN) if n <= step for name in FILES_WRITTEN[n]]
    return dict((name, (FIXTURE / "hand-learner-files" / name).read_text()) for name in names)


def hand_state(step, events=True):
    """The cluster after step (1-8) as FakeCluster's state dict.

    Keys: pods, reservation_pods, podgroups, events (both namespaces), queues,
    configmaps (name -> object), jobs (FakeCluster does not serve them; see
    add_jobs) and files (the learner's files then). events=False is the same
    cluster after the API server's event TTL has run out.
    """
    directory = FIXTURE / ("hand-step%d" % step)
    if not directory.is_dir():
        raise ValueError("no recording of step %r in %s" % (step, FIXTURE))
    state = {
        "pods": items(directory / "pods-kai-lab.yaml"),
        "reservation_pods": items(directory / "pods-kai-resource-reservation.yaml"),
        "podgroups": items(directory / "podgroups.yaml"),
        "events": (items(directory / "events-kai-lab.yaml")
                   + items(directory / "events-kai-resource-reservation.yaml")) if events else [],
        "queues": items(directory / "queues.yaml"),
        "configmaps": dict((cm["metadata"]["name"], cm) for cm in items(directory / "configmaps-kai-lab.yaml")),
        "jobs": items(directory / "jobs-kai-lab.yaml"),
        "files": learner_files(step),
    }
    return state


def add_jobs(cluster, state):
    """Store the state's Jobs in a FakeCluster (it reads only the other kinds)."""
    for job in state.get("jobs") or []:
        cluster._store("batch/v1", "Job", job)
    return cluster


def later_object(name):
    """A single object recorded apart, e.g. 'hand-step4/podgroup-nl-1-3s-later.yaml'."""
    return yaml.safe_load((FIXTURE / name).read_text())


def recorded_grade(events_deleted=False):
    """The grade the grader of 2026-12-01 gave the by-hand lab after step 8."""
    name = "grade-hand-v0.17.0-events-deleted.json" if events_deleted else "grade-hand-v0.17.0.json"
    return json.loads((FIXTURE / name).read_text())
