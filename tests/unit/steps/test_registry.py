# -*- coding: utf-8 -*-
"""The registry: the lab's steps in order, each check once; what reads the step list."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry as steps
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import nolimit, podgroup

from ansible_collections.gsb.kai_lab.plugins.lookup.lab_steps import LookupModule
from ansible_collections.gsb.kai_lab.plugins.modules import kai_lab_step

from conftest import COLLECTION_PATH, COLLECTION_STEP_IDS, REPO
from lab_testing import NS


def test_steps_are_numbered_by_their_place_in_the_step_list():
    assert [s.id for s in steps.STEPS] == list(steps.STEP_IDS)
    assert [s.number for s in steps.STEPS] == [n + 1 for n in range(len(steps.STEPS))]
    assert all(set(s.title) == {"en", "ko"} for s in steps.STEPS)
    assert steps.step("fraction").files == ["fraction.yaml"]
    assert steps.FILES == tuple(name for s in steps.STEPS for name in s.files)
    with pytest.raises(KeyError):
        steps.step("nope")


def test_a_step_id_registered_twice_is_refused():
    registered = steps.STEPS
    with pytest.raises(ValueError, match="registered twice"):
        steps.use(registered + (steps.LAB[0],))
    assert steps.STEPS == registered


def test_each_check_is_registered_once_under_its_step_with_words_in_both_languages():
    ids = [c.id for c in steps.CHECKS]
    assert len(ids) == len(set(ids)) == sum(len(s.checks) for s in steps.STEPS)
    for step in steps.STEPS:
        for check in step.checks:
            assert check.step_id == step.id
            assert check.weight > 0
            for part in ("desc", "fail", "hint"):
                assert set(check.words[part]) == {"en", "ko"}, (check.id, part)


def test_kai_lab_step_documents_the_step_list_not_a_copy_of_it():
    """ansible-test sanity holds DOCUMENTATION to the argument spec: neither lists the steps (a copy that a new
    step would make stale); the option names the lookup, and the module refuses another id naming the steps."""
    option = yaml.safe_load(kai_lab_step.DOCUMENTATION)["options"]["step"]
    assert "choices" not in option and "gsb.kai_lab.lab_steps" in " ".join(option["description"])
    assert not any(step_id in " ".join(option["description"]) for step_id in steps.STEP_IDS)


def test_kai_lab_step_refuses_an_unknown_step_naming_the_steps(tmp_path):
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {"step": "nope", "workdir": str(tmp_path / "w")}}))
    module = COLLECTION_PATH / "ansible_collections/gsb/kai_lab/plugins/modules/kai_lab_step.py"
    done = subprocess.run([sys.executable, str(module), str(args)], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(COLLECTION_PATH)), check=False)
    result = json.loads(done.stdout)
    # The module runs in a process of its own: the collection's steps, without one a test registered.
    assert result["failed"] and "unknown step nope; the steps are %s" % ", ".join(COLLECTION_STEP_IDS) in result["msg"]
    assert not (tmp_path / "w").exists(), "refused before any work"


def test_lab_steps_lookup_returns_the_registered_steps_queues_and_files():
    assert LookupModule().run([], {}) == list(steps.STEP_IDS)
    assert LookupModule().run(["queues"], {}) == list(steps.QUEUE_NAMES)
    assert LookupModule().run(["files"], {}) == list(steps.FILES)


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
