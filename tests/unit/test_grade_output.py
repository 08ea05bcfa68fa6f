# -*- coding: utf-8 -*-
"""JUnit XML and the console table of a grade."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.output import junit_xml, summary_table
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import FAILED, UNVERIFIED

from lab_testing import STEP_CHECKS, TOTAL_WEIGHT, checks, ids_with, solved, erased


def test_junit_xml_counts_failures_and_skips(grade, fixtures):
    for state, files in ((fixtures.finished(), fixtures.finished()["files"]), ({}, {}), erased(fixtures)):
        result, _ = grade(state, files)
        root = ET.fromstring(junit_xml(result).encode("utf-8"))
        assert root.tag == "testsuites"
        cases = root.findall("./testsuite/testcase")
        assert len(cases) == int(root.get("tests")) == len(STEP_CHECKS)
        assert int(root.get("failures")) == len(root.findall(".//failure")) == result["counts"][FAILED]
        assert int(root.get("skipped")) == len(root.findall(".//skipped")) == result["counts"][UNVERIFIED]
        assert [s.get("name") for s in root.findall("testsuite")][:2] == ["1 queues", "2 podgroup"]
        failed = dict((c.get("name"), c.find("failure")) for c in cases if c.find("failure") is not None)
        assert sorted(failed) == ids_with(result, FAILED)
        for cid, element in failed.items():
            assert element.get("message") == checks(result)[cid]["message"]


def test_junit_xml_escapes_learner_text(grade, fixtures):
    state, files = solved(fixtures)
    files["nolimit.txt"] = 'pending <because> "quota" & stuff\n'
    result, _ = grade(state, files)
    root = ET.fromstring(junit_xml(result).encode("utf-8"))
    failure = [c for c in root.iter("testcase") if c.get("name") == "nolimit.reason"][0].find("failure")
    assert 'pending <because> "quota" & stuff' in failure.get("message")


def test_summary_table(grade, fixtures):
    state, files = solved(fixtures)
    rows = summary_table(grade(state, files)[0])
    assert len(rows) == 1 + len(STEP_CHECKS) + 1 + 1
    total = TOTAL_WEIGHT
    assert rows[-1] == "score 100.0%% (%d/%d points), PASSED" % (total, total)
    rows = summary_table(grade({}, {})[0])
    assert rows[-1] == "score 0.0%% (0/%d points), NOT PASSED" % total
    assert sum(1 for r in rows if " FAIL " in r) == len(STEP_CHECKS)
