# -*- coding: utf-8 -*-
"""The registry: the lab's eight steps in order, each check once."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry as steps
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import nolimit, podgroup

from ansible_collections.gsb.kai_lab.plugins.lookup.lab_steps import LookupModule
from ansible_collections.gsb.kai_lab.plugins.modules import kai_lab_step

from conftest import REPO
from lab_testing import NS


def test_steps_are_the_lab_eight_in_order():
    assert [s.id for s in steps.STEPS] == list(steps.STEP_IDS)
    assert [s.number for s in steps.STEPS] == list(range(1, 9))
    assert all(set(s.title) == {"en", "ko"} for s in steps.STEPS)
    assert steps.step("fraction").files == ["fraction.yaml"]
    with pytest.raises(KeyError):
        steps.step("nope")


def test_each_check_is_registered_once_under_its_step_with_words_in_both_languages():
    ids = [c.id for c in steps.CHECKS]
    assert len(ids) == len(set(ids)) == 17
    for step in steps.STEPS:
        for check in step.checks:
            assert check.step_id == step.id
            assert check.weight > 0
            for part in ("desc", "fail", "hint"):
                assert set(check.words[part]) == {"en", "ko"}, (check.id, part)


def test_kai_lab_step_documents_the_registered_steps():
    documented = yaml.safe_load(kai_lab_step.DOCUMENTATION)["options"]["step"]["choices"]
    assert documented == list(steps.STEP_IDS)


def test_lab_steps_lookup_returns_the_registered_steps():
    assert LookupModule().run([], {}) == list(steps.STEP_IDS)


def test_solve_yml_loops_over_the_lookup():
    with open(os.path.join(REPO, "playbooks", "solve.yml")) as handle:
        play = [p for p in yaml.safe_load(handle) if "tasks" in p][0]
    loop = [t for t in play["tasks"] if t["name"] == "Carry out the lab steps in order"][0]["loop"]
    # Every step from the lookup, unless kai_lab_solve_steps names some (a lab platform's skip of one step).
    assert loop == "{{ kai_lab_solve_steps | default(query('gsb.kai_lab.lab_steps'), true) }}"


@pytest.mark.parametrize("make, name, queue", [
    (podgroup.p1, "p1", "research"),
    (nolimit.nl1, "nl-1", "nolimit"),
])
def test_one_gpu_pods_for_kai(make, name, queue):
    pod = make(NS)
    assert pod["metadata"]["name"] == name
    assert pod["metadata"]["namespace"] == NS
    assert pod["spec"]["schedulerName"] == "kai-scheduler"
    assert pod["metadata"]["labels"] == {"kai.scheduler/queue": queue}
    assert pod["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": 1}}
