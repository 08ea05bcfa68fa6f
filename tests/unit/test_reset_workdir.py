# -*- coding: utf-8 -*-
"""The kai_lab role's reset, workdir part (reset_files.yml), run by ansible-playbook.

Each test plants what issue 13 item 6 describes in a temporary workdir and
runs the real tasks on localhost: no cluster is needed for this part (the
cluster part of reset.yml is exercised by molecule). Directories outside the
workdir stand in for what a planted link points at.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry as steps

from conftest import COLLECTION_PATH, REPO

PLAYBOOK = """
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Reset the workdir
      ansible.builtin.include_role:
        name: gsb.kai_lab.kai_lab
        tasks_from: {tasks}
"""


def run_reset(tmp_path, workdir, check=False, tasks="reset_files"):
    playbook = tmp_path / "reset.yml"
    playbook.write_text(PLAYBOOK.format(tasks=tasks))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(COLLECTION_PATH), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
               ANSIBLE_PYTHON_INTERPRETER=sys.executable)
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", str(playbook),
            "-e", "kai_lab_workdir=%s" % workdir]
    if check:
        argv.append("--check")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=str(REPO), env=env, check=False)
    return done.returncode, done.stdout + done.stderr


def backups(workdir):
    return sorted(p for p in Path(workdir).iterdir() if p.name.startswith("backup-") and not p.is_symlink())


def test_role_takes_the_file_names_from_the_lab_steps():
    """No list by hand: the role's kai_lab_files is the lookup, which gives the step list's files (the reset
    tests below run it)."""
    role_vars = yaml.safe_load((REPO / "roles/kai_lab/vars/main.yml").read_text())
    assert role_vars["kai_lab_files"] == "{{ query('gsb.kai_lab.lab_steps', 'files') }}"
    assert list(steps.FILES) == [name for step in steps.STEPS for name in step.files]


def test_planted_backup_symlink_is_never_followed_and_only_lab_files_move(tmp_path):
    workdir = tmp_path / "gsb-kai"
    workdir.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o755)
    shadow = tmp_path / "shadow"
    shadow.write_text("secret\n")
    (workdir / ".gsb-kai-lab").write_text("marker\n")
    (workdir / "queues.yaml").write_text("queues\n")
    (workdir / "queues.yaml.bak-20261201-101010").write_text("old queues\n")
    (workdir / "grade.json").write_text("{}\n")
    (workdir / "nolimit.txt").symlink_to(shadow)
    (workdir / "notes.md").write_text("the learner's own notes\n")
    # Every backup name of the next minutes, planted as a link out of the workdir.
    now = time.time()
    for second in range(0, 180):
        name = "backup-%s" % time.strftime("%Y%m%d-%H%M%S", time.localtime(now + second))
        (workdir / name).symlink_to(elsewhere)
    rc, out = run_reset(tmp_path, workdir)
    assert rc == 0, out
    assert os.listdir(str(elsewhere)) == [] and stat.S_IMODE(elsewhere.stat().st_mode) == 0o755
    assert shadow.read_text() == "secret\n"
    (backup,) = backups(workdir)
    assert stat.S_IMODE(backup.stat().st_mode) == 0o700
    assert sorted(os.listdir(str(backup))) == ["grade.json", "nolimit.txt", "queues.yaml",
                                               "queues.yaml.bak-20261201-101010"]
    assert os.readlink(str(backup / "nolimit.txt")) == str(shadow), "the link moved as a link"
    assert (workdir / "notes.md").read_text() == "the learner's own notes\n"
    assert (workdir / ".gsb-kai-lab").exists()
    assert "files are in" in out and backup.name in out


def test_workdir_with_only_lab_files_is_adopted(tmp_path):
    workdir = tmp_path / "gsb-kai"
    workdir.mkdir()
    (workdir / "p1.yaml").write_text("p1\n")
    (workdir / "backup-20261130-090000-abcd").mkdir()
    rc, out = run_reset(tmp_path, workdir)
    assert rc == 0, out
    assert (workdir / ".gsb-kai-lab").is_file()
    assert [os.listdir(str(b)) for b in backups(workdir) if b.name != "backup-20261130-090000-abcd"] == [["p1.yaml"]]


def test_reset_archives_the_record_of_its_sim_state_only(tmp_path):
    # The tests' sim state (conftest) holds this lab's record; a record in
    # another state directory (the learner's own lab beside the tests) stays.
    own = Path(os.environ["KAI_LAB_SIM_STATE"]) / "grade-records"
    own.mkdir(parents=True, exist_ok=True)
    (own / "kai-lab.json").write_text('{"checks": {}}\n')
    other = tmp_path / "learner-state" / "grade-records"
    other.mkdir(parents=True)
    (other / "kai-lab.json").write_text("the learner's proofs\n")
    workdir = tmp_path / "gsb-kai"
    workdir.mkdir()
    (workdir / ".gsb-kai-lab").write_text("marker\n")
    (workdir / "queues.yaml").write_text("queues\n")
    rc, out = run_reset(tmp_path, workdir)
    assert rc == 0, out
    (backup,) = backups(workdir)
    assert sorted(os.listdir(str(backup))) == ["grade-record.json", "queues.yaml"]
    assert not (own / "kai-lab.json").exists()
    assert (other / "kai-lab.json").read_text() == "the learner's proofs\n"


def test_foreign_directory_without_marker_is_refused_and_left_alone(tmp_path):
    workdir = tmp_path / "home"
    workdir.mkdir()
    for name in ("queues.yaml", ".bashrc", "thesis.tex"):
        (workdir / name).write_text(name)
    rc, out = run_reset(tmp_path, workdir)
    assert rc != 0
    assert "holds files the lab did not write (.bashrc, thesis.tex) and no .gsb-kai-lab marker" in out
    assert "touch %s/.gsb-kai-lab" % workdir in out
    assert sorted(os.listdir(str(workdir))) == [".bashrc", "queues.yaml", "thesis.tex"]


@pytest.mark.parametrize("workdir", ["/etc", "/root", "/", "/var/../etc", "/home/"])
def test_system_directory_is_refused(tmp_path, workdir):
    rc, out = run_reset(tmp_path, workdir, check=True)
    assert rc != 0
    assert "is the system directory %s" % os.path.realpath(workdir) in out


def test_workdir_that_is_a_link_is_refused(tmp_path):
    (tmp_path / "gsb-kai").symlink_to("/etc")
    rc, out = run_reset(tmp_path, tmp_path / "gsb-kai")
    assert rc != 0 and "is a symbolic link to /etc: the lab works only in a real directory" in out


def test_missing_workdir_is_nothing_to_reset(tmp_path):
    rc, out = run_reset(tmp_path, tmp_path / "absent")
    assert rc == 0, out
    assert not (tmp_path / "absent").exists()


def test_check_mode_moves_nothing(tmp_path):
    workdir = tmp_path / "gsb-kai"
    workdir.mkdir()
    (workdir / ".gsb-kai-lab").write_text("marker\n")
    (workdir / "gang.txt").write_text("gang\n")
    rc, out = run_reset(tmp_path, workdir, check=True)
    assert rc == 0, out
    assert sorted(os.listdir(str(workdir))) == [".gsb-kai-lab", "gang.txt"]
    assert "would move to a new backup-<time>-* directory: gang.txt" in out
