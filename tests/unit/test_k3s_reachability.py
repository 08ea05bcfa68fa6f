"""Online mode asks every source it will fetch from first (issue 36: github.com
was found unreachable only at "Download k3s", after minutes of apt and pip):
roles/k3s/tasks/reachability.yml runs files/reachability.py on the VM in one
command. Here the script runs for real against local servers (one answering,
one port closed, a name that does not resolve), and the role's settings and
message are rendered with Ansible's templating."""

from __future__ import annotations

import http.server
import json
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from ansible.template import trust_as_template
from role_templating import trust
from test_k3s_artifacts import _get, _tasks, _templar

ROOT = Path(__file__).resolve().parents[2]
ROLE = ROOT / "roles" / "k3s"
SCRIPT = ROLE / "files" / "reachability.py"
HANGUL = re.compile("[\uac00-\ud7a3]")


class _Handler(http.server.BaseHTTPRequestHandler):
    """A release mirror holding /k3s only, and a registry (/v2/ answers 401, as ghcr.io does)."""

    def _answer(self):
        code = 200 if self.path == "/k3s" else 401 if self.path == "/v2/" else 404
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD = _answer

    def log_message(self, *args):
        pass


@pytest.fixture(name="server")
def _server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield "127.0.0.1:%d" % httpd.server_address[1]
    httpd.shutdown()


def _closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return "127.0.0.1:%d" % sock.getsockname()[1]


def _run(settings: dict) -> dict:
    out = subprocess.run([sys.executable, str(SCRIPT), json.dumps(settings)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_each_unreachable_source_is_named_and_the_reachable_ones_are_not(server):
    closed = _closed_port()
    started = time.monotonic()
    answer = _run({
        "timeout": 3,
        "files": {"k3s (k3s_release_url)": "http://%s/k3s" % server,
                  "Helm (k3s_helm_url)": "http://%s/helm.tar.gz" % server},
        "charts": ["oci://sources.example.invalid/kai-scheduler/kai-scheduler"],
        # One registry answers through its mirror only; one not at all (its mirror's port is closed).
        "images": ["%s/lab/ubuntu:22.04" % server, "mirrored.example.invalid/lab/a:1", "ghcr.example.invalid/b:2"],
        "mirrors": {"mirrored.example.invalid": {"endpoint": ["http://%s" % server]},
                    "ghcr.example.invalid": {"endpoint": ["http://%s" % closed]}},
        "tls": {},
    })
    assert time.monotonic() - started < 10
    unreachable = {need["for"]: need["addresses"] for need in answer["unreachable"]}
    assert set(unreachable) == {"Helm (k3s_helm_url)", "the charts at sources.example.invalid",
                                "the images from ghcr.example.invalid", "the images from 127.0.0.1:%s" % server.split(":")[1]}
    # A mirror without the file: answered, but the file is not there.
    assert unreachable["Helm (k3s_helm_url)"] == [{"url": "http://%s/helm.tar.gz" % server,
                                                   "error": "HTTP 404: the file is not there"}]
    assert [a["url"] for a in unreachable["the images from ghcr.example.invalid"]] == [
        "http://%s/v2/" % closed, "https://ghcr.example.invalid/v2/"]
    assert "refused" in unreachable["the images from ghcr.example.invalid"][0]["error"].lower()
    # The registry given without a scheme is asked over HTTPS, as containerd would: a plain HTTP server fails TLS.
    assert [a["url"] for a in unreachable["the images from 127.0.0.1:%s" % server.split(":")[1]]] == [
        "https://%s/v2/" % server]
    assert answer["asked"] == 8


def test_a_source_that_does_not_answer_in_time_is_named_within_the_time(server):
    # A listening socket that never accepts: connect succeeds into the backlog, the answer never comes.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        url = "http://127.0.0.1:%d/k3s" % silent.getsockname()[1]
        started = time.monotonic()
        answer = _run({"timeout": 1, "files": {"k3s (k3s_release_url)": url}})
        assert time.monotonic() - started < 5
    assert answer["unreachable"][0]["for"] == "k3s (k3s_release_url)"
    assert "timed out" in answer["unreachable"][0]["addresses"][0]["error"] or \
        "no answer within" in answer["unreachable"][0]["addresses"][0]["error"]


def test_the_role_asks_the_k3s_release_helm_the_charts_and_the_images_registries():
    templar = _templar(role_path=str(ROLE))
    settings = _get(templar, "k3s_reachability_settings")
    assert settings["timeout"] == 5
    assert settings["files"] == {
        "k3s v1.34.3+k3s1 (k3s_release_url)": "https://github.com/k3s-io/k3s/releases/download/v1.34.3%2Bk3s1/k3s",
        "Helm v3.19.0 (k3s_helm_url)": "https://get.helm.sh/helm-v3.19.0-linux-amd64.tar.gz"}
    # The charts as the roles that install them are set (their defaults here).
    assert settings["charts"] == ["oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler",
                                  "oci://ghcr.io/run-ai/fake-gpu-operator/fake-gpu-operator"]
    assert settings["images"] == _get(templar, "k3s_images_needed")
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import reachability  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.remove(str(SCRIPT.parent))
    needs = dict(reachability.needs(settings))
    assert needs["the charts at ghcr.io"] == [("https://ghcr.io/v2/", False)]
    assert needs["the images from docker.io"] == [("https://registry-1.docker.io/v2/", False)]
    assert needs["the images from ghcr.io"] == [("https://ghcr.io/v2/", False)]
    # A chart given as an archive on the VM is not fetched; a mirror's endpoints come first, upstream stays the fallback.
    mirrored = _get(_templar(role_path=str(ROLE), kai_scheduler_chart_archive="/srv/kai.tgz",
                             k3s_registry_mirrors={"*": {"endpoint": ["https://cache.example:5000"]}},
                             k3s_registry_configs={"cache.example:5000": {
                                 "auth": {"username": "class", "password": "s3cret"},
                                 "tls": {"ca_file": "/usr/local/share/ca-certificates/class.crt"}}}),
                    "k3s_reachability_settings")
    assert mirrored["charts"] == ["oci://ghcr.io/run-ai/fake-gpu-operator/fake-gpu-operator"]
    assert dict(reachability.needs(mirrored))["the images from docker.io"] == [
        ("https://cache.example:5000/v2/", False), ("https://registry-1.docker.io/v2/", False)]
    # Only TLS settings reach the VM's command line, never credentials.
    assert mirrored["tls"] == {"cache.example:5000": {"ca_file": "/usr/local/share/ca-certificates/class.crt"}}
    assert "s3cret" not in json.dumps(mirrored)


def _defined_variables() -> set[str]:
    names: set[str] = set()
    for path in ROOT.glob("roles/*/defaults/main.yml"):
        names |= set(yaml.safe_load(path.read_text()))
    return names


def test_the_message_names_each_address_and_the_three_remedies_by_their_real_variables():
    task = next(t for t in _tasks("reachability.yml") if "ansible.builtin.fail" in t)
    answer = {"asked": 4, "seconds": 5.1, "unreachable": [
        {"for": "k3s v1.34.3+k3s1 (k3s_release_url)",
         "addresses": [{"url": "https://github.com/k3s-io/k3s/releases/download/v1.34.3%2Bk3s1/k3s",
                        "error": "[Errno -2] Name or service not known"}]},
        {"for": "the images from docker.io", "addresses": [
            {"url": "https://cache.example:5000/v2/", "error": "timed out"},
            {"url": "https://registry-1.docker.io/v2/", "error": "[Errno -2] Name or service not known"}]}]}
    templar = _templar(role_path=str(ROLE), inventory_hostname="lab-vm",
                       k3s_reachability={"stdout": json.dumps(answer)})
    templar.available_variables = {**templar.available_variables, **trust(task["vars"])}
    assert templar.evaluate_conditional(trust_as_template(task["when"]))
    message = templar.template(trust_as_template(task["ansible.builtin.fail"]["msg"]))
    assert "nothing was changed" in message and HANGUL.search(message)
    for need in answer["unreachable"]:
        assert need["for"] in message
        for address in need["addresses"]:
            assert "%s: %s" % (address["url"], address["error"]) in message
    for remedy in ("k3s_release_url", "k3s_helm_url", "k3s_registry_mirrors", "k3s_airgap_dir"):
        assert remedy in message
    named = set(re.findall(r"\b(?:k3s|kai_scheduler|fake_gpu_operator)_[a-z0-9_]+", message))
    assert named and named <= _defined_variables(), named - _defined_variables()
    everything = _templar(role_path=str(ROLE), k3s_reachability={"stdout": json.dumps(dict(answer, unreachable=[]))})
    everything.available_variables = {**everything.available_variables, **trust(task["vars"])}
    assert not everything.evaluate_conditional(trust_as_template(task["when"]))


def test_the_sources_are_asked_first_in_one_command_and_only_online():
    main = yaml.safe_load((ROLE / "tasks" / "main.yml").read_text())
    includes = [t.get("ansible.builtin.include_tasks") for t in main]
    first_change = next(i for i, task in enumerate(main) if "block" in task)
    reach = includes.index("reachability.yml")
    assert reach < includes.index("preflight.yml") < first_change
    assert main[reach]["when"] == "not k3s_airgap"
    commands = [t for t in _tasks("reachability.yml") if "ansible.builtin.command" in t]
    assert len(commands) == 1 and commands[0]["changed_when"] is False and "become" not in commands[0]
    argv = commands[0]["ansible.builtin.command"]["argv"]
    assert argv[0] == "{{ k3s_python_base }}" and "reachability.py" in argv[2]
