# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which KAI-Scheduler runs, read from what runs: never from a second setting.

- The sim: kai_scheduler's provisioning (roles/kai_scheduler/tasks/sim.yml)
  writes the record of what it started, ``<sim state>/kai/kai-version.json``
  (sim_record): the version and its profile's line, and for each binary the
  KAI module version its Go build info names. KAI's binaries have no
  ``--version`` that prints and exits (v0.12.0's scheduler ``--version`` is a
  flag that defaults to true, prints "gitVersion: Not provided." for a module
  build and goes on scheduling), so the build info is what a binary says of
  itself.
- k3s: through the API, the image tag of the Deployment in KAI's namespace
  that runs the ``scheduler`` image (KAI's operator gives it the chart's
  version), else the chart version of the deployed Helm release.

The solver, the grader and the readiness gate take the version from here; a
version that cannot be read is an environment failure naming what was looked
at, and an expected version (kai_version) that differs is refused before any
work. One KAI version's differences from the lab text are data in
kai_profiles (FORM_DIFFERENCES); their words are grade_output's.

Layer: the KAI domain; may use the cluster client.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import re
import zlib

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kai_profiles
from ansible_collections.gsb.kai_lab.plugins.module_utils.client import answer
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import ClusterError

RECORD_SCHEMA = 1
# Every Go module path a KAI profile builds from (the module moved at v0.13).
KAI_MODULES = tuple(sorted(set(profile['module'] for profile in kai_profiles.PROFILES)))
# The image KAI's scheduler runs as (ghcr.io/kai-scheduler/kai-scheduler/scheduler:<tag>).
SCHEDULER_IMAGE = 'scheduler'
HELM_RELEASE = 'kai-scheduler'
# A Helm release of KAI's chart unpacks to a few MB; a Secret of 1.5 MB could unpack to far more.
MAX_RELEASE_BYTES = 32 * 1024 * 1024

# The options of the modules that read the running version (doc_fragments/kai_running.py).
RUNNING_ARGS = dict(
    kai_version=dict(type='str'),
    kai_record=dict(type='path'),
    kai_namespace=dict(type='str', default='kai-scheduler'),
)


class KaiVersionUnknown(Exception):
    """The running KAI's version could not be read; looked_at says where it was looked for."""

    def __init__(self, looked_at):
        self.looked_at = list(looked_at)
        Exception.__init__(self, 'environment: the version of the KAI-Scheduler that runs cannot be read '
                                 '(looked at: %s) / 실행 중인 KAI-Scheduler 의 버전을 읽을 수 없습니다 (확인한 곳: %s)'
                           % ('; '.join(self.looked_at), '; '.join(self.looked_at)))


class KaiVersionMismatch(Exception):
    """kai_version was set and differs from the KAI that runs."""


class RunningKai(object):
    """The version of the KAI that runs and where it was read."""

    def __init__(self, version, source, detail=None):
        self.version = version
        self.source = source
        self.detail = detail or {}


# ---------------------------------------------------------------- the sim's record

_HEADER = re.compile(r'^(\S.*): (go\S+)$')


def buildinfo_versions(text):
    """binary path -> {'module', 'version'} of KAI from `go version -m` output.

    'version' is None when the binary is built from a KAI tree Go knows no
    version of ("(devel)") or from a local replacement; binaries without KAI
    in their build info are left out.
    """
    found = {}
    current = None
    last = None
    for line in (text or '').splitlines():
        header = _HEADER.match(line)
        if header:
            current, last = header.group(1), None
            continue
        fields = line.strip().split('\t')
        if current is None or len(fields) < 2:
            continue
        if fields[0] in ('mod', 'dep') and fields[1] in KAI_MODULES:
            version = fields[2] if len(fields) > 2 and fields[2].startswith('v') else None
            found[current] = last = {'module': fields[1], 'version': version}
        elif fields[0] == '=>' and last is not None:
            # A replaced KAI: the replacement's version, none for a local directory.
            last['version'] = fields[2] if len(fields) > 2 and fields[1] in KAI_MODULES else None
            last = None
        else:
            last = None
    return found


def sim_record(version, buildinfo, binaries, own=False):
    """The record the sim's provisioning writes: what it provisions.

    version is the KAI version the lab asked for (kai_lab_sim_kai_version),
    buildinfo `go version -m` of the binaries, binaries name -> path. A binary
    whose build info names another KAI version is refused, naming both.
    """
    profile = kai_profiles.profile_for(version)
    by_path = buildinfo_versions(buildinfo)
    entries = {}
    other = []
    for name in sorted(binaries):
        info = by_path.get(binaries[name]) or {'module': None, 'version': None}
        entries[name] = {'path': binaries[name], 'module': info['module'], 'version': info['version']}
        if info['version'] and kai_profiles.parse_version(info['version']) != kai_profiles.parse_version(version):
            other.append('%s is %s' % (name, info['version']))
    if other:
        raise kai_profiles.KaiProfileError(
            'kai_lab_sim_kai_version is %s but the KAI binaries say otherwise (their Go build info: %s). '
            'Set kai_lab_sim_kai_version to the version of your binaries. / kai_lab_sim_kai_version 은 %s 인데 '
            'KAI 바이너리는 다른 버전입니다 (%s). kai_lab_sim_kai_version 을 바이너리의 버전으로 지정하세요.'
            % (version, ', '.join(other), version, ', '.join(other)))
    return {'schema': RECORD_SCHEMA, 'version': profile['version'], 'requested': str(version),
            'line': profile['line'], 'module': profile['module'], 'own_binaries': bool(own), 'binaries': entries}


def read_sim_record(path):
    """RunningKai from the sim's record at path, or KaiVersionUnknown naming it."""
    where = 'the sim record %s' % path
    try:
        with open(path) as handle:
            record = json.load(handle)
    except (IOError, OSError) as exc:
        raise KaiVersionUnknown(['%s: %s (written when the sim provisions KAI; provision again)'
                                 % (where, exc.strerror or exc)])
    except ValueError as exc:
        raise KaiVersionUnknown(['%s: not JSON (%s)' % (where, exc)])
    if not isinstance(record, dict) or record.get('schema') != RECORD_SCHEMA:
        raise KaiVersionUnknown(['%s: not a record of schema %d' % (where, RECORD_SCHEMA)])
    try:
        profile = kai_profiles.profile_for(record.get('version'))
    except kai_profiles.KaiProfileError as exc:
        raise KaiVersionUnknown(['%s: %s' % (where, exc)])
    binaries = record.get('binaries') if isinstance(record.get('binaries'), dict) else {}
    said = sorted(set(str(b.get('version')) for b in binaries.values() if isinstance(b, dict) and b.get('version')))
    detail = {'line': profile['line'], 'binaries_say': said, 'own_binaries': bool(record.get('own_binaries'))}
    source = where + (' (binaries: %s)' % ', '.join(said) if said else ' (the binaries name no version)')
    return RunningKai(profile['version'], source, detail)


# ---------------------------------------------------------------- k3s, through the API

def _image_tag(image):
    """(repository name, tag) of an image reference; the tag is None when there is none."""
    reference = str(image or '').split('@', 1)[0]
    name, colon, tag = reference.rpartition(':')
    if not colon or '/' in tag:  # no tag: the colon belonged to a registry port
        name, tag = reference, None
    return name.rsplit('/', 1)[-1], tag


def _release_chart(secret):
    """The chart metadata of a Helm 3 release Secret (data.release: base64 of Helm's base64 of gzip of JSON)."""
    payload = base64.b64decode(base64.b64decode((secret.get('data') or {}).get('release') or ''))
    if payload[:2] == b'\x1f\x8b':
        try:
            payload = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(payload, MAX_RELEASE_BYTES + 1)
        except zlib.error as exc:
            raise ValueError('not gzip: %s' % exc)
        if len(payload) > MAX_RELEASE_BYTES:
            raise ValueError('it unpacks to more than %d MiB' % (MAX_RELEASE_BYTES // (1024 * 1024)))
    try:  # bounded in depth as the API server's answers are
        release = answer.decode(payload, 'read the release', 'Secret')
    except ClusterError as exc:
        raise ValueError(str(exc).split(': ', 1)[-1])
    return (((release if isinstance(release, dict) else {}).get('chart') or {}).get('metadata')) or {}


def _version_of(text):
    """text as a version with a KAI profile, or None."""
    try:
        return kai_profiles.profile_for(text)['version']
    except kai_profiles.KaiProfileError:
        return None


def read_cluster(cluster, namespace):
    """RunningKai from KAI's namespace: the scheduler's image tag, else the Helm release's chart version."""
    looked = []
    try:
        deployments = cluster.list('apps/v1', 'Deployment', namespace)
    except ClusterError as exc:
        deployments = []
        looked.append('Deployments of namespace %s: %s' % (namespace, exc))
    else:
        for deployment in sorted(deployments, key=lambda d: (d.get('metadata') or {}).get('name') or ''):
            name = (deployment.get('metadata') or {}).get('name')
            containers = (((deployment.get('spec') or {}).get('template') or {}).get('spec') or {}).get('containers')
            for container in containers or []:
                repository, tag = _image_tag(container.get('image'))
                if repository != SCHEDULER_IMAGE:
                    continue
                version = _version_of(tag)
                where = 'the image of Deployment %s/%s (%s)' % (namespace, name, container.get('image'))
                if version:
                    return RunningKai(version, where, {'deployment': name, 'image': container.get('image')})
                looked.append('%s: its tag is no KAI version with a profile' % where)
        if not looked:
            looked.append('Deployments of namespace %s: none runs a .../%s image' % (namespace, SCHEDULER_IMAGE))
    try:
        secrets = cluster.list('v1', 'Secret', namespace, label_selector='owner=helm,status=deployed')
    except ClusterError as exc:
        looked.append('Helm release Secrets of namespace %s: %s' % (namespace, exc))
        raise KaiVersionUnknown(looked)
    for secret in secrets:
        name = (secret.get('metadata') or {}).get('name')
        if ((secret.get('metadata') or {}).get('labels') or {}).get('name') != HELM_RELEASE:
            continue
        where = 'Helm release Secret %s/%s' % (namespace, name)
        try:
            chart = _release_chart(secret)
        except (TypeError, ValueError, OSError, EOFError) as exc:
            looked.append('%s: unreadable (%s)' % (where, exc))
            continue
        version = _version_of(chart.get('version'))
        if version:
            return RunningKai(version, '%s (chart %s %s)' % (where, chart.get('name'), chart.get('version')),
                              {'release_secret': name, 'chart_version': chart.get('version')})
        looked.append('%s: chart version %r is no KAI version with a profile' % (where, chart.get('version')))
    if not [item for item in looked if item.startswith('Helm release Secret ')]:
        looked.append('Helm release Secrets of namespace %s: no deployed release %s' % (namespace, HELM_RELEASE))
    raise KaiVersionUnknown(looked)


# ---------------------------------------------------------------- for the modules

def running_kai(cluster, record_path=None, namespace='kai-scheduler'):
    """The KAI that runs: the sim's record when record_path is given, else read through the API."""
    if record_path:
        return read_sim_record(record_path)
    return read_cluster(cluster, namespace)


def check_expected(expected, running):
    """Refuse an expected version (kai_version) that is not the one running, naming both."""
    if not expected:
        return
    try:
        same = kai_profiles.parse_version(expected) == kai_profiles.parse_version(running.version)
    except kai_profiles.KaiProfileError as exc:
        raise KaiVersionMismatch('kai_version: %s' % exc)
    if not same:
        raise KaiVersionMismatch(
            'kai_version is %s but the KAI-Scheduler that runs is %s (read from %s). Leave kai_version unset '
            '(the lab reads the version that runs) or provision %s. / kai_version 은 %s 인데 실행 중인 '
            'KAI-Scheduler 는 %s 입니다 (%s 에서 읽음). kai_version 을 비워 두거나 %s 버전으로 프로비저닝하세요.'
            % (expected, running.version, running.source, expected, expected, running.version, running.source,
               expected))


def for_module(module, cluster, **failure):
    """RunningKai for a module, checked against its kai_version; fails the module before any work otherwise
    (failure: more keys of that failure's result)."""
    params = module.params
    try:
        running = running_kai(cluster, params.get('kai_record'), params.get('kai_namespace') or 'kai-scheduler')
        check_expected(params.get('kai_version'), running)
    except KaiVersionUnknown as exc:
        module.fail_json(msg=str(exc), environment=[{'id': 'environment.kai_version', 'status': 'failed',
                                                     'looked_at': exc.looked_at}], **failure)
    except KaiVersionMismatch as exc:
        module.fail_json(msg=str(exc), **failure)
    return running
