# -*- coding: utf-8 -*-
"""Issue 18, the file-system rows, each as the attacker-learner did it.

Row 1: a set-uid copy of /usr/bin/id as a learner file must not give the
learner a root set-uid backup. Row 6: a sparse 1 GiB file must not fill the
disk when it is backed up; a file over the learner-file limit is moved aside
(linked, no byte copied) or refused. Rows 2, 4, 5: the workdir is opened once,
without following a link at any level, and every later read and write goes
through that descriptor: a workdir swapped for a link after the check, or a
workdir given as a link (grade.yml -e kai_lab_workdir=/tmp/link), never
makes root read or write elsewhere.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import workdir as lab_workdir
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import parse as learner_parse
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import read as learner_read
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import write as learner_write
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import backup as learner_backup
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import workdir_fd as learner_workdir_fd

from conftest import COLLECTION_PATH
from lab_testing import NS

LEARNER = 65534  # nobody: the learner who owns the workdir
OWN_NAMES = r'^(queues\.yaml|p1\.yaml|grade\.json)(\.bak-[0-9-]+)?$|^(\..+\.partial|backup-.+|\.gsb-kai-lab)$'
LAB_FILES = r'^(queues\.yaml|p1\.yaml|grade\.json)(\.bak-[0-9-]+)?$'

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the grader runs as root over a learner's files")


@pytest.fixture
def learner_workdir(tmp_path):
    """A workdir the learner owns, in a directory only root can change (as /root/gsb-kai)."""
    workdir = tmp_path / "gsb-kai"
    workdir.mkdir(mode=0o755)
    if os.geteuid() == 0:
        os.chown(str(workdir), LEARNER, LEARNER)
    return workdir


def _blocks(directory):
    return sum(os.lstat(os.path.join(directory, n)).st_blocks for n in os.listdir(directory))


# ---------------------------------------------------------------- row 1: set-uid backups
@needs_root
def test_a_set_uid_learner_file_never_becomes_a_root_set_uid_backup(learner_workdir):
    queues = learner_workdir / "queues.yaml"
    shutil.copyfile("/usr/bin/id", str(queues))
    os.chown(str(queues), LEARNER, LEARNER)
    os.chmod(str(queues), 0o4755)
    workdir = learner_workdir_fd.open_workdir(str(learner_workdir))
    changed, backup = learner_backup.replace_learner_file(workdir, "queues.yaml", "kind: Queue\n")
    info = os.stat(backup)
    assert changed and not info.st_mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX)
    assert (info.st_uid, info.st_gid) == (LEARNER, LEARNER), "owned like the file it copies"
    assert stat.S_IMODE(info.st_mode) == 0o755
    with open(backup, "rb") as copy, open("/usr/bin/id", "rb") as original:
        assert copy.read() == original.read()
    # Run by the learner, as in the issue: the learner's uid, not root's.
    fd = os.open(backup, os.O_RDONLY)
    try:
        ran = subprocess.run(["setpriv", "--reuid=%d" % LEARNER, "--regid=%d" % LEARNER, "--clear-groups",
                              "/proc/self/fd/%d" % fd, "-u"], pass_fds=[fd], capture_output=True, text=True,
                             timeout=10, check=False)
    finally:
        os.close(fd)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == str(LEARNER)


@needs_root
def test_a_copy_owned_by_someone_who_cannot_own_it_is_roots_at_0600(learner_workdir, monkeypatch):
    (learner_workdir / "queues.yaml").write_text("old\n")
    os.chmod(str(learner_workdir / "queues.yaml"), 0o6777)

    def refuse(*args):
        raise OSError(errno.EPERM, "not permitted")

    monkeypatch.setattr(os, "fchown", refuse)
    backup = learner_backup.backup_file(str(learner_workdir), "queues.yaml")
    info = os.stat(backup)
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (0, 0o600)


# ---------------------------------------------------------------- row 6: bounded backups
def test_a_sparse_gigabyte_is_backed_up_without_the_disk_use_growing(learner_workdir):
    with open(str(learner_workdir / "queues.yaml"), "wb") as handle:
        handle.truncate(1024 ** 3)
    before = _blocks(str(learner_workdir))
    started = time.monotonic()
    changed, backup = learner_backup.replace_learner_file(learner_workdir_fd.open_workdir(str(learner_workdir)),
                                                        "queues.yaml", "kind: Queue\n")
    assert changed and time.monotonic() - started < 5
    assert os.stat(backup).st_size == 1024 ** 3 and os.stat(backup).st_blocks == 0
    assert _blocks(str(learner_workdir)) <= before + 8, "only the new queues.yaml (one block) was added"
    assert (learner_workdir / "queues.yaml").read_text() == "kind: Queue\n"


def test_a_file_over_the_limit_is_moved_into_the_backup_not_copied(learner_workdir):
    big = b"a: 1\n" * (learner_read.MAX_BYTES // 5 + 100)
    (learner_workdir / "p1.yaml").write_bytes(big)
    inode = os.stat(str(learner_workdir / "p1.yaml")).st_ino
    before = _blocks(str(learner_workdir))
    changed, backup = learner_backup.replace_learner_file(str(learner_workdir), "p1.yaml", "kind: Pod\n")
    assert changed and os.stat(backup).st_ino == inode and os.stat(backup).st_nlink == 1
    assert Path(backup).read_bytes() == big
    assert _blocks(str(learner_workdir)) <= before + 8
    assert sorted(os.listdir(str(learner_workdir))) == ["p1.yaml", os.path.basename(backup)]


@pytest.mark.parametrize("how", ["set-uid", "hard link"])
def test_a_file_over_the_limit_that_cannot_be_moved_safely_is_refused_and_kept(learner_workdir, tmp_path, how):
    big = learner_workdir / "p1.yaml"
    big.write_bytes(b"x" * (learner_read.MAX_BYTES + 1))
    if how == "set-uid":
        os.chmod(str(big), 0o4755)
    else:
        os.link(str(big), str(tmp_path / "other-name"))
    with pytest.raises(learner_read.LearnerFileError) as raised:
        learner_backup.replace_learner_file(str(learner_workdir), "p1.yaml", "kind: Pod\n")
    assert "more than the lab copies (256 KiB)" in raised.value.problem["en"]
    assert "Move it out of the workdir yourself" in raised.value.problem["en"]
    assert "옮긴 뒤 다시 실행하세요" in raised.value.problem["ko"]
    assert os.listdir(str(learner_workdir)) == ["p1.yaml"] and big.stat().st_size == learner_read.MAX_BYTES + 1


# ---------------------------------------------------------------- row 2: opening the workdir
def test_a_workdir_that_is_a_link_or_below_one_is_refused_naming_it(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(learner_read.LearnerFileError) as raised:
        learner_workdir_fd.open_workdir(str(tmp_path / "link"))
    assert raised.value.problem["en"] == (
        "kai_lab_workdir %s/link is a symbolic link to %s/real: the lab works only in a real directory. "
        "Set kai_lab_workdir to the directory itself" % (tmp_path, tmp_path))
    assert "심볼릭 링크입니다" in raised.value.problem["ko"]
    (tmp_path / "real" / "gsb-kai").mkdir()
    with pytest.raises(learner_read.LearnerFileError) as raised:
        learner_workdir_fd.open_workdir(str(tmp_path / "link" / "gsb-kai"))
    assert "goes through the symbolic link %s/link (to %s/real)" % (tmp_path, tmp_path) in raised.value.problem["en"]
    assert learner_workdir_fd.open_workdir(str(tmp_path / "real" / "gsb-kai")).real == str(tmp_path / "real" / "gsb-kai")


@needs_root
@pytest.mark.parametrize("mode, owner, words", [
    (0o777, 0, "which every user (mode 0777) can change"),
    # A directory its owner can change holds a workdir of that owner's (issue 33): test_learner_workdir.py.
    (0o775, (0, 4242), "which the group gid 4242 (mode 0775) can change"),
])
def test_a_workdir_below_a_directory_another_user_can_change_is_refused(tmp_path, mode, owner, words):
    parent = tmp_path / "shared"
    parent.mkdir()
    (parent / "gsb-kai").mkdir()
    uid, gid = owner if isinstance(owner, tuple) else (owner, owner)
    os.chown(str(parent), uid, gid)
    os.chmod(str(parent), mode)
    with pytest.raises(learner_read.LearnerFileError) as raised:
        learner_workdir_fd.open_workdir(str(parent / "gsb-kai"))
    assert "kai_lab_workdir %s/gsb-kai is inside %s, %s" % (parent, parent, words) in raised.value.problem["en"]
    assert "root 만 바꿀 수 있는 곳" in raised.value.problem["ko"]
    os.chown(str(parent), 0, 0)
    os.chmod(str(parent), 0o1777)  # sticky, like /tmp: others cannot rename what is not theirs
    assert learner_workdir_fd.open_workdir(str(parent / "gsb-kai")).fd is not None


def _swap_for_a_link(workdir, victim):
    """What the learner does after the check: the workdir moves aside and a link to victim takes its name."""
    os.rename(str(workdir), str(workdir) + ".moved")
    os.symlink(str(victim), str(workdir))
    return Path(str(workdir) + ".moved")


def test_reads_and_writes_after_a_swap_stay_in_the_directory_opened(learner_workdir, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "queues.yaml").write_text("root's queues\n")
    (victim / "grade.json").write_text("root's grade\n")
    (learner_workdir / "queues.yaml").write_text("learner's queues\n")
    workdir = learner_workdir_fd.open_workdir(str(learner_workdir))
    moved = _swap_for_a_link(learner_workdir, victim)
    assert learner_parse.read_text(workdir, "queues.yaml").content == "learner's queues\n"
    learner_write.write_file(workdir, "grade.json", "{}\n")
    changed, backup = learner_backup.replace_learner_file(workdir, "queues.yaml", "kind: Queue\n")
    assert changed and backup.startswith(str(learner_workdir) + "/queues.yaml.bak-")
    assert (victim / "queues.yaml").read_text() == "root's queues\n"
    assert (victim / "grade.json").read_text() == "root's grade\n"
    assert sorted(os.listdir(str(victim))) == ["grade.json", "queues.yaml"]
    assert (moved / "grade.json").read_text() == "{}\n" and (moved / "queues.yaml").read_text() == "kind: Queue\n"
    assert (moved / os.path.basename(backup)).read_text() == "learner's queues\n"


# ---------------------------------------------------------------- row 5: grade.yml -e kai_lab_workdir=/tmp/link
def test_the_grade_module_refuses_a_workdir_link_before_writing_anything(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "grade.json").write_text("root's own grade.json\n")
    link = tmp_path / "link"
    link.symlink_to(elsewhere)
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {
        "workdir": str(link), "namespace": NS, "kubeconfig": str(tmp_path / "no-kubeconfig"),
        "kai_version": "v0.12.0", "lang": "en", "time_limit": 30}}))
    module = COLLECTION_PATH / "ansible_collections/gsb/kai_lab/plugins/modules/kai_lab_grade.py"
    done = subprocess.run([sys.executable, str(module), str(args)], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(COLLECTION_PATH)), check=False)
    result = json.loads(done.stdout)
    assert result.get("failed"), result
    assert result["msg"].startswith("kai_lab_workdir %s is a symbolic link to %s: the lab works only in a real "
                                    "directory" % (link, elsewhere))
    assert " / kai_lab_workdir %s: 심볼릭 링크입니다" % link in result["msg"]
    assert sorted(os.listdir(str(elsewhere))) == ["grade.json"]
    assert (elsewhere / "grade.json").read_text() == "root's own grade.json\n"


# ---------------------------------------------------------------- row 4: provision, and reset
def test_provision_after_a_swap_acts_on_the_directory_it_checked(learner_workdir, tmp_path, monkeypatch):
    victim = tmp_path / "victim"
    victim.mkdir(mode=0o755)
    opened = learner_workdir_fd.open_workdir

    def open_then_swap(path, create=False, mode=0o700):
        workdir = opened(path, create, mode)
        _swap_for_a_link(learner_workdir, victim)  # right after the check, before any act
        return workdir

    monkeypatch.setattr(lab_workdir, "open_workdir", open_then_swap)
    result = lab_workdir.prepare(str(learner_workdir), ["/etc"], OWN_NAMES, ".gsb-kai-lab")
    assert result["is_lab"] and result["marked"]
    assert os.listdir(str(victim)) == [] and stat.S_IMODE(victim.stat().st_mode) == 0o755
    moved = Path(str(learner_workdir) + ".moved")
    assert os.listdir(str(moved)) == [".gsb-kai-lab"] and stat.S_IMODE(moved.stat().st_mode) == 0o700


SWAPPER = """
import ctypes, sys
renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
a, b = sys.argv[1].encode(), sys.argv[2].encode()
while True:
    renameat2(-100, a, -100, b, 2)  # RENAME_EXCHANGE: the two names trade places atomically
"""


def test_provision_while_the_learner_swaps_the_workdir_never_touches_the_link_target(tmp_path):
    """Issue 18 row 4 as reproduced: wd swapped between a directory and a link in a loop (another process)."""
    if not hasattr(ctypes.CDLL(None), "renameat2"):
        pytest.skip("no renameat2 in this libc")
    victim = tmp_path / "victim"
    victim.mkdir(mode=0o755)
    workdir = tmp_path / "wd"
    workdir.mkdir(mode=0o755)
    other = tmp_path / "other"
    other.symlink_to(victim)
    learner = subprocess.Popen([sys.executable, "-c", SWAPPER, str(workdir), str(other)])
    outcomes = set()
    try:
        deadline = time.monotonic() + 10
        runs = 0
        while runs < 300 or (outcomes != {"prepared", "refused"} and time.monotonic() < deadline):
            runs += 1
            try:
                lab_workdir.prepare(str(workdir), ["/etc"], OWN_NAMES, ".gsb-kai-lab")
                outcomes.add("prepared")
            except lab_workdir.WorkdirRefused as exc:
                # Refused naming it: a link when looked at, or swapped back between the open and the look.
                assert exc.message.startswith("kai_lab_workdir %s " % workdir), exc.message
                assert ("is a symbolic link to %s:" % victim in exc.message or "is a symbolic link:" in exc.message
                        or "changed while the lab opened it (%s was a link then" % workdir in exc.message), exc.message
                outcomes.add("refused")
    finally:
        learner.kill()
        learner.wait()
    assert os.listdir(str(victim)) == [] and stat.S_IMODE(victim.stat().st_mode) == 0o755
    assert outcomes == {"prepared", "refused"}, "the learner's loop did swap during the run"


def test_reset_after_a_swap_moves_files_only_inside_the_directory_it_checked(learner_workdir, tmp_path, monkeypatch):
    victim = tmp_path / "victim"
    victim.mkdir(mode=0o755)
    (victim / "queues.yaml").write_text("root's\n")
    (learner_workdir / ".gsb-kai-lab").write_text("marker\n")
    (learner_workdir / "queues.yaml").write_text("learner's\n")
    record = tmp_path / "state" / "kai-lab.json"
    record.parent.mkdir()
    record.write_text('{"checks": {}}\n')
    opened = learner_workdir_fd.open_workdir

    def open_then_swap(path, create=False, mode=0o700):
        workdir = opened(path, create, mode)
        _swap_for_a_link(learner_workdir, victim)
        return workdir

    monkeypatch.setattr(lab_workdir, "open_workdir", open_then_swap)
    result = lab_workdir.reset(str(learner_workdir), ["/etc"], OWN_NAMES, ".gsb-kai-lab", LAB_FILES,
                               record_path=str(record))
    assert result["moved"] == ["queues.yaml"] and result["record"]
    assert sorted(os.listdir(str(victim))) == ["queues.yaml"] and (victim / "queues.yaml").read_text() == "root's\n"
    moved = Path(str(learner_workdir) + ".moved")
    (backup,) = [p for p in moved.iterdir() if p.name.startswith("backup-")]
    assert sorted(os.listdir(str(backup))) == ["grade-record.json", "queues.yaml"]
    assert stat.S_IMODE(backup.stat().st_mode) == 0o700 and not record.exists()
