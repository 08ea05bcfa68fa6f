# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The record of the last full provision of the sim lab, and the binaries' hash cache.

A full provision ends by writing the record (provisioned.json in the sim's
state directory): the snapshot of targets/sim/state.py, with the record's
format version, the digest of its inputs (inputs_digest: the lab's settings
and the collection's files) and its spec (normalize_spec). The next
provision compares its own snapshot with it (targets/sim/differences.py);
when anything differs the record is removed, so only a provision that
completes records again.

Layer: the targets (sim); may use the cluster client, the readiness gate, this host's processes, the KAI domain, the learner's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.read import LearnerFileError
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.write import write_file
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim.state import file_sha256

RECORD_FILE = 'provisioned.json'
# 2: CRDs by their whole spec, installed trees (kai-lab's code).
RECORD_VERSION = 2


# ---------------------------------------------------------------- what the record keeps besides the snapshot

def inputs_digest(settings, paths):
    """sha256 of the settings (JSON) and of every file under paths (name and content)."""
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode('utf-8'))
    for top in paths:
        for root, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != '__pycache__')
            for name in sorted(files):
                if name.endswith('.pyc'):
                    continue
                path = os.path.join(root, name)
                digest.update(os.path.relpath(path, top).encode('utf-8') + b'\0')
                digest.update(file_sha256(path) or 'missing')
    return digest.hexdigest()


def normalize_spec(spec):
    """The spec as the record keeps it: components one by one, object references only.

    components: dicts with pid_dir, names and ports (name -> port), or with
    name, pid_file and port. certs: paths, or dicts with path, renew_days and
    setting (the variable the role renews it by). objects: references
    (api_version, kind, name, namespace) or the applied objects themselves.
    """
    spec = dict(spec or {})
    components = []
    for group in spec.get('components') or []:
        if 'names' in group:
            ports = group.get('ports') or {}
            for name in group['names']:
                components.append({'name': name, 'pid_file': os.path.join(group['pid_dir'], name + '.pid'),
                                   'port': int(ports[name]) if ports.get(name) else None})
        else:
            components.append({'name': group['name'], 'pid_file': group['pid_file'],
                               'port': int(group['port']) if group.get('port') else None})
    spec['components'] = components
    spec['certs'] = [cert if isinstance(cert, dict) else {'path': cert} for cert in spec.get('certs') or []]
    refs = []
    for obj in spec.get('objects') or []:
        if 'metadata' in obj:
            metadata = obj.get('metadata') or {}
            obj = {'api_version': obj.get('apiVersion'), 'kind': obj.get('kind'), 'name': metadata.get('name'),
                   'namespace': metadata.get('namespace')}
        refs.append({'api_version': obj['api_version'], 'kind': obj['kind'], 'name': obj['name'],
                     'namespace': obj.get('namespace') or None})
    spec['objects'] = refs
    return spec


# ---------------------------------------------------------------- the binaries' hashes

def known_hashes(record, cache=None):
    """The binaries' hashes a record (and the hash cache) holds, with the file stat they were taken at
    (System's known_hashes). The record's win: it is the newer."""
    known = dict((path, entry) for path, entry in (cache or {}).items()
                 if isinstance(entry, dict) and entry.get('stat') and entry.get('sha256'))
    for component in (record or {}).get('components') or []:
        if component.get('binary') and component.get('binary_stat') and component.get('binary_sha256'):
            known[component['binary']] = {'stat': component['binary_stat'], 'sha256': component['binary_sha256']}
    return known


# A teardown removes the record with the state directory, not the binaries:
# their hashes are kept beside the build cache, so a provision from empty
# does not read 700 MB again. Stat-keyed like the record's.
def read_hash_cache(path):
    """The hash cache at path: {binary: {'stat': [...], 'sha256': ...}}; {} when missing or unreadable."""
    try:
        with open(path) as handle:
            cache = json.load(handle)
    except (IOError, OSError, ValueError):
        return {}
    return cache if isinstance(cache, dict) else {}


def write_hash_cache(path, cache, state):
    """Add the binaries of state (a snapshot) to cache and write it when it changed; True when written.
    A cache that cannot be written is only slower next time."""
    return write_hashes(path, cache, known_hashes(state))


def write_hashes(path, cache, hashes):
    """Add hashes ({binary: {'stat': [...], 'sha256': ...}}) to cache and write it when it changed; True when
    written (targets/sim/binaries.py adds the binaries it checked)."""
    updated = dict(cache)
    updated.update((binary, entry) for binary, entry in hashes.items()
                   if isinstance(entry, dict) and entry.get('stat') and entry.get('sha256'))
    if updated == cache:
        return False
    try:
        write_file(os.path.dirname(path), os.path.basename(path), json.dumps(updated, indent=1, sort_keys=True) + '\n')
    except (IOError, OSError, ValueError, LearnerFileError):
        return False
    return True


# ---------------------------------------------------------------- the record

def record_path(state_dir):
    return os.path.join(state_dir, RECORD_FILE)


def read_record(state_dir):
    try:
        with open(record_path(state_dir)) as handle:
            data = json.load(handle)
    except (IOError, OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_record(state_dir, record):
    """Atomically, private (it names the lab's files and processes): learner_write's one safe write."""
    write_file(state_dir, RECORD_FILE, json.dumps(record, indent=1, sort_keys=True))


def forget_record(state_dir):
    """Drop the record: only a provision that completes records again."""
    try:
        os.unlink(record_path(state_dir))
        return True
    except (IOError, OSError):
        return False
