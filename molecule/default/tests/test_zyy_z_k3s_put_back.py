"""The k3s role's put-back of KAI (issue 42), run against the sim's API server.

On k3s, Helm installs KAI's CRDs once and never upgrades them, and upgrades
nothing of an unchanged release: roles/kai_scheduler/tasks/k3s_owned.yml puts
back what provision owns after every install. It runs here for real, against
this sim's API server, with KAI v0.12.0's chart (the one the suite has,
tests/molecule.sh's KAI_LAB_SIM_KAI_CHART_DIR) and the sim's helm: what
only k3s has is there too - the chart rendered with the k3s values, KAI's
namespace as Helm's create_namespace makes it, the Config with the k3s
correction, and Helm's ownership labels on a release's objects, which stay.

Runs after test_zyy_provision_repairs.py on the solved lab. The k3s forms
differ from the sim's (the CRDs without the sim's chart hash, the namespace's
label, the Config's reservation namespace), so the sim's provision then takes
the full path and puts back its own; the provision after is only a health
check, and the lab grades as before.
"""

import glob
import json
import os
import subprocess

import pytest

from conftest import REPO, run_playbook, sim_kubeconfig, sim_kubectl

QUEUE_CRD = ('customresourcedefinitions.apiextensions.k8s.io', 'queues.scheduling.run.ai')
ROLE = ('clusterroles', 'kai-resource-reservation')
HELM_LABELS = {'app.kubernetes.io/managed-by': 'Helm'}
HELM_ANNOTATIONS = {'meta.helm.sh/release-name': 'kai-scheduler', 'meta.helm.sh/release-namespace': 'kai-scheduler'}


def kubectl(*args):
    done = subprocess.run([sim_kubectl(), '--kubeconfig', sim_kubeconfig()] + list(args), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, ' '.join(args) + ': ' + done.stderr
    return done.stdout


def get(ref):
    return json.loads(kubectl('get', *ref, '-o', 'json'))


def helm():
    cache = os.environ.get('KAI_LAB_CACHE') or os.path.expanduser('~/.cache/gsb-kai-lab')
    built = sorted(glob.glob(os.path.join(cache, 'bin', 'kai-v0.12.0_*', 'helm')), key=os.path.getmtime)
    assert built, 'no helm of the sim build in %s/bin' % cache
    return built[-1]


def chart():
    found = os.environ.get('KAI_LAB_SIM_KAI_CHART_DIR') or os.path.join(subprocess.run(
        ['go', 'env', 'GOMODCACHE'], capture_output=True, text=True, check=True).stdout.strip(),
        'github.com/!n!v!i!d!i!a/!k!a!i-scheduler@v0.12.0/deployments/kai-scheduler')
    assert os.path.isfile(os.path.join(found, 'Chart.yaml')), found
    return found


@pytest.fixture(scope='module')
def k3s_put_back(tmp_path_factory):
    """Run the k3s role's put-back against the sim: (returncode, output on one line)."""
    playbook = tmp_path_factory.mktemp('k3s') / 'k3s_owned.yml'
    playbook.write_text(json.dumps([{
        'name': "The k3s role's put-back of KAI, against the sim's API server",
        'hosts': 'kai_lab', 'gather_facts': False,
        'roles': [{'role': 'gsb.kai_lab.kai_lab'}],
        'tasks': [{'name': 'Put back what provision owns of KAI, as on k3s',
                   'ansible.builtin.include_role': {'name': 'gsb.kai_lab.kai_scheduler', 'tasks_from': 'k3s_owned'},
                   'vars': {'kai_scheduler_chart_version_effective': 'v0.12.0',
                            'kai_scheduler_chart_version': 'v0.12.0',
                            'kai_scheduler_k3s_archive': chart(), 'k3s_helm_binary': helm()}}]}]))
    inventory = os.path.dirname(os.environ['MOLECULE_INVENTORY_FILE'])

    def run():
        # Plain text to assert on, as run_playbook's: molecule forces colour for its own runs.
        env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, 'ansible.cfg'), ANSIBLE_FORCE_COLOR='0',
                   ANSIBLE_NOCOLOR='1')
        done = subprocess.run(['ansible-playbook', '-i', inventory, str(playbook)], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=300)
        return done.returncode, ' '.join(done.stdout.split())
    return run


def test_the_k3s_forms_are_written_then_nothing_changes(k3s_put_back):
    code, out = k3s_put_back()
    assert code == 0, out[-3000:]
    # Helm's create_namespace labels KAI's namespace; k3s's Config names the reservation namespace.
    assert get(('namespaces', 'kai-scheduler'))['metadata']['labels']['name'] == 'kai-scheduler'
    config = get(('configs.kai.scheduler', 'kai-config'))['spec']
    assert config['binder']['resourceReservation']['namespace'] == 'kai-resource-reservation'
    assert config['admission']['gpuPodRuntimeClassName'] == ''
    code, out = k3s_put_back()
    assert code == 0 and 'changed=0' in out, out[-3000:]


def test_a_poisoned_crd_and_a_changed_role_of_helms_release_are_put_back_helms_labels_stay(k3s_put_back):
    kubectl('patch', *QUEUE_CRD, '--type=json', '-p', json.dumps([{
        'op': 'add', 'path': '/spec/versions/0/schema/openAPIV3Schema/x-kubernetes-validations',
        'value': [{'rule': 'false'}]}]))
    role = get(ROLE)
    kubectl('patch', *ROLE, '--type=merge', '-p', json.dumps({'metadata': {
        'labels': HELM_LABELS, 'annotations': HELM_ANNOTATIONS}}))
    helms = get(ROLE)
    kubectl('patch', *ROLE, '--type=json', '-p', json.dumps([
        {'op': 'add', 'path': '/rules/-', 'value': {'apiGroups': [''], 'resources': ['secrets'], 'verbs': ['get']}}]))
    code, out = k3s_put_back()
    assert code == 0, out[-3000:]
    assert ('CustomResourceDefinition queues.scheduling.run.ai: replaced (spec.versions[name=v2].schema.'
            'openAPIV3Schema.x-kubernetes-validations: added ([{"rule":"false"}]))') in out, out[-3000:]
    assert 'ClusterRole kai-resource-reservation: replaced (rules[1]: added (' in out, out[-3000:]
    assert 'x-kubernetes-validations' not in json.dumps(get(QUEUE_CRD)['spec'])
    now = get(ROLE)
    assert now['rules'] == role['rules'] == helms['rules']
    assert now['metadata']['labels'] == HELM_LABELS
    assert now['metadata']['annotations'] == HELM_ANNOTATIONS


def test_the_sims_provision_then_puts_back_its_own_forms_and_is_fast_again():
    # The ownership marks Helm put there stay whoever writes the object (on the sim nothing is Helm's): the
    # test takes away what it added as Helm.
    kubectl('label', *ROLE, 'app.kubernetes.io/managed-by-')
    kubectl('annotate', *ROLE, 'meta.helm.sh/release-name-', 'meta.helm.sh/release-namespace-')
    done = run_playbook('provision.yml', timeout=600)
    out = ' '.join(done.stdout.split())
    assert done.returncode == 0, done.stdout[-3000:]
    assert 'full provision: ' in out
    assert 'CustomResourceDefinition queues.scheduling.run.ai: replaced (metadata.annotations' in out, out[-3000:]
    assert 'name' not in (get(('namespaces', 'kai-scheduler'))['metadata'].get('labels') or {})
    done = run_playbook('provision.yml', timeout=300)
    out = ' '.join(done.stdout.split())
    assert done.returncode == 0 and 'up, unchanged' in out and 'changed=0' in out, out[-3000:]
