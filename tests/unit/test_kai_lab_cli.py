# -*- coding: utf-8 -*-
"""kai-lab, the learner's check command, over the real KAI v0.17.0 objects.

The lab done by hand on v0.17.0 (fixtures/kai-v0.17.0/) is replayed step by
step through kai-lab's entry (kai_lab_cli.main, and the entry script
provision writes) and through the module kai_lab_grade's: both must give
the same checks, words and record, since they are one grading core.
"""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import pytest
from ansible.module_utils.testing import patch_module_args
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

import kai_v017 as hand
import lab_states
from conftest import COLLECTION_PATH, REPO, FakeCluster, write_files
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import session as grade_session
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import cli as kai_lab_cli
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import running as kai_running
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry as steps
from ansible_collections.gsb.kai_lab.plugins.modules import kai_lab_grade

NS = hand.NAMESPACE
STEP_IDS = list(steps.STEP_IDS)
HANGUL = "\uac00-\ud7a3"


def sim_kai_record(tmp_path):
    """The sim's record of the KAI it started (kai_running.sim_record), here the recorded lab's KAI."""
    path = tmp_path / "kai-version.json"
    path.write_text(json.dumps(kai_running.sim_record(hand.KAI_VERSION, "", {})))
    return str(path)


def write_config(tmp_path, workdir, **overrides):
    """The settings file provision writes (roles/kai_lab/tasks/cli.yml), for a lab in workdir."""
    config = {"version": "9.8.7", "target": "sim", "namespace": NS, "workdir": str(workdir), "lang": "ko",
              "kai_record": sim_kai_record(tmp_path), "kubeconfig": str(tmp_path / "no-kubeconfig"), "health_urls": {},
              "kai_deployments": [], "kai_namespace": "kai-scheduler", "output_dir": str(workdir), "time_limit": 30,
              "record_path": str(tmp_path / "records" / ("%s.json" % NS)), "sim_state_dir": str(tmp_path)}
    config.update(overrides)
    path = tmp_path / "kai-lab.json"
    path.write_text(json.dumps(config))
    return str(path)


def kai_lab(config, *argv, cluster=None):
    """(exit code, stdout, stderr) of kai-lab argv."""
    out, err = io.StringIO(), io.StringIO()
    code = kai_lab_cli.main(list(argv), config_path=config, stdout=out, stderr=err, cluster=cluster)
    return code, out.getvalue(), err.getvalue()


def module_grade(monkeypatch, capsys, cluster, args):
    """The module kai_lab_grade's result, run as Ansible runs it, on cluster."""
    monkeypatch.setattr(grade_session, "connect", lambda settings: cluster)
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            kai_lab_grade.main()
    return json.loads(capsys.readouterr().out)


def lab(tmp_path, step_id, events=True):
    """The by-hand v0.17.0 lab after step step_id (lab_states) and its workdir."""
    state = lab_states.lab_after(step_id, lab_states.KAI_V017, events=events)
    workdir = write_files(tmp_path / "gsb-kai", state["files"])
    return state, workdir


# ---------------------------------------------------------------- the replay, through both faces

@pytest.mark.parametrize("step_id", STEP_IDS)
def test_replay_each_step_passes_through_kai_lab_and_the_module_alike(tmp_path, monkeypatch, capsys, step_id):
    number = steps.step(step_id).number
    state, workdir = lab(tmp_path, step_id)
    config = write_config(tmp_path, workdir)
    code, out, _ = kai_lab(config, "check", step_id, "--lang", "en", cluster=FakeCluster(state))
    title = steps.step(step_id).title["en"]
    assert code == 0, out
    assert "step %d %s (%s): PASSED" % (number, step_id, title) in out.splitlines()
    cli_json = kai_lab(config, "check", step_id, "--lang", "en", "--json", cluster=FakeCluster(state))
    assert cli_json[0] == 0
    from_cli = json.loads(cli_json[1])

    result = module_grade(monkeypatch, capsys, FakeCluster(state), {
        "namespace": NS, "workdir": workdir, "kai_record": sim_kai_record(tmp_path), "lang": "en", "steps": [step_id],
        "output_dir": str(tmp_path / "module-out"),
        "record_path": str(tmp_path / "module-records" / ("%s.json" % NS))})
    assert not result.get("failed"), result.get("msg")
    [from_module] = result["grade"]["steps"]
    strip = lambda step: [(c["id"], c["status"], c["message"], c["hint"], c["evidence"]) for c in step["checks"]]
    assert strip(from_cli) == strip(from_module)
    # The same record: the same checks kept, by either face.
    records = [json.loads(Path(p).read_text())["checks"] for p in (
        tmp_path / "records" / ("%s.json" % NS), tmp_path / "module-records" / ("%s.json" % NS))]
    assert sorted(records[0]) == sorted(records[1]) and records[0]
    assert dict((k, v["evidence"]) for k, v in records[0].items()) == dict((k, v["evidence"]) for k, v in records[1].items())
    # A step's check writes the record only; grade.json is the whole lab's (kai-lab check).
    assert not os.path.exists(os.path.join(workdir, "grade.json"))


def test_replay_steps_checked_as_done_keep_the_proof_when_events_are_gone(tmp_path):
    """Checked right after each step, the v0.17.0 lab grades 100 later without any event."""
    config = None
    for step_id in STEP_IDS:
        state, workdir = lab(tmp_path, step_id)
        config = write_config(tmp_path, workdir, lang="en")
        assert kai_lab(config, "check", step_id, cluster=FakeCluster(state))[0] == 0
    state, workdir = lab(tmp_path, STEP_IDS[-1], events=False)
    code, out, _ = kai_lab(config, "check", "--json", cluster=FakeCluster(state))
    grade = json.loads(out)
    assert code == 0 and grade["score"] == 100.0, [(c["id"], c["message"]) for s in grade["steps"]
                                                   for c in s["checks"] if not c["passed"]]
    assert sorted(grade["record"]["used"]) == ["gang.reason", "nolimit.reason", "preempt.evicted"]
    # The whole lab's check writes grade.json and the JUnit file, as grade.yml does.
    on_disk = json.loads(Path(workdir, "grade.json").read_text())
    assert on_disk["steps"] == grade["steps"] and Path(workdir, "grade-junit.xml").is_file()
    code, out, _ = kai_lab(config, "status")
    assert code == 0
    assert out.splitlines()[1].startswith("KAI's word is NOT known to be protected: the API server could not be asked")
    assert all(" passed, verified " in line for line in out.splitlines()[3:3 + len(STEP_IDS)]), out
    assert out.splitlines()[-1] == "every step is checked: kai-lab check grades the whole lab"


def test_without_the_per_step_checks_the_whole_lab_is_not_passed(tmp_path):
    state, workdir = lab(tmp_path, STEP_IDS[-1], events=False)
    code, out, _ = kai_lab(write_config(tmp_path, workdir, lang="en"), "check", "--json", cluster=FakeCluster(state))
    grade = json.loads(out)
    unverified = [c for s in grade["steps"] for c in s["checks"] if c["status"] == "unverified"]
    assert code == 1 and unverified and grade["points"] == steps.total_weight() - sum(c["weight"] for c in unverified)
    code, out, _ = kai_lab(write_config(tmp_path, workdir, lang="en"), "check", cluster=FakeCluster(state))
    assert code == 1
    assert "the lab: NOT PASSED (%.1f%%)" % grade["score"] in out.splitlines()


# ---------------------------------------------------------------- exit codes and words

def test_a_reset_lab_fails_the_queues_step_with_its_message(tmp_path):
    workdir = write_files(tmp_path / "gsb-kai", {})
    code, out, _ = kai_lab(write_config(tmp_path, workdir, lang="en"), "check", "queues", cluster=FakeCluster({}))
    assert code == 1
    lines = out.splitlines()
    # The step's verdict first (issue 41: a quiet console), then a row per check with the hint of each not passed.
    assert lines[0].startswith("step 1 queues (Queue hierarchy): NOT PASSED (3 check(s) not passed: queues.file")
    assert lines[1].startswith("  FAIL queues.file: ") and "queues.yaml" in lines[1], out
    assert lines[2].startswith("       hint: "), out


def test_an_unknown_step_names_the_known_ones(tmp_path):
    workdir = write_files(tmp_path / "gsb-kai", {})
    config = write_config(tmp_path, workdir)
    code, out, _ = kai_lab(config, "check", "queue", "--lang", "en", cluster=FakeCluster({}))
    assert code == 2
    assert out.strip() == "could not grade: unknown step 'queue'; the steps are %s" % ", ".join(STEP_IDS)
    assert kai_lab(config, "hint", "nope", cluster=FakeCluster({}))[0] == 2
    assert not os.path.exists(tmp_path / "records")


def test_an_unreadable_cluster_cannot_be_graded(tmp_path):
    state, workdir = lab(tmp_path, "queues")
    message = "cannot reach the Kubernetes API server at https://127.0.0.1:1 (connection refused)"
    code, out, _ = kai_lab(write_config(tmp_path, workdir, lang="en"), "check", "queues",
                           cluster=FakeCluster(state, error=message))
    assert code == 2
    assert out.splitlines()[-1] == "could not grade: " + message
    # With --json, stdout stays JSON for a platform to parse; why it could not grade goes to stderr.
    code, out, err = kai_lab(write_config(tmp_path, workdir, lang="en"), "check", "queues", "--json",
                             cluster=FakeCluster(state, error=message))
    assert code == 2 and json.loads(out)["id"] == "queues"
    assert err.strip() == "could not grade: " + message


def test_a_stopped_kai_component_fails_the_step_and_says_so(tmp_path):
    state, workdir = lab(tmp_path, "queues")
    config = write_config(tmp_path, workdir, lang="en", kai_deployments=["binder"])
    code, out, _ = kai_lab(config, "check", "queues", cluster=FakeCluster(state))
    assert code == 1
    lines = out.splitlines()
    assert "step 1 queues (Queue hierarchy): NOT PASSED (1 check(s) not passed: environment.kai_components)" in lines
    assert lines[-1].startswith("KAI-Scheduler is not ready: KAI component(s) not running: binder."), out
    # An environment fault, which kai-lab doctor names too (the same probe): the learner is sent there.
    assert lines[-1].endswith("An environment fault, not your work: kai-lab doctor says what to do."), out
    code, out, _ = kai_lab(config, "doctor", "--json", cluster=FakeCluster(state))
    assert code == 2 and "kai_not_ready" in [f["id"] for f in json.loads(out)["faults"]]


def test_a_failed_step_with_kai_ready_never_says_environment(tmp_path):
    state, workdir = lab(tmp_path, "queues")
    state["queues"] = []
    code, out, _ = kai_lab(write_config(tmp_path, workdir, lang="en"), "check", "queues", cluster=FakeCluster(state))
    assert code == 1
    # KAI's health passed: no line says environment.
    assert "environment" not in out and "not ready" not in out and "kai-lab doctor" not in out, out


def test_json_is_the_steps_part_of_grade_json(tmp_path):
    state, workdir = lab(tmp_path, "nolimit")
    config = write_config(tmp_path, workdir)
    code, out, _ = kai_lab(config, "check", "nolimit", "--json", "--lang", "en", cluster=FakeCluster(state))
    step = json.loads(out)
    assert code == 0 and step["id"] == "nolimit" and step["number"] == steps.step("nolimit").number and step["passed"]
    assert kai_lab(config, "check", "--lang", "en", cluster=FakeCluster(state))[0] == 1
    whole = json.loads(Path(workdir, "grade.json").read_text())
    graded = [s for s in whole["steps"] if s["id"] == "nolimit"][0]
    keep = lambda s: [(c["id"], c["status"], c["message"]) for c in s["checks"]]
    assert keep(graded) == keep(step)


def test_lang_ko_is_the_labs_default_and_en_is_asked_for(tmp_path):
    state, workdir = lab(tmp_path, "queues")
    config = write_config(tmp_path, workdir, lang="ko")
    code, out, _ = kai_lab(config, "check", "queues", cluster=FakeCluster(state))
    assert code == 0 and "1단계 queues (큐 계층): 통과" in out.splitlines()
    code, out, _ = kai_lab(config, "--lang", "en", "check", "queues", cluster=FakeCluster(state))
    assert code == 0 and "step 1 queues (Queue hierarchy): PASSED" in out.splitlines()


def test_help_is_in_both_languages_and_version_is_the_collections(tmp_path):
    config = write_config(tmp_path, tmp_path / "gsb-kai", lang="ko")
    code, out, _ = kai_lab(config, "--help")
    assert code == 0 and "단계를 마칠 때마다 채점" in out and "종료 코드: 0 통과, 1 통과하지 못함, 2 채점할 수 없음" in out
    code, out, _ = kai_lab(config, "--lang", "en", "--help")
    assert code == 0 and "grade a step as you finish it" in out and "Exit codes: 0 passed, 1 not passed" in out
    code, out, _ = kai_lab(config, "check", "--help", "--lang", "en")
    assert code == 0 and "the step to grade" in out
    code, out, _ = kai_lab(config, "--version")
    assert code == 0 and out.strip() == "kai-lab (gsb.kai_lab) 9.8.7"


def test_hint_prints_each_checks_hint_with_this_labs_paths(tmp_path):
    """A learner of their own works in ~/gsb-kai, not root's: the hint names the configured workdir."""
    workdir = tmp_path / "home" / "learner" / "gsb-kai"
    config = write_config(tmp_path, workdir, lang="en", namespace="class-7")
    code, out, _ = kai_lab(config, "hint", "queues")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "1 queues: Queue hierarchy" and len(lines) == 4
    assert lines[3] == "- queues.applied (The queues lab, research, ops are applied to the cluster as written): " \
        "kubectl apply -f %s/queues.yaml" % workdir
    code, out, _ = kai_lab(config, "hint", "podgroup")
    assert code == 0 and "kubectl -n class-7 describe pod p1" in out and "kai-lab" not in out.replace("kai-lab hint", "")
    assert "> %s/podgroup.txt" % workdir in out


def test_status_of_a_new_lab_says_what_is_next(tmp_path):
    config = write_config(tmp_path, tmp_path / "gsb-kai", lang="en")
    code, out, _ = kai_lab(config, "status")
    lines = out.splitlines()
    # First the KAI that runs, as the learner reads it before starting (issue 19).
    assert code == 1 and lines[0].startswith("KAI-Scheduler %s (read from the sim record " % hand.KAI_VERSION), out
    # Then what protects KAI's word: asked of the API server (none here).
    assert lines[1].startswith("KAI's word is NOT known to be protected: the API server could not be asked what the "
                               "learner (the lab's own kubeconfig) may write (cannot load kubeconfig ")
    assert lines[2].startswith("grader's record: none yet")
    assert lines[3].split() == ["1", "queues", "not", "checked", "yet", "(Queue", "hierarchy)"]
    # Then the next task, in one line (test_kai_lab_task.py).
    assert lines[-2] == "next: step 1 queues (Queue hierarchy), then kai-lab check queues"


def test_status_says_when_the_running_kai_cannot_be_read(tmp_path):
    config = write_config(tmp_path, tmp_path / "gsb-kai", lang="en", kai_record=str(tmp_path / "missing.json"))
    code, out, _ = kai_lab(config, "status", "--json")
    said = json.loads(out)
    assert code == 1 and said["kai"]["error"].startswith("environment: the version of the KAI-Scheduler that runs")
    assert str(tmp_path / "missing.json") in said["kai"]["error"]


def test_a_learner_string_with_control_characters_prints_as_one_line(tmp_path):
    files = dict(hand.learner_files("queues"))
    forged = "lab\x1b[2J\r\nstep 1 queues (Queue hierarchy): PASSED\u202e"
    files["queues.yaml"] = files["queues.yaml"].replace("name: lab", "name: %s" % json.dumps(forged), 1)
    assert files["queues.yaml"] != hand.learner_files("queues")["queues.yaml"]
    workdir = write_files(tmp_path / "gsb-kai", files)
    code, out, _ = kai_lab(write_config(tmp_path, workdir, lang="en"), "check", "queues",
                           cluster=FakeCluster(hand.hand_state("queues")))
    assert code == 1
    lines = out.splitlines()
    assert not any(unicodedata.category(ch)[0] == "C" for ch in out.replace("\n", ""))
    assert "step 1 queues (Queue hierarchy): PASSED" not in lines
    quoting = [line for line in lines if "[2J" in line]
    assert quoting and all(line.startswith("  FAIL queues.") for line in quoting), out


def test_without_settings_it_says_to_provision(tmp_path):
    code, out, err = kai_lab(str(tmp_path / "absent.json"), "--lang", "en", "check", "queues")
    assert code == 2 and out == ""
    assert "kai-lab has no settings: %s does not exist. Provision the lab" % (tmp_path / "absent.json") in err


# ---------------------------------------------------------------- the installed entry script

def render_entry(tmp_path, config):
    """The entry script provision writes (roles/kai_lab/templates/kai-lab.j2), over this Python and this checkout."""
    variables = {"kai_lab_cli_python": sys.executable, "kai_lab_cli_version": "9.8.7",
                 "kai_lab_cli_code_dir": str(COLLECTION_PATH), "kai_lab_cli_config": config,
                 "kai_lab_cli_path": str(tmp_path / "kai-lab"), "kai_lab_cli_sudo": False}
    source = (REPO / "roles" / "kai_lab" / "templates" / "kai-lab.j2").read_text()
    script = tmp_path / "kai-lab"
    script.write_text(Templar(loader=DataLoader(), variables=variables).template(trust_as_template(source)))
    script.chmod(0o755)
    return script


def test_the_entry_script_with_the_api_server_stopped_exits_2_within_10s(tmp_path):
    # A port nothing listens on: what a stopped API server leaves.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    kubeconfig = tmp_path / "kubeconfig.yaml"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "lab",
        "clusters": [{"name": "lab", "cluster": {"server": "https://127.0.0.1:%d" % port,
                                                  "insecure-skip-tls-verify": True}}],
        "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "lab"}}],
        "users": [{"name": "lab", "user": {"token": "x"}}]}))
    state, workdir = lab(tmp_path, "queues")
    config = write_config(tmp_path, workdir, lang="en", kubeconfig=str(kubeconfig))
    script = render_entry(tmp_path, config)
    started = time.monotonic()
    done = subprocess.run([str(script), "check", "queues"], capture_output=True, text=True, timeout=30,
                          cwd=str(tmp_path), env={"PATH": os.environ["PATH"]})
    elapsed = time.monotonic() - started
    assert done.returncode == 2, done.stdout + done.stderr
    assert elapsed < 10
    assert done.stdout.splitlines()[-1] == ("could not grade: cannot reach the Kubernetes API server at "
                                           "https://127.0.0.1:%d (connection refused). Is the lab running? "
                                           "Provision it with ansible-playbook playbooks/provision.yml." % port)
    assert done.stderr == ""
    version = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=30, check=True)
    assert version.stdout.strip() == "kai-lab (gsb.kai_lab) 9.8.7"


def test_the_entry_script_ignores_the_callers_python_path(tmp_path):
    """Run through sudo, the command must not import a learner's module from the environment or its directory."""
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "yaml.py").write_text("raise SystemExit('imported the caller\\'s yaml')\n")
    config = write_config(tmp_path, tmp_path / "gsb-kai", lang="en")
    script = render_entry(tmp_path, config)
    done = subprocess.run([str(script), "hint", "queues"], capture_output=True, text=True, timeout=30, cwd=str(evil),
                          env={"PATH": os.environ["PATH"], "PYTHONPATH": str(evil)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("1 queues: Queue hierarchy")


# ---------------------------------------------------------------- a quiet console (issue 41)

def test_check_prints_the_steps_result_first_and_the_kai_note_only_on_a_step_it_changes(tmp_path):
    """Before, every check began with two long lines: which KAI (with the steps it changes) and the whole
    protection verdict. Now the verdict is the first line; the KAI note comes only on the steps whose form
    differs on the KAI that runs, and what protects the grade is one short sentence."""
    state, workdir = lab(tmp_path, "gang")
    record = tmp_path / "kai-v0.12.0.json"
    record.write_text(json.dumps(kai_running.sim_record("v0.12.0", "", {})))
    for lang in ("en", "ko"):
        config = write_config(tmp_path, workdir, lang=lang, kai_record=str(record))
        for step_id in STEP_IDS[:STEP_IDS.index("gang") + 1]:
            code, out, _ = kai_lab(config, "check", step_id, cluster=FakeCluster(state))
            lines = out.splitlines()
            number = steps.step(step_id).number
            assert lines[0].startswith("step %d %s " % (number, step_id) if lang == "en" else "%d단계 %s " % (number, step_id))
            noted = [line for line in lines if "v0.12.0" in line]
            assert len(noted) == (1 if step_id == "gang" else 0), out
            assert "v0.18.6" not in out and "kai_lab_learner_user" not in out
            assert len([line for line in lines if "kai-lab status" in line]) == 1, out
        code, out, _ = kai_lab(config, "check", cluster=FakeCluster(state))
        assert out.splitlines()[0].startswith("the lab: NOT PASSED (" if lang == "en" else "실습 전체: 통과하지 못함 (")
