# -*- coding: utf-8 -*-
"""kai-lab export: each lab platform's package, validated against the fields
its documentation gives (written here as data, with the address), and its
check scripts run against a stub kai-lab for each exit code."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import time

import pytest
import yaml

from test_kai_lab_cli import STEP_IDS, kai_lab, write_config
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import platform_scripts
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kai_profiles
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import lab_text, registry

TARBALL = "gsb-kai_lab-0.1.0.tar.gz"
URL = "https://example.org/dist/" + TARBALL

# Killercoda runs Katacoda's scenario format: index.json
# (https://www.katacoda.com/docs/scenarios/index-json,
# https://interactive-docs.oreilly.com/configuration/index-json.html, and
# https://github.com/killercoda/scenario-examples, e.g. foreground-background-scripts-multi-step/index.json).
KILLERCODA = {
    "root": {"title", "description", "difficulty", "time", "details", "files", "environment", "backend"},
    "details": {"steps", "intro", "finish", "assets"},
    "page": {"title", "text", "answer", "verify", "background", "foreground"},
    "asset": {"file", "target", "chmod"},
    "backend": {"imageid"},
}
# Instruqt: https://docs.instruqt.com/reference/cli/configuration-files (the layout),
# https://docs.instruqt.com/tracks/configuration/track (track.yml),
# https://docs.instruqt.com/tracks/configuration/challenges (assignment.md's front matter; a folder
# NN-<slug> per challenge), https://docs.instruqt.com/tracks/challenges/challenge-tabs (a terminal tab: title,
# hostname, cmd, workdir; Instruqt's own reference github.com/instruqt/ai-plugins references/track-format/tabs.md:
# "cmd: Startup command (e.g., su - user, ...)"),
# https://docs.instruqt.com/tracks/configuration/environments (config.yml),
# https://docs.instruqt.com/sandboxes/lifecycle-scripts/add-a-script-to-check-challenge-execution
# (setup-, check-, solve-, cleanup-<host>; a check's "FAIL: " line is shown),
# https://docs.instruqt.com/concepts/lifecycle-scripts (a check times out after 1 minute).
INSTRUQT = {
    "track": {"type", "slug", "id", "icon", "title", "teaser", "description", "tags", "challenges", "owner",
              "developers", "published", "private", "maintenance", "show_timer", "skipping_enabled"},
    "challenge": {"type", "slug", "id", "title", "teaser", "notes", "assignment", "tabs", "difficulty", "timelimit"},
    "terminal_tab": {"title", "type", "hostname", "cmd", "workdir"},
    "config": {"version", "containers", "virtualmachines", "gcp_projects", "aws_accounts", "azure_subscriptions"},
    "virtualmachine": {"name", "image", "machine_type", "shell"},
    "scripts": ("setup", "check", "solve", "cleanup"),
    "check_timeout": 60,
}
# iximiuz Labs tutorials: https://github.com/iximiuz/labs-content-samples/blob/main/sample-tutorial/index.md
# (front matter, tasks: init / regular re-run until exit 0 / hintcheck / failcheck, ::simple-task),
# https://labs.iximiuz.com/docs/custom-playgrounds/init-tasks-and-tabs (init tasks, timeout_seconds).
IXIMIUZ = {
    "front": {"kind", "title", "description", "categories", "tagz", "createdAt", "updatedAt", "cover", "playground",
              "tasks", "challenges"},
    "required": {"kind", "title", "description", "categories", "tagz", "createdAt", "cover"},
    "categories": {"linux", "networking", "containers", "kubernetes", "programming", "observability", "security",
                   "ci-cd"},
    "task": {"init", "machine", "user", "run", "needs", "env", "timeout_seconds", "hintcheck", "failcheck", "helper"},
    "playground": {"name", "machines", "tabs", "registryAuth"},
    "machine": {"name", "resources", "users", "noSSH"},
    "user": {"name", "default", "welcome"},
}


def export(tmp_path, platform, collection=None, lang="en"):
    tmp_path.mkdir(parents=True, exist_ok=True)
    if collection is None:
        collection = str(tmp_path / TARBALL)
        (tmp_path / TARBALL).write_bytes(b"not really a collection")
    config = write_config(tmp_path, tmp_path / "gsb-kai", lang=lang)
    dest = tmp_path / platform
    code, out, err = kai_lab(config, "export", platform, str(dest), "--collection", collection)
    assert code == 0, err
    return dest, out


def front_matter(path):
    text = path.read_text()
    assert text.startswith("---\n")
    head, body = text[4:].split("\n---\n", 1)
    return yaml.safe_load(head), body


def executable(path):
    return path.stat().st_mode & stat.S_IXUSR


def lab(workdir="/root/gsb-kai", lang="en"):
    """The lab text a package holds: the k3s target its setup provisions, the KAI it installs (the lab text's)."""
    return lab_text.Lab(lang, "kai-lab", workdir, "kai-scheduler", kai_version=kai_profiles.LAB_VERSION, target="k3s")


# The line a package where the learner is root carries on its first page and in every check's output (issue 40).
UNPROTECTED = {"en": "This grade is not protected: you are root on this machine and could write KAI's word yourself.",
               "ko": "이 채점은 보호되지 않습니다: 이 머신에서 여러분은 root 라서 KAI 의 증거를 직접 쓸 수 있습니다."}


def heredoc(script, start):
    """The lines of script's here-document that opens on the line start (up to its EOF)."""
    lines = script.splitlines()
    begin = lines.index(start) + 1
    return "\n".join(lines[begin:lines.index("EOF", begin)]) + "\n"


def test_killercoda_package_follows_its_index_json(tmp_path):
    dest, out = export(tmp_path, "killercoda")
    files = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
    assert out.strip() == "killercoda package written to %s: %d files" % (dest, len(files))
    index = json.loads((dest / "index.json").read_text())
    assert set(index) <= KILLERCODA["root"] and set(index["details"]) <= KILLERCODA["details"]
    assert set(index["backend"]) <= KILLERCODA["backend"]
    details = index["details"]
    pages = [details["intro"], details["finish"]] + details["steps"]
    assert len(details["steps"]) == len(STEP_IDS)
    for page in pages:
        assert set(page) <= KILLERCODA["page"]
        for key in ("text", "verify", "background", "foreground"):
            if key in page:
                assert (dest / page[key]).is_file(), page[key]
                if key != "text":
                    assert executable(dest / page[key]), page[key]
    for step, page in zip(registry.STEPS, details["steps"]):
        assert (dest / page["text"]).read_text() == lab_text.markdown(lab().step(step.id, level=1))
        assert "check %s --first-failure" % step.id in (dest / page["verify"]).read_text()
    [asset] = details["assets"]["host01"]
    assert set(asset) <= KILLERCODA["asset"] and (dest / "assets" / asset["file"]).read_bytes() == b"not really a collection"
    setup = (dest / details["intro"]["background"]).read_text()
    assert "collection=%s/%s" % (asset["target"], TARBALL) in setup
    assert "gsb.kai_lab.provision" in setup and "kai_lab_target: k3s" in setup


def test_instruqt_package_follows_its_track_format(tmp_path):
    dest, _ = export(tmp_path, "instruqt", collection=URL)
    track = yaml.safe_load((dest / "track.yml").read_text())
    assert set(track) <= INSTRUQT["track"]
    config = yaml.safe_load((dest / "config.yml").read_text())
    assert set(config) <= INSTRUQT["config"] and config["version"] == "3"
    hosts = [vm["name"] for vm in config["virtualmachines"]]
    assert all(set(vm) <= INSTRUQT["virtualmachine"] for vm in config["virtualmachines"])
    [host] = hosts
    setup = dest / "track_scripts" / ("setup-" + host)
    assert executable(setup) and "collection=%s" % URL in setup.read_text()
    challenges = sorted(p for p in dest.iterdir() if p.is_dir() and p.name != "track_scripts")
    assert [c.name for c in challenges] == ["%02d-%s" % (s.number, s.id.replace("_", "-")) for s in registry.STEPS]
    for step, folder in zip(registry.STEPS, challenges):
        assert re.match(r"^\d{2}-[a-z0-9-]+$", folder.name)
        fields, body = front_matter(folder / "assignment.md")
        assert set(fields) <= INSTRUQT["challenge"] and folder.name == "%02d-%s" % (step.number, fields["slug"])
        assert fields["type"] == "challenge" and fields["title"] == lab().step_title(step)
        assert all(set(tab) <= INSTRUQT["terminal_tab"] and tab["hostname"] in hosts for tab in fields["tabs"])
        # The learner's own login works in its own home (the role's ~/gsb-kai for kai_lab_learner_user).
        assert body == lab_text.markdown(lab("/home/learner/gsb-kai").step(step.id, level=1))
        scripts = sorted(p.name for p in folder.iterdir() if p.name != "assignment.md")
        assert scripts == sorted("%s-%s" % (kind, host) for kind in INSTRUQT["scripts"])
        assert all(executable(folder / name) for name in scripts)
        assert '"kai_lab_solve_steps": ["%s"]' % step.id in (folder / ("solve-" + host)).read_text()
    assert platform_scripts.CHECK_SECONDS < INSTRUQT["check_timeout"]


def test_instruqt_needs_the_collections_url(tmp_path):
    (tmp_path / TARBALL).write_bytes(b"x")
    config = write_config(tmp_path, tmp_path / "gsb-kai", lang="en")
    code, out, err = kai_lab(config, "export", "instruqt", str(tmp_path / "out"), "--collection", str(tmp_path / TARBALL))
    assert code == 2 and out == "" and err.startswith("could not export: Instruqt copies no file to its machines")
    assert not (tmp_path / "out").exists()


def test_instruqt_opens_the_learners_terminal_as_its_own_login_provisioned_as_the_protected_learner(tmp_path):
    """Issue 40: Instruqt's terminal tab runs a command of the package's (its `cmd`), so the learner gets a login
    of its own, without sudo, provisioned as kai_lab_learner_user: its grade asks what that account may write."""
    dest, _ = export(tmp_path, "instruqt", collection=URL, lang="ko")
    setup = (dest / "track_scripts" / "setup-kai-lab").read_text()
    inventory = yaml.safe_load(heredoc(setup, 'cat > "$base/inventory.yml" <<EOF'))
    login = inventory["kai_lab"]["vars"]["kai_lab_learner_user"]
    assert login not in ("", "root")
    # The login is made before provision names it, with a home of its own and no group (no sudo).
    [made] = [line for line in setup.splitlines() if "useradd" in line]
    assert made == "id -u %s > /dev/null 2>&1 || useradd --create-home --home-dir /home/%s --shell /bin/bash %s" % (
        login, login, login)
    assert setup.index(made) < setup.index("gsb.kai_lab.provision")
    bodies = []
    for assignment in sorted(dest.glob("*/assignment.md")):
        fields, body = front_matter(assignment)
        terminals = [tab for tab in fields["tabs"] if tab["type"] == "terminal"]
        assert terminals and all(tab["cmd"] == "su --login --pty %s" % login for tab in terminals), assignment
        bodies.append(body)
    assert "/root/" not in "".join(bodies) and "/home/%s/gsb-kai/queues.yaml" % login in bodies[0]
    # Its grade is protected: no line says otherwise, anywhere in the package.
    for path in dest.rglob("*"):
        if path.is_file():
            assert not any(line in path.read_text() for line in UNPROTECTED.values()), path


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_where_the_learner_is_root_the_first_page_says_the_grade_is_unprotected(tmp_path, lang):
    """Issue 40: Killercoda's index.json and iximiuz's playground have no login but root for the learner (see
    grading/platforms.py): the package says so on its first page, in its language, in one line."""
    dest, _ = export(tmp_path, "killercoda", collection=URL, lang=lang)
    intro = (dest / "intro" / "text.md").read_text().split("\n\n")
    assert intro[2] == UNPROTECTED[lang].replace("_", "\\_") and intro[:2] == [
        "# " + lab(lang=lang).title(), lab(lang=lang).teaser()]
    dest, _ = export(tmp_path / "x", "iximiuz", collection=URL, lang=lang)
    fields, body = front_matter(dest / "index.md")
    assert body.split("\n\n")[0] == UNPROTECTED[lang]
    assert fields["playground"]["machines"][0]["users"] == [{"name": "root", "default": True}]


def test_iximiuz_package_follows_its_tutorial_format(tmp_path):
    dest, _ = export(tmp_path, "iximiuz", lang="ko")
    fields, body = front_matter(dest / "index.md")
    assert set(fields) <= IXIMIUZ["front"] and IXIMIUZ["required"] <= set(fields)
    assert fields["kind"] == "tutorial" and 10 <= len(fields["title"]) <= 120 and len(fields["description"]) <= 500
    assert set(fields["categories"]) <= IXIMIUZ["categories"] and len(fields["categories"]) <= 2
    assert len(fields["tagz"]) <= 5 and re.match(r"^\d{4}-\d{2}-\d{2}$", fields["createdAt"])
    assert (dest / fields["cover"]).read_bytes().startswith(b"\x89PNG")
    playground = fields["playground"]
    assert set(playground) <= IXIMIUZ["playground"]
    assert all(set(m) <= IXIMIUZ["machine"] and all(set(u) <= IXIMIUZ["user"] for u in m.get("users", []))
               for m in playground["machines"])
    tasks = fields["tasks"]
    assert all(set(task) <= IXIMIUZ["task"] and task["run"] for task in tasks.values())
    [init] = [name for name, task in tasks.items() if task.get("init")]
    assert "https://labs.iximiuz.com/__static__/%s" % TARBALL in tasks[init]["run"]
    assert (dest / "__static__" / TARBALL).is_file()
    for step in registry.STEPS:
        task = tasks["verify_" + step.id]
        assert {"run", "hintcheck", "failcheck"} <= set(task)
        assert task["timeout_seconds"] > platform_scripts.CHECK_SECONDS
        assert all(need in tasks for need in task.get("needs", []))
        assert ":name: verify_%s\n" % step.id in body
    assert set(re.findall(r":name: (\w+)", body)) == set(n for n in tasks if n.startswith("verify_"))
    assert "# 1단계: 큐 계층" in body.replace("##", "#")


def test_export_writes_nothing_over_a_directory_in_use_or_for_a_wrong_collection(tmp_path):
    config = write_config(tmp_path, tmp_path / "gsb-kai", lang="en")
    used = tmp_path / "used"
    used.mkdir()
    (used / "mine.txt").write_text("keep")
    (tmp_path / TARBALL).write_bytes(b"x")
    code, _, err = kai_lab(config, "export", "killercoda", str(used), "--collection", str(tmp_path / TARBALL))
    assert code == 2 and "is not an empty directory: nothing was written" in err
    assert [p.name for p in used.iterdir()] == ["mine.txt"]
    code, _, err = kai_lab(config, "export", "iximiuz", str(tmp_path / "x"), "--collection", "collection.zip")
    assert code == 2 and "--collection must be a gsb-kai_lab-*.tar.gz" in err
    code, _, err = kai_lab(config, "export", "iximiuz", str(tmp_path / "x"), "--collection", str(tmp_path / "no" / TARBALL))
    assert code == 2 and "is not a file here" in err
    assert kai_lab(config, "export", "katacoda", str(tmp_path / "x"), "--collection", URL)[0] == 2


def test_export_does_not_run_for_a_learner_through_sudo(tmp_path, monkeypatch):
    """A learner's sudo rule runs kai-lab as root: export must not read or write a path they choose."""
    (tmp_path / TARBALL).symlink_to("/etc/hostname")
    config = write_config(tmp_path, tmp_path / "gsb-kai", lang="en")
    monkeypatch.setenv("SUDO_UID", "1000")
    code, out, err = kai_lab(config, "export", "killercoda", str(tmp_path / "out"), "--collection", str(tmp_path / TARBALL))
    assert code == 2 and out == ""
    assert err.strip() == "could not export: kai-lab export writes and reads the paths it is given, so it does not " \
                          "run through sudo for another user: run it as root or on your own machine"
    assert not (tmp_path / "out").exists()
    monkeypatch.setenv("SUDO_UID", "0")
    assert kai_lab(config, "export", "killercoda", str(tmp_path / "out"), "--collection", str(tmp_path / TARBALL))[0] == 0


# ---------------------------------------------------------------- the check scripts, against a stub kai-lab

def stub(tmp_path, code, line):
    """A kai-lab that prints line and exits code, recording its arguments."""
    path = tmp_path / "kai-lab-stub"
    path.write_text("#!/bin/bash\necho \"$@\" >> %s/calls\necho %s\nexit %d\n" % (tmp_path, json.dumps(line), code))
    path.chmod(0o755)
    return path


def run(script, tmp_path, code, line, text=None):
    env = dict(os.environ, KAI_LAB_COMMAND=str(stub(tmp_path, code, line)), KAI_LAB_SETUP_DIR=str(tmp_path / "setup"))
    command = ["bash", str(script)] if text is None else ["bash", "-c", text]
    return subprocess.run(command, capture_output=True, text=True, timeout=30, env=env)


@pytest.mark.parametrize("platform, folder, name, prefix, notice", [
    ("instruqt", "03-nolimit", "check-kai-lab", "FAIL: ", ""),
    # The learner is root there: every output ends with the unprotected line (issue 40).
    ("killercoda", "step3", "verify.sh", "", UNPROTECTED["en"] + "\n"),
])
def test_a_check_script_passes_on_0_and_shows_the_first_failure_otherwise(tmp_path, platform, folder, name, prefix,
                                                                           notice):
    dest, _ = export(tmp_path, platform, collection=URL)
    script = dest / folder / name
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    done = run(script, tmp_path, 0, "step 3 nolimit (The empty-limit trap): PASSED")
    assert done.returncode == 0 and done.stdout == notice
    assert (tmp_path / "calls").read_text() == "check nolimit --first-failure --lang en\n"
    done = run(script, tmp_path, 1, "nolimit.reason: nolimit.txt: the file is empty. Hint: copy it")
    assert done.returncode == 1
    assert done.stdout == prefix + "nolimit.reason: nolimit.txt: the file is empty. Hint: copy it\n" + notice
    done = run(script, tmp_path, 2, "could not grade: cannot reach the Kubernetes API server")
    assert done.returncode == 1
    assert done.stdout == prefix + "the lab machine has a problem, not your work: could not grade: cannot reach the " \
                                   "Kubernetes API server\n" + notice
    done = run(script, tmp_path, 124, "")
    assert done.returncode == 1 and done.stdout == prefix + "the check took more than 50 s; run kai-lab check nolimit " \
                                                            "in the terminal to see why\n" + notice


def test_iximiuz_tasks_keep_the_hint_and_mark_a_lasting_environment_fault(tmp_path):
    dest, _ = export(tmp_path, "iximiuz", collection=URL)
    task = front_matter(dest / "index.md")[0]["tasks"]["verify_gang"]
    for key in ("run", "hintcheck", "failcheck"):
        assert subprocess.run(["bash", "-n", "-c", task[key]]).returncode == 0, key
    state = tmp_path / "setup" / "checks" / "gang"
    notice = UNPROTECTED["en"] + "\n"  # the learner is root on iximiuz: every output ends with it (issue 40)
    # Not done yet: run fails, hintcheck shows why, failcheck lets it go on.
    done = run(None, tmp_path, 1, "gang.reason: gang.txt: the file is empty", task["run"])
    assert (done.returncode, done.stdout) == (1, notice)
    hint = run(None, tmp_path, 1, "", task["hintcheck"])
    assert hint.returncode == 0 and hint.stdout == "gang.reason: gang.txt: the file is empty\n" + notice
    assert run(None, tmp_path, 1, "", task["failcheck"]).returncode == 0
    # kai-lab cannot grade: not broken at once, broken once it lasts.
    assert run(None, tmp_path, 2, "could not grade: no API server", task["run"]).returncode == 1
    assert run(None, tmp_path, 2, "", task["failcheck"]).returncode == 0
    state.with_suffix(".broken-since").write_text("%d\n" % (time.time() - platform_scripts.BROKEN_AFTER - 5))
    broken = run(None, tmp_path, 2, "", task["failcheck"])
    assert broken.returncode == 1
    assert broken.stdout == "the lab machine has been broken for %d s (not your work); restart the lab: could not " \
                            "grade: no API server\n%s" % (platform_scripts.BROKEN_AFTER, notice)
    # The learner's failure again: the fault is over. Then done: nothing left to hint.
    assert run(None, tmp_path, 1, "gang.reason: not yet", task["run"]).returncode == 1
    assert not state.with_suffix(".broken-since").exists()
    assert run(None, tmp_path, 0, "step 5 gang: PASSED", task["run"]).returncode == 0
    assert run(None, tmp_path, 0, "", task["hintcheck"]).stdout == notice


# ---------------------------------------------------------------- the module kai_lab_export (playbooks/export.yml)

def module_run(capsys, args, check=False):
    from ansible.module_utils.testing import patch_module_args
    from ansible_collections.gsb.kai_lab.plugins.modules import kai_lab_export
    if check:
        args = dict(args, _ansible_check_mode=True)
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            kai_lab_export.main()
    return json.loads(capsys.readouterr().out)


def test_the_module_writes_what_kai_lab_export_writes(tmp_path, capsys):
    (tmp_path / TARBALL).write_bytes(b"not really a collection")
    args = {"platform": "killercoda", "dest": str(tmp_path / "module"), "collection": str(tmp_path / TARBALL), "lang": "en"}
    planned = module_run(capsys, args, check=True)
    assert planned["changed"] and not (tmp_path / "module").exists()
    done = module_run(capsys, args)
    assert done["changed"] and sorted(done["files"]) == sorted(planned["files"])
    dest, _ = export(tmp_path / "verb", "killercoda")
    made = dict((str(p.relative_to(dest)), p.read_bytes()) for p in dest.rglob("*") if p.is_file())
    assert made == dict((str(p.relative_to(tmp_path / "module")), p.read_bytes())
                        for p in (tmp_path / "module").rglob("*") if p.is_file())
    failed = module_run(capsys, dict(args, platform="instruqt", dest=str(tmp_path / "i")))
    assert failed["failed"] and failed["msg"].startswith("Instruqt copies no file to its machines")
    assert " / Instruqt 는 머신에 파일을 복사하지 않습니다" in failed["msg"]


# ---------------------------------------------------------------- for the KAI the package installs (issue 41)

def _pages(dest):
    """Every text file of an exported package, joined."""
    found = []
    for root, _dirs, names in os.walk(str(dest)):
        for name in names:
            if name.endswith((".md", ".json", ".yml", ".sh")) or "-" + "kai-lab" in name:
                with open(os.path.join(root, name), encoding="utf-8", errors="replace") as handle:
                    found.append(handle.read())
    return "\n".join(found)


@pytest.mark.parametrize("platform", ["killercoda", "instruqt", "iximiuz"])
def test_the_package_writes_the_steps_for_the_kai_its_setup_installs(tmp_path, platform):
    """The pages are the k3s target's (step 8 reads fr-1's device with kubectl exec) and follow the KAI the
    setup installs: the Job by default, the explicit PodGroup for a KAI before v0.14.7, named in the setup."""
    config = write_config(tmp_path, tmp_path / "w")
    default = tmp_path / "default"
    assert kai_lab(config, "export", platform, str(default), "--collection", URL, "--lang", "en")[0] == 0
    text = _pages(default)
    assert "Create Job `gang`" in text and "pod-group-name: gang" not in text
    assert "printenv NVIDIA_VISIBLE_DEVICES" in text and "get configmap" not in text
    assert "kai_lab_k3s_kai_version: %s" % kai_profiles.LAB_VERSION in text
    older = tmp_path / "older"
    code, out, err = kai_lab(config, "export", platform, str(older), "--collection", URL, "--lang", "en",
                             "--kai-version", "v0.12.0")
    assert code == 0, out + err
    text = _pages(older)
    assert "pod-group-name: gang" in text and "minMember: 3" in text and "Create Job `gang`" not in text
    assert "kai_lab_k3s_kai_version: v0.12.0" in text
    code, _, err = kai_lab(config, "export", platform, str(tmp_path / "none"), "--collection", URL,
                           "--kai-version", "v9.9.9")
    assert code == 2 and "v9.9.9" in err and not (tmp_path / "none").exists()
