# -*- coding: utf-8 -*-
"""learner_read, learner_parse, learner_yaml, learner_write, learner_backup and learner_text against the hostile workdirs of issue 13.

Each hostile input is read in a child Python process with a timeout, so a
hang fails the test instead of hanging it, and the child reports its own
elapsed time and peak RSS (resource.getrusage), which must stay under the
bounds a grade has (a few seconds, 300 MB).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import time

import pytest

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import backup as learner_backup
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import parse as learner_parse
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import read as learner_read
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import text as learner_text
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import write as learner_write
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import yaml_docs as learner_yaml
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import workdir_fd as learner_workdir_fd

from conftest import COLLECTION_PATH

TIME_BOUND = 5.0  # seconds, far inside kai_lab_grade_time_limit (30 s)
RSS_BOUND_KB = 300 * 1024

CHILD = textwrap.dedent("""
    import json, resource, sys, time
    sys.path.insert(0, %r)
    from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import parse as learner_parse
    from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import yaml_docs as learner_yaml
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    got = getattr(learner_yaml, sys.argv[1], None) or getattr(learner_parse, sys.argv[1])
    got = got(sys.argv[2], sys.argv[3])
    elapsed = time.monotonic() - started
    content = got.content
    print(json.dumps({
        'elapsed': elapsed,
        'maxrss_kb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, 'maxrss_before_kb': before,
        'problem': got.problem, 'missing': got.missing,
        'content': content if not isinstance(content, bytes) else content.decode('latin-1'),
    }))
""") % str(COLLECTION_PATH)


def read_bounded(reader, workdir, name, timeout=20):
    """Run <reader>(workdir, name) of learner_parse or learner_yaml in a child; its result with elapsed and maxrss_kb."""
    started = time.monotonic()
    try:
        # Through sh, which forks the child: a child forked from pytest itself
        # would report pytest's peak RSS as its own.
        done = subprocess.run(["/bin/sh", "-c", '"$0" "$@"; exit $?', sys.executable, "-c", CHILD,
                               reader, str(workdir), name],
                              capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail("%s(%s) did not return within %d s" % (reader, name, timeout))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    result["wall"] = time.monotonic() - started
    # Each measurement is printed so a run with -s shows the numbers.
    print("%-20s %-14s %.3f s, peak RSS %.1f MB (%.1f MB before the read)"
          % (reader, name, result["elapsed"], result["maxrss_kb"] / 1024.0, result["maxrss_before_kb"] / 1024.0))
    assert result["elapsed"] < TIME_BOUND
    assert result["maxrss_kb"] < RSS_BOUND_KB
    return result


@pytest.fixture
def workdir(tmp_path):
    path = tmp_path / "gsb-kai"
    path.mkdir()
    return path


def problem_en(result):
    assert result["problem"], "expected a problem, got content %r" % (result["content"],)
    assert set(result["problem"]) == {"en", "ko"}
    assert result["problem"]["ko"]
    return result["problem"]["en"]


# ---------------------------------------------------------------- item 1
def test_symlink_out_of_the_workdir_is_refused_and_its_target_never_read(workdir, tmp_path):
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$SECRETHASH:19000:0:99999:7:::\n")
    (workdir / "nolimit.txt").symlink_to(secret)
    result = read_bounded("read_text", workdir, "nolimit.txt")
    message = problem_en(result)
    assert "symbolic link" in message and "replace the link with the file itself" in message
    assert "SECRETHASH" not in json.dumps(result)


def test_symlink_to_dev_zero_is_refused_at_once(workdir):
    (workdir / "gang.txt").symlink_to("/dev/zero")
    result = read_bounded("read_text", workdir, "gang.txt")
    assert "symbolic link (to /dev/zero)" in problem_en(result)


def test_fifo_is_refused_without_blocking(workdir):
    os.mkfifo(str(workdir / "gang.txt"))
    result = read_bounded("read_text", workdir, "gang.txt")
    assert "is a FIFO (named pipe), not a regular file" in problem_en(result)


def test_one_gigabyte_sparse_file_is_refused_by_its_size_without_reading_it(workdir):
    with open(str(workdir / "gang.txt"), "wb") as handle:
        handle.truncate(1024 ** 3)
    result = read_bounded("read_text", workdir, "gang.txt")
    assert "is 1024.0 MiB; the lab reads at most 256 KiB" in problem_en(result)


def test_file_just_over_the_limit_is_refused_and_at_the_limit_read(workdir):
    (workdir / "big.txt").write_bytes(b"a" * (learner_read.MAX_BYTES + 1))
    (workdir / "ok.txt").write_bytes(b"a" * learner_read.MAX_BYTES)
    assert "the lab reads at most 256 KiB" in learner_parse.read_text(str(workdir), "big.txt").problem["en"]
    assert len(learner_parse.read_text(str(workdir), "ok.txt").require()) == learner_read.MAX_BYTES


def test_symlink_in_front_of_the_file_and_dot_dot_are_refused(workdir, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "report.json").write_text("{}")
    (workdir / "sub").symlink_to(outside)
    assert learner_parse.read_text(str(workdir), "sub/report.json").problem
    for name in ("../outside/report.json", str(outside / "report.json"), "", "."):
        got = learner_parse.read_text(str(workdir), name)
        assert "is not a file name inside the workdir" in got.problem["en"], name


def test_missing_file_is_a_problem_marked_missing(workdir):
    got = learner_parse.read_text(str(workdir), "queues.yaml")
    assert got.missing and "is missing in" in got.problem["en"]
    with pytest.raises(learner_read.LearnerFileError) as raised:
        got.require()
    assert raised.value.missing and raised.value.problem == got.problem


def test_directory_where_a_file_should_be_is_refused(workdir):
    (workdir / "report.json").mkdir()
    result = read_bounded("read_json", workdir, "report.json")
    assert "is a directory, not a regular file" in problem_en(result)


# ---------------------------------------------------------------- items 2-3
def test_unquoted_yaml_date_stays_the_string_written(workdir):
    (workdir / "queues.yaml").write_text("kind: Queue\nspec:\n  displayName: 2026-12-01\n  at: 2026-12-01 10:00:00\n")
    result = read_bounded("read_yaml_documents", workdir, "queues.yaml")
    assert result["problem"] is None
    assert result["content"] == [{"kind": "Queue", "spec": {"displayName": "2026-12-01", "at": "2026-12-01 10:00:00"}}]


@pytest.mark.parametrize("value, tag", [
    ("!!set {a, b}", "tag:yaml.org,2002:set"),
    ("!!binary aGVsbG8=", "tag:yaml.org,2002:binary"),
    ("!!omap [a: 1]", "tag:yaml.org,2002:omap"),
    ("!!python/name:os.system x", "tag:yaml.org,2002:python/name:os.system"),
    ("!custom x", "!custom"),
])
def test_yaml_tags_without_a_json_equivalent_are_refused(workdir, value, tag):
    (workdir / "queues.yaml").write_text("kind: Queue\nspec:\n  displayName: %s\n" % value)
    result = read_bounded("read_yaml_documents", workdir, "queues.yaml")
    assert "uses the YAML tag %s (line 3), which has no JSON equivalent" % tag in problem_en(result)


def test_yaml_alias_bomb_is_refused_at_the_first_alias(workdir):
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 12):
        lines.append("a%d: &a%d [%s]" % (level, level, ",".join(["*a%d" % (level - 1)] * 10)))
    (workdir / "queues.yaml").write_text("\n".join(lines) + "\n")
    result = read_bounded("read_yaml_documents", workdir, "queues.yaml")
    assert "uses a YAML alias (*a0, line 2): aliases are not accepted" in problem_en(result)


@pytest.mark.parametrize("levels", [65, 989, 100000])
def test_deep_json_is_refused_before_parsing(workdir, levels):
    (workdir / "report.json").write_text("[" * levels + "]" * levels)
    result = read_bounded("read_json", workdir, "report.json")
    assert "nests its JSON more than 64 levels deep" in problem_en(result)


def test_json_brackets_inside_strings_do_not_count_as_nesting(workdir):
    (workdir / "report.json").write_text(json.dumps({"shared_gpu": "[" * 500 + '\\"{', "n": [[1]]}))
    assert learner_parse.read_json(str(workdir), "report.json").require()["n"] == [[1]]


@pytest.mark.parametrize("text", ["[" * 989 + "]" * 989, "a:\n" + "".join(" " * i + "- \n" for i in range(1, 200))])
def test_deep_yaml_is_refused(workdir, text):
    (workdir / "fraction.yaml").write_text(text)
    result = read_bounded("read_yaml_documents", workdir, "fraction.yaml")
    assert "nests its YAML more than 64 levels deep" in problem_en(result)


def test_largest_accepted_yaml_parses_within_the_bound(workdir):
    item = "- {apiVersion: v1, kind: Pod, metadata: {name: p, labels: {a: b}}, spec: [1, 2, 3]}\n"
    (workdir / "fraction.yaml").write_text("items:\n" + item * ((learner_read.MAX_BYTES - 8) // len(item)))
    result = read_bounded("read_yaml_documents", workdir, "fraction.yaml")
    assert result["problem"] is None and len(result["content"][0]["items"]) > 2500


def test_parsed_yaml_always_serialises_as_json(workdir):
    (workdir / "p1.yaml").write_text("a: 2026-12-01\nb: [1, 2.5, .inf, yes, null]\nc: {d: 'x'}\n---\n---\ne: 1\n")
    docs = learner_yaml.read_yaml_documents(str(workdir), "p1.yaml").require()
    assert json.loads(json.dumps(docs))[0]["a"] == "2026-12-01" and docs[1] == {"e": 1}


def test_invalid_yaml_and_json_are_problems_with_the_parsers_words(workdir):
    (workdir / "p1.yaml").write_text("a: [1,\n")
    (workdir / "report.json").write_text("{'gpu_allocated': 1}")
    assert "p1.yaml cannot be read as YAML: " in learner_yaml.read_yaml_documents(str(workdir), "p1.yaml").problem["en"]
    assert "cannot be read as JSON: Expecting property name" in learner_parse.read_json(str(workdir), "report.json").problem["en"]


def test_integer_too_long_for_python_is_a_problem_not_a_crash(workdir):
    (workdir / "p1.yaml").write_text("a: %s\n" % ("9" * 5000))
    assert "cannot be read as YAML" in learner_yaml.read_yaml_documents(str(workdir), "p1.yaml").problem["en"]


# ---------------------------------------------------------------- item 5, 7
def test_printable_strips_controls_and_flattens_a_forged_console_line():
    forged = "GPU-1\nscore 100.0% (99/99 points), PASSED\x1b[2K\x00\x07\u202e\ufffe"
    line = learner_text.printable(forged)
    assert "\n" not in line and "\x1b" not in line and "\x00" not in line and "\u202e" not in line
    assert line == "GPU-1 score 100.0% (99/99 points), PASSED[2K"
    assert learner_text.printable("x" * 500, 20) == "x" * 19 + "\u2026"
    assert learner_text.printable("한국어\t텍스트") == "한국어 텍스트"
    assert learner_text.printable(None) == ""


def test_printable_output_is_valid_xml():
    from xml.dom.minidom import parseString
    from xml.sax.saxutils import escape, quoteattr
    text = learner_text.printable("".join(chr(c) for c in range(0, 0x40)) + "\ud800\uffff", 500)
    document = parseString(("<a b=%s>%s</a>" % (quoteattr(text), escape(text))).encode("utf-8"))
    assert document.documentElement.getAttribute("b") == text


def test_non_utf8_bytes_become_replacement_characters(workdir):
    (workdir / "nolimit.txt").write_bytes(b"Limit is 0 GPUs\xff\xfe")
    result = read_bounded("read_text", workdir, "nolimit.txt")
    assert result["problem"] is None and result["content"] == "Limit is 0 GPUs\ufffd\ufffd"


def test_bounded_evidence_is_json_of_bounded_size():
    deep = current = {}
    for _ in range(900):
        current["x"] = current = {}
    evidence = learner_text.bounded({"file": "a\nb" * 10000, "deep": deep, "many": list(range(1000)),
                           "date": __import__("datetime").date(2026, 12, 1), "raw": b"\xff"})
    text = json.dumps(evidence)
    assert len(text) < 5000 and "\\n" not in text
    assert evidence["date"] == "2026-12-01" and len(evidence["many"]) == 100


def test_utf8_bom_is_dropped(workdir):
    (workdir / "podgroup.txt").write_bytes(b"\xef\xbb\xbfpg-p1\n")
    assert learner_parse.read_text(str(workdir), "podgroup.txt").require() == "pg-p1\n"


# ---------------------------------------------------------------- item 4: writing
def test_planted_tmp_symlink_is_never_written_through(workdir, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    for planted in ("grade-junit.xml.tmp", ".grade-junit.xml.tmp", "grade-junit.xml.partial"):
        (workdir / planted).symlink_to(victim)
    path = learner_write.write_file(str(workdir), "grade-junit.xml", "<testsuites/>\n")
    assert victim.read_text() == "precious\n"
    assert open(path).read() == "<testsuites/>\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert sorted(p.name for p in workdir.iterdir()) == sorted(
        ["grade-junit.xml", "grade-junit.xml.tmp", ".grade-junit.xml.tmp", "grade-junit.xml.partial"])


def test_symlink_at_the_target_is_replaced_not_followed(workdir, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (workdir / "grade.json").symlink_to(victim)
    learner_write.write_file(str(workdir), "grade.json", "{}\n")
    assert victim.read_text() == "precious\n"
    assert not (workdir / "grade.json").is_symlink() and (workdir / "grade.json").read_text() == "{}\n"


def test_write_over_a_directory_names_it(workdir):
    (workdir / "grade.json").mkdir()
    with pytest.raises(learner_read.LearnerFileError) as raised:
        learner_write.write_file(str(workdir), "grade.json", "{}")
    assert "is a directory where the lab writes a file: move or rename it" in raised.value.problem["en"]
    assert os.listdir(str(workdir)) == ["grade.json"]


def test_root_writing_into_a_learners_directory_gives_the_file_to_the_learner(workdir):
    if os.geteuid() != 0:
        pytest.skip("needs root to own a file on behalf of another user")
    os.chown(str(workdir), 65534, 65534)
    path = learner_write.write_file(str(workdir), "grade.json", "{}")
    assert (os.stat(path).st_uid, os.stat(path).st_gid) == (65534, 65534)


# ---------------------------------------------------------------- item 7: the solver's writes
def test_two_replacements_in_one_second_keep_both_originals(workdir):
    (workdir / "queues.yaml").write_text("original\n")
    now = time.time()
    first = learner_backup.backup_file(str(workdir), "queues.yaml", now=now)
    (workdir / "queues.yaml").write_text("second\n")
    second = learner_backup.backup_file(str(workdir), "queues.yaml", now=now)
    assert first != second and second == first + "-2"
    assert open(first).read() == "original\n" and open(second).read() == "second\n"


def test_backup_never_writes_through_a_planted_backup_symlink(workdir, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (workdir / "queues.yaml").write_text("learner\n")
    now = time.time()
    planted = workdir / ("queues.yaml.bak-%s" % time.strftime("%Y%m%d-%H%M%S", time.localtime(now)))
    planted.symlink_to(victim)
    backup = learner_backup.backup_file(str(workdir), "queues.yaml", now=now)
    assert backup == str(planted) + "-2" and open(backup).read() == "learner\n"
    assert victim.read_text() == "precious\n"


def test_replace_learner_file_keeps_a_symlink_as_a_symlink_and_never_reads_it(workdir):
    (workdir / "gang.txt").symlink_to("/dev/zero")
    changed, backup = learner_backup.replace_learner_file(str(workdir), "gang.txt", "text\n")
    assert changed and os.readlink(backup) == "/dev/zero"
    assert (workdir / "gang.txt").read_text() == "text\n"


def test_replace_learner_file_backs_up_a_non_utf8_file_byte_for_byte(workdir):
    (workdir / "nolimit.txt").write_bytes(b"\xff\xfe old")
    changed, backup = learner_backup.replace_learner_file(str(workdir), "nolimit.txt", "new\n")
    assert changed and open(backup, "rb").read() == b"\xff\xfe old"


def test_replace_learner_file_with_same_content_changes_nothing(workdir):
    (workdir / "podgroup.txt").write_text("pg-p1\n")
    assert learner_backup.replace_learner_file(str(workdir), "podgroup.txt", "pg-p1\n") == (False, None)
    assert os.listdir(str(workdir)) == ["podgroup.txt"]


def test_replace_learner_file_refuses_a_directory_or_fifo_and_keeps_it(workdir):
    (workdir / "report.json").mkdir()
    os.mkfifo(str(workdir / "gang.txt"))
    for name, words in (("report.json", "is a directory"), ("gang.txt", "is a FIFO (named pipe)")):
        with pytest.raises(learner_read.LearnerFileError) as raised:
            learner_backup.replace_learner_file(str(workdir), name, "x")
        assert words + " where the lab writes a file" in raised.value.problem["en"]
    assert sorted(os.listdir(str(workdir))) == ["gang.txt", "report.json"]


def test_replace_learner_file_in_check_mode_writes_nothing(workdir):
    (workdir / "p1.yaml").write_text("old\n")
    assert learner_backup.replace_learner_file(str(workdir), "p1.yaml", "new\n", check_mode=True) == (True, None)
    assert learner_backup.replace_learner_file(str(workdir / "absent"), "p1.yaml", "new\n", check_mode=True) == (True, None)
    assert os.listdir(str(workdir)) == ["p1.yaml"] and (workdir / "p1.yaml").read_text() == "old\n"


def test_replace_learner_file_creates_a_missing_workdir_private(tmp_path):
    workdir = tmp_path / "new"
    assert learner_backup.replace_learner_file(str(workdir), "p1.yaml", "x\n") == (True, None)
    assert stat.S_IMODE(workdir.stat().st_mode) == 0o700


def test_without_libyaml_the_pure_python_loader_refuses_and_keeps_dates_the_same(monkeypatch):
    import yaml
    monkeypatch.setattr(yaml, "CSafeLoader", None, raising=False)
    monkeypatch.setattr(learner_yaml, "_LOADER", learner_yaml._loader_class())
    assert issubclass(learner_yaml._LOADER, yaml.SafeLoader), "the pure-Python loader is in use"
    assert learner_yaml.parse_yaml_documents("q.yaml", "a: 2026-12-01\n").require() == [{"a": "2026-12-01"}]
    assert "uses a YAML alias (*x, line 2)" in learner_yaml.parse_yaml_documents("q.yaml", "a: &x [1]\nb: *x\n").problem["en"]
    assert "more than 64 levels" in learner_yaml.parse_yaml_documents("q.yaml", "[" * 100 + "]" * 100).problem["en"]


# ---------------------------------------------------------------- hard links (issue 34, row 9)
SECRET_OWNER, LEARNER = 4001, 4002


def _private_secret(tmp_path):
    """A 0600 file of another user (tests run as root: chown makes it someone else's), outside the workdir."""
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    secret = private / "shadow"
    secret.write_text("root:$6$SECRETHASH:19000:0:99999:7:::\n")
    os.chown(str(secret), SECRET_OWNER, SECRET_OWNER)
    secret.chmod(0o600)
    return secret


@pytest.mark.parametrize("opened", [False, True], ids=["path", "opened-workdir"])
def test_a_hard_link_to_a_file_the_learner_cannot_read_is_refused(workdir, tmp_path, opened):
    secret = _private_secret(tmp_path)
    os.chown(str(workdir), LEARNER, LEARNER)
    os.link(str(secret), str(workdir / "queues.yaml"))
    assert os.stat(str(workdir / "queues.yaml")).st_nlink == 2
    where = learner_workdir_fd.open_workdir(str(workdir)) if opened else str(workdir)
    try:
        got = learner_parse.read_text(where, "queues.yaml")
    finally:
        if opened:
            where.close()
    assert got.content is None and not got.missing
    assert got.problem["en"] == (
        "queues.yaml is a hard link (one of 2 names) to a file of uid %d, not of the workdir's owner (uid %d): the lab "
        "reads only files with one name or of the workdir's owner; replace it with a copy of your own file"
        % (SECRET_OWNER, LEARNER))
    assert "하드 링크" in got.problem["ko"]
    assert "SECRETHASH" not in json.dumps(got.problem)


def test_a_hard_link_the_workdirs_owner_owns_and_a_foreign_file_with_one_name_are_read(workdir):
    os.chown(str(workdir), LEARNER, LEARNER)
    own = workdir / "queues.yaml"
    own.write_text("kind: Queue\n")
    os.chown(str(own), LEARNER, LEARNER)
    os.link(str(own), str(workdir / "queues-copy.yaml"))
    assert learner_parse.read_text(str(workdir), "queues.yaml").content == "kind: Queue\n"
    single = workdir / "p1.yaml"
    single.write_text("kind: Pod\n")  # root's, one name: what the solver writes into a learner's workdir
    assert learner_parse.read_text(str(workdir), "p1.yaml").content == "kind: Pod\n"
