"""The sim's built binaries are checked before a build is reused (issue 34, row 8: the cache's binaries).

A build's output directory was reused when it held its marker and every
binary by name: a binary cut short (a disk that filled, a copy stopped) or
changed in place was run as root all the same. roles/sim_binaries/files/build.sh
now records each binary's sha256 (.sha256), and module kai_lab_sim_binaries,
run by tasks/outputs.yml before the role looks for missing builds, makes a
damaged build missing so it is built again; an unchanged one costs a stat
per binary (the hash cache shared with the sim's state check).

The binaries here are copies of this machine's /bin/true (an ELF file), in
output directories laid out as build.sh and build.yml leave them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from conftest import COLLECTION_PATH
from role_templating import trust

from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim import binaries as sim_binaries
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim import provision_record as sim_record
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim import state as sim_state

ROOT = Path(__file__).resolve().parents[2]
ROLE = ROOT / "roles" / "sim_binaries"
ELF = "/bin/true"
NAMES = ["kwok", "kwokctl"]


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


FAKE_GO = """#!/bin/sh
# go list -deps PKG... | go build -v -trimpath -ldflags X -o DIR/ PKG...: each package's binary is a copy of %s.
case "$1" in
  list) shift 2; for p in "$@"; do echo "$p"; done ;;
  build)
    while [ "$1" != "-o" ]; do shift; done
    dir=$2; shift 2
    for p in "$@"; do cp %s "$dir/${p##*/}"; done ;;
esac
""" % (ELF, ELF)


def build(tmp_path, names=NAMES):
    """An output directory as files/build.sh (with a stand-in go) and tasks/build.yml's marker leave it."""
    go = tmp_path / "go"
    go.write_text(FAKE_GO)
    go.chmod(0o755)
    out = tmp_path / "bin" / "kwok-v0.8.0-409cdec285"
    out.mkdir(parents=True, mode=0o755)
    out.chmod(0o755)
    done = subprocess.run([str(ROLE / "files" / "build.sh"), str(go), str(out), "-s -w"]
                          + ["%s=sigs.k8s.io/kwok/cmd/%s" % (name, name) for name in names],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr + (out / "build.log").read_text()
    (out / ".complete").write_text(json.dumps({"module": "kwok"}) + "\n")
    return out


def run_module(tmp_path, args, check=False):
    path = tmp_path / "args.json"
    path.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": dict(args, _ansible_check_mode=check)}))
    module = COLLECTION_PATH / "ansible_collections/gsb/kai_lab/plugins/modules/kai_lab_sim_binaries.py"
    done = subprocess.run([sys.executable, str(module), str(path)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(COLLECTION_PATH)), check=False)
    return json.loads(done.stdout)


def args_of(out, tmp_path):
    return {"builds": [{"dir": str(out), "binaries": NAMES}], "hash_cache": str(tmp_path / "binary-sha256.json")}


def missing(out):
    """The role's own test of a missing build (tasks/outputs.yml), for this one build."""
    tasks = yaml.safe_load((ROLE / "tasks" / "outputs.yml").read_text())
    task = next(t for t in tasks if t.get("name") == "Find the builds that are missing")
    variables = {"sim_binaries_builds": [{"module": "kwok", "binaries": dict((n, "x") for n in NAMES)}],
                 "sim_binaries_outputs": {"kwok": str(out)}}
    found = Templar(loader=DataLoader(), variables=variables).template(
        trust(task["ansible.builtin.set_fact"])["sim_binaries_missing"])
    return [b["module"] for b in found]


def test_build_sh_records_the_sha256_of_each_binary_it_built(tmp_path):
    out = build(tmp_path)
    lines = (out / ".sha256").read_text().splitlines()
    assert lines == ["%s  %s" % (sha256(out / name), name) for name in NAMES]
    assert sim_binaries.read_manifest(str(out)) == dict((name, sha256(ELF)) for name in NAMES)


def test_an_intact_build_is_reused_and_its_hashes_kept(tmp_path):
    out = build(tmp_path)
    done = run_module(tmp_path, args_of(out, tmp_path))
    assert not done.get("failed"), done.get("msg")
    assert done["changed"] is False and done["damaged"] == [] and done["missing"] == []
    cache = sim_record.read_hash_cache(str(tmp_path / "binary-sha256.json"))
    assert sorted(cache) == [str(out / name) for name in NAMES]
    assert missing(out) == []


def test_an_unchanged_build_is_not_read_again(tmp_path, monkeypatch):
    out = build(tmp_path)
    run_module(tmp_path, args_of(out, tmp_path))
    known = sim_record.read_hash_cache(str(tmp_path / "binary-sha256.json"))
    read = []
    monkeypatch.setattr(sim_state, "file_sha256", lambda path: read.append(path))
    assert sim_binaries.check_build(str(out), NAMES, known)[0] == {}
    assert read == [], "a stat per binary, no sha256"


@pytest.mark.parametrize("cut", ["half", "one byte"])
def test_a_binary_cut_short_makes_its_build_missing_so_it_is_built_again(tmp_path, cut):
    out = build(tmp_path)
    size = (out / "kwokctl").stat().st_size
    left = size // 2 if cut == "half" else size - 1
    with open(out / "kwokctl", "r+b") as handle:
        handle.truncate(left)
    assert missing(out) == [], "by name alone the damaged build is reused"
    done = run_module(tmp_path, args_of(out, tmp_path))
    assert done["changed"] is True and done["missing"] == [str(out)]
    assert done["damaged"] == ["%s is cut short (%d bytes; its ELF headers, segments and sections need %d)"
                               % (out / "kwokctl", left, size)]
    warnings = [w if isinstance(w, str) else w["event"]["msg"] for w in done.get("warnings") or []]
    assert warnings == [done["damaged"][0] + ": its build is made again."]
    assert not (out / ".complete").exists() and not (out / "kwokctl").exists() and (out / "kwok").exists()
    assert missing(out) == ["kwok"]


def test_a_binary_changed_in_place_is_not_its_build_s(tmp_path):
    out = build(tmp_path)
    run_module(tmp_path, args_of(out, tmp_path))  # its stat and sha256 in the hash cache
    data = bytearray((out / "kwok").read_bytes())
    data[len(data) // 2] ^= 0xFF  # whole as an ELF file, and the same size
    (out / "kwok").write_bytes(bytes(data))
    done = run_module(tmp_path, args_of(out, tmp_path))
    assert done["damaged"] == ["%s is not the binary its build made (sha256 %s, built as %s)"
                               % (out / "kwok", hashlib.sha256(bytes(data)).hexdigest()[:12], sha256(ELF)[:12])]
    assert missing(out) == ["kwok"]


def test_check_mode_names_the_damage_and_removes_nothing(tmp_path):
    out = build(tmp_path)
    (out / "kwok").write_bytes(b"\x7fELF")
    done = run_module(tmp_path, args_of(out, tmp_path), check=True)
    assert done["changed"] is True and done["damaged"] == ["%s is no executable (no ELF header; 4 bytes)"
                                                           % (out / "kwok")]
    assert (out / ".complete").exists() and (out / "kwok").exists()


def test_a_build_made_before_manifests_gets_one_once_whole(tmp_path):
    out = build(tmp_path)
    (out / ".sha256").unlink()
    done = run_module(tmp_path, args_of(out, tmp_path))
    assert done["changed"] is False and done["damaged"] == []
    assert sim_binaries.read_manifest(str(out)) == dict((name, sha256(ELF)) for name in NAMES)


def test_a_build_made_before_manifests_with_a_binary_cut_short_is_built_again(tmp_path):
    out = build(tmp_path)
    (out / ".sha256").unlink()
    with open(out / "kwok", "r+b") as handle:
        handle.truncate(1000)
    done = run_module(tmp_path, args_of(out, tmp_path))
    assert done["missing"] == [str(out)] and "kwok is cut short (1000 bytes" in done["damaged"][0]
    assert not (out / ".sha256").exists()


@pytest.mark.parametrize("what", ["binary", "directory"])
def test_a_build_others_may_write_fails_naming_the_fix(tmp_path, what):
    out = build(tmp_path)
    path = out / "kwok" if what == "binary" else out
    path.chmod(0o775)
    done = run_module(tmp_path, args_of(out, tmp_path))
    assert done["failed"] is True
    assert done["msg"].startswith("%s is writable by group or others (mode 0775): root runs the sim's binaries"
                                  % path)
    assert 'chown -R "$(id -un)" %s && chmod -R go-w %s' % (out, out) in done["msg"]


def test_the_role_checks_the_builds_before_it_looks_for_missing_ones():
    tasks = yaml.safe_load((ROLE / "tasks" / "outputs.yml").read_text())
    names = [t.get("name") for t in tasks]
    check = names.index("Check the built binaries before they are reused")
    assert check < names.index("Find the builds that are missing")
    args = tasks[check]["gsb.kai_lab.kai_lab_sim_binaries"]
    assert args["hash_cache"] == "{{ sim_binaries_hash_cache }}"
    variables = {"sim_binaries_builds": [{"module": "kwok", "binaries": {"kwok": "a", "kwokctl": "b"}},
                                         {"module": "none", "binaries": {}}],
                 "sim_binaries_outputs": {"kwok": "/cache/bin/kwok-v0.8.0-409cdec285", "none": "/x"}}
    builds = Templar(loader=DataLoader(), variables=variables).template(trust_as_template(args["builds"]))
    assert builds == [{"dir": "/cache/bin/kwok-v0.8.0-409cdec285", "binaries": ["kwok", "kwokctl"]}]
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    assert defaults["sim_binaries_hash_cache"] == "{{ kai_lab_sim_hash_cache }}", "the state check's own cache"
    assert shutil.which("sha256sum"), "build.sh records with coreutils' sha256sum"
