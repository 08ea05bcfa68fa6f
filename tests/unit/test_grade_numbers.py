# -*- coding: utf-8 -*-
"""Issue 18 rows 3, 7, 8 and 9, on the recorded solved sim lab (lab_states.finished(),
KAI v0.12.0) and the real v0.17.0 one (fixtures/kai-v0.17.0/hand-report):

- row 3: a pod of the lab namespace annotated gpu-fraction NaN, Infinity,
  1e999 or -1 (KAI's webhook admits them) is graded, never a crash;
- row 7: report.json numbers NaN, Infinity, huge or negative fail report.file
  with a message, and grade.json, the JUnit file, the record and the class
  files stay strict JSON;
- row 8: the time limit bounds the snapshot, and the ConfigMaps are listed
  once, not fetched per pod;
- row 9: text from the cluster reaches the solver's failure output as one
  printable line.
"""

from __future__ import annotations

import copy
import json
import time
from xml.dom.minidom import parseString

import pytest

from lab_testing import NS, checks, solved

from ansible_collections.gsb.kai_lab.plugins.module_utils.record import proofs as gr
from ansible_collections.gsb.kai_lab.plugins.module_utils.record import store
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.class_report import class_summary
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.class_report_files import to_json
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.output import junit_xml
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.grader import OUT_OF_TIME, Grader, Snapshot
from ansible_collections.gsb.kai_lab.plugins.module_utils.solving.lab_view import LabView
from ansible_collections.gsb.kai_lab.plugins.module_utils.solving.solver import StepFailed, StepRunner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import FAILED, PASSED, UNVERIFIED

BAD_FRACTIONS = ["NaN", "nan", "Infinity", "-Infinity", "1e999", "-1", "0", "2", "abc", ""]


def strict_json(text):
    """json.loads that refuses NaN and the infinities, as a browser's JSON.parse does."""
    def refuse(name):
        raise ValueError("not JSON: %s" % name)
    return json.loads(text, parse_constant=refuse)


def with_pod(state, name, annotations, namespace=NS):
    """state with one more pod, a copy of the recorded nl-1 with these annotations, Pending on no node."""
    state = copy.deepcopy(state)
    pod = copy.deepcopy([p for p in state["pods"] if kai.name_of(p) == "nl-1"][0])
    pod["metadata"].update({"name": name, "namespace": namespace, "uid": "uid-of-%s" % name,
                            "annotations": dict(annotations)})
    pod["spec"].pop("nodeName", None)
    pod["status"] = {"phase": "Pending"}
    state["pods"].append(pod)
    return state


# ---------------------------------------------------------------- row 3

@pytest.mark.parametrize("value", BAD_FRACTIONS)
def test_a_malformed_gpu_fraction_on_any_pod_is_graded_not_a_crash(grade, fixtures, value):
    state, files = solved(fixtures)
    result, _ = grade(with_pod(state, "x", {kai_gpu.FRACTION_ANNOTATION: value}), files)
    # The learner's extra pod changes nothing the lab's checks look at: still all passed.
    assert result["passed"], [(c["id"], c["message"]) for c in checks(result).values() if c["status"] != PASSED]
    strict_json(json.dumps(result, allow_nan=False))


def test_gpu_numbers_of_the_domain_never_raise():
    for value in ("NaN", "Infinity", "-Infinity", "1e999", float("nan"), float("inf")):
        pod = {"metadata": {"annotations": {kai_gpu.FRACTION_ANNOTATION: value}},
               "spec": {"containers": [{"resources": {"limits": {kai_gpu.GPU_RESOURCE: value}}}]}}
        assert kai_gpu.gpu_limit(pod) == 0
        assert kai_gpu.gpu_fraction(pod) is value  # not a number: the text as written
    assert kai.number("2") == 2 and kai.number("0.5") == 0.5 and kai.whole_number("-1") is None


# ---------------------------------------------------------------- row 7

@pytest.mark.parametrize("text, named", [
    ('NaN', "NaN"), ('Infinity', "Infinity"), ('-Infinity', "-Infinity"), ('1e999', "inf"),
    ('-1', "-1"), ('1e300', "1e+300"), ('1' + '0' * 40, "1" + "0" * 20), ('2.5', "2.5"),
])
def test_report_numbers_that_are_no_count_fail_report_file(grade, fixtures, tmp_path, text, named):
    state, files = solved(fixtures)
    report = json.loads(files["report.json"])
    files["report.json"] = json.dumps(report).replace('"gpu_allocated": %d' % report["gpu_allocated"],
                                                      '"gpu_allocated": %s' % text)
    assert text in files["report.json"]
    result, _ = grade(state, files)
    graded = checks(result)
    check = graded["report.file"]
    assert check["status"] == FAILED, check
    if text in ("NaN", "Infinity", "-Infinity"):
        # Not JSON at all (RFC 8259): the file is refused as JSON.
        assert "report.json cannot be read as JSON" in check["message"] and text in check["message"]
    else:
        assert "gpu_allocated must be a number, a whole one from 0 to 100000" in check["message"]
        assert named in check["message"]
    # Every file a grade is written to is strict JSON / XML.
    grade_json = json.dumps(result, indent=2, ensure_ascii=False, sort_keys=True, allow_nan=False)
    strict_json(grade_json)
    parseString(junit_xml(result).encode("utf-8"))
    record, _ = gr.remember(store.empty(NS), result)
    path = store.save(str(tmp_path / "records" / "kai-lab.json"), record)
    strict_json(open(path).read())
    summary = class_summary({"learner1": {"changed": False, "grade": result}}, "2026-12-01T00:00:00Z")
    strict_json(to_json(summary))


def test_evidence_with_nan_is_kept_as_text_in_every_grade_file(grade, fixtures):
    """A check's evidence quoting a learner's 1e999 (read by Python as inf) stays strict JSON."""
    state, files = solved(fixtures)
    report = json.loads(files["report.json"])
    files["report.json"] = json.dumps(report).replace('"reservation_pods": %d' % report["reservation_pods"],
                                                      '"reservation_pods": 1e999')
    result, _ = grade(state, files)
    values = checks(result)["report.values"]
    assert values["status"] == FAILED and values["evidence"]["report"]["reservation_pods"] == "inf"
    strict_json(json.dumps(result, allow_nan=False))


# ---------------------------------------------------------------- row 8

class CountingCluster(object):
    """A FakeCluster that counts its calls and takes `delay` seconds for each."""

    def __init__(self, inner, delay=0.0):
        self.inner = inner
        self.delay = delay
        self.calls = []

    def get(self, *args, **kwargs):
        self.calls.append(("get",) + args[:2])
        time.sleep(self.delay)
        return self.inner.get(*args, **kwargs)

    def list(self, *args, **kwargs):
        self.calls.append(("list",) + args[:2])
        time.sleep(self.delay)
        return self.inner.list(*args, **kwargs)


def test_configmaps_are_listed_once_however_many_fraction_pods(fake_cluster, fixtures):
    state, _files = solved(fixtures)
    fr1 = [p for p in state["pods"] if kai.name_of(p) == "fr-1"][0]
    for n in range(400):
        pod = copy.deepcopy(fr1)
        pod["metadata"].update({"name": "many-%d" % n, "uid": "uid-%d" % n})
        state["pods"].append(pod)
    cluster = CountingCluster(fake_cluster(state))
    snapshot = Snapshot(cluster, NS, "/nonexistent")
    assert snapshot.error is None
    # fr-1's device is still read from its ConfigMap.
    assert kai_gpu.resolve_env(snapshot.pod("fr-1"), snapshot.configmaps) == state["files"]["report.json"].split(
        '"shared_gpu": "')[1].split('"')[0]
    for pod in snapshot.pods:
        kai_gpu.resolve_env(pod, snapshot.configmaps)
    assert [c for c in cluster.calls if c[2] == "ConfigMap"] == [("list", "v1", "ConfigMap")]
    assert len(cluster.calls) == 6


def test_the_time_limit_bounds_the_snapshot(fake_cluster, fixtures, tmp_path):
    """An API server answering each call in 0.3 s with a 0.5 s limit: the snapshot stops, the grade says why, in time."""
    state, files = solved(fixtures)
    workdir = fixtures.write_files(tmp_path / "w", files)
    cluster = CountingCluster(fake_cluster(state), delay=0.3)
    started = time.monotonic()
    deadline = started + 0.5
    snapshot = Snapshot(cluster, NS, workdir, deadline=deadline)
    result = Grader(snapshot, lang="en", deadline=deadline, time_limit=0.5).run()
    assert time.monotonic() - started < 1.5 and len(cluster.calls) < 6
    assert snapshot.error == OUT_OF_TIME
    graded = checks(result)
    assert graded["podgroup.manifest"]["status"] == PASSED  # the learner's files alone: always checked
    assert graded["podgroup.running"]["status"] in (FAILED, UNVERIFIED)
    assert "time limit" in graded["podgroup.running"]["message"]


# ---------------------------------------------------------------- row 9

FORGED_LINES = "fine\n\nTASK [Grade every step] ***\nok: [localhost] => PASSED\r\x1b[2K"


def test_event_messages_reach_the_solvers_output_as_one_line(fake_cluster, fixtures):
    """Step 3's nl-1 as recorded, with its event's message holding line breaks and an escape."""
    state = fixtures.after("nolimit")
    for event in state["events"]:
        event["message"] = FORGED_LINES + event.get("message", "")
    for podgroup in state["podgroups"]:
        for condition in (podgroup.get("status") or {}).get("schedulingConditions") or []:
            for reason in condition.get("reasons") or []:
                reason["message"] = FORGED_LINES
    view = LabView(fake_cluster(state), NS)
    state_of = view.pod_state("nl-1")
    assert state_of["last_events"]
    cause = view.diagnose("nl-1")
    assert "TASK [Grade every step]" in cause
    for text in state_of["last_events"] + [cause]:
        assert "\n" not in text and "\r" not in text and "\x1b" not in text, text
    runner = StepRunner(fake_cluster(state), NS, "/nonexistent", "v0.12.0")
    runner.step = type("S", (), {"id": "nolimit", "number": 3})()
    failure = StepFailed(runner.step, "nl-1 Pending", view.pod_state("nl-1"), view.diagnose("nl-1"))
    assert "\n" not in str(failure) and "\x1b" not in str(failure)
    # What Ansible prints of the module's failure: msg, likely_cause and each of observed's events.
    for line in [str(failure), failure.cause] + list(failure.observed["last_events"]):
        assert "\n" not in line and "\x1b" not in line, line
