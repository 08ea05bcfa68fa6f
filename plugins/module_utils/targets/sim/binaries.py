# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sim's built binaries checked before they are reused: whole, as built, and private.

roles/sim_binaries builds each module's binaries into an output directory
of the cache and reuses a directory that holds its marker (.complete) and
every binary. A binary cut short (a disk that filled, a copy stopped) or
changed since kept its name there and was run as root. Now files/build.sh
writes the sha256 of each binary it built (MANIFEST, sha256sum's format),
and before a build is reused each binary is checked:

- an ELF file whose headers, segments and sections lie within it (a binary
  cut short ends before them; Go's linker ends one with its .shstrtab),
  which needs no manifest;
- with the sha256 the build recorded: the file's sha256 is read only when
  its stat (device, inode, size, mtime, ctime) is not the one the binaries'
  hash cache (binary-sha256.json, shared with targets/sim/state.py) holds
  for it, so an unchanged cache costs a stat per binary;
- owned by the user who runs the lab and not writable by group or others,
  nor its directory: root runs these.

A build with a binary cut short or changed is made missing (its markers
removed, and that binary), so the role builds it again. A build made before
manifests gets one written from its binaries once they are whole. A binary
others may write is no build problem: it fails, naming the fix.

Layer: the targets (sim); may use the cluster client, the readiness gate, this host's processes, the KAI domain, the learner's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat
import struct

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.write import write_file
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim.state import System

MANIFEST = '.sha256'
MARKERS = ('.complete', '.built')


class NotPrivate(Exception):
    """A binary, or its directory, others than the lab's user may change."""


# An ELF section that holds no bytes of the file (.bss): its size is not the file's.
_NOBITS = 8


def _table(handle, offset, count, size):
    """count entries of size bytes at offset ([] when the table is empty)."""
    if not count or not size:
        return []
    handle.seek(offset)
    data = handle.read(count * size)
    return [data[i * size:(i + 1) * size] for i in range(len(data) // size)]


def elf_problem(path):
    """Why path is no whole ELF file, or None: its header, program and section headers, every segment and every
    section with bytes in the file must lie within it (Go's linker ends a binary with its .shstrtab)."""
    try:
        size = os.path.getsize(path)
        with open(path, 'rb') as handle:
            head = handle.read(64)
            if len(head) < 52 or head[:4] != b'\x7fELF' or head[4:5] not in (b'\x01', b'\x02') \
                    or head[5:6] not in (b'\x01', b'\x02'):
                return 'is no executable (no ELF header; %d bytes)' % size
            wide = head[4:5] == b'\x02'
            order = '<' if head[5:6] == b'\x01' else '>'
            if wide and len(head) < 64:
                return 'is cut short (%d bytes, less than its ELF header)' % size
            # Offsets in the ELF header, and in a program and a section header: (64-bit, 32-bit).
            word = 'Q' if wide else 'I'
            phoff, shoff = struct.unpack_from(order + word * 2, head, 0x20 if wide else 0x1C)
            phentsize, phnum, shentsize, shnum = struct.unpack_from(order + 'HHHH', head, 0x36 if wide else 0x2A)
            needed = max(phoff + phnum * phentsize, shoff + shnum * shentsize)
            if needed <= size:
                for entry in _table(handle, phoff, phnum, phentsize):
                    offset = struct.unpack_from(order + word, entry, 8 if wide else 4)[0]
                    filesz = struct.unpack_from(order + word, entry, 32 if wide else 16)[0]
                    needed = max(needed, offset + filesz)
                for entry in _table(handle, shoff, shnum, shentsize):
                    kind = struct.unpack_from(order + 'I', entry, 4)[0]
                    offset, length = struct.unpack_from(order + word * 2, entry, 24 if wide else 16)
                    if kind not in (0, _NOBITS):
                        needed = max(needed, offset + length)
    except (IOError, OSError, struct.error) as exc:
        return 'cannot be read (%s)' % exc
    if needed > size:
        return 'is cut short (%d bytes; its ELF headers, segments and sections need %d)' % (size, needed)
    return None


def read_manifest(directory):
    """{name: sha256} of the binaries files/build.sh built in directory, or None without a manifest."""
    try:
        with open(os.path.join(directory, MANIFEST)) as handle:
            lines = handle.read().splitlines()
    except (IOError, OSError):
        return None
    found = {}
    for line in lines:
        digest, name = (line.split('  ', 1) + [''])[:2]
        if len(digest) == 64 and name:
            found[name.lstrip('*')] = digest.lower()
    return found


def not_private(path, uid):
    """Why path may be changed by others than uid, or None."""
    try:
        info = os.stat(path)
    except (IOError, OSError):
        return None
    if info.st_uid != uid:
        return '%s is owned by uid %d, not by uid %d who runs the lab' % (path, info.st_uid, uid)
    if stat.S_IMODE(info.st_mode) & 0o022:
        return '%s is writable by group or others (mode %04o)' % (path, stat.S_IMODE(info.st_mode))
    return None


def check_build(directory, names, known, uid=None):
    """(problems {name: why}, hashes {path: {'stat', 'sha256'}} read) of a complete build's binaries.

    known: the hash cache ({path: {'stat', 'sha256'}}); uid: the lab's user (default: who runs this).
    Raises NotPrivate naming the path and the fix."""
    uid = os.geteuid() if uid is None else uid
    for path in [directory] + [os.path.join(directory, name) for name in names]:
        problem = not_private(path, uid)
        if problem:
            raise NotPrivate('%s: root runs the sim\'s binaries, so only the lab\'s user may change them. Fix: '
                             'chown -R "$(id -un)" %s && chmod -R go-w %s (or remove %s to build it again)'
                             % (problem, directory, directory, directory))
    manifest = read_manifest(directory)
    system = System(known)
    problems, hashes = {}, {}
    for name in names:
        path = os.path.join(directory, name)
        if not os.path.exists(path):
            continue  # missing: the role finds it so and builds
        why = elf_problem(path)
        if why:
            problems[name] = why
            continue
        if manifest is None or name not in manifest:
            continue
        digest = system.sha256(path)
        hashes[path] = {'stat': system.file_stat(path), 'sha256': digest}
        if digest != manifest[name]:
            problems[name] = 'is not the binary its build made (sha256 %s, built as %s)' % (
                (digest or 'unreadable')[:12], manifest[name][:12])
    return problems, hashes


def write_manifest(directory, names, known):
    """Write the manifest of a build made before manifests, from its binaries (whole: checked before);
    ({path: {'stat', 'sha256'}} read)."""
    system = System(known)
    hashes = {}
    lines = []
    for name in sorted(names):
        path = os.path.join(directory, name)
        hashes[path] = {'stat': system.file_stat(path), 'sha256': system.sha256(path)}
        lines.append('%s  %s\n' % (hashes[path]['sha256'], name))
    write_file(directory, MANIFEST, ''.join(lines), mode=0o644)
    return hashes


def make_missing(directory, names):
    """Remove the build's markers and the damaged binaries named, so the role builds it again."""
    for name in MARKERS + tuple(names):
        try:
            os.unlink(os.path.join(directory, name))
        except FileNotFoundError:
            pass
