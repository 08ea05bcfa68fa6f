# -*- coding: utf-8 -*-
"""Issue 41: the lab text states every datum the solver sets, for each step, in both languages and both KAI forms.

A learner who followed `kai-lab task` word for word still had to guess: the
namespace from step 3 on, which image, whether queue nolimit's CPU and
memory are -1, which field of the condition is "the reason". Here the
solver runs each step (in check mode, on the recorded lab before the step:
the sim's KAI v0.12.0, where step 5 is the explicit PodGroup, and KAI
v0.17.0's, where it is the Job) and every object it would create, patch or
delete is taken apart into data: kind, name, namespace, labels,
annotations, schedulerName, image and command, resources,
priorityClassName, a Job's parallelism, a PodGroup's spec, a queue's
resources. Each must be in the step's own text, as `kai-lab task STEP`
prints it. What the solver sets that KAI does not read and the text does
not ask for (a Job's completions and backoffLimit, restartPolicy,
terminationGracePeriodSeconds) is left out, by name.
"""

from __future__ import annotations

import copy

import pytest

import kai_v017 as hand
import lab_states
from conftest import FakeCluster
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.solving.solver import StepRunner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import lab_text, registry, report

NS, WORKDIR, KAI_NS = "kai-lab", "/root/gsb-kai", "kai-scheduler"
# The words a kind goes by in each language.
KINDS = {"en": {"Pod": ("pod", "Pod"), "Job": ("Job",), "PodGroup": ("PodGroup",), "Queue": ("queue", "Queue")},
         "ko": {"Pod": ("파드",), "Job": ("Job",), "PodGroup": ("PodGroup",), "Queue": ("큐",)}}
FIELDS = {"en": {"cpu": ("CPU",), "memory": ("memory",), "quota": ("quota",), "limit": ("limit",)},
          "ko": {"cpu": ("CPU",), "memory": ("메모리",), "quota": ("quota",), "limit": ("limit",)}}
# What each file must hold, named the way the text names it (never its value: that is the learner's to find).
FILE_HOLDS = {
    "podgroup": {"en": ("PodGroup", "name"), "ko": ("PodGroup", "이름")},
    "nolimit": {"en": ("status.schedulingConditions", "message"), "ko": ("status.schedulingConditions", "message")},
    "gang": {"en": ("status.schedulingConditions", "message"), "ko": ("status.schedulingConditions", "message")},
    "report": {"en": tuple(report.REPORT_KEYS) + ("JSON",), "ko": tuple(report.REPORT_KEYS) + ("JSON",)},
}


class Recording(FakeCluster):
    """FakeCluster that keeps every object the solver would apply, patch or delete."""

    def __init__(self, state):
        super().__init__(state)
        self.acted = []

    def apply(self, obj, **kwargs):
        self.acted.append(("apply", copy.deepcopy(obj)))
        return super().apply(obj, **kwargs)

    def patch(self, api_version, kind, name, patch, namespace=None, dry_run=False):
        self.acted.append(("patch", {"kind": kind, "metadata": {"name": name}, "patch": copy.deepcopy(patch)}))
        return super().patch(api_version, kind, name, patch, namespace, dry_run)

    def delete(self, api_version, kind, name, namespace=None, dry_run=False, propagation="Background"):
        self.acted.append(("delete", {"kind": kind, "metadata": {"name": name}}))
        return super().delete(api_version, kind, name, namespace, dry_run, propagation)


def _before(step, version):
    """The recorded lab just before step (lab_states.before; an empty lab before the first)."""
    state = lab_states.before(step.id, lab_states.KAI_V017 if version == hand.KAI_VERSION else lab_states.SIM)
    return state if step.number > 1 else {}


def _pod_data(spec):
    found = [("schedulerName", spec.get("schedulerName"))]
    if spec.get("priorityClassName"):
        found.append(("priorityClassName", spec["priorityClassName"]))
    for container in spec.get("containers") or []:
        found += [("image", container.get("image")), ("command", " ".join(container.get("command") or []))]
        for part in ("limits", "requests"):
            for key, value in ((container.get("resources") or {}).get(part) or {}).items():
                found += [("resource", key), ("%s %s" % (part, key), value)]
    return found


def data(action, obj):
    """(what, value) pairs: every datum of one object the solver acts on."""
    meta = obj.get("metadata") or {}
    found = [("kind", obj["kind"]), ("name", meta["name"])]
    if meta.get("namespace"):
        found.append(("namespace", meta["namespace"]))
    for key, value in (meta.get("labels") or {}).items():
        found += [("label", key), ("label %s" % key, value)]
    for key, value in (meta.get("annotations") or {}).items():
        found += [("annotation", key), ("annotation %s" % key, value)]
    spec = obj.get("spec") or {}
    if action == "patch":
        found.append(("patch", obj["patch"]))
    elif obj["kind"] == "Pod":
        found += _pod_data(spec)
    elif obj["kind"] == "Job":
        template = spec["template"]
        found += [("parallelism", spec["parallelism"])]
        for key, value in ((template.get("metadata") or {}).get("labels") or {}).items():
            found += [("template label", key), ("template label %s" % key, value)]
        found += _pod_data(template["spec"])
    elif obj["kind"] == "PodGroup":
        found += [(field, spec[field]) for field in ("minMember", "queue", "priorityClassName")]
    elif obj["kind"] == "Queue":
        if spec.get("parentQueue"):
            found.append(("parentQueue", spec["parentQueue"]))
        for resource, values in sorted((spec.get("resources") or {}).items()):
            found += [("%s %s" % (resource, field), values[field]) for field in ("quota", "limit") if field in values]
    return found


def _said(value, text):
    return str(value) in text


def missing_data(step, version, lang):
    """What the step's text (in lang, for the KAI version's form) does not state, as readable lines."""
    cluster = Recording(_before(step, version))
    StepRunner(cluster, NS, WORKDIR, version, timeout=1, check_mode=True).run(step.id)
    lab = lab_text.Lab(lang, NS, WORKDIR, KAI_NS, kai_version=version)
    text = lab_text.plain(lab.step(step.id))
    missing = []
    for action, obj in cluster.acted:
        if action == "delete":
            if obj["metadata"]["name"] not in text or not any(word in text for word in KINDS[lang][obj["kind"]]):
                missing.append("deletes %s %s" % (obj["kind"], obj["metadata"]["name"]))
            continue
        for what, value in data(action, obj):
            if what == "kind":
                ok = any(word in text for word in KINDS[lang][value])
            elif what == "patch":
                path, field_value = registry.step("limit_fix") and _patched(value)
                ok = path in text and str(field_value) in text
            elif what.split()[0] in ("cpu", "memory", "gpu"):
                resource, field = what.split()
                ok = _said(value, text) and all(any(w in text for w in FIELDS[lang].get(name, (name,)))
                                                for name in (resource, field) if name != "gpu")
            elif what in ("parallelism", "minMember", "schedulerName", "priorityClassName", "parentQueue"):
                ok = _said(value, text) and (what in text or what == "parentQueue")
            else:
                ok = _said(value, text)
            if not ok:
                missing.append("%s %s: %s %r" % (obj["kind"], obj["metadata"]["name"], what, value))
    for name in step.files:
        if name not in text:
            missing.append("file %s" % name)
    for word in FILE_HOLDS.get(step.id, {}).get(lang, ()):
        if word not in text:
            missing.append("what %s holds: %s" % (", ".join(step.files), word))
    return missing


def _patched(patch):
    from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import limit_fix
    return limit_fix.patched_field(patch)


@pytest.mark.parametrize("version", ["v0.12.0", hand.KAI_VERSION])
@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("step_id", registry.STEP_IDS)
def test_the_steps_text_states_every_datum_the_solver_sets(step_id, lang, version):
    step = registry.step(step_id)
    missing = missing_data(step, version, lang)
    assert missing == [], "kai-lab task %s (%s, KAI %s) does not state: %s" % (step_id, lang, version,
                                                                            "; ".join(missing))


def test_the_solver_acts_on_what_the_text_must_state():
    """Not a test that cannot fail: the solver's objects are found, and a datum left out is seen."""
    cluster = Recording(_before(registry.step("gang"), "v0.12.0"))
    StepRunner(cluster, NS, WORKDIR, "v0.12.0", timeout=1, check_mode=True).run("gang")
    kinds = sorted(set(obj["kind"] for _action, obj in cluster.acted))
    assert kinds == ["Pod", "PodGroup"]
    pods = [obj for _action, obj in cluster.acted if obj["kind"] == "Pod"]
    assert ("annotation pod-group-name", "gang") in data("apply", pods[0])
    assert ("limits %s" % kai_gpu.GPU_RESOURCE, 1) in data("apply", pods[0])
