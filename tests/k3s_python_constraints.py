#!/usr/bin/env python3
"""Generate the learner VM's pinned Python sets, one per Python the supported
images ship: roles/k3s/files/constraints/py<X.Y>.txt.

Each set is the Kubernetes client at the version of the control host's
constraints.txt with its whole dependency closure, at the control host's
versions wherever the VM's Python accepts them (a pin whose version that Python
cannot install is dropped and pip picks the newest that fits), with a wheel for
x86_64 and aarch64 (manylinux tags of roles/k3s/vars/main.yml).

pip resolves for the target Python (--python-version) but evaluates
environment markers for the Python running it, so the closure is taken again
here under each target's markers (packaging.markers) from the metadata pip
reports: a dependency only a 3.10 needs (typing_extensions for cryptography)
is added, one only the running Python needs is left out.

    .venv/bin/python tests/k3s_python_constraints.py          # rewrite the files
    .venv/bin/python tests/k3s_python_constraints.py --check  # fail if they differ

Needs PyPI (or PIP_INDEX_URL); tests/unit/test_k3s_python_sets.py checks the
files with the same helpers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS_DIR = ROOT / "roles" / "k3s" / "files" / "constraints"
ROOT_PACKAGE = "kubernetes"
# One pip call must not hang a test run or a generation.
PIP_TIMEOUT = 180


def wheel_platforms() -> dict[str, list[str]]:
    """uname -m -> pip --platform tags, from the role (one source)."""
    return yaml.safe_load((ROOT / "roles" / "k3s" / "vars" / "main.yml").read_text())["k3s_python_wheel_platforms"]


def pythons() -> list[str]:
    sys.path.insert(0, str(ROOT / ".collections"))
    from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s.preflight import SUPPORTED_IMAGES
    return sorted({image[2] for image in SUPPORTED_IMAGES}, key=lambda v: tuple(map(int, v.split("."))))


def marker_env(python: str, machine: str) -> dict[str, str]:
    return {"python_version": python, "python_full_version": python + ".0", "platform_machine": machine,
            "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix",
            "platform_python_implementation": "CPython", "implementation_name": "cpython",
            "implementation_version": python + ".0", "platform_release": "", "platform_version": "",
            "extra": ""}


def read_pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version
    return pins


def pip_report(requirements: list[str], python: str, machine: str, cache: str, constraints: dict | None = None,
               no_deps: bool = False) -> dict:
    """pip's resolution (--dry-run --report) for that Python and machine, wheels only.
    Raises RuntimeError with pip's last error lines when it cannot resolve."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed",
               "--disable-pip-version-check", "--no-input", "--timeout", "30", "--retries", "1",
               "--report", tmp + "/report.json", "--target", tmp + "/target", "--cache-dir", cache,
               "--python-version", python, "--implementation", "cp", "--only-binary=:all:"]
        for platform in wheel_platforms()[machine]:
            cmd += ["--platform", platform]
        if no_deps:
            cmd.append("--no-deps")
        if constraints:
            Path(tmp, "c.txt").write_text("".join("%s==%s\n" % item for item in constraints.items()))
            cmd += ["-c", tmp + "/c.txt"]
        out = subprocess.run(cmd + requirements, capture_output=True, text=True, timeout=PIP_TIMEOUT)
        if out.returncode != 0:
            lines = (out.stdout + out.stderr).strip().splitlines()
            raise RuntimeError("\n".join(line for line in lines[-40:] if not line.startswith(("Collecting", "  Using"))))
        return json.loads(Path(tmp, "report.json").read_text())


def closure(report: dict, python: str, machine: str) -> tuple[dict[str, str], list[str]]:
    """The packages the root needs under the target's markers, by name -> version, and the
    requirements none of the reported packages satisfies."""
    found = {canonicalize_name(item["metadata"]["name"]): item["metadata"] for item in report["install"]}
    env = marker_env(python, machine)
    needed, missing, todo = {}, [], [ROOT_PACKAGE]
    while todo:
        name = canonicalize_name(todo.pop())
        if name in needed:
            continue
        if name not in found:
            missing.append(name)
            continue
        metadata = found[name]
        needed[name] = metadata["version"]
        for spec in metadata.get("requires_dist") or []:
            requirement = Requirement(spec)
            if requirement.marker is None or requirement.marker.evaluate(env):
                dep = canonicalize_name(requirement.name)
                if dep in found and not requirement.specifier.contains(found[dep]["version"], prereleases=True):
                    missing.append("%s (%s wanted, %s pinned)" % (dep, requirement.specifier,
                                                                 found[dep]["version"]))
                todo.append(dep)
    return needed, missing


def generate(python: str, cache: str) -> dict[str, str]:
    controller = read_pins(ROOT / "constraints.txt")
    preferred = dict(controller)
    extra: list[str] = []
    for _ in range(40):
        try:
            report = pip_report(["%s==%s" % (ROOT_PACKAGE, controller[ROOT_PACKAGE])] + extra, python, "x86_64",
                                cache, constraints=preferred)
        except RuntimeError as error:
            # A control-host pin this Python cannot install: let pip choose that one.
            names = re.findall(r"(?:requirement|\(constraint\)) ([A-Za-z0-9_.-]+)==", str(error))
            dropped = [n for n in map(canonicalize_name, names) if n in preferred and n != ROOT_PACKAGE]
            if not dropped:
                raise
            for name in dropped:
                del preferred[name]
            continue
        pins, missing = closure(report, python, "x86_64")
        absent = [m for m in missing if " " not in m]
        if not missing:
            return pins
        if not absent:
            raise RuntimeError("Python %s: %s" % (python, ", ".join(missing)))
        extra += absent
    raise RuntimeError("Python %s: no stable set after 40 resolutions" % python)


def render(python: str, pins: dict[str, str]) -> str:
    head = ("# Generated by tests/k3s_python_constraints.py (do not edit): the learner VM's\n"
            "# Python environment for Python %s, x86_64 and aarch64 wheels. The control\n"
            "# host's versions (constraints.txt) where this Python accepts them.\n" % python)
    return head + "".join("%s==%s\n" % (name, pins[name]) for name in sorted(pins))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail when a file differs from a new generation")
    args = parser.parse_args()
    cache = os.environ.get("KAI_LAB_PIP_CACHE", os.path.expanduser("~/.cache/gsb-kai-lab/pip-k3s"))
    CONSTRAINTS_DIR.mkdir(parents=True, exist_ok=True)
    status = 0
    for python in pythons():
        text = render(python, generate(python, cache))
        path = CONSTRAINTS_DIR / ("py%s.txt" % python)
        if args.check:
            if not path.is_file() or path.read_text() != text:
                print("%s differs from a new generation" % path, file=sys.stderr)
                status = 1
        else:
            path.write_text(text)
            print(path)
    return status


if __name__ == "__main__":
    sys.exit(main())
