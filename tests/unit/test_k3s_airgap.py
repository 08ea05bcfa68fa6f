"""Airgap mode on a real run of the role's task files (issue 36, finding 5):
every check of the control host's files and settings runs before the VM is
touched, the commands its messages give work from an installed collection,
and the wheels go to the VM in one transfer. The playbooks run on localhost
(a local connection stands in for the VM); the wheels are small stand-ins
named as pip names real ones."""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from conftest import COLLECTION_PATH, REPO
from test_k3s_artifacts import _tasks

ROLE = REPO / "roles" / "k3s"
PLAYBOOK = """
- hosts: localhost
  connection: local
  gather_facts: false
  vars:
    kai_lab_k3s_kai_version: v0.18.6
  tasks:
    - name: Read the facts the checks use (Python, machine)
      ansible.builtin.setup:
        gather_subset: ["!all", "!min", python, platform]
    - name: Run the role's {tasks}
      ansible.builtin.include_role:
        name: gsb.kai_lab.k3s
        tasks_from: {tasks}
"""
CHANGING = ("ansible.builtin.copy", "ansible.builtin.file", "ansible.builtin.template", "ansible.builtin.get_url",
            "ansible.builtin.unarchive", "ansible.builtin.apt", "ansible.builtin.pip", "ansible.builtin.tempfile")


def _play(tmp_path: Path, tasks: str, **extra) -> tuple[int, str]:
    playbook = tmp_path / ("%s.yml" % tasks)
    playbook.write_text(PLAYBOOK.format(tasks=tasks))
    variables = tmp_path / ("%s-vars.yml" % tasks)
    variables.write_text(yaml.safe_dump(extra))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(COLLECTION_PATH), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
               ANSIBLE_PYTHON_INTERPRETER=sys.executable)
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", str(playbook),
            "-e", "@%s" % variables]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=str(tmp_path), env=env, check=False)
    return done.returncode, done.stdout + done.stderr


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _airgap_dir(tmp_path: Path) -> tuple[Path, dict]:
    """An airgap directory of stand-in files, and the settings pinning their sha256."""
    base = tmp_path / "airgap"
    (base / "charts").mkdir(parents=True)
    for name in ("k3s", "k3s-airgap-images-amd64.tar.zst", "helm-v3.19.0-linux-amd64.tar.gz",
                 "charts/kai-scheduler-v0.18.6.tgz", "charts/fake-gpu-operator-0.2.0.tgz"):
        (base / name).write_bytes(b"stand-in for " + name.encode())
    settings = {
        "k3s_airgap_dir": str(base),
        "k3s_checksums": {"v1.34.3+k3s1": {"amd64": {"k3s": _sha256(base / "k3s"), "k3s-airgap-images-amd64.tar.zst":
                                                      _sha256(base / "k3s-airgap-images-amd64.tar.zst")}}},
        "k3s_helm_checksums": {"v3.19.0": {"amd64": _sha256(base / "helm-v3.19.0-linux-amd64.tar.gz")}},
        "k3s_airgap_kai_scheduler_chart_sha256": _sha256(base / "charts/kai-scheduler-v0.18.6.tgz"),
        "k3s_airgap_fake_gpu_operator_chart_sha256": _sha256(base / "charts/fake-gpu-operator-0.2.0.tgz"),
    }
    return base, settings


def _stand_in_wheels(directory: Path, python: str) -> None:
    """A pure wheel for each pin of the pinned set (pip reads its name and version from it)."""
    directory.mkdir(parents=True, exist_ok=True)
    for line in (ROLE / "files" / "constraints" / ("py%s.txt" % python)).read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        name, version = line.split("==")
        dist = re.sub(r"[-_.]+", "_", name)
        with zipfile.ZipFile(directory / ("%s-%s-py3-none-any.whl" % (dist, version)), "w") as wheel:
            info = "%s-%s.dist-info" % (dist, version)
            wheel.writestr(info + "/METADATA", "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version))
            wheel.writestr(info + "/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                            "Tag: py3-none-any\n")
            wheel.writestr(info + "/RECORD", "")


def test_every_control_host_check_runs_before_the_vm_is_touched():
    main = yaml.safe_load((ROLE / "tasks" / "main.yml").read_text())
    includes = [t.get("ansible.builtin.include_tasks") for t in main]
    first_change = next(i for i, task in enumerate(main) if "block" in task)
    checks = includes.index("airgap_checks.yml")
    assert checks < includes.index("preflight.yml") < first_change
    assert main[checks]["when"] == "k3s_airgap"
    # The checks change nothing; all but the VM's own Python run on the control host.
    for task in _tasks("airgap_checks.yml"):
        module = next(key for key in task if key.startswith("ansible.builtin."))
        assert module not in CHANGING, task["name"]
        if module not in ("ansible.builtin.assert", "ansible.builtin.fail"):
            assert task.get("delegate_to") == "localhost" or task["name"].startswith("Airgap, check that the VM's"), \
                task["name"]
            assert task.get("changed_when", False) is False or module in ("ansible.builtin.stat", "ansible.builtin.find")
    # Nothing is checked any more once the VM is being changed.
    for name in ("airgap.yml", "python.yml", "wheels.yml"):
        for task in _tasks(name):
            assert not {"ansible.builtin.assert", "ansible.builtin.fail", "ansible.builtin.stat"} & set(task), \
                (name, task["name"])


def test_the_checks_name_what_is_missing_with_commands_that_work_from_the_installed_collection(tmp_path):
    base, settings = _airgap_dir(tmp_path)
    python = "%d.%d" % sys.version_info[:2]
    # (The chart checksums' check: test_k3s_artifacts.) No image archive: the images to save are named.
    rc, out = _play(tmp_path, "airgap_checks", **settings)
    assert rc != 0 and "/images/ holds no image archive" in out
    assert "ghcr.io/kai-scheduler/kai-scheduler/scheduler:v0.18.6" in out
    (base / "images").mkdir()
    (base / "images" / "lab.tar.zst").write_bytes(b"stand-in archive")
    # No wheels: the command to fetch them, with the pinned set where this collection is installed.
    (base / "wheels").mkdir()
    rc, out = _play(tmp_path, "airgap_checks", **settings)
    assert rc != 0 and "has no wheel for Python %s" % python in out
    command = re.search(r"Fetch them on a host with PyPI with `([^`]+)`", out).group(1)
    assert "\n" not in command and "\\n" not in command, command  # one line, to paste into a shell
    constraints = re.search(r" -r (\S+)", command).group(1)
    assert os.path.isabs(constraints) and Path(constraints).is_file()
    assert Path(constraints).read_text() == (ROLE / "files" / "constraints" / ("py%s.txt" % python)).read_text()
    assert "roles/k3s/files" not in command.split(" -r ")[0]
    # The command as printed, run against a local index of stand-in wheels, fills the directory; the check passes.
    index = tmp_path / "index"
    _stand_in_wheels(index, python)
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(index), PIP_DISABLE_PIP_VERSION_CHECK="1")
    fetched = subprocess.run(shlex.split(command), capture_output=True, text=True, timeout=300, env=env, check=False)
    assert fetched.returncode == 0, fetched.stderr
    rc, out = _play(tmp_path, "airgap_checks", **settings)
    assert rc == 0, out


def test_the_wheels_go_to_the_vm_in_one_transfer(tmp_path):
    base, _ = _airgap_dir(tmp_path)
    _stand_in_wheels(base / "wheels", "%d.%d" % sys.version_info[:2])
    (base / "wheels" / "notes.txt").write_text("not a wheel")
    vm = tmp_path / "vm-wheels"
    vm.mkdir()
    tasks = [task for task in _tasks("wheels.yml") if "block" not in task]
    sending = [t for t in tasks if set(t) & {"ansible.builtin.copy", "ansible.builtin.unarchive"}]
    assert len(sending) == 1 and "ansible.builtin.unarchive" in sending[0]
    rc, out = _play(tmp_path, "wheels", k3s_airgap_dir=str(base), k3s_wheels_dir=str(vm))
    assert rc == 0, out
    assert sorted(p.name for p in vm.iterdir()) == sorted(p.name for p in (base / "wheels").glob("*.whl"))
    assert re.search(r"localhost\s*: ok=\d+\s+changed=1 ", out), out
    # Again: nothing to change, and no archive left behind on the control host.
    rc, out = _play(tmp_path, "wheels", k3s_airgap_dir=str(base), k3s_wheels_dir=str(vm))
    assert rc == 0 and re.search(r"localhost\s*: ok=\d+\s+changed=0 ", out), out
    assert not list(Path(os.environ.get("TMPDIR", "/tmp")).glob("gsb-kai-lab-wheels.*"))


def _deb(directory: Path, name: str) -> Path:
    """A real .deb (dpkg-deb --build) of an empty package."""
    root = directory / ("%s-root" % name)
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        "Package: %s\nVersion: 1.0-1\nArchitecture: all\nMaintainer: t <t@example.com>\nDescription: test\n" % name)
    deb = directory / ("%s_1%%3a1.0-1_all.deb" % name)   # an epoch, as apt-get download names it
    subprocess.run(["dpkg-deb", "--build", "--root-owner-group", str(root), str(deb)], check=True,
                   capture_output=True)
    return deb


@pytest.mark.skipif(not (shutil.which("apt-get") and shutil.which("dpkg-deb")), reason="needs apt-get and dpkg-deb")
def test_the_debs_the_vm_lacks_are_given_to_apt_by_their_path(tmp_path):
    """The install of the airgap directory's .debs (tasks/debs.yml) gave apt paths under the SSH user's home
    ("Unsupported file /home/debian/conntrack_1%3a1.4.7-1+b2_amd64.deb"): its own directory's are used now,
    and apt (simulating here) installs the package that is not installed and not one that is."""
    task = next(t for t in _tasks("debs.yml") if t["name"].startswith("Install the packages the VM lacks"))
    argv = task["ansible.builtin.command"]["argv"]
    debs = tmp_path / "debs"
    debs.mkdir()
    _deb(debs, "gsb-kai-lab-test-absent")
    installed = subprocess.run(["dpkg-query", "--show", "--showformat=${Package}\n", "dpkg"], capture_output=True,
                               text=True, check=True).stdout.strip()
    shutil.copy(_deb(tmp_path, installed), debs)      # a package the machine has: left alone
    config = tmp_path / "apt.conf"
    config.write_text('APT::Get::Simulate "true";\n')
    done = subprocess.run(argv[:3] + [argv[3], str(debs)], cwd="/", capture_output=True, text=True, check=False,
                          env=dict(os.environ, APT_CONFIG=str(config)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Inst gsb-kai-lab-test-absent" in done.stdout and "installed 1" in done.stdout, done.stdout
    assert "Inst dpkg " not in done.stdout
