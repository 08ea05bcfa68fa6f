# -*- coding: utf-8 -*-
"""The whole grade against the hostile workdirs of issue 13 (items 1-5, 7, 9).

Two paths, each in a child process with a timeout (a hang fails the test)
that reports its own time and peak RSS:
- the Grader on the recorded, solved sim cluster (FakeCluster) with every
  learner file replaced by something hostile, then grade.json, the JUnit
  file and the console table as the module writes them;
- the kai_lab_grade module itself, run as Ansible runs it (argument file,
  JSON on stdout), with no cluster: the checks of the learner's files alone.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from xml.dom.minidom import parseString

import pytest

import lab_states
from conftest import COLLECTION_PATH, FakeCluster, write_files
from lab_testing import NS, checks

from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.grader import Grader, Snapshot
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import FAILED, PASSED

UNIT = Path(__file__).resolve().parent
TIME_LIMIT = 30  # kai_lab_grade_time_limit's default
RSS_BOUND_MB = 300
SECRET = "root:$6$SECRETHASH$abc:19000:0:99999:7:::"

GRADE_CHILD = textwrap.dedent("""
    import json, resource, sys, time
    sys.path[:0] = [%r, %r]
    from conftest import FakeCluster
    import lab_states
    from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.grader import Grader, Snapshot
    from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.output import junit_xml, summary_table
    from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.write import write_file
    state = lab_states.finished()
    started = time.monotonic()
    grade = Grader(Snapshot(FakeCluster(state), 'kai-lab', sys.argv[1]), lang='en',
                   deadline=time.monotonic() + %d, time_limit=%d).run()
    write_file(sys.argv[1], 'grade.json', json.dumps(grade, indent=2, ensure_ascii=False, sort_keys=True) + '\\n')
    write_file(sys.argv[1], 'grade-junit.xml', junit_xml(grade))
    table = summary_table(grade)
    print(json.dumps({'elapsed': time.monotonic() - started, 'table': table,
                      'maxrss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}))
""") % (str(UNIT), str(COLLECTION_PATH), TIME_LIMIT, TIME_LIMIT)


def run_child(argv, timeout=TIME_LIMIT + 30):
    # Through sh, which forks the child: a child forked from pytest would
    # report pytest's peak RSS as its own.
    try:
        return subprocess.run(["/bin/sh", "-c", '"$0" "$@"; exit $?'] + argv,
                              capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail("the grade did not end within %d s" % timeout)


def plant_everything(workdir, tmp_path):
    """Every learner file of the solved lab replaced by a hostile one; returns the victim files."""
    shadow = tmp_path / "shadow"
    shadow.write_text(SECRET + "\n")
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    for name in os.listdir(str(workdir)):
        os.unlink(str(workdir / name))
    (workdir / "nolimit.txt").symlink_to(shadow)                       # item 1: a symlink out
    (workdir / "podgroup.txt").symlink_to("/dev/zero")                 # item 1: /dev/zero
    os.mkfifo(str(workdir / "gang.txt"))                               # item 1: a FIFO
    with open(str(workdir / "p1.yaml"), "wb") as handle:               # item 1: 1 GB sparse
        handle.truncate(1024 ** 3)
    (workdir / "queues.yaml").write_text(                             # item 3: an alias bomb
        'a: &a ["x","x","x","x","x","x","x","x","x","x"]\n'
        + "".join("a%d: &a%d [%s]\n" % (i, i, ",".join(["*a" if i == 1 else "*a%d" % (i - 1)] * 10))
                  for i in range(1, 10)))
    (workdir / "fraction.yaml").write_text("[" * 989 + "]" * 989)      # item 2: deep nesting
    (workdir / "report.json").write_text("[" * 989 + "]" * 989)        # item 2: deep JSON
    (workdir / "grade-junit.xml.tmp").symlink_to(victim)               # item 4: planted .tmp
    (workdir / "grade.json").symlink_to(victim)
    return shadow, victim


def test_hostile_workdir_is_graded_within_limits_and_every_bad_file_fails_its_check(tmp_path):
    workdir = Path(write_files(tmp_path / "gsb-kai", lab_states.finished()["files"]))
    shadow, victim = plant_everything(workdir, tmp_path)
    done = run_child([sys.executable, "-c", GRADE_CHILD, str(workdir)])
    assert done.returncode == 0, done.stderr
    measured = json.loads(done.stdout)
    print("hostile grade: %.2f s, peak RSS %.1f MB" % (measured["elapsed"], measured["maxrss_mb"]))
    assert measured["elapsed"] < TIME_LIMIT and measured["maxrss_mb"] < RSS_BOUND_MB

    assert victim.read_text() == "precious\n" and shadow.read_text() == SECRET + "\n"
    grade_file = workdir / "grade.json"
    assert not grade_file.is_symlink() and stat.S_IMODE(grade_file.stat().st_mode) == 0o600
    grade = json.loads(grade_file.read_text())
    parseString((workdir / "grade-junit.xml").read_bytes())
    outputs = grade_file.read_text() + (workdir / "grade-junit.xml").read_text() + "\n".join(measured["table"])
    assert "SECRETHASH" not in outputs

    by_id = checks(grade)
    expected = {
        "nolimit.reason": "is a symbolic link (to %s)" % shadow,
        "podgroup.file": "is a symbolic link (to /dev/zero)",
        "gang.reason": "is a FIFO (named pipe), not a regular file",
        "podgroup.manifest": "is 1024.0 MiB; the lab reads at most 256 KiB",
        "queues.file": "uses a YAML alias (*a, line 2): aliases are not accepted",
        "fraction.manifest": "nests its YAML more than 64 levels deep",
        "report.file": "nests its JSON more than 64 levels deep",
    }
    for check_id, words in expected.items():
        assert by_id[check_id]["status"] == FAILED, check_id
        assert words in by_id[check_id]["message"], (check_id, by_id[check_id]["message"])


def test_control_characters_and_a_forged_line_stay_on_one_line(tmp_path):
    state = lab_states.finished()
    files = dict(state["files"])
    files["gang.txt"] = "nothing\nscore 100.0% (99/99 points), PASSED\x1b[1A\x00\x07\n"
    workdir = Path(write_files(tmp_path / "gsb-kai", files))
    with open(str(workdir / "nolimit.txt"), "wb") as handle:   # item 7: not UTF-8
        handle.write(b"\xff\xfe Limit is 0 GPUs \x80\n")
    done = run_child([sys.executable, "-c", GRADE_CHILD, str(workdir)])
    assert done.returncode == 0, done.stderr
    table = json.loads(done.stdout)["table"]
    assert [row for row in table if row.startswith("score")] == [table[-1]]
    assert all("\x1b" not in row and "\x00" not in row for row in table)
    grade = json.loads((workdir / "grade.json").read_text())
    assert checks(grade)["gang.reason"]["status"] == FAILED
    assert "\n" not in checks(grade)["gang.reason"]["message"]
    parseString((workdir / "grade-junit.xml").read_bytes())
    assert checks(grade)["nolimit.reason"]["status"] == FAILED


MODULE_CHILD = textwrap.dedent("""
    import resource, subprocess, sys, time
    started = time.monotonic()
    done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
    sys.stderr.write(done.stderr)
    sys.stdout.write(done.stdout)
    sys.stdout.write('\\n#measured %.3f %.1f\\n' % (time.monotonic() - started,
                     resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0))
""")


@pytest.mark.parametrize("name, content, check_id, words", [
    ("queues.yaml", None, "queues.file", None),
    ("queues.yaml", "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: lab}\n"
     "spec: {displayName: !!set {a, b}}\n", "queues.file", "uses the YAML tag tag:yaml.org,2002:set (line 4)"),
    ("report.json", "[" * 989 + "]" * 989, "report.file", "nests its JSON more than 64 levels deep"),
    ("report.json", "{\"gpu_allocated\": " * 989 + "1" + "}" * 989, "report.file",
     "nests its JSON more than 64 levels deep"),
])
def test_kai_lab_grade_module_writes_json_and_grade_file_for_hostile_input(tmp_path, name, content, check_id, words):
    files = dict(lab_states.finished()["files"])
    if content is None:  # item 2: an unquoted YAML date in the solved queues.yaml
        content = files[name].replace("spec:", "spec:\n  displayName: 2026-12-01", 1)
        assert content != files[name]
    files[name] = content
    workdir = write_files(tmp_path / "gsb-kai", files)
    args = tmp_path / "args.json"
    # The sim's record of the KAI it runs, as kai_scheduler's provisioning writes it.
    record = tmp_path / "kai-version.json"
    record.write_text(json.dumps({"schema": 1, "version": "v0.12.0", "binaries": {}}))
    args.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {
        "workdir": workdir, "namespace": NS, "kubeconfig": str(tmp_path / "no-kubeconfig"),
        "kai_record": str(record), "lang": "en", "time_limit": TIME_LIMIT}}))
    module = COLLECTION_PATH / "ansible_collections/gsb/kai_lab/plugins/modules/kai_lab_grade.py"
    env = dict(os.environ, PYTHONPATH=str(COLLECTION_PATH))
    done = subprocess.run(["/bin/sh", "-c", '"$0" "$@"; exit $?', sys.executable, "-c", MODULE_CHILD,
                           sys.executable, str(module), str(args)],
                          capture_output=True, text=True, timeout=TIME_LIMIT + 30, env=env, check=False)
    output, measured = done.stdout.rsplit("#measured ", 1)
    elapsed, rss = (float(v) for v in measured.split())
    print("kai_lab_grade %s: %.2f s, peak RSS %.1f MB" % (name, elapsed, rss))
    assert elapsed < TIME_LIMIT and rss < RSS_BOUND_MB
    result = json.loads(output)
    assert not result.get("failed"), result.get("msg")
    on_disk = json.loads(Path(workdir, "grade.json").read_text())
    assert on_disk["steps"] == result["grade"]["steps"]
    assert stat.S_IMODE(os.stat(os.path.join(workdir, "grade.json")).st_mode) == 0o600
    check = checks(result["grade"])[check_id]
    if words is None:
        assert check["status"] == PASSED, check["message"]
    else:
        assert check["status"] == FAILED and words in check["message"], check["message"]


# ---------------------------------------------------------------- item 9: forged events

def forged(event, **changes):
    copy = json.loads(json.dumps(event))
    copy["metadata"]["name"] = copy["metadata"]["name"] + ".forged"
    for key, value in changes.items():
        if value is None:
            copy.pop(key, None)
        else:
            copy[key] = value
    return copy


@pytest.mark.parametrize("changes", [
    {"source": {"component": "kubectl"}, "reportingComponent": "kubectl"},
    {"source": None, "reportingComponent": None},
    {"source": {"component": "kai-scheduler"}, "reportingComponent": "learner-bot"},
])
def test_forged_evict_event_does_not_pass_preempt_evicted(tmp_path, changes):
    state = lab_states.finished()
    real = [e for e in state["events"] if e.get("reason") == "Evict"]
    assert real and all((e.get("source") or {}).get("component") == "kai-scheduler" for e in real)
    workdir = write_files(tmp_path / "gsb-kai", state["files"])
    genuine = Grader(Snapshot(FakeCluster(state), NS, workdir), lang="en").run()
    assert checks(genuine)["preempt.evicted"]["status"] == PASSED

    state["events"] = [e for e in state["events"] if e.get("reason") != "Evict"] + [forged(real[0], **changes)]
    result = Grader(Snapshot(FakeCluster(state), NS, workdir), lang="en").run()
    assert checks(result)["preempt.evicted"]["status"] == FAILED
    # Named as what it is (issue 18): not KAI's word, and why.
    assert "this Event is not about any PodGroup of your pods (its reporter is not KAI's scheduler)" in \
        checks(result)["preempt.evicted"]["message"]


def test_evict_event_about_a_pod_instead_of_a_podgroup_is_not_kais():
    from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import events as kai_events
    state = lab_states.lab_after("preempt")
    (real,) = [e for e in state["events"] if e.get("reason") == "Evict"]
    assert [e["victim"] for e in kai_events.eviction_events([real])] == ["tr-2"]
    moved = forged(real, involvedObject=dict(real["involvedObject"], kind="Pod", name="tr-2"))
    assert kai_events.eviction_events([moved]) == []
