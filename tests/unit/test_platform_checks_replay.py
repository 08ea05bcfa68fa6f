# -*- coding: utf-8 -*-
"""The lab platforms' check scripts, run for real against the lab done by hand on KAI v0.17.0.

kai-lab export writes each platform's package; each step's check script
(Killercoda's verify.sh, Instruqt's check-kai-lab, iximiuz's task run with
its hintcheck and failcheck) is executed by bash as the platform would, and
calls kai-lab: the entry script provision installs (roles/kai_lab/templates/
kai-lab.j2) over this checkout, reading a local API server (fake_api.py)
that serves the objects recorded after each step (fixtures/kai-v0.17.0/,
copied from shared/fixtures/kai-v0.17.0/) and the learner's files of then.

The step done (the recording after it): every script passes. The step not
yet done (the recording after the step before; the blank lab before step 1):
every script fails with the step's own first failing check, as kai-lab check
--json words it, in the platform's form (Instruqt's "FAIL: "), never as an
environment fault.

Both languages: the packages exported with lang en and with lang ko, each
failure line as kai-lab check --json words it in that language.

Where the learner is root (Killercoda, iximiuz Labs: grading/platforms.py),
every script's output, passed or not, ends with the package's one line that
the grade is not protected, in its language (issue 40); Instruqt's learner
has a login of its own and its scripts print no such line.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import fake_api
import kai_v017 as hand
import lab_states
from conftest import COLLECTION_STEP_IDS, FakeCluster, write_files
from lab_testing import HANGUL
from test_kai_lab_cli import kai_lab, render_entry, write_config
from test_platform_export import UNPROTECTED, URL, export, front_matter
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import platform_scripts
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry

# The scripts call the kai-lab entry script, a process of its own (python -I) that knows the collection's
# steps only: a step registered for the session (KAI_LAB_ADDED_STEP=1) is left out here, and
# test_added_step.py checks its packages.
STEPS = [step for step in registry.STEPS if step.id in COLLECTION_STEP_IDS]
LANGS = ("en", "ko")
PLATFORMS = ("killercoda", "instruqt", "iximiuz")
# The platforms whose learner is root: their scripts' every output ends with the unprotected line.
ROOT_LEARNER = ("killercoda", "iximiuz")
# The line a failing check script prints (kai-lab check STEP --first-failure), in each language.
FAILURE_LINE = {"en": "%s: %s. Hint: %s", "ko": "%s: %s. 힌트: %s"}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """{lang: the three packages}, as kai-lab export writes them in that language."""
    base = tmp_path_factory.mktemp("packages")
    return dict((lang, dict((platform, export(base / lang / platform, platform, collection=URL, lang=lang)[0])
                            for platform in PLATFORMS)) for lang in LANGS)


def scripts(packages, step):
    """([(platform, command, what a failure's line starts with; None: nothing printed)], iximiuz's task) of step."""
    iximiuz = front_matter(packages["iximiuz"] / "index.md")[0]["tasks"]["verify_" + step.id]
    return [
        ("killercoda", ["bash", str(packages["killercoda"] / ("step%d" % step.number) / "verify.sh")], ""),
        ("instruqt", ["bash", str(packages["instruqt"] / ("%02d-%s" % (step.number, step.id.replace("_", "-")))
                                  / "check-kai-lab")], "FAIL: "),
        ("iximiuz", ["bash", "-c", iximiuz["run"]], None),
    ], iximiuz


def recorded(step_id, done):
    """The cluster and the learner's files after step step_id, or before it (a blank lab before the first; each
    language's test its own copy)."""
    return copy.deepcopy(_recorded(step_id, done))


@functools.lru_cache(maxsize=None)
def _recorded(step_id, done):
    return lab_states.lab_after(step_id, lab_states.KAI_V017) if done else lab_states.before(step_id, lab_states.KAI_V017)


def run(command, entry, setup_dir):
    """A script run as its platform runs it, with this kai-lab; within the scripts' own bound of a check."""
    env = dict(os.environ, KAI_LAB_COMMAND=str(entry), KAI_LAB_SETUP_DIR=str(setup_dir))
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, timeout=platform_scripts.CHECK_SECONDS + 10,
                          env=env)
    assert time.monotonic() - started < platform_scripts.CHECK_SECONDS
    return done


def _entries(tmp_path, checks, workdir, lang, server):
    """{platform: (its kai-lab entry script over the served cluster, its setup directory)} for each script."""
    entries = {}
    for platform, _command, _prefix in checks:
        where = tmp_path / platform
        where.mkdir()
        kubeconfig = fake_api.kubeconfig(where / "kubeconfig.yaml", server.url)
        entries[platform] = (render_entry(where, write_config(where, workdir, lang=lang, kubeconfig=kubeconfig)),
                             where / "setup")
    return entries


@pytest.mark.parametrize("step", STEPS, ids=[s.id for s in STEPS])
@pytest.mark.parametrize("done", [True, False], ids=["done", "not-done"])
@pytest.mark.parametrize("lang", LANGS)
def test_each_platforms_check_passes_once_the_step_is_done_and_says_why_before(tmp_path, exported, lang, step, done):
    packages = exported[lang]
    state = recorded(step.id, done)
    # One lab: its files, and the recorded cluster served over HTTP; each caller keeps its own grader's record.
    workdir = write_files(tmp_path / "gsb-kai", state["files"])
    cluster = hand.add_jobs(FakeCluster(state), state)
    server = fake_api.start(cluster)
    try:
        expected = None
        if not done:
            # What the step's first failing check says, from kai-lab check --json on the same lab.
            where = tmp_path / "json"
            where.mkdir()
            config = write_config(where, workdir, lang=lang)
            code, out, _ = kai_lab(config, "check", step.id, "--json", cluster=hand.add_jobs(FakeCluster(state), state))
            assert code == 1, out
            first = [c for c in json.loads(out)["checks"] if c["status"] != "passed"][0]
            assert first["id"].startswith(step.id + ".")
            if lang == "ko":  # the learner's language: kai-lab check says it in Korean
                assert HANGUL.search(first["message"]), first["message"]
            expected = FAILURE_LINE[lang] % (first["id"], first["message"].rstrip(". "), first["hint"] or "-")
        checks, iximiuz = scripts(packages, step)
        entries = _entries(tmp_path, checks, workdir, lang, server)
        # The three packages' scripts at once, as three learners' machines would run them.
        with ThreadPoolExecutor(max_workers=len(checks)) as pool:
            said = dict(zip([c[0] for c in checks],
                            pool.map(lambda c: run(c[1], *entries[c[0]]), checks)))
        for platform, _command, prefix in checks:
            notice = UNPROTECTED[lang] + "\n" if platform in ROOT_LEARNER else ""
            assert said[platform].stderr == "", (platform, said[platform].stderr)
            if done:
                assert (said[platform].returncode, said[platform].stdout) == (0, notice), (platform, said[platform].stdout)
            elif prefix is not None:
                assert (said[platform].returncode, said[platform].stdout) == (1, prefix + expected + "\n" + notice), \
                    platform
            else:
                # iximiuz re-runs its task until it passes; hintcheck shows why it does not yet.
                assert (said[platform].returncode, said[platform].stdout) == (1, notice)
        # iximiuz's hintcheck and failcheck read what its task run left.
        hint = run(["bash", "-c", iximiuz["hintcheck"]], *entries["iximiuz"])
        assert (hint.returncode, hint.stdout) == (0, ("" if done else expected + "\n") + UNPROTECTED[lang] + "\n")
        broken = run(["bash", "-c", iximiuz["failcheck"]], *entries["iximiuz"])
        assert (broken.returncode, broken.stdout) == (0, "")
    finally:
        fake_api.stop(server)
    assert not cluster.writes


def test_a_learners_flood_is_a_failed_check_on_every_platform_never_a_broken_machine(tmp_path, exported):
    """Issue 40, row 4: 44 pods of 200 KB in the lab namespace (tests/unit/test_flood.py) after step 2 done: each
    platform's check of step 2 says the flood as the step's failure (exit 1), and iximiuz's failcheck never
    marks the playground broken (kai-lab said "could not grade", exit 2, before)."""
    from test_flood import flood
    lang, step = "en", registry.step("podgroup")
    state = recorded(step.id, True)
    workdir = write_files(tmp_path / "gsb-kai", state["files"])
    server = fake_api.start(hand.add_jobs(FakeCluster(state), state), texts=flood())
    try:
        where = tmp_path / "json"
        where.mkdir()
        kubeconfig = fake_api.kubeconfig(where / "kubeconfig.yaml", server.url)
        code, out, _ = kai_lab(write_config(where, workdir, lang=lang, kubeconfig=kubeconfig), "check", step.id,
                               "--json")
        assert code == 1, out
        first = [c for c in json.loads(out)["checks"] if c["status"] != "passed"][0]
        assert first["message"].startswith("Namespace kai-lab holds 45 pods, more than the grade reads of one kind")
        expected = FAILURE_LINE[lang] % (first["id"], first["message"].rstrip(". "), first["hint"] or "-")
        checks, iximiuz = scripts(exported[lang], step)
        entries = _entries(tmp_path, checks, workdir, lang, server)
        # The step's failure first (iximiuz's task says nothing, its hintcheck says it); any line after it is not
        # this test's (a platform may add a note of its own).
        for platform, command, prefix in checks:
            said = run(command, *entries[platform])
            assert said.stderr == "", (platform, said.stderr)
            assert said.returncode == 1, platform
            if prefix is not None:
                assert said.stdout.splitlines()[0] == prefix + expected, platform
        hint = run(["bash", "-c", iximiuz["hintcheck"]], *entries["iximiuz"])
        assert hint.returncode == 0 and hint.stdout.splitlines()[0] == expected
        assert not (entries["iximiuz"][1] / "checks" / (step.id + ".broken-since")).exists()
        broken = run(["bash", "-c", iximiuz["failcheck"]], *entries["iximiuz"])
        assert (broken.returncode, broken.stdout) == (0, "")
    finally:
        fake_api.stop(server)
