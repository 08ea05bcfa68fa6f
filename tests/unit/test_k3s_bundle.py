"""The airgap bundle's builder (tests/k3s_bundle/, make test-k3s): images
written as docker-archives with Python's standard library, as containerd's
import (k3s's airgap import) reads them, the same bytes for the same inputs;
and what it reads of a source checkout."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile

from conftest import REPO

sys.path.insert(0, str(REPO / "tests" / "k3s_bundle"))
import image_archive  # noqa: E402
import build  # noqa: E402


def _layer(tmp_path, name, files):
    root = tmp_path / name
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return image_archive.layer_from_tree(str(tmp_path / (name + ".tar")), str(root))


def test_an_archive_holds_each_image_by_tag_with_its_config_and_shared_layers_once(tmp_path):
    base = _layer(tmp_path, "base", {"etc/passwd": "root:x:0:0::/root:/bin/sh\n"})
    app = image_archive.layer_from_files(str(tmp_path / "app.tar"), [
        ("workspace/app", str(tmp_path / "base" / "etc" / "passwd"), 0o755, (65532, 0))])
    out = tmp_path / "images.tar"
    written = image_archive.write_archive(str(out), [
        {"tags": ["ghcr.io/x/a:v1"], "layers": [base, app], "entrypoint": ["/workspace/app"], "user": "65532:65532"},
        {"tags": ["docker.io/library/ubuntu:22.04", "docker.io/library/ubuntu:24.04"], "layers": [base],
         "cmd": ["/bin/bash"], "labels": {"org.opencontainers.image.description": "stand-in"}}])
    assert set(written) == {"ghcr.io/x/a:v1", "docker.io/library/ubuntu:22.04", "docker.io/library/ubuntu:24.04"}
    with tarfile.open(out) as archive:
        names = archive.getnames()
        manifest = json.load(archive.extractfile("manifest.json"))
        # Each layer once, named by the sha256 of its tar, which the config's diff_ids name.
        assert names.count(base.digest + "/layer.tar") == 1
        for entry in manifest:
            config = json.load(archive.extractfile(entry["Config"]))
            blob = archive.extractfile(entry["Config"]).read()
            assert entry["Config"] == hashlib.sha256(blob).hexdigest() + ".json"
            for layer, diff_id in zip(entry["Layers"], config["rootfs"]["diff_ids"]):
                data = archive.extractfile(layer).read()
                assert diff_id == "sha256:" + hashlib.sha256(data).hexdigest()
            assert config["os"] == "linux" and config["architecture"] == "amd64"
        with tarfile.open(fileobj=archive.extractfile(app.digest + "/layer.tar")) as layer:
            member = layer.getmember("workspace/app")
            assert (member.uid, member.gid, member.mode) == (65532, 0, 0o755)
    stand_in = [e for e in manifest if "docker.io/library/ubuntu:22.04" in e["RepoTags"]][0]
    assert stand_in["RepoTags"] == ["docker.io/library/ubuntu:22.04", "docker.io/library/ubuntu:24.04"]
    assert image_archive.read_archive(str(out))[1][1]["config"]["Labels"] == {
        "org.opencontainers.image.description": "stand-in"}


def test_the_same_inputs_give_the_same_bytes(tmp_path):
    def build_once(where):
        where.mkdir()
        layer = _layer(where, "root", {"a/b": "one", "c": "two"})
        image_archive.write_archive(str(where / "out.tar"), [{"tags": ["x.io/y:z"], "layers": [layer]}])
        return hashlib.sha256((where / "out.tar").read_bytes()).hexdigest()
    assert build_once(tmp_path / "first") == build_once(tmp_path / "second")


def test_a_checkout_says_its_version_by_git_or_by_its_source_version_file(tmp_path):
    archived = tmp_path / "kai-scheduler"
    archived.mkdir()
    (archived / ".source-version").write_text("v0.17.0 f218c69bee5e5fc6031273ba555d09916b1ca89a\n")
    assert build.source_version(str(archived)) == ("v0.17.0", "f218c69bee5e5fc6031273ba555d09916b1ca89a")
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "f").write_text("x")
    git = ["git", "-C", str(clone), "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "f"], check=True)
    subprocess.run(git + ["commit", "-qm", "x"], check=True)
    subprocess.run(git + ["tag", "v0.2.0"], check=True)
    version, commit = build.source_version(str(clone))
    assert version == "v0.2.0" and len(commit) == 40
    assert build.source_version(str(tmp_path / "nothing")) == (None, None)
    # The tree's hash follows its content, not its .git.
    before = build.tree_hash(str(clone))
    (clone / ".git" / "extra").write_text("y")
    assert build.tree_hash(str(clone)) == before
    (clone / "f").write_text("changed")
    assert build.tree_hash(str(clone)) != before


def test_the_builder_takes_kai_and_the_vms_packages_from_the_collection():
    """One source: KAI's images from the collection's profile (the components it builds), the VM's Python
    from the wheel platforms and pinned sets the role uses, Helm's version the role's."""
    assert build.PROFILES.chart_images("v0.17.0")[0] == "ghcr.io/kai-scheduler/kai-scheduler/operator:v0.17.0"
    assert build.K3S_DEFAULTS["k3s_helm_version"] == "v3.19.0"
    assert (REPO / "roles" / "k3s" / "files" / "constraints" / ("py%s.txt" % build.VMS["debian-12"]["python"])).is_file()
    assert set(build.HOST_TOOLS) == {"iptables", "ipset", "conntrack", "ethtool"}
    packages = build.K3S_VARS["k3s_host_packages"]
    assert sorted(build.VM_PACKAGES) == sorted(packages[tool] for tool in list(build.HOST_TOOLS) + ["packaging"])


def test_a_built_piece_removes_only_its_own_older_builds(tmp_path, monkeypatch):
    """Building piece k3s once removed k3s-server's piece too (a glob of k3s-*): the next run built it again."""
    monkeypatch.setattr(build, "CACHE", str(tmp_path))
    builder = build.Builder(str(tmp_path / "sources"), "debian-12")
    builder.total = 3
    kept = builder.piece("k3s-server", {"a": 1}, lambda out, work: open(out + "/k3s-server", "w").close())
    builder.piece("k3s", {"b": 1}, lambda out, work: open(out + "/k3s", "w").close())
    newer = builder.piece("k3s", {"b": 2}, lambda out, work: open(out + "/k3s", "w").close())
    names = sorted(path.name for path in (tmp_path / "pieces").iterdir())
    assert names == sorted([os.path.basename(kept), os.path.basename(newer)]), names
    # Reused when asked again with the same inputs.
    assert builder.piece("k3s-server", {"a": 1}, lambda out, work: 1 / 0) == kept
