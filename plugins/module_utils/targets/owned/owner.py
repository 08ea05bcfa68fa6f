# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The objects provision owns, compared with what it writes and put back when they differ (issue 42).

Provision writes objects on both targets - KAI's CRDs and chart objects, its
Config, the webhooks on the sim, fake-gpu-operator's namespaces and topology,
the lab namespace and the learner's account (roles/kai_lab/templates/
learner_access.yaml.j2, every object of it). A learner who is root may change
any of them, and provision is what puts the lab right again. So each object
is compared by content with what provision would write, and put back whole:

- what provision would write is what the API server makes of the object:
  a replace (PUT) of it, with the live object's resourceVersion, sent as a
  dry run (dryRun=All). The answer has the server's defaults and what it
  keeps on an update (uid, status, a namespace's finalizers), so it equals
  the live object exactly when nothing was changed, and a field added, a
  field removed and a value changed are each a difference (compare.py's differences());
- then the same replace for real. A server-side apply would keep a field
  another field manager added (a rule patched into a CRD, a label set with
  kubectl label): a replace keeps nothing provision does not write but the
  fields the cluster writes itself (compare.py's kept_fields(): a token Secret's data,
  Helm's ownership labels on a VM, controllers' finalizers and owners);
- an object that is missing is created; one a replace cannot change (an
  immutable field: a binding's roleRef, a PriorityClass's value) is deleted
  and created again, except the kinds whose deletion takes what is in them
  (a Namespace, a CRD, KAI's Config); what cannot be put back is said in
  Korean and English: which object, what differs, why, and the command that
  fixes it by hand (words.py's Refusal).

Objects another part of provision owns are only created when missing
(create_only): the reservation namespace, which fake-gpu-operator's role
makes first and KAI's chart owns.

Layer: the targets (both); may use the cluster client, the readiness gate, this host's processes, the KAI domain, the learner's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re
import time

from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import FIELD_MANAGER
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import ApiException, ClusterError, UnreadableAnswer
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.owned.compare import (
    SERVER_DEFAULTS, differences, kept_fields, limited, merged)
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.owned.resources import NotServed, Resources
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.owned.words import (
    DENIED, IMMUTABLE, KEPT_KINDS, WHAT_DELETION_TAKES, Refusal, display_name, message, why_api, why_cluster)

# Attempts at a replace that meets a newer resourceVersion (someone wrote meanwhile).
ATTEMPTS = 3
# How long a deleted object (its controllers' finalizers) is waited for before it is created again.
GONE_SECONDS = 20.0
# The metadata-only form of a GET: a live object too deep or large to read whole still has a resourceVersion.
METADATA_ONLY = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json'


class Owner(object):
    """Puts back the objects provision owns through one Cluster (client/api.py). kubectl: the command a
    person runs to fix one by hand (named in a Refusal)."""

    def __init__(self, cluster, check_mode=False, kubectl='kubectl', sleep=time.sleep, clock=time.monotonic):
        self.cluster, self.check_mode, self.kubectl = cluster, check_mode, kubectl
        self.resources = Resources(cluster)
        self.sleep, self.clock = sleep, clock

    def put_back(self, objects, create_only=()):
        """{'created': [...], 'repaired': [{'object', 'action', 'differences'}], 'unchanged': [...],
        'refused': [Refusal.as_dict()], 'references': [reference()] of each object of objects made as provision
        writes it}; objects in order (a CRD before its objects), create_only first."""
        outcome = {'created': [], 'repaired': [], 'unchanged': [], 'refused': [], 'references': []}
        for obj, compare in [(o, False) for o in create_only] + [(o, True) for o in objects]:
            try:
                done, found, name = self.one(obj, compare)
            except Refusal as refusal:
                outcome['refused'].append(refusal.as_dict())
                continue
            if compare:
                outcome['references'].append(self.reference(obj))
            if done == 'unchanged':
                outcome['unchanged'].append(name)
            elif done == 'created':
                outcome['created'].append(name)
            else:
                outcome['repaired'].append({'object': name, 'action': done, 'differences': limited(found)})
        return outcome

    def one(self, obj, compare=True):
        """('unchanged' | 'created' | 'replaced' | 'recreated', what differed, its name as display_name() gives it);
        Refusal when it cannot. compare=False: only created when missing."""
        try:
            path, collection, namespace = self.resources.locate(obj)
        except NotServed as exc:
            raise Refusal(display_name(obj), [], why_cluster(exc),
                          '%s api-resources (is its kind served?)' % self.kubectl)
        except ClusterError as exc:
            raise Refusal(display_name(obj), [], why_cluster(exc), self._reach_command())
        wanted = json.loads(json.dumps(obj))
        meta = wanted.setdefault('metadata', {})
        if namespace is None:
            meta.pop('namespace', None)  # a chart may name one for a cluster-wide kind (KAI's Config)
        name = display_name(wanted)
        for _attempt in range(ATTEMPTS):
            live, whole = self._read(path, name, wanted)
            if live is None:
                self._create(collection, wanted, name, ['missing from the cluster'])
                return 'created', [], name
            if not compare:
                return 'unchanged', [], name
            body = kept_fields(wanted, live)
            try:
                would = self._send('PUT', path, body, name, dry_run=True)
                found = differences(live, would) if whole else [
                    'the object in the cluster cannot be read whole (nested too deep or too large)']
                if not found:
                    return 'unchanged', [], name
                if not self.check_mode:
                    self._send('PUT', path, body, name)
                return 'replaced', found, name
            except ApiException as exc:
                if exc.status in (404, 409):
                    continue  # written or deleted meanwhile: read it again
                return self._refused_replace(exc, wanted, live, whole, path, collection, name) + (name,)
        raise Refusal(name, [], ('it was changed by someone else at each of %d attempts' % ATTEMPTS,
                                 '%d번 시도하는 동안 매번 다른 누군가가 바꾸었습니다' % ATTEMPTS),
                      self._command('edit', wanted))

    # ------------------------------------------------------------ requests
    def _read(self, path, name, wanted):
        """(the live object or None, whether it was read whole); an object too deep or large to read whole is
        read as its metadata (its resourceVersion is all a replace needs)."""
        try:
            try:
                return self.cluster.request('GET', path, what='read %s' % name, kind=wanted.get('kind')), True
            except UnreadableAnswer:
                meta = self.cluster.request('GET', path, what='read the metadata of %s' % name, accept=METADATA_ONLY)
                return {'metadata': (meta or {}).get('metadata') or {}}, False
        except ApiException as exc:
            if exc.status == 404:
                return None, True
            raise self._refusal(name, [], exc, wanted)
        except ClusterError as exc:
            raise Refusal(name, [], why_cluster(exc), self._reach_command())

    def _send(self, method, path, body, name, dry_run=False):
        """The API server's answer ({} when it cannot be read whole); ApiException as it comes."""
        query = {'fieldManager': FIELD_MANAGER}
        if dry_run or self.check_mode:
            query['dryRun'] = 'All'
        try:
            return self.cluster.request(method, path, query, body=body, what='%s %s' % (method, path))
        except UnreadableAnswer:
            return {}
        except ApiException:
            raise
        except ClusterError as exc:
            raise Refusal(name, [], why_cluster(exc), self._reach_command())

    def _create(self, collection, wanted, name, found):
        body = json.loads(json.dumps(wanted))
        body['metadata'].pop('resourceVersion', None)
        try:
            self._send('POST', collection, body, name)
        except ApiException as exc:
            raise self._refusal(name, found, exc, wanted)

    def _refused_replace(self, exc, wanted, live, whole, path, collection, name):
        would, not_created = self._would_create(collection, wanted, name)
        if not whole:
            found = []
        elif would:
            found = limited(differences(live, would))
        else:
            # No server's view of what provision writes (a CRD's name must be its kind's, so none is made up):
            # what provision sends, with the defaults the API server gives that kind.
            defaults = SERVER_DEFAULTS.get(wanted.get('kind')) or {}
            found = limited(differences(live, merged(defaults, kept_fields(wanted, live))))
        immutable = IMMUTABLE.search(message(exc)) and not DENIED.search(message(exc))
        if exc.status == 422 and immutable and wanted.get('kind') not in KEPT_KINDS:
            # An immutable field (a binding's roleRef, a PriorityClass's value): deleted and created again, once a
            # dry-run create of the same object under another name shows that the create will be taken.
            if not_created is not None:
                raise self._refusal(name, found, not_created, wanted)
            if not self.check_mode:
                self._delete(path, wanted, name, found)
                self._create(collection, wanted, name, found)
            return 'recreated', found
        raise self._refusal(name, found, exc, wanted)

    def _would_create(self, collection, wanted, name):
        """(the object the API server would create: a dry run under a name it makes up, with its defaults, named as
        wanted, or {} when it has no such view; the ApiException that refused that create, or None)."""
        if wanted.get('kind') in SERVER_DEFAULTS:
            return {}, None
        body = json.loads(json.dumps(wanted))
        body['metadata'].pop('resourceVersion', None)
        body['metadata']['generateName'] = body['metadata'].pop('name')[:40] + '-'
        try:
            would = self.cluster.request('POST', collection, {'dryRun': 'All', 'fieldManager': FIELD_MANAGER},
                                         body=body, what='create %s as a dry run' % name)
        except ApiException as exc:
            return {}, exc
        except UnreadableAnswer:
            return {}, None
        except ClusterError as exc:
            raise Refusal(name, [], why_cluster(exc), self._reach_command())
        meta = (would or {}).get('metadata')
        if not isinstance(meta, dict):
            return {}, None
        meta.pop('generateName', None)
        meta['name'] = wanted['metadata']['name']
        return would, None

    def _delete(self, path, wanted, name, found):
        try:
            self.cluster.request('DELETE', path, {'propagationPolicy': 'Background'}, what='delete %s' % name)
        except ApiException as exc:
            if exc.status != 404:
                raise self._refusal(name, found, exc, wanted)
        except ClusterError as exc:
            raise Refusal(name, found, why_cluster(exc), self._reach_command())
        end = self.clock() + GONE_SECONDS
        while True:
            try:
                self.cluster.request('GET', path, accept=METADATA_ONLY, what='read %s' % name)
            except ApiException as exc:
                if exc.status == 404:
                    return
            except ClusterError:
                pass
            if self.clock() >= end:
                raise Refusal(name, found, (
                    'it was deleted to be made again and is still there after %d s (a finalizer holds it)'
                    % GONE_SECONDS,
                    '다시 만들려고 지웠지만 %d초 뒤에도 남아 있습니다 (finalizer 가 붙잡고 있습니다)' % GONE_SECONDS),
                    '%s get %s -o jsonpath={.metadata.finalizers}' % (self.kubectl, self._ref(wanted)))
            self.sleep(0.2)

    # ------------------------------------------------------------ what to tell
    def _refusal(self, name, found, exc, wanted):
        """The Refusal of an API server's answer: why, in its own words, and the command that fixes it."""
        denier = self._denier(exc)
        if denier:
            command = denier
        elif exc.status == 422 and wanted.get('kind') in KEPT_KINDS:
            takes = WHAT_DELETION_TAKES[wanted['kind']][0]
            if '%s' in takes:
                takes = takes % (((wanted.get('spec') or {}).get('names') or {}).get('kind') or 'object')
            command = '%s delete %s (this deletes %s)' % (self.kubectl, self._ref(wanted), takes)
        else:
            command = self._command('edit', wanted)
        return Refusal(name, found, why_api(exc, denier), command)

    def _denier(self, exc):
        """The command that removes what denied a change in admission, when the API server's message names it."""
        said = message(exc)
        policy = re.search(r"ValidatingAdmissionPolicy '([^']+)' with binding '([^']+)' denied", said)
        if policy:
            return '%s delete validatingadmissionpolicybinding %s' % (self.kubectl, policy.group(2))
        webhook = re.search(r'admission webhook "([^"]+)" denied', said)
        if not webhook:
            return None
        for kind in ('ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'):
            try:
                listed = self.cluster.request('GET', '/apis/admissionregistration.k8s.io/v1/%ss' % kind.lower(),
                                              what='list %s' % kind)
            except (ApiException, ClusterError):
                continue
            for item in (listed or {}).get('items') or []:
                if any(w.get('name') == webhook.group(1) for w in item.get('webhooks') or []):
                    return '%s delete %s %s' % (self.kubectl, kind.lower(), item['metadata']['name'])
        return ('%s get validatingwebhookconfigurations,mutatingwebhookconfigurations (the one with webhook %s), '
                'then delete it' % (self.kubectl, webhook.group(1)))

    def reference(self, obj):
        """{'resource', 'group', 'kind', 'namespace', 'name'} of an object of the cluster: what a later check (the
        k3s state record, targets/k3s/state.py) lists it by with kubectl and finds it again by."""
        meta = obj.get('metadata') or {}
        api_version = str(obj.get('apiVersion') or '')
        namespaced = self.resources.locate(obj)[2] is not None
        return {'resource': self.resources.resource_name(obj),
                'group': api_version.rpartition('/')[0],
                'kind': obj.get('kind'), 'namespace': meta.get('namespace') or '' if namespaced else '',
                'name': meta.get('name')}

    def _reach_command(self):
        return '%s get --raw /readyz (the API server must answer: provision starts it on the sim)' % self.kubectl

    def _command(self, verb, wanted):
        return '%s %s %s' % (self.kubectl, verb, self._ref(wanted))

    def _ref(self, wanted):
        """<resource> <name> [-n <namespace>], as kubectl takes it."""
        meta = wanted.get('metadata') or {}
        try:
            resource = self.resources.resource_name(wanted)
        except (ClusterError, KeyError):
            resource = str(wanted.get('kind')).lower()
        return '%s %s%s' % (resource, meta.get('name'), ' -n %s' % meta['namespace'] if meta.get('namespace') else '')
