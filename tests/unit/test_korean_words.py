# -*- coding: utf-8 -*-
"""Issue 41: Korean written for a reader, one term per concept.

Before, Korean particles were machine-assembled ("을(를) 할 수
있습니다"), or typed once for a value that changes ("v0.18.6 가": 육 ends
in a consonant, so 이), and one concept had two names (주석 in the tasks,
어노테이션 in the banner). Every Korean string of the collection is read
here: the Python sources (plugins/), the roles' task messages and the
generated Korean lab page. A particle after a value that is filled in
(``{name}``, ``%s``) must be chosen by that value (``{name:이}``,
learner/text.py ``with_particle``); a particle after a literal word must
fit it; the glossary (steps/lab_text_ko.py GLOSSARY) holds each concept to
one term. The lab text and the checks' words are also rendered with this
lab's values and read again.
"""

from __future__ import annotations

import ast
import glob
import os
import re

import pytest
import yaml

from conftest import REPO
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import text as learner_text
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import lab_text, lab_text_ko, registry
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import say

HANGUL = re.compile(u"[\uac00-\ud7a3]")
PARTICLE = r"(이|가|을|를|은|는|과|와|으로|로)(?=[\s.,;:)\]'\"]|$)"
# "을(를)": a particle left for the reader to choose.
ALTERNATION = re.compile(r"(을\(를\)|를\(을\)|이\(가\)|가\(이\)|은\(는\)|는\(은\)|와\(과\)|과\(와\)|\(으\)로|\(이\)|\(가\))")
FILLED = re.compile(r"(\{[a-z_0-9\[\]]+\}|%s|%d|%r)\s?" + PARTICLE)
LITERAL = re.compile(r"(?<![{%\w])([A-Za-z0-9][A-Za-z0-9_.\-/]*[A-Za-z0-9]|[A-Za-z0-9])`?\s" + PARTICLE)
PAIRS = learner_text.PARTICLES


def _strings_of_python(path):
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    # The glossary's own patterns name the words it forbids: they are its rule, not text a reader sees.
    rule = set(id(inner) for node in ast.walk(tree) if isinstance(node, ast.Assign)
               and any(isinstance(target, ast.Name) and target.id == "GLOSSARY" for target in node.targets)
               for inner in ast.walk(node.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and HANGUL.search(node.value) \
                and id(node) not in rule:
            yield node.lineno, node.value


def _strings_of_yaml(node):
    if isinstance(node, str):
        if HANGUL.search(node):
            yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings_of_yaml(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings_of_yaml(value)


def korean_strings():
    """(where, text) of every Korean string the collection shows."""
    found = []
    for path in sorted(glob.glob(str(REPO / "plugins" / "**" / "*.py"), recursive=True)):
        for line, value in _strings_of_python(path):
            found.append(("%s:%d" % (os.path.relpath(path, REPO), line), value))
    for path in sorted(glob.glob(str(REPO / "roles" / "*" / "tasks" / "*.yml"))):
        with open(path, encoding="utf-8") as handle:
            for value in _strings_of_yaml(yaml.safe_load(handle)):
                found.append((os.path.relpath(path, REPO), value))
    return found


def rendered():
    """(where, text) of the Korean lab text and every check's words, filled with the lab's values."""
    found = []
    for version in (None, "v0.12.0", "v0.17.0"):
        lab = lab_text.Lab("ko", "kai-lab", "/root/gsb-kai", "kai-scheduler", kai_version=version)
        found.append(("lab text, KAI %s" % version, lab_text.plain(lab.whole())))
        for check in registry.CHECKS:
            for key, words in check.words.items():
                if isinstance(words, dict) and "ko" in words:
                    found.append(("%s %s" % (check.id, key), say(words, "ko", **lab.values)))
    return found


def _fits(word, written):
    name = [key for key, pair in PAIRS.items() if written in pair][0]
    return learner_text.particle(word, name) == written


def problems(where, text):
    found = ["%s: %s, a particle for the reader to choose: %r" % (where, m.group(1), text[:120])
             for m in ALTERNATION.finditer(text)]
    found += ["%s: %r after a filled-in value: write {name:%s} or with_particle(): %r"
              % (where, m.group(0), m.group(2), text[:120]) for m in FILLED.finditer(text)]
    for match in LITERAL.finditer(text):
        word, written = match.group(1), match.group(2)
        if not _fits(word, written):
            found.append("%s: %r does not fit %s (%s): %r" % (where, match.group(0), word,
                                                              learner_text.particle(word, written), text[:120]))
    for term, entry in lab_text_ko.GLOSSARY.items():
        for other in entry["not"]:
            if re.search(other, text):
                found.append("%s: %r where the glossary says %s (%s): %r" % (where, other, entry["use"], term,
                                                                          text[:120]))
    return found


def test_the_particle_of_a_word_is_the_one_its_last_sound_takes():
    cases = {("v0.18.6", "이"): "이", ("p2", "이"): "가", ("fr-1", "은"): "은", ("fr-2", "을"): "를",
             ("queues.yaml", "으로"): "로", ("report.json", "을"): "을", ("gang.txt", "을"): "를", ("학습자", "은"): "는",
             ("정책", "으로"): "으로", ("파일", "으로"): "로", ("10", "이"): "이", ("train", "과"): "과",
             ("build", "과"): "와", ("Job", "을"): "을", ("pod", "이"): "가",
             # 체크, 컨피그, 익스포트, 인스트럭트, 아이디, 얼로케이티드: no final consonant; 네임, 시크릿, 스트링: one.
             ("check", "을"): "를", ("kubeconfig", "으로"): "로", ("export", "은"): "는", ("Instruqt", "은"): "는",
             ("uid", "이"): "가", ("gpu_allocated", "은"): "는", ("schedulerName", "은"): "은",
             ("spec.nodeName", "을"): "을", ("Secret", "이"): "이", ("string", "으로"): "으로",
             ("stack", "이"): "이", ("eventTime", "은"): "은", ("firstTimestamp", "은"): "는"}
    assert dict((case, learner_text.particle(*case)) for case in cases) == cases
    assert learner_text.fill("{version:이} 실행 중, {name:`을} 지우세요", version="v0.18.6", name="fr-2") == \
        "v0.18.6 이 실행 중, `fr-2` 를 지우세요"


def test_every_korean_string_chooses_its_particles_and_keeps_to_the_glossary():
    found = [p for where, text in korean_strings() for p in problems(where, text)]
    assert found == [], "%d problems:\n%s" % (len(found), "\n".join(found[:60]))


def test_the_rendered_text_and_checks_read_right():
    found = [p for where, text in rendered() for p in problems(where, text)]
    assert found == [], "%d problems:\n%s" % (len(found), "\n".join(found[:60]))


@pytest.mark.parametrize("term", sorted(lab_text_ko.GLOSSARY))
def test_the_glossary_term_is_used(term):
    """Each glossary entry is a term the Korean text really uses (not a rule about nothing)."""
    entry = lab_text_ko.GLOSSARY[term]
    assert any(entry["use"] in text for _where, text in korean_strings()), term
