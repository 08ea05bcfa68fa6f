# -*- coding: utf-8 -*-
"""No count, total or list of the steps outside the step list (steps/registry.py).

The number of steps, of checks and the lab's points, the step ids and check
ids in order: each is the step list's, and prose, code, docs, README, the
guides and the tests take it from there (the lab text's placeholders,
README's generated table, the registry in code and tests). This test reads
every file of the repository (git ls-files) but the step list itself and
fails on a copy of one, naming the file, the line and what it copies.

How a count is told from any other number: by what it counts. A number word
or digit equal to the step list's count of steps is a copy when "steps" or
"tasks" follow it (two words may stand between: "eight short steps", "8
kubectl steps"; in Korean, the native numeral before 단계); a range of the
step numbers (steps 1-N, range(1, N+1)); the number of checks before
"checks"; the lab's points as k/T or "T points"; in code (.py, .yml, .sh,
.j2), an integer equal to a count on a line about steps, checks, points or
scores, and a score with decimals (a share of the total); three or more step
ids or check ids in the list's order with only separators between (a copy
of the list); a step's file said to come "last" (an order of the steps).
The counts are the registry's when the test runs: add a step and the test
looks for the new ones. The rules are shown to find what they must (and to
pass what they must not) on samples below, so the scan cannot pass for want
of a rule.

Not read: the step list, the docs pages of the lab text (written from the
step list by docs/lab_pages.py, which test_lab_text holds them to), recorded
data (tests/unit/fixtures: what a run recorded), the changelog's fragments
(what a release changed, dated by it), the licence, binary files and this
file (its samples).
"""

from __future__ import annotations

import re
import subprocess

import pytest

from conftest import REPO
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry

SKIPPED = ("plugins/module_utils/steps/registry.py", "tests/unit/fixtures/", "changelogs/", "LICENSE",
           "tests/unit/test_counts_follow_the_step_list.py",
           # Written by docs/lab_pages.py from the step list (test_lab_text holds them to it).
           "docs/docsite/rst/lab_en.rst", "docs/docsite/rst/lab_ko.rst")
CODE = (".py", ".yml", ".yaml", ".sh", ".j2", ".cfg", "Makefile")
# Number words, as the oracle of what a count looks like in prose (English; Korean native numerals before a noun).
EN = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
      "seventeen eighteen nineteen twenty").split()
KO = ("_ 한 두 세 네 다섯 여섯 일곱 여덟 아홉 열 열한 열두 열세 열네 열다섯 열여섯 열일곱 열여덟 열아홉 스무").split()
COUNTED = re.compile(r"\b(steps?|checks?|points|max_points|score|counts|passed|failed|unverified|tests|weight|total)\b"
                     r"|[\"'.]number\b", re.I)
SEPARATORS = r"(?:[\s,\"'`|\[\]()]|\band\b)+"
# "step 8", "Step 8", "8단계": a step's number (its place), no count.
ORDINAL = re.compile(r"(?:\bsteps?|단계)\s*(?:\d+\s*(?:,|and|or)\s*)*$", re.I)


def word(numbers, count):
    return numbers[count] if 0 < count < len(numbers) else str(count)


def counts():
    """(steps, checks, points) of the step list now."""
    return len(registry.STEPS), len(registry.CHECKS), sum(c.weight for c in registry.CHECKS)


def run_of(ids, length=3):
    """A regex matching `length` ids next to each other in the list's order, separators only between."""
    runs = []
    for start in range(len(ids) - length + 1):
        parts = [r"(?<![\w.-])%s(?![\w-])" % re.escape(i) for i in ids[start:start + length]]
        runs.append(SEPARATORS.join(parts))
    return re.compile("|".join(runs)) if runs else re.compile(r"(?!)")


def prose_rules():
    """(what it copies, regex) for every file."""
    steps, checks, points = counts()
    return [
        ("the number of steps", re.compile(r"\b(?:%d|%s)\s+(?:[\w-]+\s+){0,2}(?:steps|tasks)\b"
                                           % (steps, word(EN, steps)), re.I)),
        ("the number of steps", re.compile(r"(?<![\w가-힣])%s\s*(?:개\s*)?(?:단계|과제)" % word(KO, steps))),
        ("the range of the step numbers", re.compile(r"\bsteps?\s+1\s*(?:-|–|to|through|\.\.)\s*%d\b" % steps, re.I)),
        ("the number of checks", re.compile(r"\b(?:%d|%s)\s+(?:[\w-]+\s+){0,2}checks\b" % (checks, word(EN, checks)),
                                            re.I)),
        ("the lab's points", re.compile(r"\b\d+/%d\b|\b(?:%d|%s)\s+(?:[\w-]+\s+)?points\b|\"(?:max_)?points\":\s*%d\b"
                                        % (points, points, word(EN, points), points), re.I)),
        ("the number of checks", re.compile(r"\"(?:passed|failed|unverified)\":\s*%d\b" % checks)),
        ("the order of the steps", re.compile(r"(?:%s)\W*\s+last\b"
                                              % "|".join(re.escape(f) for s in registry.STEPS for f in s.files))),
        ("a copy of the step ids", run_of(list(registry.STEP_IDS))),
        ("a copy of the check ids", run_of([c.id for c in registry.CHECKS])),
    ]


def code_rules():
    """(what it copies, test of a line) for code."""
    steps, checks, points = counts()
    # A number with a unit (8 MiB, 17 s, 28 %) is a size or a time, no count.
    number = re.compile(r"(?<![\w.:/%%-])(?:%s)(?![\w.:/-])(?!\s*(?:[KMG]i?B|ms|s|%%)(?![\w]))"
                        % "|".join(sorted(set(map(str, (steps, checks, points))))))
    score = re.compile(r"score[\"']?\]?\s*(?:==|:|=)\s*(\d+\.\d+)|score.*==\s*\(\s*(\d+\.\d+)\s*,", re.I)

    def counted(line):
        return COUNTED.search(line) and [m for m in number.finditer(line) if not ORDINAL.search(line[:m.start()])
                                         and not line[m.end():].lstrip().startswith("단계")]

    def scored(line):
        return [v for pair in score.findall(line) for v in pair if v and float(v) not in (0.0, 100.0)]

    def ranged(line):
        return re.search(r"\bsteps?\b|number", line, re.I) and re.search(r"range\(1,\s*%d\)" % (steps + 1), line)

    return [("a count of the step list", counted), ("a score of the lab's points", scored),
            ("the range of the step numbers", ranged)]


def copies(path, text):
    """[(line number, what it copies, the line)] in one file's text."""
    found = []
    lines = text.splitlines()
    for what, rule in prose_rules():
        for match in rule.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append((line, what, lines[line - 1].strip()))
    if path.endswith(CODE):
        for number, line in enumerate(lines, 1):
            for what, rule in code_rules():
                if rule(line):
                    found.append((number, what, line.strip()))
    return found


def repository_files():
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=str(REPO), capture_output=True, check=True).stdout
    for path in sorted(p for p in listed.decode().split("\0") if p):
        if path.startswith(SKIPPED) or path in SKIPPED or not (REPO / path).is_file():
            continue
        try:
            yield path, (REPO / path).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # a binary file


def test_no_file_copies_a_count_total_or_list_of_the_step_list():
    found = ["%s:%d: %s: %s" % (path, line, what, text[:160])
             for path, text in repository_files() for line, what, text in copies(path, text)]
    assert found == [], "\n".join(found)


def steps_checks_points():
    steps, checks, points = counts()
    return steps, checks, points, word(EN, steps), word(KO, steps)


# Samples: what each rule must find (a copy) and what it must leave (no copy). Written from the counts now.
def copied():
    steps, checks, points, en, ko = steps_checks_points()
    ids, check_ids = registry.STEP_IDS, [c.id for c in registry.CHECKS]
    last_file = [f for s in registry.STEPS for f in s.files][-1]
    return [
        ("README.md", "A learner does %s kubectl steps:" % en),
        ("docs/guide.rst", "the %s tasks, the two common mistakes" % en.capitalize()),
        ("docs/guide.rst", "Carries out the %d steps" % steps),
        ("lab_text_ko.py", "'짧은 %s 단계에 걸쳐 KAI-Scheduler'" % ko),
        ("docs/guide.rst", "The learner guide prints %d/%d" % (checks, points)),
        ("docs/guide.rst", "graded %d/%d" % (points, points)),
        ("docs/guide.rst", "all %d checks of the lab" % checks),
        ("playbooks/solve.yml", "# and write %s last." % last_file),
        ("tests/unit/test_x.py", "@pytest.mark.parametrize(\"step\", range(1, %d))" % (steps + 1)),
        ("tests/unit/test_x.py", "assert [s.number for s in steps] == list(range(1, %d))" % (steps + 1)),
        ("tests/unit/test_x.py", "    assert result[\"counts\"] == {PASSED: %d, FAILED: 0}" % checks),
        ("tests/unit/test_x.py", "    assert len(grade[\"steps\"]) == %d" % steps),
        ("tests/unit/test_x.py", "    assert said[\"number\"] == %d" % steps),
        ("tests/unit/test_x.py", "    assert (result[\"score\"], result[\"points\"]) == (75.0, 21)"),
        ("molecule/t.py", "    assert len(checks) == %d, sorted(checks)" % checks),
        ("tests/unit/test_x.py", "ids = [%s]" % ", ".join('"%s"' % i for i in ids)),
        ("docs/guide.rst", "steps ``%s``, ``%s`` and ``%s``" % tuple(ids[:3])),
        ("docs/guide.rst", "Each check has an id: %s" % ", ".join("``%s``" % i for i in check_ids[:3])),
        ("docs/guide.rst", '   "passed": true, "score": 100.0, "points": %d, "max_points": %d,' % (points, points)),
        ("docs/guide.rst", '   "counts": {"passed": %d, "failed": 0, "unverified": 0},' % checks),
        ("molecule/t.py", "    assert grade['score'] == 82.1"),
    ]


def left_alone():
    steps, checks, points, en, ko = steps_checks_points()
    return [
        ("docs/guide.rst", "step %d's check reads the cluster" % steps),  # a step's number is no count
        ("docs/lab_ko.rst", "%d단계: GPU는 누가 쥐고 있나" % steps),
        ("docs/guide.rst", "32 min %d s; %d GPUs; %d access reviews" % (checks, steps, points)),
        ("tests/unit/test_x.py", "    assert result[\"score\"] == 100.0 and result[\"points\"] == 0"),
        ("tests/unit/test_x.py", "    assert answer[\"asked\"] == %d" % steps),
        ("tests/unit/test_x.py", "    with pytest.raises(ValueError): hand.hand_state(\"nope\")"),
        ("docs/guide.rst", "per step: %s 0.03, %s 0.5-1.0, %s 0.5" % tuple(registry.STEP_IDS[:3])),
        ("docs/guide.rst", "``%s`` and ``%s``" % tuple(registry.STEP_IDS[:2])),
        ("README.md", "| %d `%s` | Write `/root/gsb-kai/report.json` |" % (steps, registry.STEP_IDS[-1])),
        ("plugins/x.py", "# step %d reads fr-1 of step 7; Step %d, who holds the GPUs" % (steps, steps)),
        ("tests/unit/test_x.py", '    "duration": 0.1, "score": 100.0, "points": 0, "max_points": 0,'),
        ("plugins/x.py", "    number = int(value, %d) if isinstance(value, str) else int(value)" % steps),
        ("tests/unit/test_x.py", "Row 3 (steps 7 and %d): a pod's label" % steps),
        ("tests/unit/test_x.py", '    assert failed and c["message"].startswith("pods: 49, more than (%d MiB)"' % steps),
        ("tests/unit/test_x.py", '    + "".join("a%%d: &a%%d [x]" %% (i, i) for i in range(1, %d)))' % (steps + 1)),
    ]


@pytest.mark.parametrize("path, text", copied(), ids=[t for _p, t in copied()])
def test_each_rule_finds_a_copy(path, text):
    assert copies(path, text), text


@pytest.mark.parametrize("path, text", left_alone(), ids=[t for _p, t in left_alone()])
def test_a_number_that_counts_nothing_of_the_step_list_is_left_alone(path, text):
    assert copies(path, text) == [], text
