# -*- coding: utf-8 -*-
"""The lab done by hand on real KAI-Scheduler v0.17.0, as FakeCluster states.

fixtures/kai-v0.17.0/ holds `kubectl get -o yaml` lists taken after each step
(see its README), one directory hand-<step id> per step. hand_state(step_id)
turns the directory of that step into the state dict FakeCluster takes, with
the learner's files as they were after it (the files of that step and the
steps before it, steps/registry.py). Tests ask lab_states.py for a step's
state (lab_after, finished), which reads these.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "kai-v0.17.0"
KAI_VERSION = "v0.17.0"
NAMESPACE = "kai-lab"
RESERVATION_NAMESPACE = "kai-resource-reservation"


def items(path):
    """The items of a kubectl List file; a missing file is an empty list."""
    if not path.exists():
        return []
    document = yaml.safe_load(path.read_text()) or {}
    return list(document.get("items") or [])


def learner_files(step_id):
    """name -> content of every file the learner had written after step step_id (its files and those of the
    steps before it)."""
    done = registry.STEPS[:registry.STEP_IDS.index(step_id) + 1]
    return dict((name, (FIXTURE / "hand-learner-files" / name).read_text()) for step in done for name in step.files)


def recorded(step_id):
    """Whether the lab was done by hand up to step step_id."""
    return (FIXTURE / ("hand-%s" % step_id)).is_dir()


def hand_state(step, events=True):
    """The cluster after step (its id) as FakeCluster's state dict.

    Keys: pods, reservation_pods, podgroups, events (both namespaces), queues,
    configmaps (name -> object), jobs (FakeCluster does not serve them; see
    add_jobs) and files (the learner's files then). events=False is the same
    cluster after the API server's event TTL has run out.
    """
    directory = FIXTURE / ("hand-%s" % step)
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
    """A single object recorded apart, e.g. 'hand-limit_fix/podgroup-nl-1-3s-later.yaml'."""
    return yaml.safe_load((FIXTURE / name).read_text())


def recorded_grade(events_deleted=False):
    """The grade the grader of 2026-12-01 gave the by-hand lab after its last step then (report)."""
    name = "grade-hand-v0.17.0-events-deleted.json" if events_deleted else "grade-hand-v0.17.0.json"
    return json.loads((FIXTURE / name).read_text())
