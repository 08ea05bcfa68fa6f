# -*- coding: utf-8 -*-
"""Helpers shared by the grader's and the solver's unit tests (the fixtures
grade and finished_lab are in conftest.py)."""

from __future__ import annotations

import contextlib
import copy
import os
import re

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import lab_text
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry as steps

import lab_states

NS = "kai-lab"
RECORDED_KAI = "v0.12.0"  # the fixtures' KAI
STEP_CHECKS = [c.id for c in steps.CHECKS]
FILE_ONLY = [c.id for c in steps.CHECKS if c.files_only]
TOTAL_WEIGHT = sum(c.weight for c in steps.CHECKS)
SHARED_GPU = "GPU-8a252772-30e0-533f-9d07-32784ec7e87c"
OTHER_CLUSTER_GPU = "GPU-78e893ca-f584-5717-ba7f-4e256b599bab"  # kwok-node-0's first GPU in another sim
DENIAL = "cannot have both GPU fraction request and whole GPU resource request/limit"
CLUSTER_DOWN = ("cannot reach the Kubernetes API server at https://127.0.0.1:6443 (connection refused). "
                "Is the lab running? Provision it with ansible-playbook playbooks/provision.yml.")
HANGUL = re.compile(u"[\uac00-\ud7a3]")


def checks(result):
    return dict((c["id"], c) for s in result["steps"] for c in s["checks"])


def ids_with(result, status):
    return sorted(cid for cid, c in checks(result).items() if c["status"] == status)


def solved(fixtures=None):
    """The finished lab (lab_states.finished, recorded on the sim) and its learner's files."""
    state = lab_states.finished()
    return state, dict(state["files"])


def both_langs(grade, state, files, **kwargs):
    en, _ = grade(state, files, lang="en", **kwargs)
    ko, _ = grade(copy.deepcopy(state), files, lang="ko", **kwargs)
    return en, ko


def erased(fixtures):
    state, files = solved(fixtures)
    state["events"] = []
    state["podgroups"] = []
    return state, files


def snapshot_files(workdir):
    return dict((name, open(os.path.join(workdir, name)).read()) for name in sorted(os.listdir(workdir)))


def by_name(objs):
    return dict((o["metadata"]["name"], o) for o in objs)


def all_gpu_resources(pod_spec):
    """Every nvidia.com/gpu under any container's limits or requests."""
    found = []
    for container in pod_spec.get("containers") or []:
        for part in ("limits", "requests"):
            value = ((container.get("resources") or {}).get(part) or {}).get(kai_gpu.GPU_RESOURCE)
            if value is not None:
                found.append((container["name"], part, value))
    return found


@contextlib.contextmanager
def registered(step, text=None, state=None, after=None):
    """The step list with step added last, as a lab author adds a step: its text ({lang: {summary, task,
    context}}) in the lab text's steps, and how its recorded state follows from the lab before it
    (state(before, source) -> after; lab_states.ADDED). after: the steps it follows (default: the step list
    now; a recording of the lab's own steps and this one: registry.LAB). Everything goes back afterwards."""
    previous = steps.STEPS
    steps.use((previous if after is None else after) + (step,))
    for lang, words in (text or {}).items():
        lab_text.TEXTS[lang]["steps"][step.id] = words
    if state is not None:
        lab_states.ADDED[step.id] = state
    try:
        yield step
    finally:
        steps.use(previous)
        for lang in text or {}:
            lab_text.TEXTS[lang]["steps"].pop(step.id, None)
        lab_states.ADDED.pop(step.id, None)
