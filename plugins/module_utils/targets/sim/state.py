# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is the running sim lab already as provision would make it?

A full provision ends by recording, in the sim's state directory, what it
made: each component's process (pid, start time, argv, binary and its
hash, port), the files it wrote (rendered kwok.yaml, configurations,
certificates, links), the API objects it applied (a hash of each, without
the fields the server writes), the hash its CRDs carry, the readiness
gate's fingerprint, and a digest of its inputs (the collection's files and
the lab's settings). The next provision takes one snapshot of the same
things (one list per kind from the API server) and compares: when its
inputs are the same, the roles would render the same argv and objects, so
equal snapshots mean the roles would change nothing.

snapshot() reads (through System, which tests replace); differences() is
pure: recorded snapshot, current snapshot -> what differs, first first.

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
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import comparable
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.read import LearnerFileError
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.write import write_file

try:
    from cryptography import x509
    HAS_CRYPTOGRAPHY = True
except ImportError:
    HAS_CRYPTOGRAPHY = False

RECORD_FILE = 'provisioned.json'
RECORD_VERSION = 1
UNCHANGED = 'up, unchanged'


# ---------------------------------------------------------------- inputs

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


def object_key(kind, namespace, name):
    return '%s %s' % (kind, '%s/%s' % (namespace, name) if namespace else name)


def list_path(api_version, kind):
    """The cluster-wide list path of a kind (its plural is its lower-cased name + s/es)."""
    plural = kind.lower() + ('es' if kind.lower().endswith('s') else 's')
    if plural.endswith('ys'):
        plural = plural[:-2] + 'ies'
    return '/%s/%s/%s' % ('api' if api_version == 'v1' else 'apis', api_version, plural)


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
    certs, objects, kinds, crds, fingerprint (see the module's options).
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
    """Objects by hash, CRDs by the hash they carry, the gate's fingerprint: one list per kind."""
    listed = {}

    def items(api_version, kind):
        if (api_version, kind) not in listed:
            listed[(api_version, kind)] = cluster.request('GET', list_path(api_version, kind)).get('items') or []
        return listed[(api_version, kind)]

    def meta(obj):
        return obj.get('metadata') or {}

    objects = {}
    for ref in spec.get('objects') or []:
        listed_now = items(ref['api_version'], ref['kind'])
        # A chart may name a namespace for a cluster-scoped object (KAI's
        # Config); the API server then keeps none.
        namespace = ref.get('namespace') if any(meta(o).get('namespace') for o in listed_now) else None
        found = [o for o in listed_now if meta(o).get('name') == ref['name'] and meta(o).get('namespace') == namespace]
        objects[object_key(ref['kind'], namespace, ref['name'])] = object_hash(found[0]) if found else None
    kinds = {}
    for ref in spec.get('kinds') or []:
        kinds[ref['kind']] = dict((object_key('', meta(o).get('namespace'), meta(o).get('name')).strip(),
                                   object_hash(o)) for o in items(ref['api_version'], ref['kind']))
    crds = {}
    crd_spec = spec.get('crds') or {}
    if crd_spec.get('names'):
        present = dict((meta(o).get('name'), o) for o in items('apiextensions.k8s.io/v1', 'CustomResourceDefinition'))
        for name in crd_spec['names']:
            crd = present.get(name)
            crds[name] = None if crd is None else {
                'hash': (meta(crd).get('annotations') or {}).get(crd_spec.get('annotation')),
                'established': any(c.get('type') == 'Established' and c.get('status') == 'True'
                                   for c in (crd.get('status') or {}).get('conditions') or [])}
    result = {'objects': objects, 'kinds': kinds, 'crds': crds}
    gate = spec.get('fingerprint')
    if gate:
        nodes = [n for n in items('v1', 'Node') if readiness_probes.node_gpus(n) > 0]
        identities = [_identity(path, system) for path in gate.get('pid_files') or []]
        result['fingerprint'] = {
            # The gate's own marker file in the state directory, not anything in the cluster.
            'proven': readiness_marker.read(gate.get('state_dir'))[0],
            'current': readiness_probes.fingerprint(identities, [], nodes, gate['image'])}
    return result


def _identity(path, system):
    """As readiness_probes.pid_identities, through system."""
    pid = system.pid(path)
    alive = pid is not None and system.cmdline(pid) is not None
    return '%s:%s:%s' % (path, pid, system.start_time(pid) if alive else 'dead')


# ---------------------------------------------------------------- the decision

def differences(recorded, now, renew_days, today, rendered=None):
    """What differs between the recorded snapshot and now, in the order checked;
    [] when the lab is as the last full provision left it. today: a UTC datetime.
    rendered: component name -> the arguments provision renders for it now.
    renew_days: for a certificate the record keeps without its own."""
    if not recorded:
        return ['no record of a completed full provision in the state directory']
    if recorded.get('version') != RECORD_VERSION:
        return ['the record of the last provision is of another format (version %s)' % recorded.get('version')]
    # What a changed setting does to a running component (its flag) says more
    # than that the settings changed, which it also implies: it comes first.
    found = rendered_differences(now.get('components') or [], rendered or {})
    if recorded.get('inputs') != now.get('inputs'):
        found.append('the lab\'s settings or the collection changed since the last full provision')
    found.extend(component_differences(recorded.get('components') or [], now.get('components') or []))
    # Before the files: an aged certificate is also a file that differs, and its end is the reason.
    found.extend(cert_differences(recorded.get('spec') or {}, now.get('certs') or {}, renew_days, today))
    found.extend(_mapping_differences('file', recorded.get('files'), now.get('files'), _describe_file))
    found.extend(_mapping_differences('link', recorded.get('links'), now.get('links'),
                                      lambda was, now_: 'points to %s, was %s' % (now_, was)))
    for path, real in sorted((now.get('dirs') or {}).items()):
        if not real:
            found.append('directory %s is missing (or is not a real directory)' % path)
    if now.get('api_error'):
        found.append('the lab\'s API server does not answer: %s' % now['api_error'])
        return found
    found.extend(_mapping_differences('CRD', recorded.get('crds'), now.get('crds'), _describe_crd))
    found.extend(_mapping_differences('object', recorded.get('objects'), now.get('objects'),
                                      lambda was, now_: 'differs from what the last provision applied'))
    for kind in sorted(set(recorded.get('kinds') or {}) | set(now.get('kinds') or {})):
        found.extend(_mapping_differences(kind, (recorded.get('kinds') or {}).get(kind),
                                          (now.get('kinds') or {}).get(kind),
                                          lambda was, now_: 'differs from what the last provision applied'))
    # The last full provision ended with a passing gate (the record is written
    # after it); on a solved lab the gate proves with a CPU pod and keeps its
    # older fingerprint, so what counts is the fingerprint the record saw.
    gate = now.get('fingerprint')
    if gate is not None and gate.get('current') != (recorded.get('fingerprint') or {}).get('current'):
        found.append('the readiness gate\'s fingerprint changed (a process, a node\'s GPUs or the image)')
    return found


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
    updated = dict(cache)
    updated.update(known_hashes(state))
    if updated == cache:
        return False
    try:
        write_file(os.path.dirname(path), os.path.basename(path), json.dumps(updated, indent=1, sort_keys=True) + '\n')
    except (IOError, OSError, ValueError, LearnerFileError):
        return False
    return True


def rendered_differences(now, rendered):
    """Running components whose arguments (argv without the program) are not what provision renders now."""
    found = []
    for component in now:
        args = rendered.get(component['name'])
        if args is None or not component.get('alive'):
            continue
        running = list((component.get('argv') or [])[1:])
        if running != list(args):
            found.append('%s: %s' % (component['name'], _flag_difference(running, list(args))))
    return found


def cert_differences(spec, certs, renew_days, today):
    """Certificates missing, or expiring within their renew days (the setting the role renews them by)."""
    found = []
    policy = dict((cert['path'], cert) for cert in spec.get('certs') or [] if isinstance(cert, dict))
    for path, end in sorted(certs.items()):
        cert = policy.get(path) or {}
        days = int(cert.get('renew_days', renew_days))
        if end is None:
            found.append('certificate %s is missing or unreadable' % path)
        elif _parse_time(end) <= today + datetime.timedelta(days=days):
            found.append('certificate %s expires %s, within %s (%s)'
                         % (path, end, cert.get('setting') or 'kai_lab_cert_renew_days', days))
    return found


def component_differences(recorded, now):
    was = dict((c['name'], c) for c in recorded)
    found = []
    for component in now:
        name = component['name']
        before = was.get(name)
        if before is None:
            found.append('%s: not in the record of the last provision' % name)
        elif not component.get('alive'):
            found.append('%s: not running (pid file %s)' % (name, component['pid_file']))
        elif (component.get('pid'), component.get('start')) != (before.get('pid'), before.get('start')):
            found.append('%s: restarted since the last provision (pid %s, was %s)'
                         % (name, component.get('pid'), before.get('pid')))
        elif component.get('argv') != before.get('argv'):
            found.append('%s: runs with other arguments than provision renders (%s)'
                         % (name, _first_argv_difference(before.get('argv') or [], component.get('argv') or [])))
        elif not component.get('binary_on_disk'):
            found.append('%s: runs a binary that is no longer %s on disk (rebuilt or replaced)'
                         % (name, component.get('binary')))
        elif component.get('binary_sha256') != before.get('binary_sha256'):
            found.append('%s: binary %s changed (sha256 %s, was %s)'
                         % (name, component.get('binary'), _short(component.get('binary_sha256')),
                            _short(before.get('binary_sha256'))))
        elif component.get('port') and not component.get('listening'):
            found.append('%s: not listening on 127.0.0.1:%s' % (name, component['port']))
    for name in sorted(set(was) - set(c['name'] for c in now)):
        found.append('%s: recorded by the last provision but no longer expected' % name)
    return found


def component_lines(now, found):
    """One line per component: "name: up, unchanged" or the first thing found about it."""
    lines = []
    for component in now.get('components') or []:
        prefix = component['name'] + ': '
        mine = [line for line in found if line.startswith(prefix)]
        lines.append(mine[0] if mine else prefix + UNCHANGED)
    return lines


def _first_argv_difference(was, now):
    for index in range(max(len(was), len(now))):
        old = was[index] if index < len(was) else None
        new = now[index] if index < len(now) else None
        if old != new:
            return 'argument %d is %s, provision renders %s' % (index, _quote(new), _quote(old))
    return 'same arguments'


def _flag_difference(running, rendered):
    """The first flag that differs, by name ("--name=value"; one of each), else the first argument by position."""
    def by_name(args):
        return dict((arg.split('=', 1)[0], arg) for arg in args)
    was, now = by_name(running), by_name(rendered)
    if len(was) == len(running) and len(now) == len(rendered):
        for arg in rendered:
            name = arg.split('=', 1)[0]
            if name not in was:
                return 'runs without %s, which provision renders' % arg
            if was[name] != arg:
                return 'runs %s, provision renders %s' % (was[name], arg)
        for arg in running:
            if arg.split('=', 1)[0] not in now:
                return 'runs %s, which provision no longer renders' % arg
    # Positions as in argv (0 is the program, the same on both sides here).
    return 'runs with other arguments than provision renders (%s)' % _first_argv_difference([None] + rendered,
                                                                                            [None] + running)


def _quote(value):
    return 'nothing' if value is None else repr(value)


def _short(digest):
    return (digest or 'none')[:12]


def _describe_file(was, now):
    if not now or now.get('sha256') is None:
        return 'is missing'
    if (was or {}).get('sha256') != now.get('sha256'):
        return 'content differs from what the last provision wrote'
    return 'mode is %s, provision sets %s' % (now.get('mode'), (was or {}).get('mode'))


def _describe_crd(was, now):
    if now is None:
        return 'is missing'
    if not now.get('established'):
        return 'is not Established'
    return 'carries chart hash %s, the last provision applied %s' % (_short(now.get('hash')), _short((was or {}).get('hash')))


def _mapping_differences(what, recorded, now, describe):
    recorded, now = recorded or {}, now or {}
    found = []
    for key in sorted(set(recorded) | set(now)):
        if key not in now or now[key] is None:
            found.append('%s %s: is missing' % (what, key))
        elif key not in recorded:
            found.append('%s %s: new since the last provision' % (what, key))
        elif recorded[key] != now[key]:
            found.append('%s %s: %s' % (what, key, 'is missing' if now[key] is None else describe(recorded[key], now[key])))
    return found


def _parse_time(text):
    return datetime.datetime.strptime(text, '%Y-%m-%dT%H:%M:%SZ').replace(tzinfo=_UTC)


def utc_now():
    return datetime.datetime.now(_UTC)


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
