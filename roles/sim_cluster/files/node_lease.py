#!/usr/bin/env python3
"""Make sure the running kwok controller holds the lab node's lease.

Usage: node_lease.py SPEC_JSON
SPEC: {"kubectl": [kubectl, "--kubeconfig", path], "node": name,
       "pid_file": the kwok controller's pid file, "log_file": its log,
       "timeout": seconds}

kwok plays pods only on the nodes whose Lease (kube-node-lease/<node>) it
holds. A restarted kwok controller is a new holder: it takes the lease only
once the stopped controller's lease has expired (up to its
--node-lease-duration-seconds; with kwokctl's 200 s the lab's pods sat bound
but Pending for 3 min 24 s after a restart). A lease last renewed before the
running controller was started (its pid file's time) was left by a stopped
one: it is deleted, and the running controller creates its own at its next
sync. Prints "changed" when a lease was deleted, else "unchanged"; fails
naming the node and showing kwok's log when no live lease appears in time.
"""

import datetime
import json
import os
import subprocess
import sys
import time

from wait_ready import alive, tail


def run(argv, timeout=10):
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 1, '', '%s: no answer within %s s' % (' '.join(argv[-4:]), timeout)
    return proc.returncode, proc.stdout.decode('utf-8', 'replace'), proc.stderr.decode('utf-8', 'replace')


def renew_time(lease):
    """The lease's spec.renewTime as seconds since the epoch, or None."""
    value = ((lease or {}).get('spec') or {}).get('renewTime')
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.datetime.strptime(value.rstrip('Z').split('.')[0], '%Y-%m-%dT%H:%M:%S')
    except ValueError:
        return None
    fraction = value.rstrip('Z').partition('.')[2]
    seconds = parsed.replace(tzinfo=datetime.timezone.utc).timestamp()
    return seconds + (float('0.' + fraction) if fraction.isdigit() else 0.0)


def stale(lease, started):
    """True when the lease was last renewed before the running controller started."""
    renewed = renew_time(lease)
    return renewed is None or renewed < started


def main():
    spec = json.loads(sys.argv[1])
    node, kubectl = spec['node'], list(spec['kubectl'])
    timeout = float(spec.get('timeout', 60))
    deadline = time.time() + timeout
    lease_args = ['-n', 'kube-node-lease', 'lease', node]
    deleted = []
    last = 'no lease yet'
    while True:
        if not alive(spec['pid_file']):
            print('the kwok controller is not running (%s): last lines of %s:\n%s'
                  % (spec['pid_file'], spec['log_file'], tail(spec['log_file'])))
            return 1
        started = os.stat(spec['pid_file']).st_mtime
        code, out, err = run(kubectl + ['get'] + lease_args + ['-o', 'json', '--ignore-not-found'])
        if code != 0:
            last = err.strip() or 'kubectl get lease failed'
        elif out.strip():
            lease = json.loads(out)
            uid = (lease.get('metadata') or {}).get('uid')
            holder = (lease.get('spec') or {}).get('holderIdentity')
            if not stale(lease, started):
                print('changed' if deleted else 'unchanged')
                print('node %s: lease held by %s%s' % (node, holder, ', a lease of a stopped kwok controller (%s) removed'
                                                      % ', '.join(deleted) if deleted else ''))
                return 0
            if uid not in [d.partition(' ')[2] for d in deleted]:
                code, _, err = run(kubectl + ['delete'] + lease_args + ['--ignore-not-found', '--wait=false'])
                if code == 0:
                    deleted.append('%s %s' % (holder, uid))
            last = 'lease held by %s, last renewed before the kwok controller started' % holder
        if time.time() > deadline:
            print('kwok does not manage node %s within %s s (%s), so the lab\'s pods would stay Pending: '
                  'last lines of %s:\n%s' % (node, int(timeout), last, spec['log_file'], tail(spec['log_file'])))
            return 1
        time.sleep(0.5)


if __name__ == '__main__':
    sys.exit(main())
