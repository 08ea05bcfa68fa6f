# -*- coding: utf-8 -*-
"""kai-lab task, status's next task and check --first-failure (grading/cli_task.py),
over the real KAI v0.17.0 objects of the hand-done lab (fixtures/kai-v0.17.0/)."""

from __future__ import annotations

import json
import statistics
import subprocess
import time

import pytest

import lab_states
from conftest import FakeCluster, write_files
from test_kai_lab_cli import STEP_IDS, kai_lab, lab, render_entry, write_config
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import session as grade_session
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import running as kai_running
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry


def new_lab(tmp_path, lang="ko"):
    workdir = write_files(tmp_path / "gsb-kai", {})
    return write_config(tmp_path, workdir, lang=lang), workdir


# ---------------------------------------------------------------- kai-lab task

def test_task_without_a_step_is_the_first_step_not_passed(tmp_path):
    config, workdir = new_lab(tmp_path)
    code, out, _ = kai_lab(config, "task")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "1단계: 큐 계층", out
    assert "%s/queues.yaml" % workdir in out and "kai-lab check queues" in out
    # Steps 1 and 2 checked as done: the next task is step 3's.
    for step_id in ("queues", "podgroup"):
        state, _ = lab(tmp_path, step_id)
        assert kai_lab(config, "check", step_id, cluster=FakeCluster(state))[0] == 0
    code, out, _ = kai_lab(config, "task", "--lang", "en")
    assert code == 0 and out.splitlines()[0] == "Step %d: The empty-limit trap" % registry.step("nolimit").number, out
    assert "Add a queue nolimit under lab with GPU quota 1 and no GPU limit" in out


def test_task_of_a_step_in_english_with_the_labs_own_paths(tmp_path):
    config, workdir = new_lab(tmp_path)
    code, out, _ = kai_lab(config, "task", "gang", "--lang", "en")
    lines = out.splitlines()
    title = "Step %d: All or nothing (gang)" % registry.step("gang").number
    assert code == 0 and lines[:2] == [title, "=" * len(title)]
    assert "Only 2 GPUs are free now, so all 3 pods must stay Pending. Copy the message of the condition in the " \
        "gang's PodGroup's status.schedulingConditions into %s/gang.txt." % workdir in lines
    assert "Files this step asks for: %s/gang.txt." % workdir in lines
    assert "/root/gsb-kai" not in out


def _sim_record(tmp_path, version):
    path = tmp_path / ("kai-%s.json" % version)
    path.write_text(json.dumps(kai_running.sim_record(version, "", {})))
    return str(path)


def test_task_on_the_sims_kai_writes_the_gang_as_the_explicit_podgroup_it_needs(tmp_path):
    """Issue 41: on KAI v0.12.0 (the sim's) a batch Job is no gang; the text said to make Job gang all the same."""
    workdir = write_files(tmp_path / "gsb-kai", {})
    config = write_config(tmp_path, workdir, kai_record=_sim_record(tmp_path, "v0.12.0"))
    for lang in ("en", "ko"):
        code, out, _ = kai_lab(config, "task", "gang", "--lang", lang)
        assert code == 0, out
        assert "minMember: 3" in out and "queue: research" in out and "priorityClassName: train" in out
        assert "gang-0, gang-1" in out and "pod-group-name: gang" in out and "scheduling.run.ai/v2alpha2" in out
        assert "parallelism" not in out and "batch-min-member: \"3\"" not in out
        code, out, _ = kai_lab(config, "task", "preempt", "--lang", lang)
        assert code == 0 and "Job gang" not in out and "gang Job" not in out
        assert "gang-0, gang-1" in out and "PodGroup gang" in out
        code, out, _ = kai_lab(config, "status", "--lang", lang)
        # status names the next task (step 1 here): the form of a later step does not show, but the call works.
        assert code == 1 and "queues" in out
    # The lab text's KAI: the Job, and no word of the other form.
    config = write_config(tmp_path, workdir, kai_record=_sim_record(tmp_path, "v0.17.0"))
    code, out, _ = kai_lab(config, "task", "gang", "--lang", "en")
    assert code == 0 and "Create Job gang in namespace kai-lab with parallelism 3" in out
    assert "Before KAI-Scheduler" not in out and "gang-0" not in out


def test_task_states_what_differs_on_the_target(tmp_path):
    """On the sim kubectl exec does not run (KWOK nodes): the text says where fr-1's device is read instead."""
    workdir = write_files(tmp_path / "gsb-kai", {})
    sim = kai_lab(write_config(tmp_path, workdir), "task", "report", "--lang", "en")[1]
    assert "kubectl exec does not run a command" in sim and "get configmap" in sim and "printenv" not in sim
    vm = kai_lab(write_config(tmp_path, workdir, target="k3s"), "task", "report", "--lang", "en")[1]
    assert "exec fr-1 -- printenv NVIDIA_VISIBLE_DEVICES" in vm and "get configmap" not in vm


def test_task_on_a_vm_whose_kai_cannot_be_read_shows_every_form(tmp_path, monkeypatch):
    workdir = write_files(tmp_path / "gsb-kai", {})
    config = write_config(tmp_path, workdir, target="k3s", kai_record=None)
    monkeypatch.setattr(grade_session, "connect", lambda settings: FakeCluster({}, error="no cluster here"))
    code, out, _ = kai_lab(config, "task", "gang", "--lang", "en")
    assert code == 0 and "Create Job gang" in out and "Before KAI-Scheduler v0.14.7" in out


def test_task_as_json(tmp_path):
    config, workdir = new_lab(tmp_path)
    code, out, _ = kai_lab(config, "task", "report", "--json", "--lang", "en")
    said = json.loads(out)
    assert code == 0 and said["id"] == "report" and said["number"] == registry.step("report").number
    assert said["files"] == ["%s/report.json" % workdir]
    assert said["text"].startswith("# Step 8: Who holds the GPUs\n")


def test_task_reads_no_cluster(tmp_path, monkeypatch):
    def no_cluster(*args, **kwargs):
        raise AssertionError("kai-lab task read the cluster")
    monkeypatch.setattr(grade_session, "connect", no_cluster)
    monkeypatch.setattr(kai_running, "running_kai", no_cluster)
    config, _ = new_lab(tmp_path)
    cluster = FakeCluster({}, error="no cluster here")
    assert kai_lab(config, "task", cluster=cluster)[0] == 0
    assert kai_lab(config, "task", "fraction", cluster=cluster)[0] == 0
    assert cluster.calls == []


def test_an_unknown_step_is_said_as_hint_says_it(tmp_path):
    config, _ = new_lab(tmp_path)
    task = kai_lab(config, "task", "queue")
    assert task[0] == 2 and task == kai_lab(config, "hint", "queue")
    assert task[1].strip() == "알 수 없는 단계 'queue'; 단계는 %s 입니다" % ", ".join(STEP_IDS)
    code, out, _ = kai_lab(config, "task", "queue", "--lang", "en")
    assert code == 2 and out.strip() == "unknown step 'queue'; the steps are %s" % ", ".join(STEP_IDS)


def test_status_names_the_next_task(tmp_path):
    config, workdir = new_lab(tmp_path, lang="en")
    code, out, _ = kai_lab(config, "status")
    lines = out.splitlines()
    assert code == 1 and lines[-2] == "next: step 1 queues (Queue hierarchy), then kai-lab check queues"
    assert lines[-1] == ("the task: Write %s/queues.yaml with the queues lab, research and ops and apply it. "
                         "(kai-lab task prints it in full)" % workdir)
    said = json.loads(kai_lab(config, "status", "--json")[1])
    assert said["next"] == "queues" and said["next_task"] == lines[-1]


def test_the_entry_script_prints_a_task_without_a_cluster_and_without_hanging(tmp_path):
    config, _ = new_lab(tmp_path)
    script = render_entry(tmp_path, config)
    times = []
    for _ in range(5):
        started = time.monotonic()
        done = subprocess.run([str(script), "task", "nolimit"], capture_output=True, text=True, timeout=30)
        times.append(time.monotonic() - started)
        assert done.returncode == 0 and done.stdout.startswith("3단계: 빈 limit 함정"), done.stderr
    # A bound against a hang or a cluster call, with room for a busy 2-core machine (measured 0.17-0.57 s).
    assert statistics.median(times) < 5.0, times


# ---------------------------------------------------------------- kai-lab check --first-failure

def first_failing(step):
    return [c for c in step["checks"] if c["status"] != "passed"][0]


@pytest.mark.parametrize("step_id", STEP_IDS)
def test_first_failure_fails_before_the_step_and_passes_after_it(tmp_path, step_id):
    number = registry.step(step_id).number
    before = lab_states.before(step_id, lab_states.KAI_V017)
    workdir = write_files(tmp_path / "before" / "gsb-kai", before["files"])
    config = write_config(tmp_path / "before", workdir, lang="en")
    code, out, _ = kai_lab(config, "check", step_id, "--first-failure", cluster=FakeCluster(before))
    graded = json.loads(kai_lab(config, "check", step_id, "--json", cluster=FakeCluster(before))[1])
    check = first_failing(graded)
    assert code == 1 and out.splitlines() == ["%s: %s. Hint: %s" % (check["id"], check["message"].rstrip(". "),
                                                                     check["hint"])], out
    assert kai_lab(config, "check", step_id, cluster=FakeCluster(before))[0] == code
    after, workdir = lab(tmp_path / "after", step_id)
    config = write_config(tmp_path / "after", workdir, lang="en")
    code, out, _ = kai_lab(config, "check", step_id, "--first-failure", cluster=FakeCluster(after))
    title = registry.step(step_id).title["en"]
    assert code == 0 and out.splitlines() == ["step %d %s (%s): PASSED" % (number, step_id, title)], out


def test_first_failure_says_why_it_could_not_grade_with_exit_2(tmp_path):
    state, workdir = lab(tmp_path, "queues")
    config = write_config(tmp_path, workdir, lang="en")
    code, out, _ = kai_lab(config, "check", "queue", "--first-failure", cluster=FakeCluster(state))
    assert code == 2 and out.splitlines() == ["could not grade: unknown step 'queue'; the steps are %s"
                                              % ", ".join(STEP_IDS)]
    message = "cannot reach the Kubernetes API server at https://127.0.0.1:1 (connection refused)"
    code, out, _ = kai_lab(config, "check", "queues", "--first-failure", cluster=FakeCluster(state, error=message))
    assert code == 2 and out.splitlines() == ["could not grade: " + message]


def test_first_failure_names_kai_not_ready_after_the_steps_checks(tmp_path):
    state, workdir = lab(tmp_path, "queues")
    config = write_config(tmp_path, workdir, lang="en", kai_deployments=["binder"])
    code, out, _ = kai_lab(config, "check", "queues", "--first-failure", cluster=FakeCluster(state))
    assert code == 1 and out.splitlines()[0].startswith(
        "environment.kai_components: KAI component(s) not running: binder"), out
