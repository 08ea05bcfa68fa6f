# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which of the lab's images a k3s VM holds as pinned (roles/k3s/tasks/images.yml),
from one entry of `k3s crictl images -o json` (repoTags, repoDigests), and the
wait for k3s's airgap import (action gsb.kai_lab.k3s_images_wait).

Layer: the targets (k3s); may use the cluster client, the readiness gate, this host's processes, the KAI domain, the learner's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import fill
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s.progress import WAIT_ARGS


def repository(reference):
    """docker.io/library/ubuntu:24.04 -> docker.io/library/ubuntu (a registry port stays)."""
    return re.sub(r':[^:/]+$', '', reference.split('@', 1)[0])


def exact_tags(image, digests):
    """The tags of this image whose pinned digest (digests: tag -> sha256:...) is its content."""
    held = set(image.get('repoDigests') or [])
    return [tag for tag in image.get('repoTags') or []
            if tag in digests and '%s@%s' % (repository(tag), digests[tag]) in held]


def aliases_held(tags, aliases):
    """The names (aliases: name -> fixed tag) already on the same image as their fixed tag."""
    tags = set(tags or [])
    return [name for name, fixed in aliases.items() if name in tags and fixed in tags]


# ---------------------------------------------------------------- waiting for k3s's airgap import
#
# k3s imports the archives of its images directory one by one after it
# starts, and says its import is done when its work queue is empty, that is
# when the last archive was taken off the queue, not when it was imported
# (k3s's pkg/agent/containerd/watcher.go): the node is Ready while the largest
# archive still imports. The role waits on what containerd lists instead,
# until every image the lab needs is there (action gsb.kai_lab.k3s_images_wait).

JOURNAL_MARK = '--- k3s journal ---'
# One command on the VM each tick ($1: the k3s binary): k3s's image list as
# JSON, then what the running k3s (this start of its unit) logged of its
# imports: which archive it imports, which it imported, which failed.
STATUS_SCRIPT = '\n'.join((
    '"$1" crictl images -o json 2>&1 || true',
    'echo "%s"' % JOURNAL_MARK,
    'journalctl --no-pager -o cat -u k3s _SYSTEMD_INVOCATION_ID="$(systemctl show -p InvocationID --value k3s)" '
    '2>/dev/null | grep -E "Importing images from|Imported images from|failed to import" | tail -n 60',
))
# k3s's journal lines are logrus's text: msg="Importing images from <path>" (the quote is not the name's).
_IMPORTING = re.compile(r'Importing images from ([^\s"]+)')
_IMPORTED = re.compile(r'Imported images from ([^\s"]+) in ([^\s"]+)')
_FAILED = re.compile(r'failed to import ([^\s"]+?):? (.*?)"?$')


def import_status(output, needed):
    """What STATUS_SCRIPT's output says of the images needed: a dict with
    present (how many of needed are listed), missing (needed, not listed),
    importing (the archive k3s imports now, or ''), imported (archives done),
    failed ((archive, k3s's error) each) and error (crictl's, when it did
    not list: k3s not serving yet)."""
    listing, dummy, journal = (output or '').partition(JOURNAL_MARK)
    status = {'present': 0, 'missing': list(needed), 'importing': '', 'imported': [], 'failed': [], 'error': ''}
    try:
        images = json.loads(listing).get('images') or []
        tags = set(tag for image in images for tag in image.get('repoTags') or [])
        status['missing'] = [image for image in needed if image not in tags]
        status['present'] = len(needed) - len(status['missing'])
    except (ValueError, AttributeError):
        status['error'] = ' '.join(listing.split())[:300] or 'no answer'
    started = []
    for line in journal.splitlines():
        failed = _FAILED.search(line)
        imported = _IMPORTED.search(line)
        importing = _IMPORTING.search(line)
        if failed:
            archive = os.path.basename(failed.group(1))
            status['failed'].append((archive, ' '.join(failed.group(2).split())[:300]))
            started = [name for name in started if name != archive]
        elif imported:
            archive = os.path.basename(imported.group(1))
            status['imported'].append(archive)
            started = [name for name in started if name != archive]
        elif importing:
            started.append(os.path.basename(importing.group(1)))
    status['importing'] = started[-1] if started else ''
    return status


def _short(names, limit=4):
    names = list(names)
    return ', '.join(names[:limit]) + (' and %d more' % (len(names) - limit) if len(names) > limit else '')


def import_line(status, needed, elapsed, timeout):
    """One progress line a person reads."""
    if status['error']:
        return 'k3s lists no images yet (%s); %d s of at most %d s' % (status['error'][:120], elapsed, timeout)
    what = 'k3s has imported %d of the %d images the lab needs' % (status['present'], len(needed))
    if status['importing']:
        done = len(status['imported'])
        what += ' (importing %s now, %d archive%s done)' % (status['importing'], done, '' if done == 1 else 's')
    if status['missing']:
        what += '; waiting for %s' % _short(status['missing'])
    return '%s; %d s of at most %d s' % (what, elapsed, timeout)


def import_failure(status, elapsed, images_dir):
    """Why the wait ended without every image, in English and Korean: the images
    missing, the archive k3s failed on (its error) or still imports."""
    missing = ', '.join(status['missing'])
    if status['failed']:
        archive, error = status['failed'][-1]
        why = 'k3s failed to import %s/%s: %s' % (images_dir, archive, error)
        why_ko = fill('k3s 가 {archive:를} 가져오지 못했습니다: {error}', archive='%s/%s' % (images_dir, archive), error=error)
    elif status['importing']:
        why = 'k3s was still importing %s after %d s' % (status['importing'], elapsed)
        why_ko = fill('k3s 가 {elapsed} 초 뒤에도 {archive:를} 가져오는 중이었습니다', elapsed=elapsed,
                      archive=status['importing'])
    elif status['error']:
        why = 'k3s did not list its images (%s)' % status['error']
        why_ko = 'k3s 가 이미지 목록을 주지 않았습니다 (%s)' % status['error']
    else:
        why = 'no archive in %s holds them' % images_dir
        why_ko = '%s 의 어느 아카이브에도 없습니다' % images_dir
    english = ('Airgap: k3s has not imported %s within %d s: %s. Put an archive of each image into '
               '<k3s_airgap_dir>/images/ (for example `docker save IMAGE | zstd > NAME.tar.zst`), see '
               '`journalctl -u k3s` on the VM, and provision again (k3s_airgap_import_timeout sets the wait).'
               % (missing, elapsed, why))
    korean = fill('에어갭: k3s 가 {elapsed} 초 안에 {missing:를} 가져오지 못했습니다: {why}. 각 이미지의 아카이브를 '
                  '<k3s_airgap_dir>/images/ 에 넣고 VM 에서 `journalctl -u k3s` 를 확인한 뒤 다시 프로비저닝하세요.',
                  elapsed=elapsed, missing=missing, why=why_ko)
    return '%s / %s' % (english, korean)


# The options of gsb.kai_lab.k3s_images_wait, shared by its action plugin (the
# work, on the controller) and its module file (the documentation).
WAIT_ARGUMENT_SPEC = dict(
    needed=dict(type='list', elements='str', required=True),
    images_dir=dict(type='path', default='/var/lib/rancher/k3s/agent/images'),
    timeout=dict(type='int', default=900),
)
WAIT_ARGUMENT_SPEC.update(WAIT_ARGS)
