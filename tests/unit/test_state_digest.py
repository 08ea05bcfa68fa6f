# -*- coding: utf-8 -*-
"""What the provision state checks' digest leaves out (kai_lab_state_not_settings).

A provision is a full one when a setting in the digest changed since the last
full provision (roles/kai_lab/tasks/sim_state.yml, k3s_state.yml). How long
a run waits is not a setting of the lab: raising kai_lab_request_timeout or
k3s_ready_timeout for a slow VM must not make the next provision a full one.
That holds only while no such variable is written to the lab, which this
module checks.
"""

from __future__ import annotations

import re

import yaml

from conftest import REPO

ROLES = REPO / "roles"


def _not_settings():
    return re.compile(yaml.safe_load((ROLES / "kai_lab" / "vars" / "main.yml").read_text())["kai_lab_state_not_settings"])


def _defaults():
    names = set()
    for path in list(ROLES.glob("*/defaults/main.yml")) + list(ROLES.glob("*/vars/main.yml")):
        names |= set(yaml.safe_load(path.read_text()) or {})
    return names


def test_every_timeout_is_left_out_and_the_lab_settings_are_kept():
    pattern = _not_settings()
    names = _defaults()
    timeouts = sorted(name for name in names if name.endswith("_timeout"))
    assert {"kai_lab_request_timeout", "k3s_ready_timeout", "kai_lab_step_timeout"} <= set(timeouts)
    assert [name for name in timeouts if not pattern.match(name)] == []
    # What provision writes stays in: the Events' lifetime, the learner, the queues' quotas, the k3s config.
    kept = ["kai_lab_event_ttl", "kai_lab_learner_user", "kai_lab_learner_objects", "k3s_config_extra",
            "kai_lab_kai_version", "fake_gpu_operator_chart_version", "kai_lab_lang"]
    assert [name for name in kept if name in names and pattern.match(name)] == []
    assert [name for name in kept if name not in names] == []
    # How this provision was asked for and the checks' own results are left out.
    assert all(pattern.match(name) for name in ("kai_lab_full_provision", "kai_lab_state_fast", "kai_lab_quota",
                                                 "kai_lab_sim_state_check", "kai_lab_k3s_state_names"))


def test_no_timeout_left_out_is_written_to_the_lab():
    # The roles' templates and files are what provision writes; a timeout named there would change the lab.
    timeouts = sorted(name for name in _defaults() if name.endswith("_timeout"))
    written = [path for role in ROLES.iterdir() for kind in ("templates", "files")
               for path in (role / kind).rglob("*") if path.is_file()]
    assert written
    found = sorted((name, str(path.relative_to(REPO))) for path in written
                   for name in timeouts if re.search(r"\b%s\b" % name, path.read_text(errors="replace")))
    assert found == []
