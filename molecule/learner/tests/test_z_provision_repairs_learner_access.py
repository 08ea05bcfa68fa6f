"""Provision puts back the learner's account as it writes it (issue 42), on the real sim.

Runs after test_learner.py (file order) on the lab the learner solved. Each
object of the learner's access template (roles/kai_lab/templates/
learner_access.yaml.j2: the lab namespace's Pod Security label, the account's
ServiceAccount and token Secret, its roles and bindings, the admission
policies and their bindings) is changed three ways as root can change it (a
field added, a field removed, a value changed; a binding's roleRef by
deleting and creating it, as kubectl must), all at once per way. The next
provision puts every one back as it was, the learner's token still works,
and the learner's own check of the whole lab is 100 and marked protected, as
before. molecule/default's test_zyy_provision_repairs.py does the same for
KAI's and fake-gpu-operator's objects on a root learner's lab.
"""

import json
import subprocess

import pytest

from conftest import IDENTITY, NS, as_learner, kai_lab_command, kubectl, run_playbook, sim_kubeconfig, sim_kubectl
from molecule_common import patch_add as add, patch_remove as remove, patch_replace as replace  # tests/, on the path through conftest

LEARNER_NS = 'kai-lab-learner'
NAME = 'gsb-kai-lab-learner'


def admin(*args, stdin=None):
    done = subprocess.run([sim_kubectl(), '--kubeconfig', sim_kubeconfig()] + list(args), capture_output=True,
                          text=True, timeout=60, input=stdin)
    assert done.returncode == 0, ' '.join(args) + ': ' + done.stderr
    return done.stdout


def get(ref):
    return json.loads(admin('get', *ref, '-o', 'json'))


def comparable(obj):
    obj = json.loads(json.dumps(obj))
    for key in ('managedFields', 'resourceVersion', 'generation', 'creationTimestamp', 'uid'):
        obj['metadata'].pop(key, None)
    obj.pop('status', None)
    return obj


def recreate_with_role(ref, role):
    obj = comparable(get(ref))
    obj['roleRef']['name'] = role
    admin('delete', *ref)
    admin('create', '-f', '-', stdin=json.dumps(obj))


PART_OF = '/metadata/labels/app.kubernetes.io~1part-of'
OWNED = [
    ('lab Namespace', ('namespaces', NS), {
        'add': [add('/metadata/labels/learner', 'was-here')],
        'remove': [remove('/metadata/labels/pod-security.kubernetes.io~1enforce')],
        'change': [replace('/metadata/labels/pod-security.kubernetes.io~1enforce', 'privileged')]}),
    ('ServiceAccount', ('serviceaccounts', 'learner', '-n', LEARNER_NS), {
        'add': [add('/imagePullSecrets', [{'name': 'learners'}])],
        'remove': [remove('/automountServiceAccountToken')],
        'change': [replace('/automountServiceAccountToken', True)]}),
    ('token Secret', ('secrets', 'learner-token', '-n', LEARNER_NS), {
        'add': [add('/metadata/labels/learner', 'was-here')],
        'remove': [remove(PART_OF)],
        'change': [replace(PART_OF, 'the-learner')]}),
    ('lab ClusterRole', ('clusterroles', NAME + '-lab'), {
        'add': [add('/rules/-', {'apiGroups': [''], 'resources': ['events'], 'verbs': ['create', 'patch']})],
        'remove': [remove('/rules/0/verbs/1')],
        'change': [replace('/rules/0/resources/0', 'pods/binding')]}),
    ('lab RoleBinding', ('rolebindings', NAME, '-n', NS), {
        'add': [add('/subjects/-', {'kind': 'ServiceAccount', 'name': 'default', 'namespace': NS})],
        'remove': [remove('/subjects')],
        'change': lambda ref: recreate_with_role(ref, 'admin')}),  # roleRef is immutable
    ('cluster ClusterRole', ('clusterroles', NAME + '-cluster'), {
        'add': [add('/rules/0/verbs/-', 'deletecollection')],
        'remove': [remove('/rules/2')],
        'change': [replace('/rules/1/verbs', ['*'])]}),
    ('ClusterRoleBinding', ('clusterrolebindings', NAME), {
        'add': [add('/metadata/annotations', {'learner': 'was-here'})],
        'remove': [remove('/subjects')],
        'change': lambda ref: recreate_with_role(ref, 'cluster-admin')}),
] + [('%s policy' % what, ('validatingadmissionpolicies', '%s-%s' % (NAME, what)), {
        'add': [add('/spec/matchConditions/-', {'name': 'never', 'expression': 'false'})],
        # Not the learner's match condition: without it the policy would hold root too.
        'remove': [remove('/spec/validations/0/reason')],
        'change': [replace('/spec/failurePolicy', 'Ignore')]}) for what in ('queues', 'pods', 'jobs')
] + [('%s policy binding' % what, ('validatingadmissionpolicybindings', '%s-%s' % (NAME, what)), {
        'add': [add('/metadata/annotations', {'learner': 'was-here'})],
        'remove': [remove(PART_OF)],
        'change': [replace('/spec/validationActions', ['Warn'])]}) for what in ('queues', 'pods', 'jobs')]
NAMES = [name for name, _, _ in OWNED]


def learner_check():
    done = as_learner('sudo', '-n', kai_lab_command(), 'check', '--json', '--lang', 'en', timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    found = json.loads(done.stdout)
    return found['score'], found['protection']['protected'], found['protection']['holds']


@pytest.fixture(scope='module')
def before():
    objects = dict((name, comparable(get(ref))) for name, ref, _ in OWNED)
    assert learner_check() == (100.0, True, [])
    return objects


@pytest.fixture(scope='module', params=['add', 'remove', 'change'])
def repaired(request, before):
    way = request.param
    for name, ref, ways in OWNED:
        change = ways[way]
        change(ref) if callable(change) else admin('patch', *ref, '--type=json', '-p', json.dumps(change))
        assert comparable(get(ref)) != before[name], '%s: not changed the %s way' % (name, way)
    done = run_playbook('provision.yml', timeout=600)
    assert done.returncode == 0, done.stdout[-4000:]
    return way, ' '.join(done.stdout.split())


@pytest.mark.parametrize('name', NAMES)
def test_provision_puts_back_each_object_of_the_learners_account(repaired, before, name):
    way, out = repaired
    ref = dict((n, r) for n, r, _ in OWNED)[name]
    assert comparable(get(ref)) == before[name], '%s changed the %s way was not put back' % (name, way)
    assert 'full provision: ' in out


def test_the_learners_token_works_and_its_check_is_100_and_protected_again(repaired):
    way, out = repaired
    assert 'Namespace %s: replaced (' % NS in out, out[-3000:]
    whoami = kubectl('auth', 'whoami', '-o', 'json')
    assert whoami.returncode == 0, whoami.stderr
    assert json.loads(whoami.stdout)['status']['userInfo']['username'] == IDENTITY
    assert learner_check() == (100.0, True, [])
