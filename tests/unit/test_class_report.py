# -*- coding: utf-8 -*-
"""grading/class_report.py and grading/class_report_files.py: the class summary of real grades (recorded from three sims
graded in one run by tests/class.sh), an unreachable host as a row, and a
learner's hostile text inert in the instructor's browser and spreadsheet."""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import class_report_files
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.class_report import class_summary, console_lines
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.class_report_files import (
    to_csv, to_html, to_junit, write_summary)

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "class")
SCRIPT = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>"
FORMULA = "=cmd|' /C calc'!A0"
UNREACHABLE = {"unreachable": True, "changed": False,
               "msg": "Task failed: Failed to connect to the host via ssh: ssh: connect to host 127.0.0.1 port 1: "
                      "Connection refused"}


def recorded(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return json.load(handle)


@pytest.fixture
def grades():
    """The registered results of the grade task for a class of four, as Ansible hands them over."""
    return {
        "learner1": {"changed": False, "grade": recorded("grade-solved.json")},
        "learner2": {"changed": False, "grade": recorded("grade-blank.json")},
        "learner3": {"changed": False, "grade": recorded("grade-mistake.json")},
        "learner4": copy.deepcopy(UNREACHABLE),
    }


@pytest.fixture
def summary(grades):
    return class_summary(grades, "2026-12-01T09:00:00Z")


def recorded_steps():
    """The step ids of the recorded class's grades (fixtures/class: graded on a day's step list), in order."""
    return [s["id"] for s in recorded("grade-solved.json")["steps"]]


def recorded_checks():
    return [c["id"] for s in recorded("grade-solved.json")["steps"] for c in s["checks"]]


def rows(summary):
    return dict((row["learner"], row) for row in summary["learners"])


def test_rows_of_a_class_solved_blank_mistake_unreachable(summary):
    by_learner = rows(summary)
    assert [r["learner"] for r in summary["learners"]] == ["learner1", "learner2", "learner3", "learner4"]
    assert summary["counts"] == {"learners": 4, "graded": 3, "passed": 1, "unreachable": 1, "not_graded": 0}
    assert by_learner["learner1"]["passed"] and by_learner["learner1"]["score"] == 100.0
    assert by_learner["learner2"]["score"] == 0.0
    assert all(s["status"] != "passed" for s in by_learner["learner2"]["steps"])
    assert [(s["id"], s["status"]) for s in by_learner["learner3"]["steps"] if s["status"] != "passed"] == [
        ("nolimit", "failed")]
    assert by_learner["learner4"]["status"] == "unreachable"
    assert "port 1: Connection refused" in by_learner["learner4"]["message"]
    # The graded steps, in lab order, as columns.
    assert [s["id"] for s in summary["steps"]] == recorded_steps() and "nolimit" in recorded_steps()


def test_a_host_that_stopped_before_its_grade_or_failed_it_is_a_row():
    summary = class_summary({"a": {}, "b": {"failed": True, "msg": "kubeconfig not found"}}, "t")
    assert [(r["learner"], r["status"], r["message"]) for r in summary["learners"]] == [
        ("a", "not_graded", "not graded: the host stopped before the grade task"),
        ("b", "not_graded", "grade failed: kubeconfig not found")]
    assert summary["steps"] == []
    assert "<td class=\"not_graded\" colspan=\"3\">grade failed: kubeconfig not found</td>" in to_html(summary)


def test_the_recorded_mistake_quotes_the_learners_file(summary):
    failing = [c for s in rows(summary)["learner3"]["steps"] for c in s["failing"]]
    assert [c["id"] for c in failing] == ["nolimit.reason"]
    assert "<script>" in failing[0]["message"] and "=cmd|" in failing[0]["message"]


class _Elements(HTMLParser):
    """The elements and attributes a browser would build from the page."""

    def __init__(self):
        HTMLParser.__init__(self)
        self.tags = []
        self.attributes = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes.extend(name for name, _ in attrs)

    def handle_data(self, data):
        self.text.append(data)


def parse(page):
    parser = _Elements()
    parser.feed(page)
    return parser


def test_html_is_one_page_with_a_cell_per_learner_and_step(summary):
    page = to_html(summary)
    parsed = parse(page)
    assert parsed.tags.count("tr") == 1 + 4
    # Steps and environment passed: learner1 every step + 1, learner2 (blank)
    # only its environment, learner3 all steps but one + 1.
    steps = len(recorded_steps())
    assert page.count('<td class="passed">passed</td>') == (steps + 1) + 1 + steps
    assert page.count('<td class="failed"><details') == 1 + steps   # learner3's nolimit, each of learner2's steps
    assert 'colspan="%d">host could not be reached' % (steps + 3) in page
    # Self-contained: nothing is fetched, and no script may run at all.
    assert not [t for t in parsed.tags if t in ("script", "link", "img", "iframe", "object", "embed")]
    assert "default-src 'none'" in page


def test_html_failing_cell_has_its_messages_on_hover_and_click(summary):
    page = to_html(summary)
    row3 = page.split("<th>learner3</th>", 1)[1].split("</tr>", 1)[0]
    cell = row3.split('<td class="failed"><details', 1)[1].split("</td>", 1)[0]
    cell = "<details" + cell
    assert cell.startswith('<details title="nolimit.reason: nolimit.txt: does not hold')
    assert "<summary>failed</summary>" in cell


def test_html_escapes_a_learners_script_and_markup(summary):
    page = to_html(summary)
    parsed = parse(page)
    assert "script" not in parsed.tags and "img" not in parsed.tags
    assert not [a for a in parsed.attributes if a.startswith("on")]
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in page
    # The text is shown as text: the instructor sees what the learner wrote.
    assert any(SCRIPT in text for text in parsed.text)


def test_html_escapes_hostile_text_in_every_field_a_learner_controls(grades):
    grade = grades["learner3"]["grade"]
    check = grade["steps"][0]["checks"][0]
    check.update(status="failed", message=SCRIPT, hint='"><script>alert(2)</script>',
                 evidence={"pod": "</pre><script>alert(3)</script>", "file": SCRIPT})
    grade["steps"][0]["id"] = '"><script>alert(4)</script>'
    page = to_html(class_summary({'"><u>x</u>': grades["learner3"]}, "t"))
    parsed = parse(page)
    assert "script" not in parsed.tags and "u" not in parsed.tags
    assert not [a for a in parsed.attributes if a.startswith("on")]


def csv_cells(text):
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def test_csv_has_a_row_per_learner_with_score_and_each_step(summary):
    table = list(csv.reader(io.StringIO(to_csv(summary))))
    assert table[0][:6] == ["learner", "status", "score", "points", "max_points", "passed"]
    assert table[0][6:6 + len(recorded_steps())] == recorded_steps()
    by_learner = dict((row[0], dict(zip(table[0], row))) for row in table[1:])
    assert sorted(by_learner) == ["learner1", "learner2", "learner3", "learner4"]
    assert by_learner["learner1"]["score"] == "100.0" and by_learner["learner1"]["passed"] == "true"
    assert by_learner["learner3"]["nolimit"] == "failed" and by_learner["learner3"]["queues"] == "passed"
    assert by_learner["learner3"]["failed_checks"].startswith("nolimit.reason: nolimit.txt: does not hold")
    assert by_learner["learner4"]["status"] == "unreachable" and by_learner["learner4"]["nolimit"] == ""


def test_csv_no_cell_a_spreadsheet_would_evaluate(grades):
    grades[FORMULA] = {"failed": True, "msg": FORMULA}
    grades["@SUM(1+1)*cmd|' /C calc'!A0"] = copy.deepcopy(UNREACHABLE)
    grade = grades["learner3"]["grade"]
    grade["steps"][2]["id"] = "+cmd|' /C calc'!A0"
    grade["steps"][3]["checks"][0].update(status="failed", message=FORMULA)
    text = to_csv(class_summary(grades, "t"))
    cells = csv_cells(text)
    assert [c for c in cells if "calc" in c], "the hostile text must still be shown"
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    assert not [c for c in cells if c.lstrip()[:1] in ("=", "+", "-", "@")]
    assert "'" + FORMULA in cells
    # One physical line per row: a learner's newline cannot start a new row.
    grade["steps"][3]["checks"][0]["message"] = "x\n=1+1"
    assert len(to_csv(class_summary(grades, "t")).split("\r\n")) == 1 + len(grades) + 1


def test_junit_has_a_testsuite_per_learner(summary):
    root = ET.fromstring(to_junit(summary))
    suites = dict((s.get("name"), s) for s in root.findall("testsuite"))
    assert sorted(suites) == ["learner1", "learner2", "learner3", "learner4"]
    assert suites["learner1"].get("failures") == "0" and int(suites["learner1"].get("tests")) >= len(recorded_checks())
    assert suites["learner3"].get("failures") == "1"
    failure = suites["learner3"].find("testcase[@name='nolimit.reason']/failure")
    assert "<script>" in failure.get("message")
    assert suites["learner4"].get("errors") == "1"
    assert "port 1" in suites["learner4"].find("testcase/error").get("message")
    assert suites["learner1"][0].tag == "properties"


def test_junit_survives_characters_xml_cannot_carry(grades):
    grades["learner3"]["grade"]["steps"][2]["checks"][1]["message"] = u"bell \x07 nul \x00 end"
    root = ET.fromstring(to_junit(class_summary(grades, "t")))
    failure = root.find("testsuite[@name='learner3']/testcase[@name='nolimit.reason']/failure")
    assert failure.get("message") == u"bell \ufffd nul \ufffd end"


def test_files_written_and_json_round_trips(summary, tmp_path):
    paths = write_summary(summary, str(tmp_path / "class-grade"))
    assert [os.path.basename(p) for p in paths] == ["class.json", "class.csv", "class-junit.xml", "class.html"]
    with open(paths[0]) as handle:
        assert json.load(handle) == summary
    assert not [p for p in os.listdir(str(tmp_path / "class-grade")) if p.endswith((".tmp", ".partial"))]


def test_a_planted_temporary_symlink_is_not_followed(summary, tmp_path):
    # The old writer went through a fixed "class.json.tmp": a link planted there
    # made the instructor's run overwrite its target.
    out = tmp_path / "class-grade"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    for name in ("class.json", "class.csv", "class-junit.xml", "class.html"):
        os.symlink(str(victim), str(out / (name + ".tmp")))
    os.symlink(str(victim), str(out / "class.html"))
    write_summary(summary, str(out))
    assert victim.read_text() == "keep me"
    assert not (out / "class.html").is_symlink()
    assert oct((out / "class.json").stat().st_mode & 0o777) == oct(0o600)


def test_the_class_files_are_private_to_the_instructor_by_default(summary, tmp_path):
    """Issue 18 row 10: every learner's grades were 0644 in a 0755 directory,
    readable by every local user. Now the directory is 0700 and the files 0600,
    whatever the umask; other modes only when asked for."""
    old_umask = os.umask(0o002)
    try:
        paths = write_summary(summary, str(tmp_path / "class-grade"))
    finally:
        os.umask(old_umask)
    assert oct((tmp_path / "class-grade").stat().st_mode & 0o777) == oct(0o700)
    assert [oct(os.stat(p).st_mode & 0o777) for p in paths] == [oct(0o600)] * 4
    shared = write_summary(summary, str(tmp_path / "shared"), mode=0o640, directory_mode=0o750)
    assert oct((tmp_path / "shared").stat().st_mode & 0o777) == oct(0o750)
    assert {oct(os.stat(p).st_mode & 0o777) for p in shared} == {oct(0o640)}


def test_evidence_of_a_large_file_is_cut(grades):
    check = grades["learner3"]["grade"]["steps"][2]["checks"][1]
    check["evidence"] = {"file": "A" * 50000}
    page = to_html(class_summary(grades, "t"))
    assert "A" * class_report_files.EVIDENCE_LIMIT not in page and " ..." in page
    assert len(page) < 60000


def test_console_lines_one_per_learner(summary):
    lines = console_lines(summary)
    assert len(lines) == 4
    assert lines[0].startswith("learner1") and "PASSED" in lines[0]
    assert "not passed: nolimit failed" in lines[2]
    assert "could not be reached" in lines[3]
