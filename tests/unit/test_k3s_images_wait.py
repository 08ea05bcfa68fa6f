"""The wait for k3s's airgap import (issue 43): k3s says its import is done
when its work queue is empty, not when the last archive is imported, so the
node is Ready while the largest archive still imports, and provision stopped
with "Airgap: k3s has not imported docker.io/library/ubuntu:22.04/24.04". The
role now waits (gsb.kai_lab.k3s_images_wait) until k3s lists every image the
lab needs, with progress a person reads, and names what is missing."""

from __future__ import annotations

import json

import yaml

from conftest import REPO
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s import images as k3s_images

ROLE = REPO / "roles" / "k3s"
NEEDED = ["docker.io/library/ubuntu:22.04", "docker.io/library/ubuntu:24.04",
          "ghcr.io/kai-scheduler/kai-scheduler/binder:v0.17.0"]
IMAGES_DIR = "/var/lib/rancher/k3s/agent/images"


def _logged(message):
    """A line as `journalctl -o cat -u k3s` shows it: logrus's text, the message quoted (recorded on the k3s_vm
    scenario's VM, 2026-12-06: msg="Imported images from .../kai-scheduler-v0.17.0.tar.zst in 2m44.68819069s")."""
    return 'time="2026-12-06T22:08:11Z" level=%s msg="%s"' % ("error" if "failed" in message else "info", message)


def _output(tags, journal):
    """What STATUS_SCRIPT prints: crictl's listing, the mark, the journal's lines of k3s's imports."""
    listing = {"images": [{"id": "sha256:%064x" % i, "repoTags": [tag], "repoDigests": [], "size": "1000"}
                          for i, tag in enumerate(tags)]}
    lines = [_logged(line % {"dir": IMAGES_DIR}) for line in journal]
    return json.dumps(listing) + "\n" + k3s_images.JOURNAL_MARK + "\n" + "\n".join(lines) + "\n"


IMPORTING_UBUNTU = [
    "Importing images from %(dir)s/kai-scheduler-v0.17.0.tar.zst",
    "Imported images from %(dir)s/kai-scheduler-v0.17.0.tar.zst in 41.2s",
    "Importing images from %(dir)s/stand-in-ubuntu-debian-12-minbase.tar.zst",
]


def test_a_ready_node_still_importing_its_largest_archive_is_waited_for():
    status = k3s_images.import_status(_output(NEEDED[2:], IMPORTING_UBUNTU), NEEDED)
    assert status["missing"] == NEEDED[:2] and status["present"] == 1
    assert status["importing"] == "stand-in-ubuntu-debian-12-minbase.tar.zst"
    assert status["imported"] == ["kai-scheduler-v0.17.0.tar.zst"] and status["failed"] == []
    line = k3s_images.import_line(status, NEEDED, 45, 900)
    assert line == ("k3s has imported 1 of the 3 images the lab needs (importing stand-in-ubuntu-debian-12-minbase"
                    ".tar.zst now, 1 archive done); waiting for docker.io/library/ubuntu:22.04, "
                    "docker.io/library/ubuntu:24.04; 45 s of at most 900 s")
    done = k3s_images.import_status(_output(NEEDED, IMPORTING_UBUNTU + [
        "Imported images from %(dir)s/stand-in-ubuntu-debian-12-minbase.tar.zst in 12.0s"]), NEEDED)
    assert done["missing"] == [] and done["importing"] == "" and len(done["imported"]) == 2


def test_k3s_not_serving_yet_is_waited_for_and_said():
    status = k3s_images.import_status("time=... level=fatal msg=\"connect: connection refused\"\n"
                                      + k3s_images.JOURNAL_MARK + "\n", NEEDED)
    assert status["missing"] == NEEDED and "connection refused" in status["error"]
    assert k3s_images.import_line(status, NEEDED, 5, 900).startswith("k3s lists no images yet (")


def test_the_failure_names_what_is_missing_and_why_in_english_and_korean():
    status = k3s_images.import_status(_output(NEEDED[2:], IMPORTING_UBUNTU), NEEDED)
    message = k3s_images.import_failure(status, 900, IMAGES_DIR)
    assert "k3s has not imported docker.io/library/ubuntu:22.04, docker.io/library/ubuntu:24.04 within 900 s" in message
    assert "still importing stand-in-ubuntu-debian-12-minbase.tar.zst" in message
    assert "k3s_airgap_import_timeout" in message and "다시 프로비저닝하세요" in message
    failed = k3s_images.import_status(_output(NEEDED[2:], IMPORTING_UBUNTU[:2] + [
        "Failed to process image event: failed to import %(dir)s/ubuntu.tar.zst: failed to import images from "
        "%(dir)s/ubuntu.tar.zst: unexpected EOF"]), NEEDED)
    assert failed["failed"] == [("ubuntu.tar.zst", "failed to import images from %s/ubuntu.tar.zst: unexpected EOF"
                                 % IMAGES_DIR)]
    assert "k3s failed to import %s/ubuntu.tar.zst: failed to import images from" % IMAGES_DIR in \
        k3s_images.import_failure(failed, 60, IMAGES_DIR)
    # Nothing imports and nothing failed: no archive holds them.
    none = k3s_images.import_status(_output(NEEDED[2:], IMPORTING_UBUNTU[:2]), NEEDED)
    assert "no archive in %s holds them" % IMAGES_DIR in k3s_images.import_failure(none, 900, IMAGES_DIR)


def test_airgapped_the_role_waits_for_every_needed_image_before_it_checks_them():
    tasks = yaml.safe_load((ROLE / "tasks" / "images.yml").read_text())
    names = [task["name"] for task in tasks]
    wait = next(task for task in tasks if "gsb.kai_lab.k3s_images_wait" in task)
    assert wait["when"] == "k3s_airgap"
    assert wait["gsb.kai_lab.k3s_images_wait"]["needed"] == "{{ k3s_images_needed }}"
    assert names.index(wait["name"]) < names.index("Fail when an airgapped VM lacks an image")
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    assert defaults["k3s_airgap_import_timeout"] >= 600
