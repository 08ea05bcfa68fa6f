# -*- coding: utf-8 -*-
"""Issue 41: a failed check says what is wrong and where to look, never the value the learner is asked to find.

Before, a wrong podgroup.txt was told p1's PodGroup name ("says x but p1's
PodGroup is pg-p1-..."), a wrong report.json was told "the cluster shows
4", a nolimit.txt without KAI's sentence was given a piece of it, and one
message printed Python's None. Here each file the learner writes is
written wrong (another value, garbage, empty) on the recorded solved lab
(the sim's KAI v0.12.0 and KAI v0.17.0), and every failing check's words,
in English and Korean (message, problem and hint), are searched for the
value the learner was to find there, a Python None or repr.
"""

from __future__ import annotations

import json
import re

import pytest

import kai_v017 as hand
import lab_states
from lab_testing import checks
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import report

REPR = re.compile(r"\bNone\b|\{'|\['|\bu'|<[a-z_.]+ object at|Traceback|\bTrue\b|\bFalse\b")


def _lab(fixtures, form):
    if form == "sim":
        state = lab_states.finished()
        return state, dict(state["files"]), "v0.12.0"
    state = lab_states.finished(lab_states.KAI_V017)
    return state, dict(state["files"]), hand.KAI_VERSION


def answers(state):
    """What the learner is asked to find in the cluster, for each file: {file: [values]}."""
    pods = dict((kai.name_of(p), p) for p in state["pods"])
    expected = json.loads(state["files"]["report.json"])
    found = {
        "podgroup.txt": [state["files"]["podgroup.txt"].strip()],
        "nolimit.txt": [state["files"]["nolimit.txt"].strip()],
        "gang.txt": [state["files"]["gang.txt"].strip()],
        # A count is its key with the number after it (a bare "1" is in "line 1" too).
        "report.json": [(key, str(expected[key])) for key in report.REPORT_KEYS],
    }
    # The PodGroup names KAI gave (pg-<pod>-<uid>): finding them is the learner's job.
    found["podgroup.txt"] += sorted(set(kai.podgroup_name_of_pod(p) for p in pods.values()
                                        if kai.podgroup_name_of_pod(p)))
    found["report.json"].append(kai_gpu.reserved_gpu(state["reservation_pods"][0]))
    return found


# Wrong files: another plausible value, garbage, empty.
WRONG = {
    "podgroup.txt": ["pg-p1-00000000-0000-0000-0000-000000000000\n", "my podgroup\n", ""],
    "nolimit.txt": ["OverLimit\n", "the queue is full\n", ""],
    "gang.txt": ["Unschedulable\n", "waiting\n", ""],
    "report.json": ['{"gpu_allocated": 7, "reservation_pods": 9, "shared_gpu": "GPU-x"}\n',
                    '{"gpu_allocated": "many"}\n', "", "[]\n"],
}


def _words(check):
    return [check.get(key) or "" for key in ("message", "problem", "hint")]


@pytest.mark.parametrize("form", ["sim", "v0.17.0"])
@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_file_is_told_what_is_wrong_never_the_answer(grade, fixtures, form, name):
    state, files, version = _lab(fixtures, form)
    secrets = answers(state)[name]
    for wrong in WRONG[name]:
        for lang in ("en", "ko"):
            result, _ = grade(state, dict(files, **{name: wrong}), lang=lang, kai_version=version)
            failing = [c for c in checks(result).values() if c["status"] != "passed"]
            assert failing, (name, wrong)
            for check in failing:
                for said in _words(check):
                    for secret in secrets:
                        key, secret = secret if isinstance(secret, tuple) else ("", secret)
                        pattern = r"(?<![\w.-])%s(?![\w.-])" % re.escape(secret)
                        if key:  # the number in the clause that names its key
                            pattern = r"%s[^;]*%s" % (re.escape(key), pattern)
                        shown = re.search(pattern, said) if secret else None
                        assert not shown or secret in wrong, (
                            "%s (%s, %s) hands over %r: %s" % (check["id"], lang, name, secret, said))
                    assert not REPR.search(said), "%s (%s) prints a Python value: %s" % (check["id"], lang, said)


@pytest.mark.parametrize("form", ["sim", "v0.17.0"])
def test_no_message_of_a_blank_lab_prints_a_python_value(grade, fixtures, form):
    """Nothing done yet, or everything removed from the cluster: every check's words are still plain sentences."""
    state, files, version = _lab(fixtures, form)
    for lab_state, lab_files in (({}, {}), (dict(state, pods=[], podgroups=[], events=[]), files)):
        for lang in ("en", "ko"):
            result, _ = grade(lab_state, lab_files, lang=lang, kai_version=version)
            for check in checks(result).values():
                for said in _words(check):
                    assert not REPR.search(said), "%s (%s) prints a Python value: %s" % (check["id"], lang, said)
