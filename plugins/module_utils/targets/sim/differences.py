# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What differs between the recorded snapshot of the sim lab and the one taken now.

Pure: the record of the last full provision (targets/sim/provision_record.py),
the snapshot now (targets/sim/state.py), the arguments provision renders now
and today -> what differs, one line each, in the order checked; [] when the
lab is as the last full provision left it, so the roles would change nothing.

Layer: the targets (sim); may use the cluster client, the readiness gate, this host's processes, the KAI domain, the learner's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime

from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim.provision_record import RECORD_VERSION
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim.reads import unreadable_reason

UNCHANGED = 'up, unchanged'
_UTC = datetime.timezone.utc


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
    found.extend(_mapping_differences('installed tree', recorded.get('trees'), now.get('trees'),
                                      lambda was, now_: 'content differs from what the last provision installed'))
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


def crds_as_recorded(recorded, now):
    """The chart hash the CRDs carry when each CRD of the record was compared with the lab now and is as the last
    full provision left it (its whole spec, chart hash, Established) and all carry the same; else ''. The full
    path need not send KAI's CRDs again when the chart's hash is that one (issue 42)."""
    if not recorded or recorded.get('version') != RECORD_VERSION or now.get('api_error') or not recorded.get('crds'):
        return ''
    if _mapping_differences('CRD', recorded.get('crds'), now.get('crds'), _describe_crd):
        return ''
    hashes = set((crd or {}).get('hash') for crd in recorded['crds'].values())
    return hashes.pop() if len(hashes) == 1 and None not in hashes else ''


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
    if (was or {}).get('hash') == now.get('hash'):
        return 'spec differs from what the last provision applied (edited since: a schema or validation rule)'
    return 'carries chart hash %s, the last provision applied %s' % (_short(now.get('hash')), _short((was or {}).get('hash')))


def _mapping_differences(what, recorded, now, describe):
    recorded, now = recorded or {}, now or {}
    found = []
    for key in sorted(set(recorded) | set(now)):
        # Whatever the record holds: the full path runs, naming it, until it is deleted or mended.
        if unreadable_reason(now.get(key)):
            found.append('%s %s: cannot be read (%s)' % (what, key, unreadable_reason(now[key])))
        elif key not in now or now[key] is None:
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
