# -*- coding: utf-8 -*-
"""Issue 41 on the recorded KAI v0.17.0 form: what the text says to write is what a learner really did there.

The lab was done by hand on real KAI v0.17.0 (fixtures/kai-v0.17.0/,
source: shared/fixtures/kai-v0.17.0). The objects the text for that KAI
dictates (tests/follow_text.py, built only from the text's values: step 5 is
the Job there) match the recorded objects in every field they set, and
the learner's files written from the text (queues.yaml, p1.yaml,
fraction.yaml; report.json computed as the text says from the recorded
cluster) pass every step of the recorded lab, in both languages.
"""

from __future__ import annotations

import json
import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "tests"))
import follow_text as text  # noqa: E402  (tests/follow_text.py, shared with molecule/default)
import kai_v017 as hand  # noqa: E402
import lab_states  # noqa: E402
from lab_testing import checks  # noqa: E402
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import lab_text

NS = "kai-lab"


def values(lang="en"):
    lab = lab_text.Lab(lang, NS, "/root/gsb-kai", "kai-scheduler", kai_version=hand.KAI_VERSION, target="sim")
    assert lab.form is None  # the Job: KAI v0.17.0 makes one gang of it
    return lab.values


def subset(want, got, where=""):
    """The fields of want that got lacks or holds otherwise, as paths."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return [where or "."]
        return [p for key, value in want.items() for p in subset(value, got.get(key), "%s.%s" % (where, key))]
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return [where]
        return [p for index, value in enumerate(want) for p in subset(value, got[index], "%s[%d]" % (where, index))]
    # The API server gives quantities back as strings (limits: "1").
    return [] if want == got or str(want) == str(got) else ["%s: %r != %r" % (where, want, got)]


def recorded(step, kind, name):
    state = lab_states.lab_after(step, lab_states.KAI_V017)
    found = [o for o in state.get({"Pod": "pods", "Job": "jobs", "Queue": "queues"}[kind]) or []
             if o["metadata"]["name"] == name]
    assert found, "%s %s is not in the recording of step %s" % (kind, name, step)
    return found[0]


def test_the_objects_the_text_dictates_are_the_ones_the_learner_made_on_kai_v017():
    v = values()
    made = [("podgroup", o) for o in [text.p1(v)]] + [("nolimit", o) for o in text.nolimit(v)] + [
        ("gang", o) for o in text.gang(v, None)]
    trains, build = text.train_and_build(v)
    made += [("preempt", o) for o in trains + [build] if o["metadata"]["name"] != "tr-2"]  # tr-2 evicted there
    made += [("fraction", o) for o in text.fractions(v)] + [("queues", o) for o in text.lab_queues(v)]
    for step, obj in made:
        got = recorded(step, obj["kind"], obj["metadata"]["name"])
        want = dict(obj, spec=dict(obj["spec"]))
        if obj["kind"] == "Job":
            # The Job controller adds its own labels to the template; the text's are a subset.
            want["spec"]["template"] = dict(want["spec"]["template"])
        assert subset(want, got) == [], (obj["kind"], obj["metadata"]["name"], subset(want, got))


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_files_written_from_the_text_pass_every_step_of_the_recorded_lab(grade, lang):
    v = values(lang)
    state = lab_states.finished(lab_states.KAI_V017)
    files = dict(state["files"])
    files.update(text.files(v))
    fr1 = [p for p in state["pods"] if p["metadata"]["name"] == v["fr1"]][0]
    configmaps = state.get("configmaps") or {}
    device = kai_gpu.resolve_env(fr1, configmaps)
    files[v["report_file"]] = json.dumps(text.report(v, state["pods"] + state["reservation_pods"],
                                                     state["reservation_pods"], device)) + "\n"
    result, _ = grade(state, files, lang=lang, kai_version=hand.KAI_VERSION)
    failing = dict((cid, c.get("message")) for cid, c in checks(result).items() if c["status"] != "passed")
    assert failing == {}, failing
