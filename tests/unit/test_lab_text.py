# -*- coding: utf-8 -*-
"""The lab text (steps/lab_text*.py): its names and numbers are the steps', in
both languages, and the docs site's pages are what docs/lab_pages.py writes."""

from __future__ import annotations

import importlib.util
import re

import pytest
import yaml

from conftest import REPO
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import (
    base, fraction, lab_text, lab_text_en, lab_text_ko, nolimit, podgroup, preempt, queues, registry)

NS, WORKDIR, KAI_NS = "kai-lab", "/root/gsb-kai", "kai-scheduler"


def generator():
    spec = importlib.util.spec_from_file_location("lab_pages", REPO / "docs" / "lab_pages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def whole(lang, workdir=WORKDIR):
    return lab_text.markdown(lab_text.Lab(lang, NS, workdir, KAI_NS).whole())


def step_text(lang, step_id):
    return lab_text.markdown(lab_text.Lab(lang, NS, WORKDIR, KAI_NS).step(step_id))


def test_the_committed_pages_are_what_the_generator_writes():
    pages = generator().pages()
    assert sorted(p.rsplit("/", 1)[-1] for p in pages) == ["lab_en.rst", "lab_ko.rst"]
    for path, text in pages.items():
        with open(path, encoding="utf-8") as handle:
            assert handle.read() == text, "run docs/lab_pages.py: %s is stale" % path


def test_readmes_step_table_is_the_step_list():
    """README.md's step table is what docs/lab_pages.py writes from the step list: a row per step, in order."""
    lab_pages = generator()
    with open(lab_pages.README, encoding="utf-8") as handle:
        committed = handle.read()
    assert committed == lab_pages.readme(committed), "run docs/lab_pages.py: README.md's step table is stale"
    table = committed.split(lab_pages.TABLE_START, 1)[1].split(lab_pages.TABLE_END, 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "`" in line.split("|")[1]]
    assert [row.split("|")[1].strip() for row in rows] == ["%d `%s`" % (s.number, s.id) for s in registry.STEPS]


def test_the_pages_are_in_the_docs_site():
    sections = yaml.safe_load((REPO / "docs" / "docsite" / "extra-docs.yml").read_text())["sections"]
    assert ["lab_en", "lab_ko"] in [s["toctree"] for s in sections]


def test_a_changed_queue_quota_and_pod_name_change_the_text_and_the_pages(monkeypatch):
    before = generator().pages()
    monkeypatch.setitem(queues.QUEUES, "research", dict(queues.QUEUES["research"], gpu_quota=3))
    monkeypatch.setattr(nolimit, "NL1", "nl-7")
    for lang in ("en", "ko"):
        text = step_text(lang, "queues")
        assert "`research`" in text and "GPU quota 3" in text and "GPU quota 2, GPU limit 4" not in text
        for step_id in ("nolimit", "limit_fix"):
            assert "`nl-7`" in step_text(lang, step_id) and "nl-1" not in step_text(lang, step_id)
    after = generator().pages()
    assert after != before
    assert all("nl-7" in text and "nl-1" not in text for text in after.values())


def test_a_changed_fraction_and_priority_change_the_text(monkeypatch):
    monkeypatch.setattr(fraction, "FRACTION", "0.25")
    monkeypatch.setitem(base.PRIORITIES, "build", 120)
    for lang in ("en", "ko"):
        assert '`gpu-fraction: "0.25"`' in step_text(lang, "fraction")
        assert "(120)" in step_text(lang, "preempt") and "(100)" not in step_text(lang, "preempt")


def test_the_numbers_are_the_objects_the_solver_applies():
    """Each number the text states is read off the objects the steps apply."""
    text = step_text("en", "gang")
    free = fraction.NODE_GPUS - kai_gpu.gpu_limit(podgroup.p1(NS)) - kai_gpu.gpu_limit(nolimit.nl1(NS))
    assert "Only %d GPUs are free now" % free in text
    text = step_text("en", "preempt")
    names = [p["metadata"]["name"] for p in preempt.train_pods(NS)]
    assert "`%s` and `%s`" % tuple(names) in text
    assert "`priorityClassName: %s`" % preempt.build_pod(NS)["spec"]["priorityClassName"] in text
    text = step_text("en", "queues")
    for name, queue in queues.QUEUES.items():
        assert "`%s`" % name in text and "GPU quota %s and GPU limit %s" % (queue["gpu_quota"], queue["gpu_limit"]) in text


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_every_placeholder_is_filled_and_every_step_is_there(lang):
    text = whole(lang)
    assert "{" not in text and "}" not in text
    for step in registry.STEPS:
        assert lab_text.Lab(lang, NS, WORKDIR, KAI_NS).step_title(step) in text
        assert "`kai-lab check %s`" % step.id in text
    assert "`%s/queues.yaml`" % WORKDIR in text


def test_the_workdir_is_the_labs_own():
    text = whole("en", workdir="/home/learner/lab")
    assert "`/home/learner/lab/report.json`" in text and "/root/gsb-kai" not in text


def shape(blocks):
    return [("code", len(b["code"])) if isinstance(b, dict) else ("list", len(b)) if isinstance(b, list) else "p"
            for b in blocks]


def placeholders(value):
    return sorted(set(re.findall(r"\{(\w+)", repr(value))))


def test_both_languages_say_the_same_things():
    en, ko = lab_text_en.TEXT, lab_text_ko.TEXT
    assert sorted(en) == sorted(ko) and sorted(en["steps"]) == sorted(ko["steps"]) == sorted(registry.STEP_IDS)
    for part in lab_text.INTRO + ("notes", "finish"):
        assert shape(en[part]) == shape(ko[part]), part
        assert placeholders(en[part]) == placeholders(ko[part]), part
    for step_id, words in en["steps"].items():
        for part in ("task", "context"):
            assert shape(words[part]) == shape(ko["steps"][step_id][part]), (step_id, part)
        assert placeholders(words) == placeholders(ko["steps"][step_id]), step_id


def test_code_glued_to_a_word_stays_code_in_rst():
    assert lab_text.rst_inline("`lab`의 큐") == "``lab``\\ 의 큐"
    assert lab_text.rst_inline("큐`lab`") == "큐\\ ``lab``"
    assert lab_text.rst_inline("a `b`, c_d *e*") == "a ``b``, c\\_d \\*e\\*"
    assert lab_text.md_inline("`gpu_allocated` and gpu_allocated") == "`gpu_allocated` and gpu\\_allocated"
    assert lab_text.plain_inline("run `kai-lab task`") == "run kai-lab task"
