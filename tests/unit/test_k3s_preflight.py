"""The k3s target's preflight (roles/k3s/tasks/preflight.yml, decisions in
plugins/module_utils/targets/k3s/preflight.py): its verdict on the facts of each
supported image (tests/unit/fixtures/k3s_facts/, each saying where its values
come from), on the facts recorded from the build machine (a container: no
systemd), and on VMs that are too small, too old or wrongly set up. Each
problem says what to do in English and Korean, and nothing is installed before
the preflight passes."""

from __future__ import annotations

import copy
import json
import re
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from role_templating import trust

from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s import preflight as k3s_preflight

ROOT = Path(__file__).resolve().parents[2]
ROLE = ROOT / "roles" / "k3s"
FACTS = Path(__file__).resolve().parent / "fixtures" / "k3s_facts"
IMAGES = ["ubuntu-22.04-amd64", "ubuntu-22.04-arm64", "ubuntu-24.04-amd64", "debian-12-amd64", "debian-13-arm64"]
GOOD = {"venv_rc": 0, "venv_stderr": "", "ntp_synchronized": "yes", "clock_skew": -3}
HANGUL = re.compile("[\uac00-\ud7a3]")
# What Debian's and Ubuntu's python3 print without python3-venv (CPython's venv, Debian patch).
NO_VENV = ("The virtual environment was not created successfully because ensurepip is not\n"
           "available.  On Debian/Ubuntu systems, you need to install the python3-venv\n"
           "package using the following command.\n\n    apt install python3.10-venv\n\n"
           "You may need to use sudo with that command.  After installing the python3-venv\n"
           "package, recreate your virtual environment.\n\nFailing command: /tmp/gsb-kai-lab-venv.x/venv/bin/python3\n")


def facts(name: str) -> dict:
    return json.loads((FACTS / (name + ".json")).read_text())["ansible_facts"]


def checks(problems: list[dict]) -> list[str]:
    return [problem["check"] for problem in problems]


@pytest.mark.parametrize("image", IMAGES)
def test_each_supported_image_passes(image):
    assert k3s_preflight.check(facts(image), GOOD) == []


def test_every_fixture_says_where_its_values_come_from():
    for path in FACTS.glob("*.json"):
        assert len(json.loads(path.read_text())["_source"]) > 40, path


def test_the_build_machine_a_container_is_refused_for_its_missing_systemd():
    problems = k3s_preflight.check(facts("build-machine-debian12"), GOOD)
    assert checks(problems) == ["systemd"]
    assert "process_api" in problems[0]["en"] and "container" in problems[0]["en"]


@pytest.mark.parametrize(
    ("change", "probes", "check", "words"),
    [
        ({"distribution_version": "20.04", "distribution_major_version": "20"}, {}, "os", "Ubuntu 20.04"),
        ({"distribution": "CentOS", "os_family": "RedHat"}, {}, "os", "CentOS"),
        ({"python": {"version": {"major": 3, "minor": 8}}}, {}, "python", "Python 3.8"),
        ({"architecture": "armv7l"}, {}, "architecture", "armv7l"),
        ({"processor_vcpus": 1}, {}, "cpus", "1 CPU"),
        ({"memtotal_mb": 1987}, {}, "memory", "1987 MiB"),
        ({}, {"venv_rc": 1, "venv_stderr": NO_VENV}, "venv", "python3-venv"),
        ({}, {"ntp_synchronized": "no", "clock_skew": 400}, "time", "+400 s"),
        ({}, {"ntp_synchronized": "", "clock_skew": None}, "time", "unknown"),
    ],
)
def test_each_problem_is_named_with_what_to_do_in_english_and_korean(change, probes, check, words):
    vm = facts("ubuntu-22.04-amd64")
    vm.update(copy.deepcopy(change))
    problems = k3s_preflight.check(vm, dict(GOOD, **probes))
    assert checks(problems) == [check]
    assert words in problems[0]["en"]
    assert HANGUL.search(problems[0]["ko"])


def test_a_clock_close_to_the_control_hosts_passes_without_ntp():
    # An airgapped VM may have no NTP server: a clock within a minute still serves TLS and k3s.
    assert k3s_preflight.check(facts("debian-12-amd64"), dict(GOOD, ntp_synchronized="no", clock_skew=20)) == []


def test_free_disk_is_read_on_the_filesystem_that_holds_k3s_data():
    vm = facts("debian-12-amd64")
    vm["mounts"].append({"mount": "/var/lib", "device": "/dev/vdb", "fstype": "ext4",
                         "size_total": 8 * 1024 ** 3, "size_available": 5 * 1024 ** 3})
    problems = k3s_preflight.check(vm, GOOD)
    assert checks(problems) == ["disk"] and "/var/lib" in problems[0]["en"] and "5.0 GiB" in problems[0]["en"]
    # The same VM with its data directory on the large root filesystem passes.
    assert k3s_preflight.check(vm, GOOD, data_dir="/srv/k3s") == []


GIB = 1024 ** 3


def _disk(total_gib: float, free_gib: float) -> dict:
    vm = facts("debian-12-amd64")
    root = next(m for m in vm["mounts"] if m["mount"] == "/")
    root.update(size_total=int(total_gib * GIB), size_available=int(free_gib * GIB))
    return vm


def test_a_stock_10_gib_disk_passes_and_a_full_one_is_told_what_it_needs():
    """A stock image on a 10 GiB disk has 8.3 GiB free (measured, issue 36): enough for the lab."""
    assert k3s_preflight.check(_disk(9.75, 8.3), GOOD) == []
    problems = k3s_preflight.check(_disk(9.75, 4.9), GOOD)
    assert checks(problems) == ["disk"]
    assert "4.9 GiB are free" in problems[0]["en"] and "5.5 GiB free" in problems[0]["en"]
    assert HANGUL.search(problems[0]["ko"]) and "5.5 GiB" in problems[0]["ko"]
    # A large disk nearly full: the lab's 4 GiB would leave it over the kubelet's 85 %, where it deletes images.
    assert checks(k3s_preflight.check(_disk(40, 6), GOOD)) == ["disk"]
    assert k3s_preflight.check(_disk(40, 10.5), GOOD) == []


def test_the_guides_and_readmes_say_the_disk_the_preflight_wants():
    """One source: the disk a stock image needs, and the free space on it, as the preflight computes them."""
    stock = "%d GiB" % k3s_preflight.STOCK_DISK_GIB
    free = "%.1f GiB free" % k3s_preflight.min_free_gib(k3s_preflight.STOCK_DISK_GIB * GIB)
    assert free == "5.5 GiB free"
    guide = (ROOT / "docs" / "docsite" / "rst" / "instructor_guide.rst").read_text()
    rows = [line for line in guide.split("The k3s target\n", 1)[1].splitlines() if line.startswith(("Ubuntu ", "Debian "))]
    assert rows and all("%s (%s)" % (stock, free) in row for row in rows)
    readme = (ROOT / "README.md").read_text()
    line = next(line for line in readme.split("- The k3s target:", 1)[1].split("\n- ", 1)[0].splitlines())
    text = " ".join(readme.split("- The k3s target:", 1)[1].split("\n- ", 1)[0].split())
    assert "%s disk (%s)" % (stock, free) in text, line
    role = " ".join((ROLE / "README.md").read_text().split())
    assert "%s disk (%s for `/var/lib/rancher/k3s`)" % (stock, free) in role
    assert "10 GiB free" not in guide + readme + role


def test_the_ubuntu_22_04_python_needs_its_pinned_set():
    # A VM whose Python has no pinned set is refused before pip would fail on it.
    assert checks(k3s_preflight.check(facts("ubuntu-22.04-amd64"), GOOD, pythons=["3.11", "3.12"])) == ["python"]


def test_a_check_can_be_skipped_knowingly_and_a_wrong_name_is_refused():
    vm = facts("ubuntu-22.04-amd64")
    vm["distribution_version"] = "25.04"
    assert checks(k3s_preflight.check(vm, GOOD)) == ["os"]
    assert k3s_preflight.check(vm, GOOD, skip=["os"]) == []
    assert checks(k3s_preflight.check(vm, GOOD, skip=["operating-system"])) == ["skip"]


def test_the_argument_spec_offers_exactly_the_checks():
    spec = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())
    assert spec["argument_specs"]["main"]["options"]["k3s_preflight_skip"]["choices"] == list(k3s_preflight.CHECKS)


def test_the_guides_table_is_the_supported_images():
    """The instructor guide's table of supported images (an RST simple table) is the preflight's list."""
    guide = (ROOT / "docs" / "docsite" / "rst" / "instructor_guide.rst").read_text()
    section = guide.split("The k3s target\n", 1)[1]
    rows = [re.split(r"\s{2,}|(?<=\d) ", line.strip(), maxsplit=2) for line in section.splitlines()
            if line.startswith(("Ubuntu ", "Debian "))]
    table = [(cells[0], cells[1]) for cells in rows]
    assert table == [("%s %s" % (name, version), python) for name, version, python in k3s_preflight.SUPPORTED_IMAGES]


def _preflight_problems(vm: dict, venv_rc: int = 0, ntp: str = "yes", facts_age: int = 0,
                        vm_clock_off: float = 0.0) -> list[dict]:
    """The role's own assert task, evaluated with Ansible's templating on these facts.

    facts_age: seconds between the facts and the assert (the preflight's own
    run time); vm_clock_off: the VM's clock less the control host's."""
    tasks = yaml.safe_load((ROLE / "tasks" / "preflight.yml").read_text())
    task = next(t for t in tasks if t["name"] == "Check that this VM can take the lab")
    loader = DataLoader()
    variables = dict(trust(loader.load_from_file(str(ROLE / "defaults" / "main.yml"))))
    variables.update(trust(loader.load_from_file(str(ROLE / "vars" / "main.yml"))))
    now = time.time()
    epoch = str(int(now - facts_age + vm_clock_off))
    # The clock probe as the VM answers it: the control host's time sent with
    # the command (2 s before the assert), the VM's clock read 1 s later, NTP.
    sent = now - 2
    clock = {"stdout_lines": ["%.3f" % sent, str(int(sent + 1 + vm_clock_off)), ntp], "rc": 0}
    variables.update(ansible_facts=dict(vm, date_time={"epoch": epoch}), role_path=str(ROLE), inventory_hostname="vm",
                     k3s_preflight_venv={"rc": venv_rc, "stderr": NO_VENV if venv_rc else "", "stdout": ""},
                     k3s_preflight_ntp={"stdout": ntp}, k3s_preflight_clock=clock, **trust(task["vars"]))
    templar = Templar(loader=loader, variables=variables)
    problems = templar.template(trust_as_template("{{ k3s_preflight_problems }}"))
    message = templar.template(trust_as_template(task["ansible.builtin.assert"]["fail_msg"]))
    return problems, message


def test_the_role_task_decides_on_the_facts_and_names_every_problem():
    assert _preflight_problems(facts("ubuntu-22.04-arm64"))[0] == []
    vm = facts("debian-13-arm64")
    vm["memtotal_mb"] = 1900
    problems, message = _preflight_problems(vm, venv_rc=1)
    assert checks(problems) == ["memory", "venv"]
    assert "nothing was installed" in message
    for problem in problems:
        assert problem["en"] in message and problem["ko"] in message


def test_the_preflights_own_run_time_is_no_clock_skew():
    """A VM whose preflight takes 120 s (its trial venv) and whose clock is within 2 s passes; 300 s off fails."""
    vm = facts("debian-12-amd64")
    assert _preflight_problems(vm, ntp="no", facts_age=120, vm_clock_off=1.5)[0] == []
    problems, message = _preflight_problems(vm, ntp="no", facts_age=120, vm_clock_off=300)
    assert checks(problems) == ["time"]
    assert "The VM's clock is not synchronised (NTPSynchronized=no) and is +" in message
    off = int(re.search(r"is \+(\d+) s off", message).group(1))
    assert 295 <= off <= 300
    problems, message = _preflight_problems(vm, ntp="no", facts_age=120, vm_clock_off=-300)
    assert checks(problems) == ["time"] and re.search(r"is -(29[5-9]|300) s off", message)
    # NTP synchronised: the offset is not asked about.
    assert _preflight_problems(vm, ntp="yes", facts_age=120, vm_clock_off=300)[0] == []


@pytest.mark.parametrize(
    ("before", "vm", "after", "skew"),
    [
        (1000.2, 1001, 1130.0, 0),      # read within the round trip: no skew, however long it took
        (1000.2, 1000, 1003.0, 0),      # date +%s truncates: up to 1 s early is the same second
        (1000.2, 1400, 1003.0, 397),    # ahead of the control host's time when the answer came
        (1000.2, 700, 1003.0, -299),    # behind the time the command was sent
        (1000.2, "", 1003.0, None),     # no answer (no date, no sh): unknown
        (None, 1000, 1003.0, None),
    ],
)
def test_clock_skew_counts_only_what_lies_outside_the_round_trip(before, vm, after, skew):
    result = k3s_preflight.clock_skew(before, vm, after)
    assert result == skew if skew is None else round(result) == skew


def _flat(tasks):
    for task in tasks:
        yield task
        yield from _flat(task.get("block", []))


def test_nothing_is_installed_before_the_preflight():
    tasks = yaml.safe_load((ROLE / "tasks" / "main.yml").read_text())
    names = [task.get("ansible.builtin.include_tasks") for task in tasks]
    first_change = next(i for i, task in enumerate(tasks) if "block" in task)
    assert names.index("preflight.yml") < first_change
    # Before the block only checks: facts, asserts, and task files that only ask (test_k3s_airgap, test_k3s_reachability).
    checks_only = {"preflight.yml", "reachability.yml", "airgap_checks.yml"}
    assert all(not any(key.startswith(("ansible.builtin.include", "ansible.builtin.apt", "ansible.builtin.pip",
                                       "ansible.builtin.get_url", "ansible.builtin.copy", "ansible.builtin.template"))
                       for key in task) for task in tasks[:first_change] if task.get("ansible.builtin.include_tasks")
               not in checks_only)
    asking = {key for task in yaml.safe_load((ROLE / "tasks" / "reachability.yml").read_text()) for key in task
              if key.startswith("ansible.builtin.")}
    assert asking == {"ansible.builtin.command", "ansible.builtin.fail"}
    # The preflight makes only a throwaway venv in a temporary directory that goes with it.
    modules = {key for task in yaml.safe_load((ROLE / "tasks" / "preflight.yml").read_text()) for key in task
               if key.startswith("ansible.builtin.")}
    assert modules == {"ansible.builtin.command", "ansible.builtin.assert"}


def test_the_preflight_reports_no_change_and_leaves_nothing(tmp_path):
    """A run that installs nothing reports nothing changed (issue 36: the trial venv's temporary directory did)."""
    for task in yaml.safe_load((ROLE / "tasks" / "preflight.yml").read_text()):
        module = next(key for key in task if key.startswith("ansible.builtin."))
        assert module in ("ansible.builtin.command", "ansible.builtin.assert"), task["name"]
        assert module == "ansible.builtin.assert" or task["changed_when"] is False, task["name"]
    # Run for real on this machine (no systemd here: that check and the size checks are left out).
    from test_k3s_airgap import _play  # pylint: disable=import-outside-toplevel
    scratch = sorted(Path(tempfile.gettempdir()).glob("gsb-kai-lab-venv.*"))
    rc, out = _play(tmp_path, "preflight", k3s_preflight_skip=["systemd", "os", "cpus", "memory", "disk"])
    assert rc == 0, out
    assert re.search(r"localhost\s*: ok=\d+\s+changed=0 ", out), out
    assert sorted(Path(tempfile.gettempdir()).glob("gsb-kai-lab-venv.*")) == scratch


# ---------------------------------------------------------------- host tools (issue 43)

TOOL_PACKAGES = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())["k3s_host_packages"]
DEBS_DIR = "/srv/bundle/debs/debian-12"


def _tools(missing, airgap=True, debs=()):
    return dict(GOOD, missing=list(missing), airgap=airgap, debs=list(debs), debs_dir=DEBS_DIR,
                tool_packages=TOOL_PACKAGES)


def test_airgapped_each_host_tool_the_vm_lacks_and_no_deb_brings_is_named():
    """A k3s without k3s-root needs the VM's iptables, ipset, conntrack and ethtool; the trial's VM had none
    of them and no python3-packaging, and airgap mode installed no Debian package."""
    vm = facts("debian-12-amd64")
    problems = k3s_preflight.check(vm, _tools(["iptables", "ipset", "packaging"], debs=["ipset", "libipset13"]))
    assert checks(problems) == ["tools"]
    en, ko = problems[0]["en"], problems[0]["ko"]
    assert "iptables (Debian package iptables), packaging (Debian package python3-packaging)" in en
    assert "ipset (" not in en and DEBS_DIR in en and "`sudo apt-get install iptables python3-packaging`" in en
    assert HANGUL.search(ko) and "iptables" in ko and DEBS_DIR in ko
    # Every one of them brought by a .deb: installed by provision, no problem.
    assert k3s_preflight.check(vm, _tools(["iptables", "ipset", "packaging"],
                                          debs=["iptables", "ipset", "python3-packaging"])) == []
    # Online apt installs them; skipped knowingly, not asked.
    assert k3s_preflight.check(vm, _tools(["iptables", "packaging"], airgap=False)) == []
    assert k3s_preflight.check(vm, _tools(["iptables"]), skip=["tools"]) == []


def _role_preflight(stdout_lines: list[str], airgap: bool, debs: list[str]) -> tuple[list, str]:
    tasks = yaml.safe_load((ROLE / "tasks" / "preflight.yml").read_text())
    task = next(t for t in tasks if t["name"] == "Check that this VM can take the lab")
    loader = DataLoader()
    variables = dict(trust(loader.load_from_file(str(ROLE / "defaults" / "main.yml"))))
    variables.update(trust(loader.load_from_file(str(ROLE / "vars" / "main.yml"))))
    now = time.time()
    variables.update(ansible_facts=facts("debian-12-amd64"), role_path=str(ROLE), inventory_hostname="vm",
                     k3s_preflight_venv={"rc": 0, "stderr": "", "stdout": ""},
                     k3s_preflight_clock={"stdout_lines": ["%.3f" % now, str(int(now)), "yes"]},
                     k3s_preflight_tools={"stdout_lines": stdout_lines, "rc": 0},
                     k3s_airgap_dir="/srv/bundle" if airgap else "", k3s_host_tools=["iptables", "ipset"],
                     k3s_airgap_debs={"files": [{"path": "/srv/bundle/debs/debian-12/%s_1.0-1_amd64.deb" % name}
                                                for name in debs]}, **trust(task["vars"]))
    templar = Templar(loader=loader, variables=variables)
    problems = templar.template(trust_as_template("{{ k3s_preflight_problems }}"))
    return problems, templar.template(trust_as_template(task["ansible.builtin.assert"]["fail_msg"]))


def test_the_role_probes_the_host_tools_and_names_each_one_missing():
    tasks = yaml.safe_load((ROLE / "tasks" / "preflight.yml").read_text())
    probe = next(t for t in tasks if t.get("register") == "k3s_preflight_tools")
    # As the probe answers on a VM with ipset only: one line per missing name.
    problems, message = _role_preflight(["missing iptables", "missing packaging"], airgap=True, debs=["ipset"])
    assert checks(problems) == ["tools"]
    assert "iptables (Debian package iptables), packaging (Debian package python3-packaging)" in message
    assert "/srv/bundle/debs/debian-12" in message and "nothing was installed" in message
    assert _role_preflight(["missing iptables", "missing packaging"], airgap=True,
                           debs=["iptables", "python3-packaging", "libxtables12"])[0] == []
    assert _role_preflight(["missing iptables"], airgap=False, debs=[])[0] == []
    assert probe["changed_when"] is False and "import packaging" in probe["ansible.builtin.command"]["argv"]


def test_what_the_vm_lacks_is_installed_online_with_apt_and_airgapped_from_the_debs():
    loader = DataLoader()
    variables = dict(trust(loader.load_from_file(str(ROLE / "defaults" / "main.yml"))))
    variables.update(trust(loader.load_from_file(str(ROLE / "vars" / "main.yml"))))
    variables.update(ansible_facts=facts("debian-12-amd64"),
                     k3s_preflight_tools={"stdout_lines": ["missing iptables", "missing packaging"]})
    templar = Templar(loader=loader, variables=variables)
    assert templar.template(trust_as_template("{{ k3s_host_packages_missing }}")) == ["iptables", "python3-packaging"]
    packages = [inner for task in yaml.safe_load((ROLE / "tasks" / "packages.yml").read_text())
                for inner in [task] + task.get("block", []) + task.get("always", [])]
    apt = next(t for t in packages if "ansible.builtin.apt" in t)
    names = templar.template(trust(apt["ansible.builtin.apt"]["name"]))
    assert {"iptables", "python3-packaging", "python3-venv"} <= set(names)
    debs = next(t for t in packages if t.get("ansible.builtin.include_tasks") == "debs.yml")
    assert debs["when"] == "k3s_airgap and k3s_host_packages_missing | length > 0"
    before = [inner for task in yaml.safe_load((ROLE / "tasks" / "before_k3s.yml").read_text())
              for inner in [task] + task.get("block", [])]
    include = next(t for t in before if (t.get("ansible.builtin.include_tasks") or {}).get("file") == "packages.yml")
    templar.available_variables = dict(templar.available_variables, k3s_airgap_dir="/srv/bundle")
    assert templar.evaluate_conditional(trust_as_template(include["when"]))
    templar.available_variables = dict(templar.available_variables, k3s_preflight_tools={"stdout_lines": []})
    assert not templar.evaluate_conditional(trust_as_template(include["when"]))
    assert templar.template(trust_as_template("{{ k3s_airgap_debs_dir }}")) == "/srv/bundle/debs/debian-12"
