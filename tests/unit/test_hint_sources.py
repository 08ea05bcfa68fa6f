# -*- coding: utf-8 -*-
"""The checks' words (description, failure, hint, and every word a check says
of a mistake) take the lab's names, numbers and paths from where they are set:
the steps' data through steps/lab_values.py, the configured namespace and
workdir, KAI's names in kai/. Nothing in a word table is a second copy.

Two ways to see it: a source changed here shows in the hint, and every word
table rendered with placeholders in place of the lab's values holds none of
the lab's names and no number of its own.
"""

from __future__ import annotations

import io
import json
import re
import string

import pytest

from conftest import FakeCluster, write_files
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import cli as kai_lab_cli
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.grader import Grader, Snapshot
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.session import DEFAULTS
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import text as learner_text
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import (
    fraction, lab_values, limit_fix, nolimit, queues, registry)

NS, WORKDIR, KAI_NS = DEFAULTS["namespace"], DEFAULTS["workdir"], DEFAULTS["kai_namespace"]
LANGS = ("en", "ko")


def fields(template):
    """The names a str.format template asks for ('report_keys[0]' asks for report_keys)."""
    return set(re.split(r"[.\[]", name)[0] for _, name, _, _ in string.Formatter().parse(template) if name)


def entries(table, path=()):
    """(path, {en, ko}) of every bilingual entry of a word table."""
    if isinstance(table, dict) and isinstance(table.get("en"), str):
        yield path, table
        return
    for key, value in (table or {}).items():
        if isinstance(value, dict):
            yield from entries(value, path + (key,))


def kai_lab(config, *argv):
    out, err = io.StringIO(), io.StringIO()
    code = kai_lab_cli.main(list(argv), config_path=config, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def config_for(tmp_path, workdir, namespace="class-7", lang="en"):
    path = tmp_path / "kai-lab.json"
    path.write_text(json.dumps({"namespace": namespace, "workdir": str(workdir), "lang": lang,
                                "kai_namespace": KAI_NS, "record_path": str(tmp_path / "record.json")}))
    return str(path)


def hints(tmp_path, step_id, lang="en", **where):
    code, out, err = kai_lab(config_for(tmp_path, tmp_path / "home" / "learner" / "gsb-kai", lang=lang, **where),
                             "hint", step_id, "--json")
    assert code == 0, err
    return dict((h["id"], h) for h in json.loads(out)["hints"])


# ---------------------------------------------------------------- every placeholder has its value

@pytest.mark.parametrize("lang", LANGS)
def test_every_checks_description_failure_and_hint_fill_from_the_labs_values(lang):
    known = set(lab_values.values(NS, WORKDIR, KAI_NS))
    for check in registry.CHECKS:
        for part in ("desc", "hint", "fail"):
            wanted = fields(check.words[part][lang]) - ({"problem", "names"} if part == "fail" else set())
            assert wanted <= known, (check.id, part, sorted(wanted - known))


# ---------------------------------------------------------------- no copy in any word table

class Placeholders(dict):
    """Each value a word asks for, as <its name>: what is left of the lab in the text is typed in the word."""

    def __missing__(self, key):
        return Indexed(key)


class WithParticles(string.Formatter):
    """str.format as the words are filled (learner/text.py fill): a Korean particle as a field's format spec."""

    def format_field(self, value, format_spec):
        if format_spec.lstrip("`") in learner_text.PARTICLES:
            return learner_text.fill("{value:%s}" % format_spec, value=value)
        return super(WithParticles, self).format_field(value, format_spec)


class Indexed(str):
    """<name>, and <name0> for name[0]."""

    def __new__(cls, key):
        placeholder = str.__new__(cls, "<%s>" % key)
        placeholder.key = key
        return placeholder

    def __getitem__(self, index):
        return "<%s%s>" % (self.key, index)


def lab_names():
    """The lab's own names as its data has them: namespaces, paths, queues, pods, files, KAI's names."""
    found = lab_values.values(NS, WORKDIR, KAI_NS)
    generic = {"lab", "gang", "train", "build"}  # also plain words of the text ("the lab text", "the gang's PodGroup")
    names = set()
    for key, value in found.items():
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, str) and item not in generic and not item.startswith("<"):
                names.update(part.strip() for part in item.split(",") if part.strip() and ":" not in part)
    return sorted(n for n in names - generic if len(n) > 1 and not n.isdigit() and " " not in n)


# The numbers a word may state that are no datum of the lab: KAI's own facts.
KAI_FACTS = (
    "schedulingConditions[0]",  # the condition to copy: KAI's first
    "as 0", "0으로",  # KAI reads an unset limit as 0
    "(0)",  # ... and says so
    "kai-lab task",  # the command kai-lab, not the namespace of the same name
)


def test_no_word_table_holds_a_name_or_number_of_the_lab():
    names = lab_names()
    assert {"research", "ops", "nolimit", "p1", "nl-1", "tr-1", "bd-1", "fr-2", "gang-2", "kai-lab", WORKDIR,
            "queues.yaml", "gang.txt", "report.json", "kai-scheduler", "nvidia.com/gpu", "pod-group-name",
            "gpu-fraction", "kai.scheduler/queue", "kai.scheduler/batch-min-member", "scheduling.run.ai/v2alpha2",
            "gpu_allocated"} <= set(names)
    pattern = re.compile(r"(?<![\w./<-])(%s)(?![\w/>-])" % "|".join(re.escape(n) for n in names))
    left = []
    # Every word table of the steps (the checks' own, the steps' others and those their readers share), from
    # the step list: a step added there is read here.
    for table_name, table in registry.word_tables():
        for path, entry in entries(table):
            for lang in LANGS:
                text = WithParticles().vformat(entry[lang], (), Placeholders())
                for fact in KAI_FACTS:
                    text = text.replace(fact, "")
                found = pattern.findall(text) + re.findall(r"(?<![<\w])-?\d+(?:\.\d+)?", text)
                if found:
                    left.append((table_name, path, lang, found))
    assert left == [], "\n".join(map(repr, left))


# ---------------------------------------------------------------- a source changed shows in the hint

def test_the_hints_name_the_configured_namespace_and_workdir(tmp_path):
    workdir = tmp_path / "home" / "learner" / "gsb-kai"
    for step in registry.STEPS:
        for lang in LANGS:
            for check_id, said in hints(tmp_path, step.id, lang).items():
                text = said["description"] + " " + said["hint"]
                # No placeholder left unfilled (kubectl's jsonpath and a JSON patch keep their braces).
                assert not re.search(r"\{\w+(\[\d+\])?\}", text), text
                assert "/root/gsb-kai" not in text and not re.search(r"-n kai-lab\b", text), (check_id, text)
    said = hints(tmp_path, "queues")
    assert said["queues.applied"]["hint"] == "kubectl apply -f %s/queues.yaml" % workdir
    said = hints(tmp_path, "podgroup")
    assert said["podgroup.file"]["hint"] == ("kubectl -n class-7 get pod p1 -o jsonpath="
                                             "'{.metadata.annotations.pod-group-name}' > %s/podgroup.txt" % workdir)
    assert "kubectl -n class-7 describe pod p1" in said["podgroup.running"]["hint"]
    assert "kubectl -n class-7 get pod nl-1 -w" in hints(tmp_path, "limit_fix")["limit_fix.running"]["hint"]


def test_a_changed_quota_gpu_count_and_pod_name_show_in_the_hints(tmp_path, monkeypatch):
    monkeypatch.setitem(queues.QUEUES, "research", dict(queues.QUEUES["research"], gpu_quota=3))
    monkeypatch.setattr(fraction, "NODE_GPUS", 8)
    monkeypatch.setattr(nolimit, "NL1", "nl-7")
    monkeypatch.setattr(fraction, "FRACTION", "0.25")
    for lang in LANGS:
        assert "research: parentQueue lab, quota 3, limit 4" in hints(tmp_path, "queues", lang)[
            "queues.hierarchy"]["hint"]
        evicted = hints(tmp_path, "preempt", lang)["preempt.evicted"]["hint"]
        assert "8" in evicted and "4" not in evicted, evicted
        said = hints(tmp_path, "limit_fix", lang)
        assert "nl-7" in said["limit_fix.running"]["hint"] and "nl-1" not in json.dumps(said, ensure_ascii=False)
        assert '"0.25"' in hints(tmp_path, "fraction", lang)["fraction.manifest"]["hint"]
    assert hints(tmp_path, "preempt")["preempt.evicted"]["hint"] == \
        "tr-1, tr-2 (priorityClassName train) must fill all 8 GPUs before bd-1 is created."


def test_a_changed_limit_patch_is_the_hints_command(tmp_path, monkeypatch):
    monkeypatch.setattr(limit_fix, "LIMIT_PATCH", {"spec": {"resources": {"gpu": {"limit": 16}}}})
    said = hints(tmp_path, "limit_fix")["limit_fix.queue"]
    assert said["hint"] == "kubectl patch queue nolimit --type merge -p '{\"spec\":{\"resources\":{\"gpu\":{\"limit\":16}}}}'"
    assert said["description"] == "nolimit's GPU limit patched to 16, nothing else changed"


def test_a_grade_in_another_namespace_hints_there(tmp_path):
    """The grade's own words (kai-lab check, grade.json) are filled as kai-lab hint's: this lab's names and paths."""
    workdir = write_files(tmp_path / "home" / "learner" / "gsb-kai", {})
    grade = Grader(Snapshot(FakeCluster({}, namespace="class-7"), "class-7", workdir), lang="en").run()
    said = dict((c["id"], c) for s in grade["steps"] for c in s["checks"])
    assert said["queues.applied"]["hint"] == "kubectl apply -f %s/queues.yaml" % workdir
    assert said["queues.file"]["message"] == "queues.yaml: queues.yaml does not exist in %s." % workdir
    assert "kubectl -n class-7 describe pod p1" in said["podgroup.running"]["hint"]
    assert said["nolimit.reason"]["hint"].endswith("into %s/nolimit.txt." % workdir)
    for check in said.values():
        assert "/root/gsb-kai" not in check["hint"] + check["message"] and "{" not in check["description"]
