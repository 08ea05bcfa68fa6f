"""sim_binaries' build plan: the KAI module's one go build (its binaries,
the committed go.sum it uses and when), and the background fetch
(tasks/main.yml, files/fetch.sh): while the first missing build compiles,
the later builds' Go modules are downloaded with the same `go list -deps`
their builds start with. Rendered from the real role files and run against
a stand-in go command."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from role_templating import trust

ROOT = Path(__file__).resolve().parents[2]
ROLE = ROOT / "roles" / "sim_binaries"
TASK = next(t for t in yaml.safe_load((ROLE / "tasks" / "main.yml").read_text())
            if t["name"] == "Fetch the Go modules of the later builds in the background")
FETCH = ROLE / "files" / "fetch.sh"

KAI = {"module": "kai", "source": "/cache/src/kai", "binaries": {"scheduler": "github.com/x/kai/cmd/scheduler"}}
ETCD = {"module": "etcd", "source": "/role/files/etcd", "binaries": {"etcd": "go.etcd.io/etcd/server/v3"}}
KWOK = {"module": "kwok", "source": "/role/files/kwok",
        "binaries": {"kwok": "sigs.k8s.io/kwok/cmd/kwok", "kwokctl": "sigs.k8s.io/kwok/cmd/kwokctl"}}


def _templar(missing):
    variables = trust(TASK["vars"])
    variables.update(sim_binaries_missing=missing, sim_binaries_go="/usr/bin/go", sim_binaries_dir="/cache/bin",
                     role_path=str(ROLE))
    return Templar(loader=DataLoader(), variables=variables)


def _runs(missing) -> bool:
    return _templar(missing).evaluate_conditional(trust(TASK["when"]))


def _argv(missing):
    return _templar(missing).template(trust(TASK["ansible.builtin.command"]["argv"]))


def test_the_later_builds_are_fetched_in_build_order():
    argv = _argv([KAI, ETCD, KWOK])
    assert argv == [str(FETCH), "/usr/bin/go", "/cache/bin/fetch.log",
                    "/role/files/etcd", "go.etcd.io/etcd/server/v3",
                    "/role/files/kwok", "sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl"]


def test_no_fetch_when_one_build_or_none_is_missing():
    assert not _runs([])
    assert not _runs([ETCD])
    assert _runs([KAI, KWOK])
    assert _argv([ETCD, KWOK])[3:] == ["/role/files/kwok", "sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl"]


def _go(tmp_path: Path, failing_dir: str = "") -> Path:
    """A go command that logs where it ran and with what, and fails in failing_dir."""
    calls = tmp_path / "go.log"
    go = tmp_path / "go"
    go.write_text('#!/bin/bash\necho "$PWD $*" >> %s\n[ "$PWD" = "%s" ] && exit 1\nexit 0\n' % (calls, failing_dir))
    go.chmod(0o755)
    return calls


def test_fetch_lists_each_modules_packages_in_its_directory_and_logs_each(tmp_path):
    (tmp_path / "etcd").mkdir()
    (tmp_path / "kwok").mkdir()
    calls = _go(tmp_path, failing_dir=str(tmp_path / "etcd"))
    log = tmp_path / "fetch.log"
    result = subprocess.run([str(FETCH), str(tmp_path / "go"), str(log),
                             str(tmp_path / "etcd"), "go.etcd.io/etcd/server/v3",
                             str(tmp_path / "kwok"), "sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl"])
    # Best effort: a refused module fails its own build later, not this job.
    assert result.returncode == 0
    assert calls.read_text().splitlines() == [
        "%s/etcd list -deps go.etcd.io/etcd/server/v3" % tmp_path,
        "%s/kwok list -deps sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl" % tmp_path]
    lines = log.read_text().splitlines()
    assert lines[0].startswith("== %s/etcd: fetch failed after " % tmp_path)
    assert lines[1].startswith("== %s/kwok: fetched in " % tmp_path)


# ---------------------------------------------------------------- the KAI build's plan and its lock

LAB = ("roles/kai_lab/defaults/main.yml", "roles/kai_lab/vars/main.yml", "roles/sim_binaries/defaults/main.yml")


def _role_templar(**overrides):
    variables = {}
    for path in LAB:
        variables.update(trust(DataLoader().load_from_file(str(ROOT / path))))
    variables.update(dict(role_path=str(ROLE), kai_lab_sim_kai_bin_dir=""), **overrides)
    return Templar(loader=DataLoader(), variables=variables)


def _kai_build(templar):
    return next(b for b in templar.template(trust_as_template("{{ sim_binaries_builds }}")) if b["module"] == "kai")


def test_one_go_build_makes_each_kai_binary_once_the_control_plane_and_helm():
    """The sim's own mains replace KAI's upstream ones in the same build (no
    second module), and Helm is linked there too, with its version stamped."""
    build = _kai_build(_role_templar())
    assert build["binaries"] == {
        "binder": "github.com/NVIDIA/KAI-scheduler/cmd/binder",
        "podgrouper": "github.com/NVIDIA/KAI-scheduler/cmd/podgrouper",
        "queuecontroller": "github.com/NVIDIA/KAI-scheduler/cmd/queuecontroller",
        "scheduler": "gsb.kai_lab/sim/kai/cmd/scheduler",
        "admission": "gsb.kai_lab/sim/kai/cmd/admission",
        "podgroupcontroller": "gsb.kai_lab/sim/kai/cmd/podgroupcontroller",
        "kube-apiserver": "k8s.io/kubernetes/cmd/kube-apiserver",
        "kube-controller-manager": "k8s.io/kubernetes/cmd/kube-controller-manager",
        "kube-scheduler": "k8s.io/kubernetes/cmd/kube-scheduler",
        "kubectl": "k8s.io/kubernetes/cmd/kubectl",
        "helm": "helm.sh/helm/v3/cmd/helm",
    }
    assert "-X helm.sh/helm/v3/internal/version.version=v3.19.0" in build["ldflags"]
    assert build["extra_hash"] == ["cmd/scheduler/main.go", "cmd/admission/main.go", "cmd/podgroupcontroller/main.go"]
    modules = [b["module"] for b in _role_templar().template(trust_as_template("{{ sim_binaries_builds }}"))]
    assert modules == ["kai", "etcd", "kwok"]


def test_with_your_own_kai_only_the_control_plane_and_helm_are_built():
    build = _kai_build(_role_templar(kai_lab_sim_kai_bin_dir="/opt/kai/bin"))
    assert sorted(build["binaries"]) == ["helm", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl"]
    assert build["version"] == "kai-v0.12.0_k8s-v1.34.1"


LOCK_TASK = next(t for t in yaml.safe_load((ROLE / "tasks" / "main.yml").read_text())
                 if t["name"].startswith("Look for a committed go.sum of "))


@pytest.mark.parametrize("version, helm, locked", [
    ("v0.12.0", "v3.19.0", True),    # the committed go.mod requires this Helm
    ("v0.12.0", "v3.19.1", False),   # another Helm: resolved through the Go proxy
    ("v0.17.0", "v3.19.0", False),   # no committed go.sum
])
def test_the_committed_kai_module_is_used_only_for_its_kai_and_helm(version, helm, locked):
    templar = _role_templar(kai_lab_sim_kai_version=version, sim_binaries_helm_version=helm)
    templar.available_variables = dict(templar.available_variables, **trust(LOCK_TASK["vars"]))
    fact = LOCK_TASK["ansible.builtin.set_fact"]["sim_binaries_kai_locked"]
    assert templar.template(trust(fact)) is locked
