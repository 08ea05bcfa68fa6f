"""roles/sim_cluster/files/set_component_arg.py on a kwokctl cluster's saved
configuration as kwokctl v0.8.0 writes it (etcd's and kube-apiserver's args
recorded from a sim made before etcd spoke TLS): switching a cluster to TLS
replaces kwokctl's own URLs in place, appends the new flags, and a second
provision with the same settings changes nothing, so the control plane is
not restarted on every run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "roles" / "sim_cluster" / "files" / "set_component_arg.py"
STATE = "/home/u/.local/state/gsb-kai-lab/sim"
KWOK_YAML = {
    "apiVersion": "config.kwok.x-k8s.io/v1alpha1", "kind": "KwokctlConfiguration",
    "components": [
        {"name": "etcd", "args": [
            "--name=node0", "--auto-compaction-retention=1", "--quota-backend-bytes=8589934592",
            f"--data-dir={STATE}/kwok/clusters/kai-lab/etcd",
            "--initial-advertise-peer-urls=http://127.0.0.1:16302", "--listen-peer-urls=http://127.0.0.1:16302",
            "--advertise-client-urls=http://127.0.0.1:16301", "--listen-client-urls=http://127.0.0.1:16301",
            "--initial-cluster=node0=http://127.0.0.1:16302"]},
        {"name": "kube-apiserver", "args": [
            "--etcd-prefix=/registry", "--allow-privileged=true", "--etcd-servers=http://127.0.0.1:16301",
            "--authorization-mode=Node,RBAC", "--bind-address=127.0.0.1", "--secure-port=16443",
            "--event-ttl=24h"]},
    ],
    "componentsPatches": [{"name": "kube-apiserver", "extraArgs": [{"key": "event-ttl", "value": "24h"}]}],
}
TLS = f"{STATE}/etcd-tls"
SETTINGS = [
    ("kube-apiserver", "event-ttl", "24h"),
    ("etcd", "listen-client-urls", "https://127.0.0.1:16301"),
    ("etcd", "advertise-client-urls", "https://127.0.0.1:16301"),
    ("etcd", "client-cert-auth", "true"),
    ("etcd", "trusted-ca-file", f"{TLS}/tls.crt"),
    ("etcd", "cert-file", f"{TLS}/tls.crt"),
    ("etcd", "key-file", f"{TLS}/tls.key"),
    ("etcd", "listen-peer-urls", "https://127.0.0.1:16302"),
    ("etcd", "initial-advertise-peer-urls", "https://127.0.0.1:16302"),
    ("etcd", "initial-cluster", "node0=https://127.0.0.1:16302"),
    ("etcd", "peer-client-cert-auth", "true"),
    ("kube-apiserver", "etcd-servers", "https://127.0.0.1:16301"),
    ("kube-apiserver", "etcd-cafile", f"{TLS}/tls.crt"),
    ("kube-apiserver", "etcd-certfile", f"{TLS}/tls.crt"),
    ("kube-apiserver", "etcd-keyfile", f"{TLS}/tls.key"),
]


def provision(path: Path) -> list[str]:
    return [subprocess.run([sys.executable, str(SCRIPT), str(path), *setting], capture_output=True, text=True,
                           check=True, timeout=30).stdout.strip() for setting in SETTINGS]


def args(path: Path, name: str) -> list[str]:
    doc = yaml.safe_load(path.read_text())
    return next(c for c in doc["components"] if c["name"] == name)["args"]


def test_a_plain_cluster_is_switched_to_tls_in_place_and_a_second_run_changes_nothing(tmp_path):
    path = tmp_path / "kwok.yaml"
    path.write_text(yaml.safe_dump(KWOK_YAML))
    assert provision(path) == ["unchanged"] + ["changed"] * (len(SETTINGS) - 1)
    etcd = args(path, "etcd")
    # kwokctl's own URLs are replaced where they were; the peer URLs stay.
    assert etcd[4:9] == ["--initial-advertise-peer-urls=https://127.0.0.1:16302",
                         "--listen-peer-urls=https://127.0.0.1:16302",
                         "--advertise-client-urls=https://127.0.0.1:16301",
                         "--listen-client-urls=https://127.0.0.1:16301",
                         "--initial-cluster=node0=https://127.0.0.1:16302"]
    assert etcd[-5:] == ["--client-cert-auth=true", f"--trusted-ca-file={TLS}/tls.crt", f"--cert-file={TLS}/tls.crt",
                         f"--key-file={TLS}/tls.key", "--peer-client-cert-auth=true"]
    assert not [arg for arg in etcd if "http://" in arg]
    apiserver = args(path, "kube-apiserver")
    assert apiserver[2] == "--etcd-servers=https://127.0.0.1:16301"
    assert [arg for arg in apiserver if arg.startswith("--etcd-servers=")] == [apiserver[2]]
    written = path.read_bytes()
    assert provision(path) == ["unchanged"] * len(SETTINGS)
    assert path.read_bytes() == written


def test_a_repeated_flag_keeps_one_with_the_wanted_value(tmp_path):
    path = tmp_path / "kwok.yaml"
    doc = yaml.safe_load(yaml.safe_dump(KWOK_YAML))
    doc["components"][1]["args"] += ["--event-ttl=1h"]
    path.write_text(yaml.safe_dump(doc))
    out = subprocess.run([sys.executable, str(SCRIPT), str(path), "kube-apiserver", "event-ttl", "24h"],
                         capture_output=True, text=True, check=True, timeout=30).stdout.strip()
    assert out == "changed"
    assert [arg for arg in args(path, "kube-apiserver") if arg.startswith("--event-ttl=")] == ["--event-ttl=24h"]


def test_one_call_with_every_setting_writes_what_the_calls_one_by_one_write(tmp_path):
    # provision runs the script once with all its settings (one process, not one per flag).
    one_by_one, together = tmp_path / "one-by-one.yaml", tmp_path / "together.yaml"
    for path in (one_by_one, together):
        path.write_text(yaml.safe_dump(KWOK_YAML))
        path.chmod(0o644)
    provision(one_by_one)
    argv = [sys.executable, str(SCRIPT), str(together)] + [part for setting in SETTINGS for part in setting]
    run = lambda: subprocess.run(argv, capture_output=True, text=True, check=True, timeout=30).stdout.strip()
    assert run() == "changed"
    assert together.read_text() == one_by_one.read_text()
    assert together.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one-by-one.yaml", "together.yaml"]  # no temporary left
    assert run() == "unchanged"


def test_an_odd_number_of_arguments_is_refused_with_the_usage(tmp_path):
    path = tmp_path / "kwok.yaml"
    path.write_text(yaml.safe_dump(KWOK_YAML))
    done = subprocess.run([sys.executable, str(SCRIPT), str(path), "etcd", "cert-file"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and "Usage: set_component_arg.py" in done.stderr
    assert yaml.safe_load(path.read_text()) == KWOK_YAML


def test_the_provision_task_passes_the_event_ttl_and_every_tls_setting_in_one_call():
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar, trust_as_template
    from role_templating import trust

    role = ROOT / "roles" / "sim_cluster"
    task = next(t for t in yaml.safe_load((role / "tasks" / "start.yml").read_text())
                if t["name"].startswith("Put etcd and kube-apiserver on etcd's TLS port"))
    variables = trust(yaml.safe_load((role / "vars" / "main.yml").read_text()))
    variables.update(kai_lab_sim_state_dir=STATE, sim_cluster_ports={"etcd": 16301, "etcd_peer": 16302},
                     ansible_playbook_python="/py", role_path="/role", sim_cluster_dir="/c",
                     sim_cluster_event_ttl="24h", sim_cluster_name="kai-lab")
    templar = Templar(loader=DataLoader(), variables=variables)
    argv = templar.template(trust_as_template(task["ansible.builtin.command"]["argv"]))
    assert argv[:3] == ["/py", "/role/files/set_component_arg.py", "/c/kwok.yaml"]
    settings = [tuple(argv[i:i + 3]) for i in range(3, len(argv), 3)]
    assert settings[0] == ("kube-apiserver", "event-ttl", "24h")
    assert len(settings) == 1 + len(variables["sim_cluster_etcd_tls_args"]) + 2 + 1
    assert set(SETTINGS) <= set(settings)
    # The controller-manager signs ServiceAccount token Secrets (the learner's account, issue 33) with the key
    # kwokctl gives kube-apiserver to verify them, and puts the cluster's CA in them.
    pki = f"{STATE}/kwok/clusters/kai-lab/pki"
    assert {s for s in settings if s[0] == "kube-controller-manager"} == {
        ("kube-controller-manager", "service-account-private-key-file", f"{pki}/admin.key"),
        ("kube-controller-manager", "root-ca-file", f"{pki}/ca.crt")}
    # kwok's node lease (40 s, not kwokctl's 200 s): a restarted kwok controller takes the node within seconds.
    assert ("kwok-controller", "node-lease-duration-seconds", "40") in settings
    assert {setting for setting in settings if setting[1].startswith("peer-")} == {
        ("etcd", "peer-client-cert-auth", "true"), ("etcd", "peer-trusted-ca-file", f"{STATE}/etcd-tls/tls.crt"),
        ("etcd", "peer-cert-file", f"{STATE}/etcd-tls/tls.crt"), ("etcd", "peer-key-file", f"{STATE}/etcd-tls/tls.key")}
