# -*- coding: utf-8 -*-
"""The solver's own words (its progress lines, what a wait is for, what a step expected) name the lab's pods,
queues, files and priority classes from the step modules' data, as the checks' words do
(test_hint_sources.py): change a step's datum and the text follows; no name is typed in a text.

Each step is solved in check mode on the lab done by hand on KAI v0.17.0 (fixtures/kai-v0.17.0/), as it was
before that step, with a waiter that records what each wait is for: nothing is written, every wait and every
expectation of the step is said.
"""

from __future__ import annotations

import pytest

import kai_v017 as hand
import lab_states
from conftest import FakeCluster, write_files
from ansible_collections.gsb.kai_lab.plugins.module_utils.solving.solver import StepRunner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import (
    fraction, limit_fix, nolimit, podgroup, preempt, queues, registry)


class RecordingWaiter(object):
    """Check mode's waiter (what is there now, at once) that keeps what each wait is for."""

    def __init__(self, said):
        self.said = said

    def wait(self, what, probe, done, timeout, describe=None, progress=None):
        self.said.append(what)
        return probe()


def solver_texts(tmp_path, step_id):
    """Every text the solver says while solving step_id (check mode) on the lab as it was before that step."""
    state = lab_states.before(step_id, lab_states.KAI_V017)
    workdir = write_files(tmp_path / ("gsb-kai-%s" % step_id), state["files"])
    cluster = hand.add_jobs(FakeCluster(state), state)
    said = []
    runner = StepRunner(cluster, hand.NAMESPACE, str(workdir), hand.KAI_VERSION, timeout=1, check_mode=True,
                        progress=said.append)
    runner.waiter = RecordingWaiter(said)

    def not_as_expected(expected, observed, cause):
        said.extend([expected, cause])
    runner.not_as_expected = not_as_expected
    runner.run(step_id)
    return said


# (step, module, datum, a changed value, the names that must follow, the names that must be gone)
CHANGES = [
    ("queues", queues, "FILE", "queues-7.yaml", ["queues-7.yaml"], ["queues.yaml"]),
    ("podgroup", podgroup, "P1", "p7", ["p7 to run"], ["p1"]),
    ("nolimit", nolimit, "NL1", "nl-7", ["nl-7's PodGroup", "nl-7 Pending"], ["nl-1"]),
    ("limit_fix", limit_fix, "NL1", "nl-7", ["nl-7 to run after the limit fix"], ["nl-1"]),
    ("limit_fix", limit_fix, "LIMIT_PATCH", {"spec": {"resources": {"gpu": {"limit": 16}}}},
     ["spec.resources.gpu.limit to 16"], ["limit to -1"]),
    ("preempt", preempt, "TRAIN_PODS", ("tr-7", "tr-8"), ["tr-7 and tr-8 to fill the GPUs"], ["tr-1", "tr-2"]),
    ("preempt", preempt, "BUILD_POD", "bd-7", ["bd-7 to run by preempting"], ["bd-1"]),
    ("preempt", preempt, "TRAIN_CLASS", "train-7", ["preempting a train-7 pod", "exactly one train-7 pod",
                                                    "priority classes train-7/build"], []),
    ("fraction", fraction, "FRACTION_PODS", ("fr-7", "fr-8"), ["fr-7 and fr-8 to run on a shared GPU"],
     ["fr-1", "fr-2"]),
]


@pytest.mark.parametrize("step_id, module, datum, value, follows, gone", CHANGES,
                         ids=["%s.%s" % (c[0], c[2]) for c in CHANGES])
def test_a_changed_datum_shows_in_the_solvers_words(tmp_path, monkeypatch, step_id, module, datum, value, follows,
                                                    gone):
    before = " | ".join(solver_texts(tmp_path, step_id))
    monkeypatch.setattr(module, datum, value)
    said = " | ".join(solver_texts(tmp_path, step_id))
    for text in follows:
        assert text in said, (text, said)
    for name in gone:
        assert name in before, (name, before)  # the datum's old value was said before the change
        assert name not in said, (name, said)


def test_the_steps_say_what_they_wait_for_with_the_labs_names(tmp_path):
    said = dict((s.id, solver_texts(tmp_path, s.id)) for s in registry.STEPS)
    assert "p1 to run" in said["podgroup"]
    assert "p1 scheduled by kai-scheduler" in said["podgroup"]
    assert "tr-1 and tr-2 to fill the GPUs" in said["preempt"]
    assert "bd-1 to run by preempting a train pod" in said["preempt"]
    assert "fr-1 and fr-2 to run on a shared GPU" in said["fraction"]
    assert "nl-1 to run after the limit fix" in said["limit_fix"]
