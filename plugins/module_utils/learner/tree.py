# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A directory tree in a learner's home, looked at and removed by root through directory descriptors.

Each directory is opened relative to the one holding it with
``O_NOFOLLOW|O_DIRECTORY``, each entry looked at with ``lstat`` and removed
by its name in that descriptor: a link is removed as a link and never
followed, and a name the learner swaps for a link meanwhile fails to open
(learner/home_file.py's prune removes kubectl's cache in the learner's
``~/.kube`` with it).

Layer: the learner's files; imports no other layer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

# How a directory is opened here and in learner/home_file.py: never through a link.
DIRECTORY = os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0) | getattr(os, 'O_NOFOLLOW', 0) | getattr(os, 'O_CLOEXEC', 0)
# How many entries a tree may hold before it is left alone (a bounded walk).
MAX_ENTRIES = 20000


def removable(parent_fd, name, uid, count=None):
    """Whether name in parent_fd is a directory tree of uid's (directories, files, links) of bounded size."""
    count = [0] if count is None else count
    try:
        fd = os.open(name, DIRECTORY, dir_fd=parent_fd)
    except OSError:
        return False
    try:
        if os.fstat(fd).st_uid != uid:
            return False
        for entry in os.listdir(fd):
            count[0] += 1
            if count[0] > MAX_ENTRIES:
                return False
            info = os.stat(entry, dir_fd=fd, follow_symlinks=False)
            if info.st_uid != uid:
                return False
            if stat.S_ISDIR(info.st_mode):
                if not removable(fd, entry, uid, count):
                    return False
            elif not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
                return False
        return True
    finally:
        os.close(fd)


def remove(parent_fd, name):
    """Remove the tree name in parent_fd, each directory opened without following a link, each entry by name in it."""
    fd = os.open(name, DIRECTORY, dir_fd=parent_fd)
    try:
        for entry in os.listdir(fd):
            info = os.stat(entry, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                remove(fd, entry)
            else:
                os.unlink(entry, dir_fd=fd)  # a link is removed, never followed
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent_fd)
