"""Teardown of the k3s VM: roles/k3s/files/k3s-killall.sh run against a
made-up VM (stub ps, ip, umount, iptables on PATH; kill replaced by a shell
function, so nothing on this machine is signalled), and the paths
tasks/teardown.yml removes."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
import yaml

from ansible.template import trust_as_template
from test_k3s_artifacts import _get, _tasks, _templar

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "roles" / "k3s" / "files" / "k3s-killall.sh"
DATA = "/var/lib/rancher/k3s"
SHIM = DATA + "/data/abc123/bin/containerd-shim-runc-v2"
# pid ppid args; pids above the kernel's pid_max, in case anything leaked.
PROCESSES = [
    (9000001, 1, "/usr/local/bin/k3s server"),
    (9000010, 1, SHIM + " -namespace k8s.io -id aaa"),
    (9000011, 9000010, "/pause"),
    (9000012, 9000010, "/usr/bin/status-updater"),
    (9000013, 9000012, "sleep infinity"),
    (9000020, 1, SHIM + " -namespace k8s.io -id bbb"),
    (9000021, 9000020, "sleep infinity"),
    (9000030, 1, "/usr/bin/containerd-shim-runc-v2 -namespace moby"),  # not k3s's
    (9000031, 9000030, "nginx"),
]
MOUNTS = """overlay /run/k3s/containerd/io.containerd.runtime.v2.task/k8s.io/aaa/rootfs overlay rw 0 0
shm /run/k3s/containerd/io.containerd.grpc.v1.cri/sandboxes/aaa/shm tmpfs rw 0 0
tmpfs /var/lib/kubelet/pods/uid-1/volumes/kubernetes.io~projected/kube-api-access tmpfs rw 0 0
nsfs /run/netns/cni-1111-2222 nsfs rw 0 0
/dev/sda1 / ext4 rw 0 0
tmpfs /run/user/0 tmpfs rw 0 0
"""
RULES = """*filter
:INPUT ACCEPT [0:0]
:KUBE-FIREWALL - [0:0]
:FLANNEL-FWD - [0:0]
-A INPUT -j KUBE-FIREWALL
-A FORWARD -s 10.42.0.0/16 -m comment --comment "flanneld forward" -j ACCEPT
-A INPUT -p tcp --dport 22 -j ACCEPT
COMMIT
"""


def _stub(directory: Path, name: str, body: str) -> None:
    path = directory / name
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def _vm(tmp_path: Path, processes=PROCESSES, mounts=MOUNTS, rules=RULES, links=("cni0", "flannel.1"),
        netns="cni-1111-2222 (id: 0)\nlab-other (id: 1)", veths="7: vethab12@if2: <BROADCAST> mtu 1450 master cni0"):
    stubs = tmp_path / "bin"
    stubs.mkdir()
    log = tmp_path / "log"
    table = "\n".join("%d %d %s" % p for p in processes)
    _stub(stubs, "ps", f'''
table='{table}'
if [ "$*" = "-e -o ppid= -o pid=" ]; then printf '%s\\n' "$table" | awk '{{print $2, $1}}'
elif [ "$*" = "-e -o pid= -o args=" ]; then printf '%s\\n' "$table" | awk '{{$2=""; print}}'
fi
''')
    _stub(stubs, "umount", f'echo "umount $*" >> {log}\n')
    link_list = " ".join(links)
    _stub(stubs, "ip", f'''
case "$*" in
  "netns list") printf '%s\n' "{netns}" | grep . ;;
  "-o link show master cni0") printf '%s\n' "{veths}" | grep . ;;
  "link show "*) for l in {link_list}; do [ "$l" = "$3" ] && exit 0; done; exit 1;;
  *) echo "ip $*" >> {log};;
esac
''')
    (tmp_path / "rules").write_text(rules)
    _stub(stubs, "iptables-save", f"cat {tmp_path / 'rules'}\n")
    _stub(stubs, "iptables-restore", f"cat > {tmp_path / 'restored'}\n")
    (tmp_path / "mounts").write_text(mounts)
    (tmp_path / "bashenv").write_text(f'kill() {{ echo "kill $*" >> {log}; }}\n')
    env = {"PATH": f"{stubs}:/usr/bin:/bin", "K3S_DATA_DIR": DATA, "MOUNTS": str(tmp_path / "mounts"),
           "BASH_ENV": str(tmp_path / "bashenv")}
    return env, log


def _run(tmp_path, **kwargs):
    env, log = _vm(tmp_path, **kwargs)
    out = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    lines = log.read_text().splitlines() if log.exists() else []
    return out.stdout, lines


def test_every_shim_is_killed_with_its_whole_tree_and_nothing_else(tmp_path):
    stdout, log = _run(tmp_path)
    kills = [line for line in log if line.startswith("kill ")]
    assert len(kills) == 1
    killed = set(kills[0].split()[2:])
    assert killed == {"9000010", "9000011", "9000012", "9000013", "9000020", "9000021"}
    assert "changed" in stdout


def test_mounts_netns_interfaces_and_chains_are_released(tmp_path):
    _, log = _run(tmp_path)
    umounts = [line.split()[-1] for line in log if line.startswith("umount")]
    assert umounts == [
        "/run/k3s/containerd/io.containerd.runtime.v2.task/k8s.io/aaa/rootfs",
        "/run/k3s/containerd/io.containerd.grpc.v1.cri/sandboxes/aaa/shm",
        "/var/lib/kubelet/pods/uid-1/volumes/kubernetes.io~projected/kube-api-access",
        "/run/netns/cni-1111-2222",
    ]
    assert "ip netns delete cni-1111-2222" in log
    assert not [line for line in log if "lab-other" in line]
    assert "ip link delete vethab12" in log
    assert "ip link delete cni0" in log and "ip link delete flannel.1" in log
    assert "ip link delete kube-ipvs0" not in log
    restored = (tmp_path / "restored").read_text()
    assert "KUBE-" not in restored and "flannel" not in restored.lower()
    assert "--dport 22 -j ACCEPT" in restored


def test_a_clean_vm_reports_no_change(tmp_path):
    stdout, log = _run(tmp_path, processes=[(9000001, 1, "/sbin/init")], mounts="/dev/sda1 / ext4 rw 0 0\n",
                       rules="*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n", links=(), netns="lab-other (id: 1)", veths="")
    assert log == []
    assert "changed" not in stdout
    assert not (tmp_path / "restored").exists()


def test_values_reach_the_script_through_its_environment_only():
    task = next(t for t in _tasks("teardown.yml") if "ansible.builtin.script" in t)
    assert task["ansible.builtin.script"]["cmd"] == "k3s-killall.sh"
    assert set(task["environment"]) == {"K3S_DATA_DIR", "MOUNTS"}
    assert "{{" not in SCRIPT.read_text()


def test_teardown_removes_every_lab_state_directory():
    templar = _templar()
    task = next(t for t in _tasks("teardown.yml") if "ansible.builtin.file" in t)
    assert task["loop"] == "{{ k3s_teardown_paths }}"
    removed = set(_get(templar, "k3s_teardown_paths"))
    assert {"/var/lib/cni", "/var/lib/runai", "/var/lib/rancher", "/etc/rancher", "/var/lib/kubelet",
            "/run/k3s", "/run/flannel", "/usr/local/bin/k3s", "/root/.kube/config"} <= removed


# --- what provision made, and teardown removes by record (issue 36) ---------

LEARNER = {"getent_passwd": {"debian": ["x", "1000", "1000", "", "/home/debian", "/bin/bash"]}}


def test_the_learners_kubeconfig_is_removed_under_ansible_2_19():
    """2.19 refused this condition ("derived from value of type 'list'") on every VM with a learner user."""
    task = next(t for t in _tasks("teardown.yml") if t["name"] == "Remove the learner's copy of the kubeconfig")
    condition = trust_as_template(task["when"])
    assert _templar(kai_lab_learner_user="debian", ansible_facts=LEARNER).evaluate_conditional(condition) is True
    assert _templar(kai_lab_learner_user="gone", ansible_facts=LEARNER).evaluate_conditional(condition) is False
    assert _templar(ansible_facts={}).evaluate_conditional(condition) is False


def _dpkg(*installed, others=("config-files old-tool", "not-installed python3-packaging")):
    return {"stdout_lines": ["installed " + name for name in installed] + list(others)}


def _made(**registered):
    variables = {"k3s_made_now": "{{ k3s_made_now }}", "k3s_made": "{{ k3s_made }}"}
    templar = _templar(**registered)
    return {name: templar.template(trust_as_template(value)) for name, value in variables.items()}


STOCK = ("python3", "ca-certificates", "python3-venv")
ROOT_KUBE = {"item": {"path": "/root/.kube"}, "diff": {"before": {"path": "/root/.kube", "state": "absent"}}}
STATE = {"item": {"path": "/var/lib/gsb-kai-lab"}, "diff": {"before": {"path": "/var/lib/gsb-kai-lab", "state": "absent"}}}
LEARNER_KUBE = {"item": {"path": "/home/debian/.kube"},
                "diff": {"before": {"path": "/home/debian/.kube", "state": "absent"}}}


def test_provision_records_the_packages_it_installed_and_the_kube_directories_it_made():
    first = _made(ansible_facts={"architecture": "x86_64"},
                  k3s_apt_before=_dpkg(*STOCK),
                  k3s_apt_after=_dpkg(*STOCK, "python3-apt", "python-apt-common", "python3-packaging"),
                  k3s_directories={"results": [STATE, ROOT_KUBE, LEARNER_KUBE]})
    # Root's ~/.kube only: teardown removes a recorded directory's cache by path, which in the learner's home
    # could be a link the learner planted (issue 40).
    assert first["k3s_made_now"] == {"packages": ["python-apt-common", "python3-apt", "python3-packaging"],
                                     "paths": ["/root/.kube"]}
    record = next(t for t in _tasks("record.yml"))
    assert record["ansible.builtin.copy"]["dest"] == "{{ k3s_made_facts_dir }}/made.fact"
    assert _templar().template(trust_as_template("{{ k3s_made_facts_dir }}")) == "/var/lib/gsb-kai-lab/facts.d"
    # Provision again: nothing installed, ~/.kube there: the record stays.
    again = _made(ansible_facts={"architecture": "x86_64", "ansible_local": {"made": first["k3s_made_now"]}},
                  k3s_apt_before=_dpkg(*STOCK, "python3-apt", "python-apt-common", "python3-packaging"),
                  k3s_apt_after=_dpkg(*STOCK, "python3-apt", "python-apt-common", "python3-packaging"),
                  k3s_directories={"results": [{"item": {"path": "/root/.kube"}, "diff": {"before": {
                      "path": "/root/.kube", "state": "directory"}}}]})
    assert again["k3s_made_now"] == again["k3s_made"] == first["k3s_made_now"]
    templar = _templar(ansible_facts={"architecture": "x86_64", "ansible_local": {"made": first["k3s_made_now"]}})
    assert templar.evaluate_conditional(trust_as_template(record["when"])) is False
    # A VM that had everything: nothing is recorded.
    stock = _made(ansible_facts={"architecture": "x86_64"}, k3s_apt_before=_dpkg(*STOCK), k3s_apt_after=_dpkg(*STOCK),
                  k3s_directories={"results": [{"item": {"path": "/root/.kube"}, "diff": {"before": {
                      "path": "/root/.kube", "state": "directory"}}}]})
    assert stock["k3s_made_now"] == {"packages": [], "paths": []}


def _in_order(name):
    """A task file's tasks as Ansible runs them: blocks and static imports in place."""
    for task in _tasks(name):
        if "ansible.builtin.import_tasks" in task:
            yield from _in_order(task["ansible.builtin.import_tasks"])
            continue
        yield task
        for key in ("block", "rescue", "always"):
            for inner in task.get(key, []):
                if "ansible.builtin.import_tasks" in inner:
                    yield from _in_order(inner["ansible.builtin.import_tasks"])
                else:
                    yield inner


def test_the_provision_reads_the_record_and_writes_it_after_the_packages():
    main = list(_in_order("main.yml"))
    setup = main[0]["ansible.builtin.setup"]
    assert setup["fact_path"] == "{{ k3s_made_facts_dir }}"
    names = [t.get("ansible.builtin.include_tasks", {}).get("file") for t in main
             if isinstance(t.get("ansible.builtin.include_tasks"), dict)]
    assert names.index("packages.yml") < names.index("record.yml") < names.index("python.yml")
    packages = [next(k for k in t if k.startswith("ansible.builtin.")) for t in _tasks("packages.yml")
                if "block" not in t]
    # dpkg's list before, apt online or the airgap directory's .debs, dpkg's list after.
    assert packages == ["ansible.builtin.command", "ansible.builtin.apt", "ansible.builtin.include_tasks",
                        "ansible.builtin.command"]
    # What was made is recorded, and dpkg asked, also when the install fails half-way.
    install = next(t for t in _tasks("before_k3s.yml") if t["name"].startswith("Install the Debian packages"))
    assert install["always"][0]["ansible.builtin.include_tasks"]["file"] == "record.yml"
    listing = next(t for t in _tasks("packages.yml") if "block" in t)
    assert listing["always"][0]["register"] == "k3s_apt_after"


def test_teardown_removes_what_provision_recorded_and_nothing_else(tmp_path):
    tasks = {t["name"]: t for t in _tasks("teardown.yml")}
    assert tasks["Read what provision recorded that it made"]["ansible.builtin.setup"]["fact_path"] == \
        "{{ k3s_made_facts_dir }}"
    empty, used, gone = tmp_path / "root-kube", tmp_path / "learner-kube", tmp_path / "gone"
    empty.mkdir()
    used.mkdir()
    (used / "other-cluster.yaml").write_text("kept")
    made = {"packages": ["python3-apt", "python3-packaging"], "paths": [str(empty), str(used), str(gone)]}
    templar = _templar(ansible_facts={"architecture": "x86_64", "ansible_local": {"made": made}})
    apt = tasks["Remove the Debian packages provision installed"]
    assert templar.evaluate_conditional(trust_as_template(apt["when"])) is True
    # apt-get purges what is still installed of the record, and nothing is installed first (Ansible's apt module
    # installed python3-apt and four more packages that teardown left on the k3s VM): run here over stand-ins.
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "dpkg-query").write_text('#!/bin/sh\n[ "$3" = python3-packaging ] && echo installed; exit 0\n')
    (tools / "apt-get").write_text('#!/bin/sh\necho "$@" >> "%s"\n' % (tmp_path / "apt-get.log"))
    for tool in tools.iterdir():
        tool.chmod(0o755)
    argv = _templar(ansible_facts={"architecture": "x86_64", "ansible_local": {"made": made}},
                    **apt["vars"]).template(trust_as_template(apt["ansible.builtin.command"]["argv"]))
    assert argv[4:] == made["packages"]
    env = dict(os.environ, PATH="%s:%s" % (tools, os.environ["PATH"]))
    purged = subprocess.run(argv, capture_output=True, text=True, timeout=30, env=env)
    assert (purged.returncode, purged.stdout) == (0, "purged python3-packaging\n"), purged.stderr
    assert (tmp_path / "apt-get.log").read_text() == "purge --yes python3-packaging\n"
    assert "ansible.builtin.apt" not in apt
    # The directories: run teardown's own command here; the empty one goes, the learner's other file stays.
    remove = tasks["Remove the .kube directories provision made, where nothing else is in them"]
    argv = templar.template(trust_as_template(remove["ansible.builtin.command"]["argv"]))
    out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    result = {"rc": out.returncode, "stdout": out.stdout, "stderr": out.stderr}
    check = _templar(k3s_teardown_kube=result)
    assert not check.evaluate_conditional(trust_as_template(remove["failed_when"]))
    assert check.evaluate_conditional(trust_as_template(remove["changed_when"]))
    assert not empty.exists() and (used / "other-cluster.yaml").read_text() == "kept"
    # No record (a VM provisioned before records were kept, or torn down already): nothing is removed.
    none = _templar(ansible_facts={"architecture": "x86_64", "ansible_local": {}})
    assert not none.evaluate_conditional(trust_as_template(apt["when"]))
    assert not none.evaluate_conditional(trust_as_template(remove["when"]))
    assert none.template(trust_as_template(tasks["Remove kubectl's cache from the .kube directories provision made"]
                                            ["loop"])) == []
