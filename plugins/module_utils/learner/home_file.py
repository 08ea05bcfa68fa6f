# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A file of the lab's in a learner's home (its ``~/.kube/config``), written or removed by root without following a link.

Root writes the learner's kubeconfig and removes it at teardown. The
learner owns its home and everything in it, so any name there may be a
symbolic link (``~/.kube -> /usr/local/bin``), a hard link to a file of
root's, or a directory where a file should be (issue 40). Here nothing in
the learner's home is resolved by its path:

- ``put_file(path, user, content)``: the home is opened once
  (learner/workdir_fd.py: from ``/``, no link at any level), the directory
  holding the file is opened relative to it with ``O_NOFOLLOW|O_DIRECTORY``
  (made, 0700 and the user's, when missing), and must be the user's; a link
  there is refused, naming it. The file is written whole into that
  descriptor and renamed over the old name (learner/write.py): a link or a
  hard link at the name is replaced, never written through. The file is the
  user's, with ``mode``.
- ``remove_file(path, user, marker)``: removes the file only when it is
  what the lab wrote: a regular file with one link, the user's, whose text
  starts with ``marker``. Anything else (a link, a directory, the
  learner's own kubeconfig) is kept and the result says why; a directory on
  the way that is a link is not entered.

Problems raise LearnerFileError in English and Korean.

Layer: the learner's files; imports no other layer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import pwd
import stat

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import tree
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import write as learner_write
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.read import LearnerFileError, read_bytes
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import both, printable, with_particle
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.workdir_fd import Workdir, open_workdir

# How every file the lab writes into a learner's home begins (its first line): what teardown removes.
LAB_MARK = '# gsb.kai_lab'
_DIRECTORY = tree.DIRECTORY
# A kubeconfig is a few KiB; what the lab compares or inspects is read up to this.
MAX_BYTES = 1024 * 1024


def _user(user):
    try:
        entry = pwd.getpwnam(user)
    except (KeyError, TypeError):
        raise LearnerFileError(both('%s is not a user on this machine' % printable(user, 64),
                                    '%s 사용자가 이 머신에 없습니다' % printable(user, 64)))
    return entry.pw_uid, entry.pw_gid, entry.pw_dir


def _split(path, home):
    """(the directory path, the parts below home to it, the file name) of path, which must lie below home."""
    parts = [p for p in (path or '').split('/') if p not in ('', '.')]
    home_parts = [p for p in home.split('/') if p not in ('', '.')]
    if (not isinstance(path, str) or not path.startswith('/') or '..' in parts or '\0' in path
            or parts[:len(home_parts)] != home_parts or len(parts) <= len(home_parts)):
        raise LearnerFileError(both('%s is not a file inside the home %s' % (printable(path, 200), printable(home, 200)),
                                    '%s 홈 디렉터리 %s 안의 파일이 아닙니다'
                                    % (with_particle(printable(path, 200), '은'), printable(home, 200))))
    below = parts[len(home_parts):]
    return '/' + '/'.join(parts[:-1]), below[:-1], below[-1]


def _link_problem(where, target):
    shown = (' (%s)' % printable(target, 200)) if target is not None else ''
    return LearnerFileError(both(
        '%s is a symbolic link%s: the lab writes into the learner\'s home only through real directories the '
        'learner owns, never through a link. Remove the link (rm %s), then run again' % (where, shown, where),
        '%s 심볼릭 링크입니다%s. 실습은 학습자 홈의 실제 디렉터리(학습자 소유)로만 쓰고 링크는 따라가지 않습니다. 링크를 '
        '지운 뒤(rm %s) 다시 실행하세요' % (with_particle(where, '은'), shown, where)))


def _open_below(parent_fd, name, where, uid, gid, create, mode):
    """The directory name in parent_fd, opened without following a link (made when create), or None when missing."""
    try:
        return os.open(name, _DIRECTORY, dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno == errno.ENOENT and create:
            try:
                os.mkdir(name, mode, dir_fd=parent_fd)
            except OSError as made:
                if made.errno != errno.EEXIST:
                    raise LearnerFileError(both('cannot create %s (%s)' % (where, os.strerror(made.errno)),
                                                '%s 만들 수 없습니다 (%s)' % (with_particle(where, '을'), os.strerror(made.errno))))
            fd = _open_below(parent_fd, name, where, uid, gid, False, mode)
            info = os.fstat(fd)
            if info.st_uid == os.geteuid() and os.geteuid() != uid:
                os.fchown(fd, uid, gid)  # made here, in the user's home: the user's
            if stat.S_IMODE(info.st_mode) != mode:
                os.fchmod(fd, mode)  # mkdir's mode is cut by the umask
            return fd
        if exc.errno == errno.ENOENT:
            return None
        try:
            kind = os.stat(name, dir_fd=parent_fd, follow_symlinks=False).st_mode
        except OSError:
            kind = 0
        if stat.S_ISLNK(kind):
            try:
                target = os.readlink(name, dir_fd=parent_fd)
            except OSError:
                target = None
            raise _link_problem(where, target)
        if exc.errno in (errno.ENOTDIR, errno.ELOOP):
            raise LearnerFileError(both('%s is not a directory: the lab keeps a file there. Move it away, then run '
                                        'again' % where,
                                        '%s 디렉터리가 아닙니다. 실습은 그 안에 파일을 둡니다. 옮긴 뒤 다시 실행하세요'
                                        % with_particle(where, '이')))
        raise LearnerFileError(both('cannot open %s (%s)' % (where, os.strerror(exc.errno)),
                                    '%s 열 수 없습니다 (%s)' % (with_particle(where, '을'), os.strerror(exc.errno))))


def open_home_directory(path, user, create=False, mode=0o700):
    """(Workdir of the directory holding path, its file name, (uid, gid)); None for the Workdir when it is missing.

    The home is opened from ``/`` without following a link; each directory
    below it is opened relative to the one before with O_NOFOLLOW and must
    be the user's (a directory another user owns is refused: it is not
    the learner's to have the lab write into).
    """
    uid, gid, home = _user(user)
    directory, below, name = _split(path, home)
    try:
        fd = open_workdir(home).fd
    except LearnerFileError as exc:
        raise LearnerFileError(both('the home of %s cannot be used: %s' % (printable(user, 64), exc.problem['en']),
                                    '%s 의 홈을 쓸 수 없습니다: %s' % (printable(user, 64), exc.problem['ko'])),
                               exc.missing)
    where = home
    try:
        for part in below:
            where = where.rstrip('/') + '/' + part
            child = _open_below(fd, part, where, uid, gid, create, mode)
            os.close(fd)
            fd = child
            if fd is None:
                return None, name, (uid, gid)
            owner = os.fstat(fd).st_uid
            if owner != uid:
                raise LearnerFileError(both(
                    '%s is not %s\'s (uid %d owns it): the lab writes into the learner\'s home only where the learner '
                    'owns the directory. Give it back (chown %s %s) or move it away, then run again'
                    % (where, printable(user, 64), owner, printable(user, 64), where),
                    '%s %s 의 것이 아닙니다 (소유자 uid %d). 실습은 학습자가 소유한 디렉터리에만 씁니다. 돌려주거나'
                    '(chown %s %s) 옮긴 뒤 다시 실행하세요'
                    % (with_particle(where, '은'), printable(user, 64), owner, printable(user, 64), where)))
    except BaseException:
        if fd is not None:
            os.close(fd)
        raise
    return Workdir(directory, fd, directory), name, (uid, gid)


def _what_is_there(directory, name):
    """(kind, stat) of what is at name in the opened directory: 'missing', 'symlink', 'regular', 'directory', ..."""
    try:
        info = os.stat(name, dir_fd=directory.fd, follow_symlinks=False)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return 'missing', None
        raise LearnerFileError(both('cannot look at %s/%s (%s)' % (directory, name, os.strerror(exc.errno)),
                                    '%s 볼 수 없습니다 (%s)'
                                    % (with_particle('%s/%s' % (directory, name), '을'), os.strerror(exc.errno))))
    if stat.S_ISLNK(info.st_mode):
        return 'symlink', info
    if stat.S_ISDIR(info.st_mode):
        return 'directory', info
    if stat.S_ISREG(info.st_mode):
        return 'regular', info
    return 'other', info


def _same(directory, name, info, content, mode, owner):
    """Whether the file already is content, with mode, owner's and singly linked (no write needed)."""
    if info.st_nlink != 1 or info.st_uid != owner[0] or stat.S_IMODE(info.st_mode) != mode or info.st_size != len(content):
        return False
    got = read_bytes(directory, name, limit=MAX_BYTES)
    return got.ok and got.content == content


def put_file(path, user, content, mode=0o600, directory_mode=0o700, check_mode=False):
    """Write path (below user's home) whole, as user's with mode; returns {'changed', 'replaced'}.

    replaced: what stood at the name before when it was not a regular file
    of the user's ('symlink', 'hard link', 'directory' is refused), else None.
    """
    if isinstance(content, str):
        content = content.encode('utf-8')
    directory, name, owner = open_home_directory(path, user, create=not check_mode, mode=directory_mode)
    if directory is None:  # check mode, the directory missing: it would be made and written
        return {'changed': True, 'replaced': None}
    try:
        kind, info = _what_is_there(directory, name)
        if kind == 'directory':
            raise LearnerFileError(both('%s is a directory where the lab writes a file: move or rename it, then run '
                                        'again' % printable(path, 200),
                                        '%s 실습이 파일을 쓰는 자리에 있는 디렉터리입니다. 옮기거나 이름을 바꾼 뒤 다시 '
                                        '실행하세요' % with_particle(printable(path, 200), '은')))
        replaced = None
        if kind == 'symlink':
            replaced = 'symlink'
        elif kind == 'other':
            replaced = 'special file'
        elif kind == 'regular' and info.st_nlink > 1:
            replaced = 'hard link'
        elif kind == 'regular' and _same(directory, name, info, content, mode, owner):
            return {'changed': False, 'replaced': None}
        if not check_mode:
            learner_write.write_file(directory, name, content, mode=mode, owner=owner)
        return {'changed': True, 'replaced': replaced}
    finally:
        directory.close()


def remove_file(path, user, marker=LAB_MARK, check_mode=False, prune=False):
    """Remove path (below user's home) when it is the lab's file; returns {'changed', 'kept', 'pruned'}.

    kept: why the file was left ({'en', 'ko'}), or None. Nothing is ever
    followed: a link on the way or at the name is kept, as is a file that
    is not a regular, singly linked file of the user's starting with marker.
    prune: then remove the directory holding the file too (never the home)
    when nothing is left in it but kubectl's cache (KUBECTL_CACHE), which
    goes with it; pruned names it, else None.
    """
    result = _remove_file(path, user, marker, check_mode)
    result['pruned'] = None
    if prune and not result['kept']:
        # In check mode the file is still there when it would have been removed.
        pruned = _prune(path, user, check_mode, os.path.basename(path) if check_mode and result['changed'] else None)
        if pruned:
            result.update(changed=True, pruned=pruned)
    return result


# The one thing besides the lab's file that prune removes with the directory: kubectl's cache (its discovery
# and HTTP caches of the lab's cluster, which teardown removes), written by kubectl as the learner.
KUBECTL_CACHE = 'cache'


def _prune(path, user, check_mode, removed_name):
    """Remove path's directory when it holds nothing but kubectl's cache; its path, or None when kept."""
    _uid, _gid, home = _user(user)
    directory_path = os.path.dirname(path.rstrip('/'))
    if os.path.normpath(directory_path) == os.path.normpath(home):
        return None
    try:
        parent, name, owner = open_home_directory(directory_path, user)
    except LearnerFileError:
        return None
    if parent is None:
        return None
    try:
        try:
            fd = os.open(name, _DIRECTORY, dir_fd=parent.fd)
        except OSError:
            return None  # missing, a link, not a directory: nothing of the lab's to remove
        try:
            info = os.fstat(fd)
            entries = [entry for entry in os.listdir(fd) if entry != removed_name]
            if info.st_uid != owner[0] or not set(entries) <= {KUBECTL_CACHE}:
                return None
            if entries:
                if not tree.removable(fd, KUBECTL_CACHE, owner[0]):
                    return None
                if not check_mode:
                    tree.remove(fd, KUBECTL_CACHE)
        finally:
            os.close(fd)
        if not check_mode:
            try:
                os.rmdir(name, dir_fd=parent.fd)  # fails on a name swapped for a link or refilled: kept then
            except OSError:
                return None
        return directory_path
    finally:
        parent.close()


def _remove_file(path, user, marker, check_mode):
    try:
        directory, name, owner = open_home_directory(path, user)
    except LearnerFileError as exc:
        if exc.missing:
            return {'changed': False, 'kept': None}
        shown = printable(path, 200)
        return {'changed': False, 'kept': both('%s is kept: %s' % (shown, exc.problem['en']),
                                               '%s 남겨 둡니다: %s' % (with_particle(shown, '은'), exc.problem['ko']))}
    if directory is None:
        return {'changed': False, 'kept': None}
    try:
        kind, info = _what_is_there(directory, name)
        if kind == 'missing':
            return {'changed': False, 'kept': None}
        shown = printable(path, 200)
        if kind != 'regular' or info.st_nlink != 1 or info.st_uid != owner[0]:
            what = {'symlink': ('a symbolic link', '심볼릭 링크'), 'directory': ('a directory', '디렉터리'),
                    'other': ('a special file', '특수 파일')}.get(kind)
            if what is None:
                what = (('a hard link', '하드 링크') if info.st_nlink != 1
                        else ('not %s\'s (uid %d owns it)' % (printable(user, 64), info.st_uid),
                              '%s 의 것이 아님, 소유자 uid %d' % (printable(user, 64), info.st_uid)))
            return {'changed': False, 'kept': both('%s is kept: it is %s, not the file the lab wrote' % (shown, what[0]),
                                                   '%s 남겨 둡니다: 실습이 쓴 파일이 아닙니다 (%s)'
                                                   % (with_particle(shown, '은'), what[1]))}
        got = read_bytes(directory, name, limit=MAX_BYTES)
        if not got.ok or not got.content.startswith(marker.encode('utf-8')):
            return {'changed': False, 'kept': both('%s is kept: it does not start with "%s", so it is not the file the '
                                                   'lab wrote' % (shown, marker),
                                                   '%s 남겨 둡니다: %s 시작하지 않아 실습이 쓴 파일이 아닙니다'
                                                   % (with_particle(shown, '은'), with_particle('"%s"' % marker, '으로')))}
        if not check_mode:
            try:
                os.unlink(name, dir_fd=directory.fd)
            except OSError as exc:
                if exc.errno != errno.ENOENT:
                    raise LearnerFileError(both('cannot remove %s (%s)' % (shown, os.strerror(exc.errno)),
                                                '%s 지울 수 없습니다 (%s)' % (with_particle(shown, '을'), os.strerror(exc.errno))))
        return {'changed': True, 'kept': None}
    finally:
        directory.close()
