# -*- coding: utf-8 -*-
"""Issue 33 row 6: a learner without root owns its workdir, under its home.

Before, a workdir inside a directory another user can change was refused
outright, so a learner's ~/gsb-kai (inside ~, which the learner owns) could
not be the lab's workdir, and a learner without root had none. Now a
workdir of that same user is accepted: all the learner could swap in is a
directory it can move, and what is opened must be the learner's; the grader
(root) still reads and writes only through the one descriptor.
"""

from __future__ import annotations

import json
import os
import stat

import pytest

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import read as learner_read
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import workdir_fd
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import workdir as lab_workdir
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import write as learner_write

LEARNER = 65534  # nobody: the learner
OTHER = 65533
OWN_NAMES = r'^(queues\.yaml|grade\.json)(\.bak-[0-9-]+)?$|^(\..+\.partial|backup-.+|\.gsb-kai-lab)$'
LAB_FILES = r'^(queues\.yaml|grade\.json)(\.bak-[0-9-]+)?$'

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the grader runs as root over a learner's home")


@pytest.fixture
def home(tmp_path):
    """The learner's home: a directory only the learner (and root) can change, in one only root can."""
    home = tmp_path / "home" / "learner"
    home.mkdir(parents=True)
    os.chown(str(home), LEARNER, LEARNER)
    home.chmod(0o755)
    return home


def _owned(path, uid=LEARNER):
    path.mkdir()
    os.chown(str(path), uid, uid)
    return path


def test_a_workdir_of_the_learner_in_its_home_is_opened(home):
    workdir = _owned(home / "gsb-kai")
    opened = workdir_fd.open_workdir(str(workdir))
    try:
        assert opened.real == str(workdir) and os.fstat(opened.fd).st_uid == LEARNER
    finally:
        opened.close()


def test_a_workdir_in_the_learners_home_that_is_not_the_learners_is_refused(home):
    (home / "gsb-kai").mkdir()  # root's: the learner could swap it for any directory of its own
    with pytest.raises(learner_read.LearnerFileError) as raised:
        workdir_fd.open_workdir(str(home / "gsb-kai"))
    assert raised.value.problem["en"] == (
        "kai_lab_workdir %s/gsb-kai is inside a directory its owner (uid 65534) can change, but is not that user's "
        "(uid 0 owns it): another user could swap it for another directory. Give the workdir to uid 65534, or use a "
        "directory whose parents only root can change, e.g. /root/gsb-kai" % home)
    assert "그 사용자의 것이 아닙니다" in raised.value.problem["ko"]


def test_a_workdir_below_directories_of_two_users_is_refused(home):
    other = _owned(home / "shared", OTHER)
    (other / "gsb-kai").mkdir()
    os.chown(str(other / "gsb-kai"), LEARNER, LEARNER)
    with pytest.raises(learner_read.LearnerFileError) as raised:
        workdir_fd.open_workdir(str(other / "gsb-kai"))
    assert "is inside %s, which its owner (uid 65533) can change" % other in raised.value.problem["en"]


def test_a_group_writable_home_is_still_refused(home):
    workdir = _owned(home / "gsb-kai")
    os.chown(str(home), LEARNER, 4242)
    home.chmod(0o775)
    with pytest.raises(learner_read.LearnerFileError) as raised:
        workdir_fd.open_workdir(str(workdir))
    assert raised.value.problem["en"].startswith("kai_lab_workdir %s is inside %s, which " % (workdir, home))


def test_a_workdir_created_in_the_learners_home_is_the_learners(home):
    opened = workdir_fd.open_workdir(str(home / "labs" / "gsb-kai"), create=True)
    opened.close()
    for path in (home / "labs", home / "labs" / "gsb-kai"):
        info = path.stat()
        assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (LEARNER, LEARNER, 0o700)


def test_provision_gives_the_workdir_to_the_learner_and_reset_keeps_its_files_its_own(home, tmp_path):
    workdir = home / "gsb-kai"
    result = lab_workdir.prepare(str(workdir), ["/etc"], OWN_NAMES, ".gsb-kai-lab", owner=(LEARNER, LEARNER))
    assert result["created"] and result["marked"]
    info = workdir.stat()
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (LEARNER, 0o700)
    # A workdir elsewhere (parents only root can change) is given to the learner as well.
    elsewhere = tmp_path / "srv" / "learner1"
    assert lab_workdir.prepare(str(elsewhere), ["/etc"], OWN_NAMES, ".gsb-kai-lab", owner=(LEARNER, LEARNER))["changed"]
    assert elsewhere.stat().st_uid == LEARNER and (tmp_path / "srv").stat().st_uid == 0
    assert not lab_workdir.prepare(str(elsewhere), ["/etc"], OWN_NAMES, ".gsb-kai-lab", owner=(LEARNER, LEARNER))["changed"]
    (workdir / "queues.yaml").write_text("learner's\n")
    os.chown(str(workdir / "queues.yaml"), LEARNER, LEARNER)
    # The grade (root) writes its report through the descriptor, owned like the workdir.
    opened = workdir_fd.open_workdir(str(workdir))
    try:
        learner_write.write_file(opened, "grade.json", json.dumps({}) + "\n")
    finally:
        opened.close()
    assert (workdir / "grade.json").stat().st_uid == LEARNER
    done = lab_workdir.reset(str(workdir), ["/etc"], OWN_NAMES, ".gsb-kai-lab", LAB_FILES, owner=(LEARNER, LEARNER))
    assert sorted(done["moved"]) == ["grade.json", "queues.yaml"]
    backup = workdir / os.path.basename(done["backup"])
    assert backup.stat().st_uid == LEARNER and (backup / "queues.yaml").read_text() == "learner's\n"


def test_an_unknown_learner_is_named(home):
    with pytest.raises(lab_workdir.WorkdirRefused) as raised:
        lab_workdir.user_ids("no-such-learner-33")
    assert "the learner's user no-such-learner-33 does not exist on this host" in raised.value.message


# ---------------------------------------------------------------- the example a refusal gives

def _refusal(case, home):
    """(en, ko) of the refusal that gives the lab's default workdir as the example of a better one."""
    if case == "system_directory":  # a system directory as the workdir
        with pytest.raises(lab_workdir.WorkdirRefused) as refused:
            lab_workdir.inspect(str(home), [str(home)], OWN_NAMES, ".gsb-kai-lab")
        return tuple(refused.value.message.split(" / ", 1))
    if case == "changeable":  # a directory on the way another user can change
        _owned(home / "gsb-kai")
        os.chown(str(home), LEARNER, 4242)
        home.chmod(0o775)
    else:  # not_the_owners: in the learner's home, but root's
        (home / "gsb-kai").mkdir()
    with pytest.raises(learner_read.LearnerFileError) as raised:
        workdir_fd.open_workdir(str(home / "gsb-kai"))
    return raised.value.problem["en"], raised.value.problem["ko"]


@pytest.mark.parametrize("case", ["changeable", "not_the_owners", "system_directory"])
def test_the_example_workdir_is_the_labs_default_in_both_languages(home, monkeypatch, case):
    """The example a refusal gives is the lab's default workdir, set once (learner/workdir_fd.py
    DEFAULT_WORKDIR, the modules' and kai-lab's default): change it and both languages follow."""
    monkeypatch.setattr(workdir_fd, "DEFAULT_WORKDIR", "/srv/labs/kai-7")
    en, ko = _refusal(case, home)
    assert "e.g. /srv/labs/kai-7" in en and "(예: /srv/labs/kai-7)" in ko, (en, ko)
    assert "/root/gsb-kai" not in en + ko
