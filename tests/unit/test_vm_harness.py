"""tests/vm/vm.py, the VM harness of molecule/vm, without a VM: which
accelerator it picks and says, the inventory it writes, and how it reports
what changed between two snapshots of a VM."""

import importlib.util
from pathlib import Path

import pytest
import yaml

HARNESS = Path(__file__).resolve().parents[1] / "vm" / "vm.py"
_spec = importlib.util.spec_from_file_location("vm_harness", HARNESS)
vm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(vm)


@pytest.mark.parametrize("modules, kvm, accel, words", [
    # This machine: /dev/kvm of PVM, under which a stock Debian kernel does not boot.
    ({"kvm_pvm"}, True, "tcg,thread=multi", "PVM (kvm_pvm"),
    ({"kvm_intel"}, True, "kvm", "KVM (kvm_intel)"),
    ({"kvm_amd", "kvm_pvm"}, True, "kvm", "KVM (kvm_amd)"),
    ({"kvm_intel"}, False, "tcg,thread=multi", "no usable /dev/kvm"),
])
def test_kvm_only_where_a_stock_kernel_runs_under_it(monkeypatch, modules, kvm, accel, words):
    monkeypatch.setattr(vm.os.path, "exists", lambda path: path.rsplit("/", 1)[-1] in modules)
    monkeypatch.setattr(vm.os, "access", lambda path, mode: kvm)
    args, why = vm.accelerator()
    assert args[args.index("-accel") + 1] == accel
    assert words in why and "\n" not in why


def test_inventory_reaches_the_vm_as_its_sudo_user_without_prompts():
    state = {"release": "trixie", "memory": 4096, "disk": "10G", "port": 40123, "user": "debian",
             "key": "/cache/vm/images/trixie-abc/id_ed25519"}
    host = yaml.safe_load(vm.inventory_text(state))["all"]["hosts"]["kai-lab-vm"]
    assert host["ansible_host"] == "127.0.0.1" and host["ansible_port"] == 40123
    assert host["ansible_user"] == "debian" and host["ansible_ssh_private_key_file"] == state["key"]
    assert "StrictHostKeyChecking=no" in host["ansible_ssh_common_args"]
    assert "UserKnownHostsFile=/dev/null" in host["ansible_ssh_common_args"]
    assert host["ansible_ssh_pipelining"] is True


def test_differences_name_a_new_directory_once_and_each_other_change():
    before = {"packages": {"sudo:amd64": "1.9 ii"}, "files": {"/etc/hosts": "f 644 root:root 10 bytes"},
              "users": {"debian": "debian:x:1000"}}
    after = {"packages": {"sudo:amd64": "1.9 ii", "python3-apt:amd64": "2.6 ii"},
             "files": {"/etc/hosts": "f 600 root:root 10 bytes", "/opt/gsb-kai-lab": "d 755 root:root",
                       "/opt/gsb-kai-lab/venv": "d 755 root:root", "/opt/gsb-kai-lab/venv/bin": "d 755 root:root"},
             "users": {}}
    lines = vm.differences(before, after)
    assert lines == [
        "files: + /opt/gsb-kai-lab d 755 root:root (and 2 entries under it)",
        "files: ~ /etc/hosts f 644 root:root 10 bytes -> f 600 root:root 10 bytes",
        "packages: + python3-apt:amd64 2.6 ii",
        "users: - debian debian:x:1000",
    ]
    assert vm.differences(before, before) == []


def test_sizes_read_as_qemu_and_truncate_read_them():
    assert vm.size_bytes("10G") == 10 << 30 and vm.size_bytes("512M") == 512 << 20
    assert vm.size_bytes("6GiB") == 6 << 30 and vm.size_bytes("4096") == 4096


def test_up_refuses_a_second_vm_and_leaves_the_running_one_alone(monkeypatch, capsys):
    running = {"release": "bookworm", "pid": 4242, "port": 40123}
    monkeypatch.setattr(vm, "read_state", lambda: running)
    monkeypatch.setattr(vm, "qemu_alive", lambda state: state is running)
    stopped = []
    monkeypatch.setattr(vm, "down", lambda quiet=False: stopped.append(quiet))
    assert vm.main(["up", "--release", "trixie"]) == 1
    assert stopped == []
    assert "a VM runs already (bookworm, pid 4242, SSH on 127.0.0.1:40123)" in capsys.readouterr().out
