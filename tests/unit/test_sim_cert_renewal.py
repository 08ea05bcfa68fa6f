# -*- coding: utf-8 -*-
"""The sim's two self-signed certificates are signed again before they expire.

community.crypto.x509_certificate keeps a valid certificate however close
its end, so a lab whose certificate expires within kai_lab_cert_renew_days
would take provision's full path forever (its check says the certificate
expires) without the full path ever renewing it. The real certificate tasks
of roles/sim_cluster (etcd's) and roles/kai_scheduler (the admission
webhook's), from their key to the self-signed certificate, run here by
ansible-playbook on a temporary directory: a certificate that expires within
the renew days is signed again with the same key, notifying the restart of
what serves it; a fresh one is left as it is.
"""

from __future__ import annotations

import datetime
import os
import subprocess
import sys

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization

from conftest import COLLECTION_PATH, REPO

ROLES = REPO / "roles"
UTC = datetime.timezone.utc


def cert_tasks(role, tasks, first, last):
    """The role's tasks from the one named `first` to the one named `last` (name prefixes)."""
    loaded = yaml.safe_load((ROLES / role / "tasks" / tasks).read_text())
    names = [task.get("name", "") for task in loaded]
    start = next(i for i, name in enumerate(names) if name.startswith(first))
    end = next(i for i, name in enumerate(names) if name.startswith(last))
    return loaded[start:end + 1]


def handler(name, marker):
    # Where the role's handler restarts a process, this one leaves a mark: the
    # test sees that the renewal asked for the restart.
    return {"name": name, "ansible.builtin.copy": {"content": "notified\n", "dest": str(marker), "mode": "0600"}}


def run(tmp_path):
    """Both roles' certificate tasks in one play; returns the play's recap line."""
    etcd_dir, kai_dir = tmp_path / "etcd-tls", tmp_path / "kai"
    (kai_dir / "admission" / "k8s-webhook-server" / "serving-certs").mkdir(parents=True, exist_ok=True)
    etcd_dir.mkdir(exist_ok=True)
    for marker in tmp_path.glob("*.notified"):
        marker.unlink()
    play = [{
        "hosts": "localhost", "connection": "local", "gather_facts": False,
        "vars": {
            "sim_cluster_etcd_key": str(etcd_dir / "tls.key"), "sim_cluster_etcd_cert": str(etcd_dir / "tls.crt"),
            "sim_cluster_name": "kai-lab", "sim_cluster_cert_renew_days": 30,
            "kai_scheduler_sim_dir": str(kai_dir), "kai_scheduler_namespace": "kai-scheduler",
            "kai_scheduler_cert_renew_days": 30,
        },
        "tasks": cert_tasks("sim_cluster", "start.yml", "Create etcd's key", "Self-sign etcd's certificate")
        + cert_tasks("kai_scheduler", "sim_files.yml", "Create the admission webhook's key",
                     "Self-sign the admission webhook's certificate"),
        "handlers": [handler("Restart the sim's control plane", tmp_path / "control-plane.notified"),
                     handler("Restart KAI admission", tmp_path / "admission.notified")],
    }]
    playbook = tmp_path / "certs.yml"
    playbook.write_text(yaml.safe_dump(play, sort_keys=False))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(COLLECTION_PATH), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
               ANSIBLE_PYTHON_INTERPRETER=sys.executable)
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", str(playbook)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=180, cwd=str(REPO), env=env, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return sorted(p.name.split(".")[0] for p in tmp_path.glob("*.notified"))


def not_after(path):
    cert = x509.load_pem_x509_certificate(path.read_bytes())
    return cert.not_valid_after_utc


def public(holder):
    return holder.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def age(cert_path, key_path, days_left):
    """Replace the certificate with one of the same key and subject that ends in days_left days."""
    key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    old = x509.load_pem_x509_certificate(cert_path.read_bytes())
    now = datetime.datetime.now(UTC)
    builder = (x509.CertificateBuilder().subject_name(old.subject).issuer_name(old.subject)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(days=1))
               .not_valid_after(now + datetime.timedelta(days=days_left)))
    for extension in old.extensions:
        builder = builder.add_extension(extension.value, extension.critical)
    cert_path.write_bytes(builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM))


def test_a_certificate_within_its_renew_days_is_signed_again_and_a_fresh_one_kept(tmp_path):
    etcd = (tmp_path / "etcd-tls" / "tls.crt", tmp_path / "etcd-tls" / "tls.key")
    admission_dir = tmp_path / "kai" / "admission" / "k8s-webhook-server" / "serving-certs"
    admission = (admission_dir / "tls.crt", admission_dir / "tls.key")
    run(tmp_path)
    soon = datetime.datetime.now(UTC) + datetime.timedelta(days=30)
    assert all(not_after(cert) > soon for cert, _ in (etcd, admission))
    keys = dict((cert, key.read_bytes()) for cert, key in (etcd, admission))

    # Ten days left, within the 30 renew days: both signed again, with the same key.
    for cert, key in (etcd, admission):
        age(cert, key, 10)
    assert run(tmp_path) == ["admission", "control-plane"]
    for cert, key in (etcd, admission):
        assert not_after(cert) > soon, cert
        assert key.read_bytes() == keys[cert]
        assert public(x509.load_pem_x509_certificate(cert.read_bytes())) == public(
            serialization.load_pem_private_key(keys[cert], None))

    # Sixty days left: outside the renew days, kept as it is, nothing restarted.
    for cert, key in (etcd, admission):
        age(cert, key, 60)
    kept = dict((cert, cert.read_bytes()) for cert, _ in (etcd, admission))
    assert run(tmp_path) == []
    for cert, _ in (etcd, admission):
        assert cert.read_bytes() == kept[cert]
