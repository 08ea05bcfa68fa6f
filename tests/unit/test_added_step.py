# -*- coding: utf-8 -*-
"""A lab author adds a step by writing the step: everything else follows the step list.

The step below is defined here and nowhere else: its data, solve, checks,
words, values and text, and how its recorded state follows from the lab
before it (it makes no decision of KAI's: its solve reads where bd-1 runs
and writes it down, so its state is its solve run on each recorded lab
before it, sim and KAI v0.17.0). Registered last (lab_testing.registered),
it is in kai-lab task, hint and check, the grade's totals, the three lab
platforms' packages, the docs pages and README's step table, with no other
edit.

The whole unit suite runs with it as the lab's last step too:

  KAI_LAB_ADDED_STEP=1 python -m pytest -q -p no:cacheprovider tests/unit

(conftest.py registers it for the session). Three tests then fail, as they
must until the author writes what only the author can: test_lab_text's two
checks of the committed files (the docs pages and README's step table name
the step missing until docs/lab_pages.py is run) and test_forged_proofs'
proof table (the security guide's row for each new check is written by
hand). Tests that run a child process (a module run as Ansible runs it, the
kai-lab entry script with python -I) ask for the collection's own steps
(conftest.COLLECTION_STEP_IDS): the child does not know a step registered
in this process.

This module imports only the collection and lab_states at its top, so that
conftest.py can import it before any test module reads the step list.
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import json
import os
import tempfile

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import learner, registry
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import (
    BUILD_POD, Check, Step, bilingual, failed, passed)

import lab_states

# ---------------------------------------------------------------- the step, as its author writes it

FILE = "node.txt"


def solve(runner):
    pod = runner.view.pod(BUILD_POD)
    node = kai.pod_node(pod) if pod is not None else None
    if not node:
        runner.not_as_expected("%s placed on a node" % BUILD_POD, runner.view.pod_state(BUILD_POD),
                               "the step that runs %s has not been done" % BUILD_POD)
        return {}
    runner.write_file(FILE, node + "\n")
    return {"node": node}


WORDS = {
    "ledger.file": {
        "desc": {"en": "{ledger_file} holds one node name", "ko": "{ledger_file} 에 노드 이름 하나"},
        "fail": {"en": "{ledger_file}: {problem}", "ko": "{ledger_file}: {problem}"},
        "hint": {"en": "One line in {ledger_path}: the name of a node.", "ko": "{ledger_path} 에 노드 이름 한 줄."},
    },
    "ledger.node": {
        "desc": {"en": "{ledger_file} names the node {build_pod} runs on", "ko": "{ledger_file} 가 {build_pod} 이 도는 노드"},
        "fail": {"en": "{ledger_file}: {problem}", "ko": "{ledger_file}: {problem}"},
        "hint": {"en": "kubectl -n {namespace} get pod {build_pod} -o wide shows its node.",
                 "ko": "kubectl -n {namespace} get pod {build_pod} -o wide 로 노드를 보세요."},
    },
}


def node_line(snapshot):
    lines = [line.strip() for line in learner.text_file(snapshot, FILE).splitlines() if line.strip()]
    if len(lines) != 1:
        raise learner.stopped(bilingual("expected one line, found %d" % len(lines), "한 줄이어야 하는데 %d 줄입니다" % len(lines)))
    return lines[0]


def check_file(snapshot):
    return passed({"node": node_line(snapshot)})


def check_node(snapshot):
    claimed = node_line(snapshot)
    pod = learner.require_running(snapshot, BUILD_POD)
    if claimed != kai.pod_node(pod):
        return failed(bilingual("this is not the node %s runs on" % BUILD_POD, "%s 이 도는 노드가 아닙니다" % BUILD_POD))
    return passed({"node": claimed})


def values(namespace, path):
    return {"ledger_file": FILE, "ledger_path": path(FILE)}


STEP = Step(
    "ledger", {"en": "Where the build runs", "ko": "build 는 어디서 도나"}, [FILE],
    "%s names the node of %s" % (FILE, BUILD_POD), solve, (
        Check("ledger.file", 1, check_file, WORDS["ledger.file"], files_only=True),
        Check("ledger.node", 2, check_node, WORDS["ledger.node"]),
    ), words=[WORDS], values=values)

TEXT = {
    "en": {"summary": "Write the node `{build_pod}` runs on to `{ledger_path}`.",
           "task": ["Find the node that runs `{build_pod}` in `{namespace}` and write its name, on one line, to "
                    "`{ledger_path}`."],
           "context": ["KAI's binder bound `{build_pod}` to a node of its choice; the pod's `spec.nodeName` says which."]},
    "ko": {"summary": "`{build_pod}` 이 도는 노드를 `{ledger_path}` 에 쓰세요.",
           "task": ["`{namespace}` 에서 `{build_pod}` 을 돌리는 노드를 찾아 그 이름을 한 줄로 `{ledger_path}` 에 쓰세요."],
           "context": ["KAI 바인더가 `{build_pod}` 을 고른 노드에 바인딩했습니다. 파드의 `spec.nodeName` 이 그 노드입니다."]},
}


def recorded_state(before, source):
    """The lab after the step: its solve run by the solver on the recorded lab before it (sim or v0.17.0)."""
    from conftest import NAMESPACE, FakeCluster, write_files
    from ansible_collections.gsb.kai_lab.plugins.module_utils.solving.solver import StepRunner
    workdir = write_files(tempfile.mkdtemp(prefix="kai-lab-added-"), before["files"])
    StepRunner(FakeCluster(before), NAMESPACE, workdir, lab_states.KAI[source], timeout=1).run(STEP.id)
    state = copy.deepcopy(before)
    state["files"] = dict((name, open(os.path.join(workdir, name)).read()) for name in sorted(os.listdir(workdir)))
    return state


def register_for_session():
    """The step as the lab's last for the whole run (conftest.py, KAI_LAB_ADDED_STEP=1)."""
    from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import lab_text
    registry.use(registry.STEPS + (STEP,))
    for lang, words in TEXT.items():
        lab_text.TEXTS[lang]["steps"][STEP.id] = words
    lab_states.ADDED[STEP.id] = recorded_state


@contextlib.contextmanager
def added():
    """The step registered for one test (already there when the whole session runs with it)."""
    if STEP.id in registry.STEP_IDS:
        yield STEP
        return
    from lab_testing import registered
    with registered(STEP, TEXT, recorded_state):
        yield STEP


def lab_pages():
    from conftest import REPO
    spec = importlib.util.spec_from_file_location("lab_pages", REPO / "docs" / "lab_pages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- where it shows, with no other edit

def test_an_added_step_is_numbered_last_and_kai_lab_tasks_hints_and_checks_it(tmp_path):
    from conftest import FakeCluster, write_files
    from test_kai_lab_cli import kai_lab, write_config
    with added():
        assert registry.STEP_IDS[-1] == STEP.id and STEP.number == len(registry.STEPS)
        workdir = tmp_path / "gsb-kai"
        config = write_config(tmp_path, workdir, lang="en")
        code, out, _ = kai_lab(config, "task", STEP.id)
        assert code == 0 and out.splitlines()[0] == "Step %d: Where the build runs" % STEP.number, out
        assert "write its name, on one line, to %s/node.txt" % workdir in out
        code, out, _ = kai_lab(config, "hint", STEP.id, "--json")
        said = dict((h["id"], h) for h in json.loads(out)["hints"])
        assert code == 0 and sorted(said) == ["ledger.file", "ledger.node"]
        assert said["ledger.node"]["hint"] == "kubectl -n kai-lab get pod bd-1 -o wide shows its node."
        # Before the step: not passed, saying what is missing; after it (its recorded state): passed.
        before = lab_states.before(STEP.id)
        write_files(workdir, before["files"])
        code, out, _ = kai_lab(config, "check", STEP.id, cluster=FakeCluster(before))
        assert code == 1 and "node.txt does not exist in %s" % workdir in out, out
        after = lab_states.lab_after(STEP.id)
        write_files(workdir, after["files"])
        code, out, _ = kai_lab(config, "check", STEP.id, cluster=FakeCluster(after))
        assert code == 0 and "step %d ledger (Where the build runs): PASSED" % STEP.number in out.splitlines(), out
        # kai-lab status names it; an unknown step's message lists it.
        assert kai_lab(config, "check", "nope", cluster=FakeCluster(after))[1].strip().endswith(", ledger")


def test_an_added_step_is_in_the_grades_totals_on_both_kais(grade):
    with added():
        for source in lab_states.sources():
            state = lab_states.finished(source)
            assert state["files"]["node.txt"] == "kai-lab-vm\n"
            result, _ = grade(state, state["files"], kai_version=lab_states.KAI[source])
            total = sum(c.weight for s in registry.LAB for c in s.checks) + sum(c.weight for c in STEP.checks)
            assert (result["points"], result["max_points"], result["score"]) == (total, total, 100.0), source
            assert result["counts"]["passed"] == len(registry.CHECKS) == sum(len(s.checks) for s in registry.STEPS)
            assert [(s["id"], s["number"]) for s in result["steps"]][-1] == (STEP.id, STEP.number)
        assert sorted(lab_states.sources()) == sorted(lab_states.KAI)


def test_an_added_step_is_in_the_three_platforms_packages(tmp_path):
    from test_platform_export import URL, export, front_matter
    with added():
        dest, _ = export(tmp_path / "k", "killercoda")
        pages = json.loads((dest / "index.json").read_text())["details"]["steps"]
        assert len(pages) == len(registry.STEPS) and "check ledger --first-failure" in (dest / pages[-1]["verify"]).read_text()
        assert "Where the build runs" in (dest / pages[-1]["text"]).read_text()
        dest, _ = export(tmp_path / "i", "instruqt", collection=URL)
        folder = dest / ("%02d-ledger" % STEP.number)
        assert front_matter(folder / "assignment.md")[0]["title"] == "Step %d: Where the build runs" % STEP.number
        assert '"kai_lab_solve_steps": ["ledger"]' in (folder / "solve-kai-lab").read_text()
        dest, _ = export(tmp_path / "x", "iximiuz", lang="ko")
        fields, body = front_matter(dest / "index.md")
        assert "verify_ledger" in fields["tasks"] and ":name: verify_ledger\n" in body
        assert "%d단계: build 는 어디서 도나" % STEP.number in body


def test_an_added_step_is_in_the_docs_pages_and_the_readme_table_check():
    generator = lab_pages()
    with added():
        for path, text in generator.pages().items():
            assert "kai-lab check ledger" in text and ("Where the build runs" in text or "build 는 어디서 도나" in text)
        with open(generator.README, encoding="utf-8") as handle:
            committed = handle.read()
        table = generator.readme(committed)
        row = "| %d `ledger` | Write the node `bd-1` runs on to `/root/gsb-kai/node.txt`. | node.txt holds one node " \
              "name; node.txt names the node bd-1 runs on |" % STEP.number
        assert row in table.splitlines()
        # The committed README has no row for it yet: the check names README.md (docs/lab_pages.py --check), and
        # the unit tests of the committed files fail until docs/lab_pages.py is run.
        stale = [os.path.basename(p) for p, text in generator.outputs().items()
                 if open(p, encoding="utf-8").read() != text]
        assert "README.md" in stale and "lab_en.rst" in stale and "lab_ko.rst" in stale
        import pytest
        import test_lab_text
        with pytest.raises(AssertionError, match="README.md's step table is stale"):
            test_lab_text.test_readmes_step_table_is_the_step_list()
        with pytest.raises(AssertionError, match="lab_en.rst is stale"):
            test_lab_text.test_the_committed_pages_are_what_the_generator_writes()


def test_an_added_steps_words_are_held_to_the_lab_values_and_its_files_and_id_reach_the_role_and_solve(monkeypatch):
    import pytest
    import test_hint_sources
    import test_lab_text
    from ansible_collections.gsb.kai_lab.plugins.lookup.lab_steps import LookupModule
    with added():
        tables = dict(registry.word_tables())
        assert tables["ledger[0]"] is WORDS and tables["ledger.node"] is WORDS["ledger.node"]
        # The word and text rules read the added step as any other: its words pass them...
        test_hint_sources.test_no_word_table_holds_a_name_or_number_of_the_lab()
        for lang in ("en", "ko"):
            test_hint_sources.test_every_checks_description_failure_and_hint_fill_from_the_labs_values(lang)
            test_lab_text.test_every_placeholder_is_filled_and_every_step_is_there(lang)
        test_lab_text.test_both_languages_say_the_same_things()
        # ...and a name typed in them is found.
        monkeypatch.setitem(WORDS["ledger.node"]["hint"], "en", "kubectl -n {namespace} get pod bd-1 -o wide")
        with pytest.raises(AssertionError, match="ledger"):
            test_hint_sources.test_no_word_table_holds_a_name_or_number_of_the_lab()
        assert LookupModule().run([], {})[-1] == "ledger" and LookupModule().run(["files"], {})[-1] == "node.txt"
