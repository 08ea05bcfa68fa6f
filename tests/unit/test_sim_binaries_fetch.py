"""sim_binaries' background fetch (tasks/main.yml, files/fetch.sh): while
the first missing build compiles, the later builds' Go modules are
downloaded with the same `go list -deps` their builds start with. Rendered
from the real task and run against a stand-in go command."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
from role_templating import trust

ROOT = Path(__file__).resolve().parents[2]
ROLE = ROOT / "roles" / "sim_binaries"
TASK = next(t for t in yaml.safe_load((ROLE / "tasks" / "main.yml").read_text())
            if t["name"] == "Fetch the Go modules of the later builds in the background")
FETCH = ROLE / "files" / "fetch.sh"

KAI = {"module": "kai", "source": "/cache/src/kai", "binaries": {"scheduler": "github.com/x/kai/cmd/scheduler"}}
KAI_LOCAL = {"module": "kai-local", "source": "/cache/src/kai", "binaries": {"admission": "gsb.kai_lab/sim/kai/cmd/admission"}}
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


def test_the_later_builds_are_fetched_those_from_the_first_builds_source_last():
    argv = _argv([KAI, KAI_LOCAL, ETCD, KWOK])
    # kai-local compiles from the module KAI's build is downloading at the
    # start: fetched after the others, when most of it is in the cache.
    assert argv == [str(FETCH), "/usr/bin/go", "/cache/bin/fetch.log",
                    "/role/files/etcd", "go.etcd.io/etcd/server/v3",
                    "/role/files/kwok", "sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl",
                    "/cache/src/kai", "gsb.kai_lab/sim/kai/cmd/admission"]


def test_no_fetch_when_one_build_or_none_is_missing():
    assert not _runs([])
    assert not _runs([ETCD])
    assert _runs([KAI, KAI_LOCAL])
    assert _argv([KAI_LOCAL, KWOK])[3:] == ["/role/files/kwok", "sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl"]


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
