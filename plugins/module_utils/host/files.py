# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""This host's own files, written whole or not at all.

``write_private`` is how the lab keeps a file of its own (the readiness
gate's marker, the grader's record): a temporary file with a random name in
the same directory (no fixed ``.tmp`` name anyone could plant as a symlink),
mode 0600, synced, renamed over the target. Unlike learner/write.py's
``write_file`` it never hands the file to a directory's owner: what it keeps
stays root's when root writes it.

Layer: this host; imports no other layer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import tempfile


def write_private(path, text, mode=0o600, directory_mode=0o700):
    """Write text to path atomically; a missing directory is made with directory_mode. Returns path."""
    directory = os.path.dirname(path) or '.'
    if not os.path.isdir(directory):
        os.makedirs(directory, directory_mode)
    fd, temporary = tempfile.mkstemp(dir=directory, prefix='.%s.' % os.path.basename(path), suffix='.tmp')
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, 'w') as handle:
            fd = None
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        if fd is not None:
            os.close(fd)
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    return path
