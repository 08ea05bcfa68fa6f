"""The lab done by a learner without root (issue 33), checked on the real sim.

The learner gsb-learner has no sudo but kai-lab's rule, its own Kubernetes
identity (a ServiceAccount) in its ~/.kube/config and its own workdir. The
lab solved with that identity graded 100 and marked protected; rows 1-5 of
the issue's table tried as the learner and refused by the API server; a
right granted to the lab namespace's default ServiceAccount named as the
learner's (issue 40); the grade with the lab's admin kubeconfig marked
unprotected.
"""

import json
import os
import pwd
import stat
import subprocess
import time

import pytest
import yaml

from conftest import (IDENTITY, LEARNER, NS, admin_kubectl, as_learner, home, kai_lab_command, kubectl,
                      run_playbook, sim_kubeconfig, sim_kubectl, workdir)


# ---------------------------------------------------------------- the account

def test_the_learner_may_run_kai_lab_through_sudo_and_nothing_else():
    listed = subprocess.run(['sudo', '-n', '-l', '-U', LEARNER], capture_output=True, text=True, timeout=30)
    rules = [line.strip() for line in listed.stdout.splitlines() if line.strip().startswith('(')]
    assert rules == ['(root) NOPASSWD: %s' % kai_lab_command()], listed.stdout


def test_the_learners_kubeconfig_is_its_own_identity_never_the_admins():
    path = os.path.join(home(), '.kube', 'config')
    info = os.stat(path)
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (pwd.getpwnam(LEARNER).pw_uid, 0o600)
    config = yaml.safe_load(open(path))
    (user,) = config['users']
    assert set(user['user']) == {'token'}, 'a token of its own, no client certificate'
    whoami = kubectl('auth', 'whoami', '-o', 'json')
    assert whoami.returncode == 0, whoami.stderr
    assert json.loads(whoami.stdout)['status']['userInfo']['username'] == IDENTITY


def test_the_workdir_is_the_learners_and_so_are_its_files():
    info = os.stat(workdir())
    uid = pwd.getpwnam(LEARNER).pw_uid
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (uid, 0o700)
    for name in ('queues.yaml', 'podgroup.txt', 'nolimit.txt', 'gang.txt', 'fraction.yaml', 'report.json'):
        assert os.stat(os.path.join(workdir(), name)).st_uid == uid, name
    # The learner reads and writes its own files.
    assert as_learner('cat', os.path.join(workdir(), 'podgroup.txt')).returncode == 0
    assert as_learner('touch', os.path.join(workdir(), 'notes.txt')).returncode == 0


def test_the_learner_reads_what_the_lab_shows():
    for args in (['get', 'pods'], ['get', 'events'], ['get', 'podgroups'], ['get', 'queues'], ['get', 'nodes'],
                 ['get', 'priorityclasses'], ['get', 'pods', '-n', 'kai-resource-reservation'], ['get', 'configmaps']):
        done = kubectl(*args)
        assert done.returncode == 0, (args, done.stderr)


# ---------------------------------------------------------------- the grade

def test_the_whole_lab_graded_by_the_learner_is_100_and_protected(learner_grade):
    assert learner_grade['score'] == 100.0 and learner_grade['passed'], [
        (c['id'], c['message']) for s in learner_grade['steps'] for c in s['checks'] if not c['passed']]
    protection = learner_grade['protection']
    assert protection['protected'] is True, protection
    assert protection['identity'] == IDENTITY and protection['holds'] == []
    # The learner and the lab namespace's ServiceAccounts a pod of it may run under (issue 40).
    assert protection['line'].startswith("KAI's word is protected: the learner (%s) and the ServiceAccounts its pods "
                                         "may run under (%s/default) cannot " % (IDENTITY, NS))
    assert protection['pod_route'] == 'create pods -n %s' % NS
    assert [p['name'] for p in protection['policies'] if p['in_place']] == [
        'gsb-kai-lab-learner-queues', 'gsb-kai-lab-learner-pods', 'gsb-kai-lab-learner-jobs']
    assert protection['pod_security'] == {'namespace': NS, 'enforce': 'baseline', 'in_place': True}
    junit = open(os.path.join(workdir(), 'grade-junit.xml')).read()
    assert '<property name="kai_word_protected" value="true"/>' in junit
    assert os.stat(os.path.join(workdir(), 'grade.json')).st_uid == pwd.getpwnam(LEARNER).pw_uid


def test_kai_lab_status_says_kais_word_is_protected():
    done = as_learner('sudo', '-n', kai_lab_command(), 'status', '--lang', 'en')
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[1].startswith("KAI's word is protected: ")


# ---------------------------------------------------------------- rows 1-5, as the learner

def _refused(done, *words):
    said = done.stderr
    assert done.returncode != 0 and 'Forbidden' in said, said
    for word in words:
        assert word in said, said
    return said


def _can_i(*args):
    """The API server's answer for the learner (kubectl auth can-i, a SelfSubjectAccessReview)."""
    return kubectl('auth', 'can-i', *args).stdout.strip()


def _podgroup_of(pod):
    return admin_kubectl('-n', NS, 'get', 'pod', pod)['metadata']['annotations']['pod-group-name']


def _event(name, about, reason, message, api_version='v1'):
    event = {'apiVersion': api_version, 'kind': 'Event', 'metadata': {'name': name, 'namespace': NS}}
    if api_version == 'v1':
        event.update(involvedObject=about, reason=reason, message=message, type='Warning',
                     source={'component': 'kai-scheduler'})
    else:
        event.update(regarding=about, reason=reason, note=message, type='Warning', action='Scheduling',
                     reportingController='kai-scheduler', reportingInstance='kai-scheduler',
                     eventTime='2026-01-01T00:00:00.000000Z')
    return json.dumps(event)


def test_row_1_an_event_in_kais_name_is_refused():
    name = _podgroup_of('nl-1')
    podgroup = admin_kubectl('-n', NS, 'get', 'podgroup', name)
    about = {'apiVersion': 'scheduling.run.ai/v2alpha2', 'kind': 'PodGroup', 'name': name, 'namespace': NS,
             'uid': podgroup['metadata']['uid']}
    message = 'OverLimit: non-preemptible workload is over quota in queue nolimit'
    _refused(kubectl('create', '-f', '-', stdin=_event('nl-1.forged', about, 'Unschedulable', message)),
             'cannot create resource "events"')
    _refused(kubectl('create', '-f', '-', stdin=_event('nl-1.forged2', about, 'Unschedulable', message,
                                                        'events.k8s.io/v1')),
             'cannot create resource "events" in API group "events.k8s.io"')
    # Nor changed: KAI's own Event about another object cannot be pointed at nl-1.
    kais = admin_kubectl('-n', NS, 'get', 'events')['items'][0]['metadata']['name']
    _refused(kubectl('patch', 'event', kais, '--type=merge', '-p', json.dumps({'message': message})),
             'cannot patch resource "events"')


def test_row_2_the_gang_reason_cannot_be_written():
    name = _podgroup_of('p1')
    condition = {'status': {'schedulingConditions': [{
        'type': 'UnschedulableOnNodePool', 'nodePool': 'default', 'reason': 'Unschedulable', 'status': 'True',
        'message': 'Not enough resources: 2 pods found, 3 pods required (gang)', 'transitionID': '0'}]}}
    # kubectl reads the status first: refused there already; the patch itself is asked of the API server.
    _refused(kubectl('patch', 'podgroup', name, '--subresource=status', '--type=merge', '-p', json.dumps(condition)),
             'resource "podgroups/status"')
    assert _can_i('patch', 'podgroups.scheduling.run.ai', '--subresource=status') == 'no'
    podgroup = admin_kubectl('-n', NS, 'get', 'podgroup', name)
    about = {'apiVersion': 'scheduling.run.ai/v2alpha2', 'kind': 'PodGroup', 'name': name, 'namespace': NS,
             'uid': podgroup['metadata']['uid']}
    _refused(kubectl('create', '-f', '-', stdin=_event('gang.forged', about, 'Unschedulable',
                                                        'Unschedulable: 2 pods found, 3 pods required')),
             'cannot create resource "events"')


def _pod(name, **spec):
    return json.dumps({'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': name, 'namespace': NS,
                                                                        'labels': {'kai.scheduler/queue': 'research'}},
                       'spec': dict({'schedulerName': 'kai-scheduler', 'containers': [{
                           'name': 'main', 'image': 'ubuntu:22.04', 'command': ['sleep', 'infinity'],
                           'resources': {'limits': {'nvidia.com/gpu': '1'}}}]}, **spec)})


def test_row_3_a_pod_placed_by_hand_is_refused():
    _refused(kubectl('create', '-f', '-', stdin=_pod('p1-by-hand', nodeName='kai-lab-vm')),
             "ValidatingAdmissionPolicy 'gsb-kai-lab-learner-pods'", 'leave spec.nodeName unset')
    job = {'apiVersion': 'batch/v1', 'kind': 'Job', 'metadata': {'name': 'by-hand', 'namespace': NS},
           'spec': {'template': json.loads(_pod('x', nodeName='kai-lab-vm', restartPolicy='Never'))}}
    del job['spec']['template']['apiVersion'], job['spec']['template']['kind']
    _refused(kubectl('create', '-f', '-', stdin=json.dumps(job)), "ValidatingAdmissionPolicy 'gsb-kai-lab-learner-jobs'",
             'leave spec.template.spec.nodeName unset')
    binding = {'apiVersion': 'v1', 'kind': 'Binding', 'metadata': {'name': 'p1', 'namespace': NS},
               'target': {'apiVersion': 'v1', 'kind': 'Node', 'name': 'kai-lab-vm'}}
    # kubectl posts a Binding to the namespace's bindings; the binder's own path is pods/binding: both refused.
    _refused(kubectl('create', '--validate=false', '-f', '-', stdin=json.dumps(binding)),
             'cannot create resource "bindings"')
    assert _can_i('create', 'pods', '--subresource=binding') == 'no'
    _refused(kubectl('patch', 'pod', 'p1', '--subresource=status', '--type=merge', '-p',
                     '{"status":{"phase":"Running"}}'), 'resource "pods/status"')
    assert _can_i('patch', 'pods', '--subresource=status') == 'no'
    assert admin_kubectl('-n', NS, 'get', 'pods', '--field-selector', 'metadata.name=p1-by-hand')['items'] == []


def test_row_4_bd_1_cannot_be_changed_in_place():
    """What the learner could use to move bd-1's anchor without its own step: changing it in place is refused.
    Deleting and creating a pod is a right the steps need (step 7 frees a train pod's GPU): the grade does not
    take bd-1's creation as the anchor of its proofs (the field rules of the parallel branch)."""
    _refused(kubectl('annotate', 'pod', 'bd-1', 'kai-lab/moved=now'), 'cannot patch resource "pods"')
    _refused(kubectl('label', 'pod', 'bd-1', 'priorityClassName=build', '--overwrite'), 'cannot patch resource "pods"')
    pod = admin_kubectl('-n', NS, 'get', 'pod', 'bd-1')
    pod['metadata']['labels']['moved'] = 'now'
    _refused(kubectl('replace', '-f', '-', stdin=json.dumps(pod)), 'cannot update resource "pods"')


def test_row_5_fr_2_cannot_be_moved_into_fr_1s_gpu_group():
    fr1 = admin_kubectl('-n', NS, 'get', 'pod', 'fr-1')['metadata']
    group_label = next(k for k in fr1.get('labels', {}) if 'gpu-group' in k)
    _refused(kubectl('label', 'pod', 'fr-2', '%s=%s' % (group_label, fr1['labels'][group_label]), '--overwrite'),
             'cannot patch resource "pods"')
    configmaps = [c['metadata']['name'] for c in admin_kubectl('-n', NS, 'get', 'configmaps')['items']
                  if c['metadata']['name'].startswith('fr-2')]
    assert configmaps, 'KAI gave fr-2 its GPU ConfigMap'
    _refused(kubectl('patch', 'configmap', configmaps[0], '--type=merge', '-p', '{"data":{"NVIDIA_VISIBLE_DEVICES":"x"}}'),
             'cannot patch resource "configmaps"')


def test_nothing_in_kais_namespaces_no_privileged_pod_no_other_queue():
    _refused(kubectl('-n', 'kai-scheduler', 'create', '-f', '-', stdin=_pod('in-kai').replace(NS, 'kai-scheduler')),
             'cannot create resource "pods"')
    _refused(kubectl('-n', 'kai-resource-reservation', 'delete', 'pods', '--all'), 'cannot delete resource "pods"')
    privileged = json.loads(_pod('root-on-the-vm'))
    privileged['spec']['containers'][0]['securityContext'] = {'privileged': True}
    privileged['spec']['volumes'] = [{'name': 'host', 'hostPath': {'path': '/'}}]
    _refused(kubectl('create', '-f', '-', stdin=json.dumps(privileged)), 'violates PodSecurity "baseline:latest"')
    queue = {'apiVersion': 'scheduling.run.ai/v2', 'kind': 'Queue', 'metadata': {'name': 'mine'},
             'spec': {'parentQueue': 'lab', 'resources': {'gpu': {'quota': 4, 'limit': -1, 'overQuotaWeight': 1},
                                                          'cpu': {'quota': -1, 'limit': -1, 'overQuotaWeight': 1},
                                                          'memory': {'quota': -1, 'limit': -1, 'overQuotaWeight': 1}}}}
    _refused(kubectl('create', '-f', '-', stdin=json.dumps(queue)),
             "ValidatingAdmissionPolicy 'gsb-kai-lab-learner-queues'")


# ---------------------------------------------------------------- an identity a pod of the learner takes on

DEFAULT_SA = 'system:serviceaccount:%s:default' % NS
EVENTS_GRANT = [
    {'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'Role',
     'metadata': {'name': 'issue-40-events', 'namespace': NS},
     'rules': [{'apiGroups': [''], 'resources': ['events'], 'verbs': ['create']}]},
    {'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'RoleBinding',
     'metadata': {'name': 'issue-40-events', 'namespace': NS},
     'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'Role', 'name': 'issue-40-events'},
     'subjects': [{'kind': 'ServiceAccount', 'name': 'default', 'namespace': NS}]},
]


def _admin(*args, stdin=None):
    done = subprocess.run([sim_kubectl(), '--kubeconfig', sim_kubeconfig()] + list(args), input=stdin,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _default_may_create_events(wanted):
    """Waits (10 s at most) until the API server's authorizer answers wanted for the default ServiceAccount."""
    for _ in range(50):
        said = subprocess.run([sim_kubectl(), '--kubeconfig', sim_kubeconfig(), 'auth', 'can-i', 'create', 'events',
                               '-n', NS, '--as', DEFAULT_SA], capture_output=True, text=True, timeout=30).stdout.strip()
        if said == wanted:
            return
        time.sleep(0.2)
    raise AssertionError('the default ServiceAccount may create events: %s, not %s' % (said, wanted))


def _protection():
    done = as_learner('sudo', '-n', kai_lab_command(), 'status', '--json', '--lang', 'en')
    assert done.stdout.strip(), done.stderr
    return json.loads(done.stdout)['protection']


def test_a_right_of_the_lab_namespaces_default_serviceaccount_is_the_learners_and_named():
    """Issue 40: a pod of the learner runs under any ServiceAccount of the lab namespace and holds its token. An
    admin grants the default one a right to create Events there: the grade is then unprotected, naming it; with
    the grant removed, protected again."""
    _admin('apply', '-f', '-', stdin=json.dumps({'apiVersion': 'v1', 'kind': 'List', 'items': EVENTS_GRANT}))
    try:
        _default_may_create_events('yes')
        protection = _protection()
        assert protection['protected'] is False, protection
        assert [(h['id'], h['holder'], h['writes']) for h in protection['holds']] == [
            ('pods.other_serviceaccount', DEFAULT_SA, ['events.create'])]
        assert 'may run a pod under ServiceAccount default of namespace %s, which may create or change Events ' \
            '(KAI\'s reasons, steps 3, 5, 6)' % NS in protection['line']
        assert protection['pod_route'] == 'create pods -n %s' % NS
    finally:
        _admin('-n', NS, 'delete', 'rolebinding,role', 'issue-40-events', '--ignore-not-found')
    _default_may_create_events('no')
    protection = _protection()
    assert protection['protected'] is True and protection['holds'] == [], protection
    assert DEFAULT_SA in [p['identity'] for p in protection['pod_identities']]


# ---------------------------------------------------------------- the admin kubeconfig

def test_with_the_labs_admin_kubeconfig_the_grade_is_marked_unprotected(tmp_path):
    """A root learner (the default sim, the lab text's VM): the same lab, graded, marked."""
    done = run_playbook('grade.yml', '-e', 'kai_lab_learner_user=', '-e', 'kai_lab_workdir=%s' % workdir(),
                        '-e', 'kai_lab_grade_dir=%s' % tmp_path, timeout=180)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    grade = json.load(open(tmp_path / 'grade.json'))
    assert grade['score'] == 100.0
    protection = grade['protection']
    assert protection['protected'] is False and protection['identity'] is None
    assert [h['id'] for h in protection['holds']] == [
        'own_kubeconfig', 'events.create', 'pods.status', 'podgroups.status', 'pods.binding', 'pods.update',
        'impersonate', 'serviceaccounts.token', 'bindrequests.write', 'configmaps.write', 'reservation.pods']
    assert protection['line'].startswith("KAI's word is NOT protected: the learner (the lab's own kubeconfig) may ")
    assert '<property name="kai_word_protected" value="false"/>' in (tmp_path / 'grade-junit.xml').read_text()


@pytest.mark.parametrize('lang, verdict, words', [
    ('en', 'step 1 queues (Queue hierarchy): PASSED', 'This grade reads only what KAI wrote'),
    ('ko', '1단계 queues (큐 계층): 통과', '이 채점은 KAI 가 쓴 것만 읽습니다')])
def test_each_check_says_it_in_the_learners_language(lang, verdict, words):
    """The verdict first, then (after a row per check) one short sentence on what protects the grade (issue 41)."""
    done = as_learner('sudo', '-n', kai_lab_command(), 'check', 'queues', '--lang', lang)
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and lines[0] == verdict, done.stdout
    assert [line for line in lines if line.startswith(words)], done.stdout
