"""What the molecule scenarios' testinfra checks share: the repository, the
sim's state directory and what provision put there, and the collection's
playbooks run against a scenario's lab.

Their conftest.py files (molecule/*/tests/) import it: molecule's testinfra
verifier runs pytest in the scenario's directory, where only the scenario's
tests/ is on sys.path, so each conftest appends this directory first.
tests/molecule.sh gives the suite's sims their own state directory
(KAI_LAB_SIM_STATE).
"""

import os
import re
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sim_state():
    return os.environ.get('KAI_LAB_SIM_STATE') or os.path.expanduser('~/.local/state/gsb-kai-lab/sim')


def sim_kubectl():
    """The sim's own kubectl link: a test sim links none on PATH."""
    return os.path.join(sim_state(), 'kubectl')


def sim_kubeconfig():
    """The sim's admin kubeconfig."""
    return os.path.join(sim_state(), 'kwok', 'clusters', 'kai-lab', 'kubeconfig.yaml')


def kai_lab_command():
    """The learner's check command provision installed: a sim with its own state directory has its own."""
    return os.path.join(sim_state(), 'kai-lab')


def run_playbook(name, *extra, inventory=None, timeout=300):
    """Run one of the collection's playbooks against the scenario's lab (inventory: molecule's, by default)."""
    # The directory, as molecule passes it: host and group vars live beside the file.
    inventory = inventory or os.path.dirname(os.environ['MOLECULE_INVENTORY_FILE'])
    # Plain text to assert on: molecule forces colour for its own runs.
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, 'ansible.cfg'), ANSIBLE_FORCE_COLOR='0', ANSIBLE_NOCOLOR='1')
    cmd = ['ansible-playbook', '-i', inventory, os.path.join(REPO, 'playbooks', name)] + list(extra)
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


def fatal_messages(stdout):
    """Each failed task's result (YAML result format), its lines stripped, as one text."""
    messages, current = [], None
    for line in stdout.splitlines():
        if line.startswith('fatal: [') or ('FAILED!' in line and line.startswith('failed: [')):
            current = []
            messages.append(current)
        elif current is not None:
            if line.startswith(' ') or not line.strip():
                current.append(line.strip())
            else:
                current = None
    return ['\n'.join(part for part in message if part) for message in messages]


def recap(stdout, host='kai-lab-vm'):
    """The PLAY RECAP counters of host, as a dict."""
    found = re.search(r'%s\s+:\s+(.*)' % re.escape(host), stdout)
    return {key: int(value) for key, value in re.findall(r'(\w+)=(\d+)', found.group(1))} if found else {}


# JSON patch operations (kubectl patch --type=json), as the put-back tests change an owned object.
def patch_add(path, value):
    return {'op': 'add', 'path': path, 'value': value}


def patch_remove(path):
    return {'op': 'remove', 'path': path}


def patch_replace(path, value):
    return {'op': 'replace', 'path': path, 'value': value}
