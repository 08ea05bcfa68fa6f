"""Provision puts back whatever it owns (issue 42), on the real sim.

Runs on the solved lab after test_zy_evidence and before
test_zyz_provision_health_check (file order), and leaves it as it found it.
Each object provision owns on a root learner's lab - KAI's CRDs, its Config,
the chart's ServiceAccount, RBAC, PriorityClasses, default queue and
scheduling shard, the admission webhooks, the lab's, KAI's and the
reservation namespaces, fake-gpu-operator's topology - is changed three ways
as root can change it (a field added, a field removed, a value changed; a
kind whose provision writes no field but its name is deleted instead, and
an immutable value is changed by deleting and creating the object, as
kubectl must), all kinds at once per way. The next provision takes the full
path, puts every one back as it was, says what it put back, and the lab then
grades as it did; what the learner made (its queues, pods and files) is
untouched. The first way is the issue's case: a validation rule "false" added
to the Queue CRD, so that no Queue can be created, failed provision with
"metadata.resourceVersion: Invalid value: 0". The learner's own account
(its ServiceAccount, roles and admission policies) is molecule/learner's
test_z_provision_repairs_learner_access.py; the k3s role's put-back, applied
to this sim's API server, test_zyy_z_k3s_put_back.py, which runs next and
ends with the provision that is only a health check again.
"""

import hashlib
import json
import os
import re
import subprocess

import pytest

from conftest import run_playbook, sim_kubeconfig, sim_kubectl
from molecule_common import patch_add as add, patch_remove as remove, patch_replace as replace  # tests/, on the path through conftest

RESERVATION = 'kai-resource-reservation'
LAB = 'kai-lab'
LEARNERS_QUEUES = ('lab', 'research', 'ops', 'nolimit')
ISSUE_RULE = [{'rule': 'false', 'message': 'no Queue may be created'}]


def kubectl(*args, check=True, stdin=None):
    done = subprocess.run([sim_kubectl(), '--kubeconfig', sim_kubeconfig()] + list(args), capture_output=True,
                          text=True, timeout=60, input=stdin)
    assert done.returncode == 0 or not check, ' '.join(args) + ': ' + done.stderr
    return done


def get(ref):
    done = kubectl('get', *ref, '-o', 'json', check=False)
    return json.loads(done.stdout) if done.returncode == 0 else None


def comparable(obj):
    """An object as provision's put-back compares it: without what the server writes on every write."""
    if obj is None:
        return None
    obj = json.loads(json.dumps(obj))
    for key in ('managedFields', 'resourceVersion', 'generation', 'creationTimestamp', 'uid'):
        obj['metadata'].pop(key, None)
    obj.pop('status', None)
    return obj


def patch(ref, *operations):
    kubectl('patch', *ref, '--type=json', '-p', json.dumps(list(operations)))


def recreate(ref, changes):
    """Delete the object and create it again with changes merged in (an immutable field: kubectl's only way)."""
    obj = comparable(get(ref))
    for path, value in changes.items():
        where = obj
        keys = path.split('/')
        for key in keys[:-1]:
            where = where[int(key)] if isinstance(where, list) else where[key]
        where[keys[-1]] = value
    kubectl('delete', *ref)
    kubectl('create', '-f', '-', stdin=json.dumps(obj))


def delete(ref):
    kubectl('delete', *ref)


# Each owned object: its kubectl reference and how root changes it each way (a list of JSON patch operations,
# or a function of the reference). The Queue comes before its CRD, whose 'add' forbids every Queue update.
QUEUE_CRD = ('customresourcedefinitions.apiextensions.k8s.io', 'queues.scheduling.run.ai')
OWNED = [
    ('default Queue', ('queues.scheduling.run.ai', 'default-queue'), {
        'add': [add('/spec/priority', 7)],
        'remove': [remove('/spec/parentQueue')],
        'change': [replace('/spec/resources/gpu/quota', 1)]}),
    ('Queue CRD', QUEUE_CRD, {
        'add': [add('/spec/versions/0/schema/openAPIV3Schema/x-kubernetes-validations', ISSUE_RULE)],
        'remove': [remove('/spec/versions/0/additionalPrinterColumns/3')],
        'change': [replace('/spec/versions/0/schema/openAPIV3Schema/description', 'changed by the learner')]}),
    ('KAI Config', ('configs.kai.scheduler', 'kai-config'), {
        'add': [add('/spec/global/requireDefaultPodAntiAffinityTerm', True)],
        'remove': [remove('/spec/admission/gpuSharing')],
        'change': [replace('/spec/global/replicaCount', 7)]}),
    ('SchedulingShard', ('schedulingshards.kai.scheduler', 'default'), {
        'add': [add('/spec/minRuntime', {'preemptMinRuntime': '1h'})],
        'remove': [remove('/spec/placementStrategy/cpu')],
        'change': [replace('/spec/placementStrategy/gpu', 'spread')]}),
    ('reservation ServiceAccount', ('serviceaccounts', RESERVATION, '-n', RESERVATION), {
        'add': [add('/automountServiceAccountToken', False)],
        'remove': delete,  # provision writes nothing of it but its name
        'change': [add('/metadata/labels', {'learner': 'was-here'})]}),
    ('reservation ClusterRole', ('clusterroles', RESERVATION), {
        'add': [add('/rules/-', {'apiGroups': [''], 'resources': ['secrets'], 'verbs': ['get']})],
        'remove': [remove('/rules/0/verbs/2')],
        'change': [replace('/rules/0/resources/0', 'services')]}),
    ('reservation RoleBinding', ('rolebindings', RESERVATION, '-n', RESERVATION), {
        'add': [add('/subjects/-', {'kind': 'ServiceAccount', 'name': 'default', 'namespace': RESERVATION})],
        'remove': [remove('/subjects')],
        'change': lambda ref: recreate(ref, {'roleRef/name': 'view'})}),  # roleRef is immutable
    ('binder ClusterRoleBinding', ('clusterrolebindings', 'kai-binder'), {
        'add': [add('/metadata/annotations', {'learner': 'was-here'})],
        'remove': [remove('/subjects')],
        'change': [replace('/subjects/0/name', 'default')]}),
    ('PriorityClass train', ('priorityclasses', 'train'), {
        'add': [add('/description', 'changed by the learner')],
        'remove': delete,  # provision writes its value, which no patch removes
        'change': lambda ref: recreate(ref, {'value': 5})}),  # value is immutable
    ('mutating webhook', ('mutatingwebhookconfigurations', 'mutating-kai-admission'), {
        'add': [add('/webhooks/0/objectSelector', {'matchLabels': {'learner': 'was-here'}})],
        'remove': [remove('/webhooks/0/namespaceSelector')],
        'change': [replace('/webhooks/0/timeoutSeconds', 3)]}),
    ('reservation Namespace', ('namespaces', RESERVATION), {
        'add': [add('/metadata/labels/pod-security.kubernetes.io~1enforce', 'restricted')],
        'remove': [remove('/metadata/annotations/helm.sh~1resource-policy')],
        'change': [replace('/metadata/annotations/helm.sh~1resource-policy', 'delete')]}),
    ('lab Namespace', ('namespaces', LAB), {
        # A root learner's lab namespace: provision writes nothing of it but its name.
        'add': [add('/metadata/labels/pod-security.kubernetes.io~1enforce', 'restricted')],
        'remove': [add('/metadata/annotations', {'learner': 'was-here'})],
        'change': [add('/metadata/labels/learner', 'was-here')]}),
    ('topology ConfigMap', ('configmaps', 'topology', '-n', 'gpu-operator'), {
        'add': [add('/data/learner', 'was-here')],
        'remove': [remove('/data/topology.yml')],
        'change': lambda ref: patch(ref, replace('/data/topology.yml', get(ref)['data']['topology.yml']
                                                  .replace('Tesla-K80', 'Tesla-T4')))}),
]
NAMES = [name for name, _, _ in OWNED]


def provision():
    done = run_playbook('provision.yml', timeout=600)
    return done.returncode, ' '.join(done.stdout.split()), done.stdout


def grade(tmp):
    done = run_playbook('grade.yml', '-e', 'kai_lab_lang=en', '-e', 'kai_lab_grade_dir=%s' % tmp, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:]
    with open(os.path.join(tmp, 'grade.json')) as handle:
        found = json.load(handle)
    return found['score'], sorted((c['id'], c['passed']) for s in found['steps'] for c in s['checks'])


def learners_work(workdir):
    """What the learner made: its queues and pods by uid and spec, its files by content."""
    queues = {q['metadata']['name']: (q['metadata']['uid'], q['spec']) for q in get(('queues',))['items']
              if q['metadata']['name'] in LEARNERS_QUEUES}
    pods = sorted((p['metadata']['name'], p['metadata']['uid']) for p in get(('pods', '-n', LAB))['items'])
    files = {}
    for name in sorted(os.listdir(workdir)):
        path = os.path.join(workdir, name)
        if os.path.isfile(path) and not name.startswith('grade'):
            with open(path, 'rb') as handle:
                files[name] = hashlib.sha256(handle.read()).hexdigest()
    return queues, pods, files


@pytest.fixture(scope='module')
def before(workdir, tmp_path_factory):
    """The lab as provision left it: each owned object, the grade, the learner's work."""
    objects = dict((name, comparable(get(ref))) for name, ref, _ in OWNED)
    assert all(objects.values()), objects
    return {'objects': objects, 'grade': grade(str(tmp_path_factory.mktemp('grade-before'))),
            'work': learners_work(workdir)}


@pytest.fixture(scope='module', params=['add', 'remove', 'change'])
def repaired(request, before, tmp_path_factory):
    """Every owned object changed the one way, then a provision: (the way, its output, the grade after)."""
    way = request.param
    for name, ref, ways in OWNED:
        change = ways[way]
        change(ref) if callable(change) else patch(ref, *change)
        assert comparable(get(ref)) != before['objects'][name], '%s: not changed the %s way' % (name, way)
        if (name, way) == ('Queue CRD', 'add'):
            # The issue's poisoned CRD: no Queue can be created.
            denied = kubectl('create', '--dry-run=server', '-f', '-', check=False, stdin=json.dumps(
                {'apiVersion': 'scheduling.run.ai/v2', 'kind': 'Queue', 'metadata': {'name': 'probe'}, 'spec': {}}))
            assert denied.returncode != 0 and 'no Queue may be created' in denied.stderr, denied.stderr
    code, out, raw = provision()
    assert code == 0, raw[-4000:]
    return way, out, grade(str(tmp_path_factory.mktemp('grade-' + way)))


@pytest.mark.parametrize('name', NAMES)
def test_provision_puts_back_each_owned_object(repaired, before, name):
    way, out, _ = repaired
    ref = dict((n, r) for n, r, _ in OWNED)[name]
    assert comparable(get(ref)) == before['objects'][name], '%s changed the %s way was not put back' % (name, way)
    assert 'full provision: ' in out


def test_provision_says_what_it_put_back(repaired):
    way, out, _ = repaired
    # Each role's put-back names its objects and what differed (the module's lines).
    for line in ('CustomResourceDefinition queues.scheduling.run.ai: replaced (', 'Config kai-config: replaced (',
                 'ClusterRole %s: replaced (' % RESERVATION, 'Namespace %s: replaced (' % LAB,
                 'ConfigMap gpu-operator/topology: replaced ('):
        assert line in out, (line, out[-3000:])
    if way == 'add':
        assert ('CustomResourceDefinition queues.scheduling.run.ai: replaced (spec.versions[name=v2].schema.'
                'openAPIV3Schema.x-kubernetes-validations: added ([{"message":"no Queue may be created",'
                '"rule":"false"}]))') in out, out[-3000:]
    if way == 'remove':
        for line in ('PriorityClass train: created', 'ServiceAccount %s/%s: created' % (RESERVATION, RESERVATION)):
            assert line in out, (line, out[-3000:])
    if way == 'change':
        assert 'PriorityClass train: recreated (value: 5, provision writes 50' in out, out[-3000:]
        assert 'RoleBinding %s/%s: recreated (roleRef.name: "view", provision writes "%s"' % (
            RESERVATION, RESERVATION, RESERVATION) in out, out[-3000:]


def test_the_lab_then_grades_as_before_and_the_learners_work_is_untouched(repaired, before, workdir):
    _, _, after = repaired
    assert after == before['grade']
    assert learners_work(workdir) == before['work']
    # The issue's case: a Queue can be created again.
    created = kubectl('create', '--dry-run=server', '-f', '-', check=False, stdin=json.dumps(
        {'apiVersion': 'scheduling.run.ai/v2', 'kind': 'Queue', 'metadata': {'name': 'probe'}, 'spec': {}}))
    assert created.returncode == 0, created.stderr
