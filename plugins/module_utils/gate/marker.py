# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the readiness gate keeps the fingerprint of its last full pass: a file only the lab can write.

Layer: the readiness gate; may use this host's files (host/files.py).

The gate skips its probes while the fingerprint of what a pass depended on
is the one it recorded. Anyone who may write a ConfigMap could forge a
fingerprint kept in the cluster; this one lives in the lab's private state
directory (the sim's state directory, mode 0700; /var/lib/gsb-kai-lab on a
VM, root's), as kai-lab-ready.json, written atomically with mode 0600. It is
believed only when the directory and the file are this user's (or root's)
and no one else can write either; otherwise the gate probes again.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import stat

from ansible_collections.gsb.kai_lab.plugins.module_utils.host.files import write_private

MARKER_FILE = 'kai-lab-ready.json'
MAX_BYTES = 4096
DIGEST = re.compile(r'^[0-9a-f]{64}$')


def marker_path(state_dir):
    return os.path.join(state_dir, MARKER_FILE)


def _ours(info):
    """Whether only this user (or root) can change what info describes."""
    return info.st_uid in (0, os.geteuid()) and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def read(state_dir):
    """(fingerprint, proven_at) of the last full pass, or (None, None): no marker, or one not to be believed
    (a link, not a file, someone else's or writable by others, in a directory others can change, malformed)."""
    if not state_dir:
        return None, None
    try:
        if not os.path.isdir(state_dir) or not _ours(os.stat(state_dir)):
            return None, None
        fd = os.open(marker_path(state_dir), os.O_RDONLY | getattr(os, 'O_NOFOLLOW', 0) | getattr(os, 'O_NONBLOCK', 0))
    except (IOError, OSError):
        return None, None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or not _ours(info) or info.st_size > MAX_BYTES:
            return None, None
        data = json.loads(os.read(fd, MAX_BYTES + 1).decode('utf-8'))
    except (IOError, OSError, ValueError):
        return None, None
    finally:
        os.close(fd)
    if not isinstance(data, dict) or not isinstance(data.get('fingerprint'), str) \
            or not DIGEST.match(data['fingerprint']):
        return None, None
    proven_at = data.get('proven_at')
    return data['fingerprint'], proven_at if isinstance(proven_at, str) else None


def write(state_dir, fingerprint, proven_at):
    """Keep the fingerprint: mode 0600 in state_dir (made 0700 when missing), whole or not at all."""
    text = json.dumps({'fingerprint': fingerprint, 'proven_at': proven_at}, sort_keys=True)
    return write_private(marker_path(state_dir), text)
