"""Two things an instructor meets first on a class's VMs: registry mirrors
(/etc/rancher/k3s/registries.yaml, rendered from k3s_registry_mirrors and
k3s_registry_configs in k3s's documented form, before k3s starts, restarting
it on a change, credentials never logged), and an SSH user with sudo (the
roles become root where root is needed, and only there; root still works)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from role_templating import trust

ROOT = Path(__file__).resolve().parents[2]
K3S = ROOT / "roles" / "k3s"


def _templar(**overrides) -> Templar:
    loader = DataLoader()
    variables: dict = {}
    variables.update(trust(loader.load_from_file(str(K3S / "defaults" / "main.yml"))))
    variables.update(trust(loader.load_from_file(str(K3S / "vars" / "main.yml"))))
    variables["ansible_facts"] = {"architecture": "x86_64"}
    variables.update(overrides)
    return Templar(loader=loader, variables=variables)


def _flat(tasks, parents=()):
    for task in tasks:
        yield task, parents
        # A static import is main.yml's own tasks, in place (tasks/registries.yml).
        if "ansible.builtin.import_tasks" in task:
            yield from _flat(yaml.safe_load((K3S / "tasks" / task["ansible.builtin.import_tasks"]).read_text()),
                             parents + (task,))
        for key in ("block", "rescue", "always"):
            yield from _flat(task.get(key, []), parents + (task,))


def _main():
    return list(_flat(yaml.safe_load((K3S / "tasks" / "main.yml").read_text())))


def _task(name):
    return next(task for task, _ in _main() if task.get("name") == name)


def _render(**settings) -> dict:
    text = _templar(**settings).template(trust_as_template((K3S / "templates" / "registries.yaml.j2").read_text()))
    return yaml.safe_load(text)


# --- registries.yaml ---------------------------------------------------------

MIRRORS = {"docker.io": {"endpoint": ["https://cache.example:5000"]},
           "ghcr.io": {"endpoint": ["https://cache.example:5001"], "rewrite": {"^(.*)$": "ghcr/$1"}}}
CONFIGS = {"cache.example:5000": {"auth": {"username": "class", "password": "s3cret"},
                                  "tls": {"ca_file": "/usr/local/share/ca-certificates/class-ca.crt"}}}


def test_registries_yaml_is_k3s_documented_form():
    rendered = _render(k3s_registry_mirrors=MIRRORS, k3s_registry_configs=CONFIGS)
    assert rendered == {"mirrors": MIRRORS, "configs": CONFIGS}
    assert rendered["mirrors"]["docker.io"]["endpoint"] == ["https://cache.example:5000"]
    assert rendered["configs"]["cache.example:5000"]["auth"]["password"] == "s3cret"
    # Mirrors alone: no empty configs section.
    assert _render(k3s_registry_mirrors=MIRRORS) == {"mirrors": MIRRORS}


def test_registries_yaml_is_written_before_k3s_starts_restarts_it_and_hides_credentials():
    order = [task.get("name") for task, _ in _main()]
    write = _task("Write the registry mirrors and credentials for k3s")
    assert order.index(write["name"]) < order.index("Apply k3s changes now") < order.index("Enable k3s and make sure it runs")
    assert write["notify"] == "Restart k3s" and write["ansible.builtin.template"]["mode"] == "0600"
    assert write["ansible.builtin.template"]["dest"] == "{{ k3s_config_dir }}/registries.yaml"
    assert _templar(k3s_registry_configs=CONFIGS).evaluate_conditional(trust_as_template(write["no_log"]))
    # Settings taken away: the file goes, and k3s restarts without it.
    remove = _task("Remove registry settings no longer asked for")
    assert remove["ansible.builtin.file"]["state"] == "absent" and remove["notify"] == "Restart k3s"
    assert _templar().evaluate_conditional(trust_as_template(remove["when"]))
    assert not _templar(k3s_registry_mirrors=MIRRORS).evaluate_conditional(trust_as_template(remove["when"]))


def test_a_mirror_without_endpoints_is_refused():
    that = _task("Check the registry settings")["ansible.builtin.assert"]["that"]

    def holds(mirrors):
        templar = _templar(k3s_registry_mirrors=mirrors)
        return all(templar.evaluate_conditional(trust_as_template(c)) for c in that)

    assert holds({}) and holds(MIRRORS)
    assert not holds({"docker.io": {"endpoints": ["https://cache.example:5000"]}})


# --- become ------------------------------------------------------------------


def _becomes(task, parents) -> bool | str | None:
    for node in (task,) + tuple(reversed(parents)):
        if "become" in node:
            return node["become"]
    return None


def test_every_task_that_changes_the_vm_becomes_root_and_the_checks_do_not():
    main = _main()
    block = next(task for task, _ in main if "block" in task)
    assert block["become"] is True
    for task, parents in main:
        if task is block or any(parent is block for parent in parents):
            assert _becomes(task, parents) is True, task["name"]
            continue
        # Before the block: facts, the preflight and checks, as the SSH user.
        assert "become" not in task and all("become" not in parent and "block" not in parent for parent in parents), \
            task["name"]
        assert set(task) & {"ansible.builtin.setup", "ansible.builtin.include_tasks", "ansible.builtin.assert",
                            "ansible.builtin.import_tasks"}, task
    # The task files included in the block (or in a file it imports) become root too, through apply.
    includes = [t for t, parents in main if "ansible.builtin.include_tasks" in t and block in parents]
    assert {t["ansible.builtin.include_tasks"]["file"] for t in includes} == {
        "packages.yml", "record.yml", "python.yml", "download.yml", "airgap.yml", "images.yml", "interpreter.yml"}
    assert all(t["ansible.builtin.include_tasks"]["apply"] == {"become": True} for t in includes)


@pytest.mark.parametrize("name", ["airgap_checks.yml", "wheels.yml"])
def test_tasks_on_the_control_host_never_become(name):
    tasks = [task for task, _ in _flat(yaml.safe_load((K3S / "tasks" / name).read_text()))]
    delegated = [t for t in tasks if t.get("delegate_to") == "localhost"]
    assert delegated
    assert all(t["become"] is False for t in delegated)


def test_the_preflight_runs_as_the_ssh_user():
    assert all("become" not in t for t in yaml.safe_load((K3S / "tasks" / "preflight.yml").read_text()))


def test_teardown_becomes_root_for_every_change():
    for task in yaml.safe_load((K3S / "tasks" / "teardown.yml").read_text()):
        if not set(task) & {"ansible.builtin.getent", "ansible.builtin.setup"}:
            assert task["become"] is True, task["name"]


@pytest.mark.parametrize(("target", "become"), [("k3s", True), ("sim", False)])
def test_the_lab_roles_become_root_on_the_vm_only(target, become):
    kai_lab_vars = trust(DataLoader().load_from_file(str(ROOT / "roles" / "kai_lab" / "vars" / "main.yml")))
    templar = Templar(loader=DataLoader(), variables=dict(kai_lab_vars, kai_lab_target=target))
    assert templar.template(trust_as_template("{{ kai_lab_become }}")) is become
    # Every kai_lab task that runs a module on the VM says so.
    # cli.yml becomes through its include (apply); its controller-side task never does.
    # So does provision.yml's own include of cli.yml (it installs kai-lab while the gate runs).
    environment = yaml.safe_load((ROOT / "roles" / "kai_lab" / "tasks" / "learner_files.yml").read_text())
    cli_include = next(t["ansible.builtin.include_tasks"] for t in environment
                       if isinstance(t.get("ansible.builtin.include_tasks"), dict))
    assert cli_include["file"] == "cli.yml"
    assert cli_include["apply"]["become"] == "{{ kai_lab_become }}"
    provision = yaml.safe_load((ROOT / "playbooks" / "provision.yml").read_text())[1]["tasks"]
    steps = next(t for t in provision if "block" in t)["block"]
    cli_role = next(t["ansible.builtin.include_role"] for t in steps
                    if t["ansible.builtin.include_role"].get("tasks_from") == "cli")
    assert cli_role["apply"]["become"] == "{{ kai_lab_become }}"
    for task in yaml.safe_load((ROOT / "roles" / "kai_lab" / "tasks" / "cli.yml").read_text()):
        if task.get("delegate_to") == "localhost":
            assert task["become"] is False, task["name"]
    for path in sorted((ROOT / "roles" / "kai_lab" / "tasks").glob("*.yml")):
        # cli.yml: above; the sim's state check and record run on the sim only (provision.yml).
        if path.name in ("cli.yml", "sim_state.yml", "sim_state_record.yml"):
            continue
        for task in yaml.safe_load(path.read_text()) or []:
            module = next((k for k in task if k.startswith(("kubernetes.core.", "gsb.kai_lab.", "ansible.builtin.file",
                                                             "ansible.builtin.stat", "ansible.builtin.find",
                                                             "ansible.builtin.command", "ansible.builtin.copy"))), None)
            # What runs on the control host (the k3s state check's digest) never becomes.
            if module and task.get("delegate_to") == "localhost":
                assert task.get("become") is False, (path.name, task["name"])
            elif module:
                assert task.get("become") == "{{ kai_lab_become }}", (path.name, task["name"])
    for role in ("fake_gpu_operator", "kai_scheduler"):
        include = yaml.safe_load((ROOT / "roles" / role / "tasks" / "main.yml").read_text())[0]
        apply = include["ansible.builtin.include_tasks"]["apply"]["become"]
        assert Templar(loader=DataLoader(), variables={"kai_lab_target": target}).template(
            trust_as_template(apply)) is become


def test_the_admin_kubeconfig_goes_to_root_only():
    """Issue 33 row 6: the learner's kubeconfig was a copy of k3s's admin one (cluster-admin, root on the VM
    through a privileged hostPath pod). k3s's file goes to root alone; the learner's holds its own identity
    (roles/kai_lab tasks/learner_access.yml)."""
    tasks = yaml.safe_load((ROOT / "roles" / "k3s" / "tasks" / "main.yml").read_text())
    copies = []

    def walk(entries):
        for entry in entries:
            walk(entry.get("block", []))
            for module in ("ansible.builtin.copy", "ansible.builtin.template"):
                if module in entry and "k3s.yaml" in str(entry[module].get("src", "")):
                    copies.append(entry[module])
    walk(tasks)
    assert copies == [{"src": "{{ k3s_config_dir }}/k3s.yaml", "dest": "{{ k3s_kubeconfig }}", "remote_src": True,
                       "mode": "0600"}]
    learner = yaml.safe_load((ROOT / "roles" / "kai_lab" / "tasks" / "learner_access.yml").read_text())
    written = next(t for t in learner if t["name"].startswith("Write the learner's kubeconfig"))
    # Through the module that follows no link in the learner's home (issue 40), which never logs the content.
    module = written["gsb.kai_lab.kai_lab_learner_file"]
    assert module["content"] == "{{ lookup('ansible.builtin.template', 'learner_kubeconfig.yaml.j2') }}"
    assert module["mode"] == "0600" and module["user"] == "{{ kai_lab_learner_user }}"


def test_the_example_inventory_shows_both_forms():
    hosts = yaml.safe_load((ROOT / "playbooks" / "inventories" / "k3s.example.yml").read_text())["kai_lab"]["hosts"]
    users = {host["ansible_user"]: host for host in hosts.values()}
    assert set(users) == {"root", "ubuntu"}
    assert users["ubuntu"]["ansible_become"] is True and "ansible_become" not in users["root"]
