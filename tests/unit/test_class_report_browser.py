# -*- coding: utf-8 -*-
"""class.html of the recorded class in headless Chromium: it renders a table,
no script of a learner runs (the page's title stays), and the screenshots are
kept as tests/output/class-report*.png for a person to look at."""

from __future__ import annotations

import os
import sys

import pytest

from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.class_report import class_summary
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.class_report_files import write_summary

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, ".."))
import browse  # noqa: E402  pylint: disable=wrong-import-position

from test_class_report import UNREACHABLE, recorded  # noqa: E402  pylint: disable=wrong-import-position

OUTPUT = os.path.join(HERE, "..", "output")


@pytest.fixture
def chromium():
    if browse.chromium() is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed; .ci/run installs Debian's chromium")
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")


def test_class_page_in_headless_chromium(chromium, tmp_path):
    grades = {"learner1": {"grade": recorded("grade-solved.json")},
              "learner2": {"grade": recorded("grade-blank.json")},
              "learner3": {"grade": recorded("grade-mistake.json")},
              "learner4": dict(UNREACHABLE)}
    paths = write_summary(class_summary(grades, "2026-12-01T09:00:00Z"), str(tmp_path))
    os.makedirs(OUTPUT, exist_ok=True)
    screenshot = os.path.join(OUTPUT, "class-report.png")
    dom = browse.browse(paths[-1], screenshot, mark="pwned")
    assert dom.count("<tr>") == 5
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in dom
    assert os.path.getsize(screenshot) > 10000
    # The same page with every failing cell opened, as after clicks: the
    # learner's <script> shows as text and still does not run.
    opened = str(tmp_path / "class-open.html")
    with open(paths[-1]) as page, open(opened, "w") as out:
        out.write(page.read().replace("<details ", "<details open "))
    dom = browse.browse(opened, os.path.join(OUTPUT, "class-report-open.png"), mark="pwned")
    assert "<details open=" in dom
