#!/usr/bin/env python
"""Record the unit-test fixtures of provision's put-back (tests/unit/fixtures/owned/) from a real sim.

For each object of --objects (a JSON list of objects as provision writes
them: the `objects` of the module gsb.kai_lab.kai_lab_owned_objects, taken
from a provision's result), on a sim that provision just made: the object
as the API server keeps it (`live`), the replace the module sends (`sent`)
and the API server's answer to it as a dry run (`dry_run`); for a
PriorityClass and a RoleBinding also its answer to a dry-run create under a
name it makes up (`dry_run_create`). Then the API server's
own refusals the module meets: a replace of a CRD without a resourceVersion
(the issue's "must be specified for an update"), one with an old
resourceVersion, a RoleBinding's roleRef, a CRD's scope and a PriorityClass's
value changed, and a replace denied by a
ValidatingAdmissionPolicy (made for the recording, then deleted); and the
discovery of each group version. managedFields are left out, and so is
the token of the learner's token Secret.

Usage (with the sim provisioned, its learner access objects applied):
  python tests/record_owned_fixtures.py --kubeconfig <sim>/kwok/clusters/kai-lab/kubeconfig.yaml \\
      --objects objects.json
"""

import argparse
import base64
import copy
import json
import os
import time

from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import Cluster
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import ApiException
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.owned.compare import kept_fields
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.owned.resources import Resources

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, 'unit', 'fixtures', 'owned')
ADMISSION = '/apis/admissionregistration.k8s.io/v1'


# What a Secret's token is replaced by in the fixtures: the same in every copy, so they still agree.
TOKEN_LEFT_OUT = base64.b64encode(b'the token of the recorded sim, left out').decode()


def strip(obj):
    """obj without its managedFields, a Secret's token left out."""
    if isinstance(obj, dict):
        (obj.get('metadata') or {}).pop('managedFields', None)
        if obj.get('kind') == 'Secret' and 'token' in (obj.get('data') or {}):
            obj['data']['token'] = TOKEN_LEFT_OUT
    return obj


def refusal(call):
    try:
        call()
    except ApiException as exc:
        return {'status': exc.status, 'body': json.loads(exc.body)}
    raise AssertionError('the API server accepted it')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--kubeconfig', required=True)
    parser.add_argument('--objects', required=True)
    args = parser.parse_args()
    cluster = Cluster(args.kubeconfig, light=True)
    resources = Resources(cluster)
    with open(args.objects) as handle:
        objects = json.load(handle)
    recorded = []
    for obj in objects:
        path, _, namespace = resources.locate(obj)
        wanted = copy.deepcopy(obj)
        if namespace is None:
            wanted['metadata'].pop('namespace', None)
        live = cluster.request('GET', path)
        sent = kept_fields(wanted, live)
        dry_run = cluster.request('PUT', path, {'dryRun': 'All', 'fieldManager': 'gsb.kai_lab'}, body=sent)
        item = {'path': path, 'wanted': obj, 'live': strip(live), 'sent': strip(sent), 'dry_run': strip(dry_run)}
        if obj['kind'] in ('PriorityClass', 'RoleBinding'):
            # What a create of it would make (the module's check before it deletes one to create it again).
            created = copy.deepcopy(wanted)
            created['metadata']['generateName'] = created['metadata'].pop('name') + '-'
            item['dry_run_create'] = strip(cluster.request('POST', path.rsplit('/', 1)[0],
                                                           {'dryRun': 'All', 'fieldManager': 'gsb.kai_lab'},
                                                           body=created))
        recorded.append(item)
    discovery = dict((api_version, cluster.request('GET', '/api/v1' if api_version == 'v1' else '/apis/' + api_version))
                     for api_version in sorted(set(obj['apiVersion'] for obj in objects)))

    crd = next(item for item in recorded if item['wanted']['kind'] == 'CustomResourceDefinition')
    binding = next(item for item in recorded if item['wanted']['kind'] == 'RoleBinding')
    without_version = copy.deepcopy(crd['wanted'])
    old_version = kept_fields(crd['wanted'], crd['live'])
    old_version['metadata']['resourceVersion'] = '1'
    other_role = kept_fields(binding['wanted'], binding['live'])
    other_role['roleRef']['name'] = 'view'
    other_scope = kept_fields(crd['wanted'], crd['live'])
    other_scope['spec']['scope'] = 'Namespaced'
    priority = next(item for item in recorded if item['wanted']['kind'] == 'PriorityClass')
    other_value = kept_fields(priority['wanted'], priority['live'])
    other_value['value'] = 5
    errors = {
        'crd_without_resource_version': refusal(lambda: cluster.request(
            'PUT', crd['path'], {'dryRun': 'All'}, body=without_version)),
        'crd_old_resource_version': refusal(lambda: cluster.request(
            'PUT', crd['path'], {'dryRun': 'All'}, body=old_version)),
        'rolebinding_other_role': refusal(lambda: cluster.request(
            'PUT', binding['path'], {'dryRun': 'All'}, body=other_role)),
        'crd_other_scope': refusal(lambda: cluster.request(
            'PUT', crd['path'], {'dryRun': 'All'}, body=other_scope)),
        'priorityclass_other_value': refusal(lambda: cluster.request(
            'PUT', priority['path'], {'dryRun': 'All'}, body=other_value)),
    }
    # A policy of the learner's that denies every change of the CRDs.
    policy = {'apiVersion': 'admissionregistration.k8s.io/v1', 'kind': 'ValidatingAdmissionPolicy',
              'metadata': {'name': 'learner-keeps-crds'},
              'spec': {'failurePolicy': 'Fail', 'matchConstraints': {'resourceRules': [{
                  'apiGroups': ['apiextensions.k8s.io'], 'apiVersions': ['*'], 'operations': ['UPDATE'],
                  'resources': ['customresourcedefinitions']}]},
                  'validations': [{'expression': 'false', 'message': 'CRDs stay as the learner left them'}]}}
    binding_of_policy = {'apiVersion': 'admissionregistration.k8s.io/v1', 'kind': 'ValidatingAdmissionPolicyBinding',
                         'metadata': {'name': 'learner-keeps-crds-binding'},
                         'spec': {'policyName': 'learner-keeps-crds', 'validationActions': ['Deny']}}
    cluster.request('POST', ADMISSION + '/validatingadmissionpolicies', body=policy)
    cluster.request('POST', ADMISSION + '/validatingadmissionpolicybindings', body=binding_of_policy)
    try:
        for _ in range(50):  # the policy takes effect once the API server has it compiled
            try:
                cluster.request('PUT', crd['path'], {'dryRun': 'All'}, body=kept_fields(
                    crd['wanted'], cluster.request('GET', crd['path'])))
            except ApiException as exc:
                errors['crd_denied_by_policy'] = {'status': exc.status, 'body': json.loads(exc.body)}
                break
            time.sleep(0.2)
    finally:
        cluster.request('DELETE', ADMISSION + '/validatingadmissionpolicybindings/learner-keeps-crds-binding')
        cluster.request('DELETE', ADMISSION + '/validatingadmissionpolicies/learner-keeps-crds')
    os.makedirs(OUT, exist_ok=True)
    for name, data in (('objects.json', recorded), ('discovery.json', discovery), ('refusals.json', errors)):
        with open(os.path.join(OUT, name), 'w') as handle:
            json.dump(data, handle, indent=1, sort_keys=True)
            handle.write('\n')
        print('wrote', os.path.join(OUT, name))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
