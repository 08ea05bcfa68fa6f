# -*- coding: utf-8 -*-
"""Step 1, the queue hierarchy: manifests as the lab text asks, the real cluster
kept them, and the unset-limit mistake named."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import queues
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import FAILED

from lab_testing import both_langs, by_name, checks, ids_with, solved


@pytest.mark.parametrize("name, parent, quota, limit", [
    ("lab", None, 4, -1),
    ("research", "lab", 2, 4),
    ("ops", "lab", 2, -1),
])
def test_lab_queues_as_in_the_lab_text(name, parent, quota, limit):
    queue = by_name(queues.lab_queues())[name]
    assert queue["apiVersion"] == "scheduling.run.ai/v2"
    assert queue["kind"] == "Queue"
    assert queue["spec"].get("parentQueue") == parent
    assert queue["spec"]["resources"]["gpu"] == {"quota": quota, "limit": limit}
    for resource in ("cpu", "memory"):
        assert queue["spec"]["resources"][resource] == {"quota": -1, "limit": -1}


def test_exactly_three_lab_queues():
    assert sorted(by_name(queues.lab_queues())) == ["lab", "ops", "research"]


def test_recorded_cluster_kept_the_queues_as_written(fixtures):
    live = by_name(fixtures.after("queues")["queues"])
    for name, manifest in by_name(queues.lab_queues()).items():
        assert live[name]["spec"] == manifest["spec"]


def test_queues_file_of_a_perfect_learner_holds_the_catalog(fixtures):
    written = list(yaml.safe_load_all(fixtures.after("queues")["files"]["queues.yaml"]))
    assert by_name(written) == by_name(queues.lab_queues())


def test_research_queue_without_gpu_limit_is_read_as_zero(grade, fixtures):
    state, files = solved(fixtures)
    research = "      quota: 2\n      limit: 4\n"
    assert files["queues.yaml"].count(research) == 1
    files["queues.yaml"] = files["queues.yaml"].replace(research, "      quota: 2\n")
    en, ko = both_langs(grade, state, files)
    assert ids_with(en, FAILED) == ids_with(ko, FAILED) == ["queues.hierarchy"]
    assert "queue research has no gpu limit; KAI reads an unset limit as 0" in checks(en)["queues.hierarchy"]["message"]
    assert u"research 큐에 gpu limit 이 없습니다" in checks(ko)["queues.hierarchy"]["message"]
    assert u"0으로 읽어" in checks(ko)["queues.hierarchy"]["message"]


def test_applied_research_queue_without_limit_fails_queues_applied(grade, fixtures):
    state, files = solved(fixtures)
    del fixtures.find(state["queues"], "research")["spec"]["resources"]["gpu"]["limit"]
    result, _ = grade(state, files)
    assert ids_with(result, FAILED) == ["queues.applied"]
    assert "KAI reads an unset limit as 0" in checks(result)["queues.applied"]["message"]
