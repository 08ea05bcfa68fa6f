# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the sim lab is now: the snapshot a full provision records and the next one compares.

A full provision ends by recording, in the sim's state directory, what it
made: each component's process (pid, start time, argv, binary and its
hash, port), the files it wrote (rendered kwok.yaml, configurations,
certificates, links), the API objects it applied (a hash of each, without
the fields the server writes), the hash its CRDs carry, the readiness
gate's fingerprint, and a digest of its inputs (the collection's files and
the lab's settings). The next provision takes one snapshot of the same
things (one list per kind and namespace from the API server, only in the
namespaces named: targets/sim/reads.py) and compares: when its
inputs are the same, the roles would render the same argv and objects, so
equal snapshots mean the roles would change nothing.

snapshot() reads (through System, which tests replace). The record that
keeps a snapshot, and the binaries' hash cache, are in
targets/sim/provision_record.py; what differs between the recorded
snapshot and the current one, in targets/sim/differences.py.

Layer: the targets (sim); may use the cluster client, the readiness gate, this host's processes, the KAI domain, the learner's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import hashlib
import json
import os
import socket
import stat

from ansible_collections.gsb.kai_lab.plugins.module_utils.host import process
from ansible_collections.gsb.kai_lab.plugins.module_utils.gate import marker as readiness_marker
from ansible_collections.gsb.kai_lab.plugins.module_utils.gate import probes as readiness_probes
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import comparable
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim import reads as sim_reads

try:
    from cryptography import x509
    HAS_CRYPTOGRAPHY = True
except ImportError:
    HAS_CRYPTOGRAPHY = False


# ---------------------------------------------------------------- hashes, keys, list paths

def file_sha256(path):
    try:
        digest = hashlib.sha256()
        with open(path, 'rb') as handle:
            for block in iter(lambda: handle.read(1 << 20), b''):
                digest.update(block)
        return digest.hexdigest().encode('ascii')
    except (IOError, OSError):
        return None


def object_hash(obj):
    """sha256 of an API object without what the server writes on its own (status, versions, managed fields)."""
    return hashlib.sha256(json.dumps(comparable(obj), sort_keys=True).encode('utf-8')).hexdigest()


def spec_hash(obj):
    """sha256 of an object's whole spec (a CRD's schema with its validation rules)."""
    return hashlib.sha256(json.dumps(obj.get('spec'), sort_keys=True).encode('utf-8')).hexdigest()


def tree_sha256(top):
    """sha256 of every file under top (name and content; not Python's compiled files), or None without top."""
    if not os.path.isdir(top) or os.path.islink(top):
        return None
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d != '__pycache__')
        for name in sorted(f for f in files if not f.endswith('.pyc')):
            path = os.path.join(root, name)
            digest.update(os.path.relpath(path, top).encode('utf-8') + b'\0')
            digest.update(file_sha256(path) or b'unreadable')
    return digest.hexdigest()


def object_key(kind, namespace, name):
    return '%s %s' % (kind, '%s/%s' % (namespace, name) if namespace else name)


# The list path of a kind (targets/sim/reads.py), as the record's lists are kept by (tests/unit/fixtures/sim-provision).
list_path = sim_reads.list_path


# ---------------------------------------------------------------- reading the machine

class System(object):
    """What snapshot() reads of this machine; tests give recorded answers instead.

    known_hashes: {path: {'stat': file_stat(path), 'sha256': ...}} from the
    last record. A binary whose device, inode, size, mtime and ctime are
    the recorded ones is not read again (0.7 s for the sim's 700 MB of
    binaries): a write changes its ctime, which no user can set back.
    """

    def __init__(self, known_hashes=None):
        self.known_hashes = known_hashes or {}

    def pid(self, pid_file):
        return process.read_pid(pid_file)

    def cmdline(self, pid):
        return process.process_cmdline(pid)

    def start_time(self, pid):
        return process.start_time(pid)

    def exe_identity(self, pid):
        """(device, inode) of the file the process runs, or None."""
        try:
            info = os.stat('/proc/%d/exe' % pid)
            return [info.st_dev, info.st_ino]
        except (IOError, OSError):
            return None

    def file_identity(self, path):
        try:
            info = os.stat(path)
            return [info.st_dev, info.st_ino]
        except (IOError, OSError):
            return None

    def file_stat(self, path):
        try:
            info = os.stat(path)
        except (IOError, OSError):
            return None
        return [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]

    def sha256(self, path):
        known = self.known_hashes.get(path) or {}
        if known.get('sha256') and known.get('stat') and known['stat'] == self.file_stat(path):
            return known['sha256']
        value = file_sha256(path)
        return value.decode('ascii') if value else None

    def mode(self, path):
        try:
            return '%04o' % stat.S_IMODE(os.stat(path).st_mode)
        except (IOError, OSError):
            return None

    def listening(self, port):
        try:
            socket.create_connection(('127.0.0.1', int(port)), timeout=1).close()
            return True
        except (IOError, OSError, ValueError):
            return False

    def readlink(self, path):
        try:
            return os.readlink(path)
        except (IOError, OSError):
            return None

    def tree_sha256(self, path):
        return tree_sha256(path)

    def is_real_dir(self, path):
        return os.path.isdir(path) and not os.path.islink(path)

    def cert_not_after(self, path):
        """The certificate's end of validity as an ISO time (UTC), or None."""
        if not HAS_CRYPTOGRAPHY:
            return None
        try:
            with open(path, 'rb') as handle:
                cert = x509.load_pem_x509_certificate(handle.read())
        except (IOError, OSError, ValueError):
            return None
        end = getattr(cert, 'not_valid_after_utc', None) or cert.not_valid_after.replace(tzinfo=_UTC)
        return end.strftime('%Y-%m-%dT%H:%M:%SZ')


_UTC = datetime.timezone.utc


# ---------------------------------------------------------------- snapshot

def snapshot(spec, cluster, system=None):
    """What the things spec names are now. spec: components, files, links, dirs,
    certs, trees, objects, kinds, crds, fingerprint (see the module's options).
    Raises ClusterError when the API server does not answer."""
    system = system or System()
    result = machine_state(spec, system)
    result.update(cluster_state(spec, cluster, system))
    return result


def machine_state(spec, system=None):
    """The part of snapshot() read from this machine: processes and files."""
    system = system or System()
    result = {'components': [component_state(c, system) for c in spec.get('components') or []]}
    result['files'] = dict((path, {'sha256': system.sha256(path), 'mode': system.mode(path)})
                           for path in spec.get('files') or [])
    result['links'] = dict((path, system.readlink(path)) for path in spec.get('links') or [])
    result['dirs'] = dict((path, system.is_real_dir(path)) for path in spec.get('dirs') or [])
    result['trees'] = dict((path, system.tree_sha256(path)) for path in spec.get('trees') or [])
    result['certs'] = dict((path, system.cert_not_after(path)) for path in cert_paths(spec))
    return result


def cert_paths(spec):
    """The certificates' paths (a record written before certs carried their renew days keeps plain paths)."""
    return [cert['path'] if isinstance(cert, dict) else cert for cert in spec.get('certs') or []]


def component_state(component, system):
    state = {'name': component['name'], 'pid_file': component['pid_file'], 'port': component.get('port')}
    pid = system.pid(component['pid_file'])
    argv = system.cmdline(pid) if pid else None
    state.update(pid=pid, alive=argv is not None, argv=argv,
                 start=system.start_time(pid) if argv is not None else None)
    if argv is None:
        return state
    exe = component.get('binary') or argv[0]
    identity = system.exe_identity(pid)
    state.update(binary=exe, binary_on_disk=identity is not None and identity == system.file_identity(exe),
                 binary_stat=system.file_stat(exe), binary_sha256=system.sha256(exe))
    if component.get('port'):
        state['listening'] = system.listening(component['port'])
    return state


def cluster_state(spec, cluster, system):
    """Objects by hash, CRDs by the hash they carry, the gate's fingerprint: one list per kind (and namespace,
    for a namespaced kind: only the namespaces named), an object that cannot be read kept as unreadable and why
    (targets/sim/reads.py)."""
    reader = sim_reads.Reader(cluster)

    def meta(obj):
        return obj.get('metadata') or {}

    def value(obj, why):
        return sim_reads.UNREADABLE + why if why else (object_hash(obj) if obj is not None else None)

    objects = {}
    for ref in spec.get('objects') or []:
        namespace, obj, why = reader.named(ref['api_version'], ref['kind'], ref['name'], ref.get('namespace'))
        objects[object_key(ref['kind'], namespace, ref['name'])] = value(obj, why)
    kinds = {}
    for ref in spec.get('kinds') or []:
        found = kinds.setdefault(ref['kind'], {})
        for namespace in ref.get('namespaces') or [None]:
            items, unreadable = reader.every(ref['api_version'], ref['kind'], namespace)
            for obj in items:
                found[object_key('', meta(obj).get('namespace'), meta(obj).get('name')).strip()] = object_hash(obj)
            for name, why in unreadable.items():
                found[object_key('', namespace, name).strip()] = value(None, why)
    crds = {}
    crd_spec = spec.get('crds') or {}
    for name in crd_spec.get('names') or []:
        crd, why = reader.named('apiextensions.k8s.io/v1', 'CustomResourceDefinition', name)[1:]
        crds[name] = {'unreadable': why} if why else None if crd is None else {
            'hash': (meta(crd).get('annotations') or {}).get(crd_spec.get('annotation')),
            'spec_sha256': spec_hash(crd),
            'established': any(c.get('type') == 'Established' and c.get('status') == 'True'
                               for c in (crd.get('status') or {}).get('conditions') or [])}
    result = {'objects': objects, 'kinds': kinds, 'crds': crds}
    gate = spec.get('fingerprint')
    if gate:
        nodes = [n for n in reader.every('v1', 'Node')[0] if kai_gpu.node_gpus(n) > 0]
        identities = [_identity(path, system) for path in gate.get('pid_files') or []]
        result['fingerprint'] = {
            # The gate's own marker file in the state directory, not anything in the cluster.
            'proven': readiness_marker.read(gate.get('state_dir'))[0],
            'current': readiness_probes.fingerprint(identities, [], nodes, gate['image'])}
    return result


def unreadable(state):
    """["<kind> <name>: why"] of each object a snapshot could not read."""
    found = []
    for key, value in sorted((state.get('objects') or {}).items()):
        if sim_reads.unreadable_reason(value):
            found.append('%s: %s' % (key, sim_reads.unreadable_reason(value)))
    for kind, values in sorted((state.get('kinds') or {}).items()):
        for key, value in sorted(values.items()):
            if sim_reads.unreadable_reason(value):
                found.append('%s %s: %s' % (kind, key, sim_reads.unreadable_reason(value)))
    for name, value in sorted((state.get('crds') or {}).items()):
        if sim_reads.unreadable_reason(value):
            found.append('CustomResourceDefinition %s: %s' % (name, sim_reads.unreadable_reason(value)))
    return found


def _identity(path, system):
    """As readiness_probes.pid_identities, through system."""
    pid = system.pid(path)
    alive = pid is not None and system.cmdline(pid) is not None
    return '%s:%s:%s' % (path, pid, system.start_time(pid) if alive else 'dead')
