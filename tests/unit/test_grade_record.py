# -*- coding: utf-8 -*-
"""record/proofs.py and record/store.py: the grader's record of what it verified.

It is kept outside the learner's files, written atomically with mode 0600,
and a missing, corrupt, foreign or hostile record never breaks a grade: it
counts as empty and the grade says why.
"""

from __future__ import annotations

import calendar
import json
import multiprocessing
import os
import re
import stat
import time

import pytest

import kai_v017 as hand
from ansible_collections.gsb.kai_lab.plugins.module_utils.record import proofs as gr
from ansible_collections.gsb.kai_lab.plugins.module_utils.record import store
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry as steps

NS = "kai-lab"
HANGUL = re.compile(u"[\uac00-\ud7a3]")
NOW = calendar.timegm((2026, 12, 1, 10, 42, 0))


def evict_event():
    return [e for e in hand.hand_state("preempt")["events"] if e["reason"] == "Evict"][0]


def gang_podgroup():
    return [pg for pg in hand.hand_state("gang")["podgroups"] if kai.name_of(pg).startswith("pg-gang-")][0]


def a_grade(*checks):
    return {"steps": [{"id": c["id"].split(".")[0], "checks": [c]} for c in checks]}


def passed(check_id, evidence):
    return {"id": check_id, "status": "passed", "evidence": evidence}


def evict_check():
    proof = gr.proof_from_event(evict_event())
    return passed("preempt.evicted", {"victim": "tr-2", gr.PROOF_KEY: [proof],
                                      gr.SUBJECTS_KEY: {"bd-1": "0c4721cb-3674-4527-bafa-f9b79a64c05e"}})


# ---------------------------------------------------------------- proofs of real v0.17.0 objects

def test_proof_from_a_real_kai_event_keeps_its_identity():
    proof = gr.proof_from_event(evict_event())
    assert proof == {
        "kind": "event", "uid": "6fa7d701-2e31-436a-8fd6-b29dc125e168", "reason": "Evict",
        "message": "Pod kai-lab/tr-2 was preempted by higher priority workload "
                   "kai-lab/pg-bd-1-0c4721cb-3674-4527-bafa-f9b79a64c05e",
        "source": "kai-scheduler", "time": "2026-12-01T06:43:39Z",
        "object": "PodGroup/pg-tr-2-02f5c0ab-b593-4c84-b792-9f1648f6f512",
        "object_uid": "dd297bb4-5a71-4883-813d-a801e3e6b673"}


def test_proof_from_a_real_gang_condition():
    podgroup = gang_podgroup()
    reason = [r for r in kai.scheduling_reasons(podgroup) if kai.GANG_MESSAGE_MARK in r["message"]][0]
    proof = gr.proof_from_condition(podgroup, reason)
    assert proof["kind"] == "condition" and proof["reason"] == "PodSchedulingErrors"
    assert proof["time"] == "2026-12-01T06:43:23Z"
    assert proof["object"] == "PodGroup/pg-gang-32a0d145-93cf-44a3-93e7-4208aeaffe55"
    assert "while 3 are required for gang scheduling" in proof["message"]


# ---------------------------------------------------------------- where it lives

def test_record_path_is_per_namespace_under_the_state_dir(tmp_path):
    assert store.record_path(str(tmp_path), NS) == str(tmp_path / "grade-records" / "kai-lab.json")
    for bad in ("../etc", "Kai-Lab", "", None, "a" * 64, "kai-lab/x"):
        assert store.record_path(str(tmp_path), bad) is None


def test_a_record_inside_the_learners_files_is_refused(tmp_path):
    workdir = tmp_path / "gsb-kai"
    workdir.mkdir()
    (tmp_path / "link").symlink_to(workdir)
    for path in (workdir / "grade-records" / "kai-lab.json", tmp_path / "link" / "x.json", workdir):
        usable, note = store.usable_path(str(path), str(workdir))
        assert usable is None and "learner" in note["en"] and HANGUL.search(note["ko"])
    outside = str(tmp_path / "state" / "grade-records" / "kai-lab.json")
    assert store.usable_path(outside, str(workdir)) == (outside, None)
    assert store.usable_path(str(tmp_path / "gsb-kai-other" / "r.json"), str(workdir))[0] is not None


# ---------------------------------------------------------------- writing and reading back

def test_save_is_atomic_private_and_reads_back(tmp_path):
    path = store.record_path(str(tmp_path / "state"), NS)
    record, added = gr.remember(store.empty(NS, "ns-uid"), a_grade(evict_check()), now=NOW)
    assert added == ["preempt.evicted"]
    store.save(path, record)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    assert os.listdir(os.path.dirname(path)) == ["kai-lab.json"]  # no temporary file left
    loaded, notes = store.load(path, NS, "ns-uid")
    assert notes == [] and loaded == record
    entry = loaded["checks"]["preempt.evicted"]
    assert entry["verified_at"] == "2026-12-01T10:42:00Z"
    assert entry["proofs"][0]["uid"] == "6fa7d701-2e31-436a-8fd6-b29dc125e168"
    store.save(path, store.empty(NS))  # replaced, not appended
    assert store.load(path, NS)[0]["checks"] == {}


def test_a_failed_write_leaves_the_old_record_and_no_temporary_file(tmp_path, monkeypatch):
    path = store.record_path(str(tmp_path), NS)
    store.save(path, gr.remember(store.empty(NS), a_grade(evict_check()), now=NOW)[0])

    def broken(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store.os, "replace", broken)
    with pytest.raises(OSError):
        store.save(path, store.empty(NS))
    assert os.listdir(os.path.dirname(path)) == ["kai-lab.json"]
    assert "preempt.evicted" in store.load(path, NS)[0]["checks"]


def test_missing_record_is_empty_without_a_note(tmp_path):
    record, notes = store.load(str(tmp_path / "none.json"), NS)
    assert record == store.empty(NS) and notes == []
    assert store.load(None, NS) == (store.empty(NS), [])


HOSTILE = {
    "not json": b"{\"schema_version\": 1, ",
    "not utf-8": b"\xff\xfe\x00{",
    "a list": b"[1, 2, 3]",
    "other schema": json.dumps({"schema_version": 99, "namespace": NS, "checks": {}}).encode(),
    "checks not a map": json.dumps({"schema_version": 1, "namespace": NS, "checks": []}).encode(),
    "deeply nested": b"[" * 200000 + b"]" * 200000,
    "other namespace": json.dumps({"schema_version": 1, "namespace": "other", "checks": {}}).encode(),
    "earlier lab": json.dumps({"schema_version": 1, "namespace": NS, "namespace_uid": "old-uid",
                               "checks": {}}).encode(),
    "too big": b" " * (store.MAX_RECORD_BYTES + 1),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_corrupt_or_foreign_record_counts_as_empty_and_says_why(tmp_path, case):
    path = tmp_path / "kai-lab.json"
    path.write_bytes(HOSTILE[case])
    os.chmod(str(path), 0o600)
    record, notes = store.load(str(path), NS, "new-uid")
    assert record["checks"] == {} and record["namespace"] == NS
    assert len(notes) == 1 and str(path) in notes[0]["en"] and HANGUL.search(notes[0]["ko"])


def test_a_symlink_a_fifo_a_directory_or_a_shared_file_is_not_trusted(tmp_path):
    good = tmp_path / "real.json"
    good.write_text(json.dumps(gr.remember(store.empty(NS), a_grade(evict_check()), now=NOW)[0]))
    os.chmod(str(good), 0o600)
    assert store.load(str(good), NS)[0]["checks"]
    link = tmp_path / "link.json"
    link.symlink_to(good)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(str(fifo))
    directory = tmp_path / "dir.json"
    directory.mkdir()
    shared = tmp_path / "shared.json"
    shared.write_text(good.read_text())
    os.chmod(str(shared), 0o666)
    for path, word in ((link, "regular"), (fifo, "regular"), (directory, "regular"), (shared, "writable")):
        record, notes = store.load(str(path), NS)
        assert record["checks"] == {} and word in notes[0]["en"], path


def test_malformed_entries_are_dropped_one_by_one(tmp_path):
    good = gr.remember(store.empty(NS), a_grade(evict_check()), now=NOW)[0]["checks"]["preempt.evicted"]
    checks = {
        "preempt.evicted": good,
        "gang.reason": dict(good, verified_at="yesterday"),
        "nolimit.reason": dict(good, proofs="all of them"),
        "podgroup.file": dict(good, proofs=[dict(good["proofs"][0], message=42)]),
        "../../etc": good,
        "queues.file": "passed",
        "fraction.shared": dict(good, proofs=[good["proofs"][0]] * (store.MAX_PROOFS + 1)),
    }
    path = tmp_path / "kai-lab.json"
    path.write_text(json.dumps({"schema_version": 1, "namespace": NS, "checks": checks}))
    os.chmod(str(path), 0o600)
    record, notes = store.load(str(path), NS)
    assert sorted(record["checks"]) == ["preempt.evicted"]
    assert len(notes) == 6


def test_long_texts_are_cut_to_size(tmp_path):
    check = evict_check()
    check["evidence"][gr.PROOF_KEY][0]["message"] = "x" * 100000
    check["evidence"]["file"] = "y" * 100000
    record = gr.remember(store.empty(NS), a_grade(check), now=NOW)[0]
    entry = record["checks"]["preempt.evicted"]
    assert len(entry["proofs"][0]["message"]) == store.MAX_TEXT
    assert entry["evidence"] == {"omitted": "%d bytes" % len(json.dumps(check["evidence"], sort_keys=True))}


# ---------------------------------------------------------------- what goes in, what comes out

def test_only_checks_verified_now_are_remembered():
    grade = a_grade(evict_check(),
                    {"id": "gang.reason", "status": "unverified", "evidence": {"file": "x"}},
                    {"id": "nolimit.reason", "status": "failed", "evidence": None},
                    passed("queues.file", {"queues": ["lab", "ops", "research"]}))
    record, added = gr.remember(store.empty(NS), grade, now=NOW)
    assert added == ["preempt.evicted", "queues.file"]
    assert record["checks"]["queues.file"]["proofs"] == []
    assert record["checks"]["queues.file"]["evidence"] == {"queues": ["lab", "ops", "research"]}


def test_a_check_passed_from_the_record_keeps_its_first_proof():
    record = gr.remember(store.empty(NS), a_grade(evict_check()), now=NOW)[0]
    entry = record["checks"]["preempt.evicted"]
    later = passed("preempt.evicted", dict(gr.recorded_evidence(entry), victim="tr-2"))
    again, added = gr.remember(record, a_grade(later), now=NOW + 3600)
    assert added == [] and again == record


def test_recall_and_describe_in_both_languages():
    record = gr.remember(store.empty(NS), a_grade(evict_check()), now=NOW)[0]
    bd1 = {"metadata": {"name": "bd-1", "uid": "0c4721cb-3674-4527-bafa-f9b79a64c05e"}}
    entry, problem = gr.recall(record, "preempt.evicted", [bd1])
    assert problem is None
    en, ko = gr.describe(entry, "en"), gr.describe(entry, "ko")
    assert en.startswith("verified at 2026-12-01 10:42 UTC from KAI's event Evict on PodGroup/pg-tr-2-")
    assert "kai-scheduler" in en and "Pod kai-lab/tr-2 was preempted" in en
    assert "10:42" in ko and HANGUL.search(ko) and "Evict" in ko
    evidence = gr.recorded_evidence(entry)[gr.RECORDED_KEY]
    assert evidence["en"] == en and evidence["proof"]["uid"] == "6fa7d701-2e31-436a-8fd6-b29dc125e168"
    assert gr.recall(record, "gang.reason") == (None, None)
    assert gr.recall(gr.remember(store.empty(NS), a_grade(passed("queues.file", {})))[0], "queues.file") == (None, None)


def test_a_proof_about_a_pod_since_replaced_is_not_used():
    record = gr.remember(store.empty(NS), a_grade(evict_check()), now=NOW)[0]
    recreated = {"metadata": {"name": "bd-1", "uid": "another-uid"}}
    entry, problem = gr.recall(record, "preempt.evicted", [recreated])
    assert entry is None and "another-uid" in problem["en"] and HANGUL.search(problem["ko"])


def test_the_hint_names_the_command_for_the_step():
    assert "kai_lab_grade_steps=gang" in gr.keep_proof_hint("gang", "en")
    ko = gr.keep_proof_hint("gang", "ko")
    assert "kai_lab_grade_steps=gang" in ko and HANGUL.search(ko)


# ---------------------------------------------------------------- one grade with the record

class Snap(object):
    namespace = NS
    namespace_uid = None


def test_grade_with_record_reads_grades_and_keeps_what_it_verified(tmp_path):
    path = store.record_path(str(tmp_path / "state"), NS)
    seen = {}

    def run():
        seen["record"] = snapshot.record
        return dict(a_grade(evict_check()), lang="en")

    snapshot = Snap()
    grade = gr.grade_with_record(snapshot, run, path, str(tmp_path / "gsb-kai"), now=NOW)
    assert seen["record"] == store.empty(NS)
    assert grade["record"] == {"path": path, "notes": [], "used": [], "kept": ["preempt.evicted"]}
    assert gr.table_lines(grade) == ["grade record %s: 1 check(s) kept now (preempt.evicted)" % path]
    second = gr.grade_with_record(Snap(), lambda: {"steps": [], "lang": "ko"}, path, str(tmp_path / "gsb-kai"))
    assert second["record"]["kept"] == [] and second["record"]["notes"] == []
    assert "preempt.evicted" in store.load(path, NS)[0]["checks"]


def test_grade_with_record_in_check_mode_writes_nothing(tmp_path):
    path = store.record_path(str(tmp_path / "state"), NS)
    grade = gr.grade_with_record(Snap(), lambda: dict(a_grade(evict_check()), lang="en"), path, str(tmp_path / "w"),
                                 write=False)
    assert grade["record"]["kept"] == [] and not os.path.exists(os.path.dirname(path))


def test_grade_with_record_inside_the_workdir_keeps_nothing_and_says_so(tmp_path):
    workdir = tmp_path / "gsb-kai"
    workdir.mkdir()
    planted = workdir / "grade-records" / "kai-lab.json"
    planted.parent.mkdir()
    forged = gr.remember(store.empty(NS), a_grade(evict_check()), now=NOW)[0]
    planted.write_text(json.dumps(forged))
    os.chmod(str(planted), 0o600)
    snapshot = Snap()
    grade = gr.grade_with_record(snapshot, lambda: dict(a_grade(evict_check()), lang="ko"), str(planted), str(workdir))
    assert snapshot.record == store.empty(NS)  # the planted proof was not read
    assert grade["record"]["path"] is None and grade["record"]["kept"] == []
    assert HANGUL.search(grade["record"]["notes"][0]) and str(workdir) in grade["record"]["notes"][0]
    assert json.loads(planted.read_text()) == forged  # and not written either


def test_an_unwritable_record_is_a_note_not_a_crash(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (state / "grade-records").write_text("a file where the directory should be")
    grade = gr.grade_with_record(Snap(), lambda: dict(a_grade(evict_check()), lang="en"),
                                 store.record_path(str(state), NS), str(tmp_path / "w"))
    assert grade["record"]["kept"] == [] and "could not be written" in grade["record"]["notes"][-1]


# ---------------------------------------------------------------- concurrent grades (issue 34, row 5)

ROUNDS = 20
CONCURRENT = 8


def _check_one_step(path, workdir, check_id, start):
    """One process's grade, as `kai-lab check STEP` runs it: the record read, 50 ms of grading, what passed kept."""
    def run():
        time.sleep(0.05)
        return dict(a_grade(passed(check_id, {"check": check_id})), lang="en")

    start.wait()
    grade = gr.grade_with_record(Snap(), run, path, workdir)
    os._exit(0 if grade["record"]["kept"] == [check_id] and not grade["record"]["notes"] else 3)


def _read_while_written(path, start, stop, invalid):
    """Reads the record again and again while the grades write it; counts the reads that are no JSON."""
    start.wait()
    while not stop.is_set():
        try:
            with open(path) as handle:
                json.loads(handle.read())
        except FileNotFoundError:
            pass
        except ValueError:
            with invalid.get_lock():
                invalid.value += 1


def test_concurrent_checks_of_different_steps_keep_every_entry(tmp_path):
    context = multiprocessing.get_context("fork")
    check_ids = [check.id for step in steps.STEPS for check in step.checks][:CONCURRENT]
    assert len(set(check_ids)) == CONCURRENT
    lost, said = [], []
    invalid = context.Value("i", 0)
    for round_number in range(ROUNDS):
        path = store.record_path(str(tmp_path / ("state-%d" % round_number)), NS)
        start, stop = context.Barrier(CONCURRENT + 1), context.Event()
        reader = context.Process(target=_read_while_written, args=(path, start, stop, invalid))
        graders = [context.Process(target=_check_one_step, args=(path, str(tmp_path / "w"), check_id, start))
                   for check_id in check_ids]
        for process in [reader] + graders:
            process.start()
        for process in graders:
            process.join(60)
        stop.set()
        reader.join(60)
        said.extend("round %d: %s" % (round_number, c) for c, p in zip(check_ids, graders) if p.exitcode != 0)
        with open(path) as handle:
            kept = json.loads(handle.read())["checks"]
        lost.extend("round %d: %s" % (round_number, c) for c in check_ids if c not in kept)
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert lost == [], "%d of %d entries lost" % (len(lost), ROUNDS * CONCURRENT)
    assert said == [], "grades that did not say they kept their check"
    assert invalid.value == 0, "the record was read as invalid JSON %d times" % invalid.value


def test_a_record_locked_too_long_is_a_note_and_the_grade_goes_on(tmp_path, monkeypatch):
    path = store.record_path(str(tmp_path / "state"), NS)
    monkeypatch.setattr(store, "LOCK_WAIT", 0.3)
    with store.locked(path):
        started = time.monotonic()
        grade = gr.grade_with_record(Snap(), lambda: dict(a_grade(evict_check()), lang="en"), path,
                                     str(tmp_path / "w"))
        assert time.monotonic() - started < 5
    assert grade["record"]["kept"] == []
    assert grade["record"]["notes"] == [
        "the grade record %s stayed locked by another grade for 0.3 s; this grade's checks are not kept in it: "
        "check again" % path]
    assert not os.path.exists(path)
