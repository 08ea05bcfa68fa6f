# -*- coding: utf-8 -*-
"""Issue 40 rows 1 and 2: root writes and removes the learner's ~/.kube/config without following what the learner planted.

Before, provision's ``ansible.builtin.file`` made ``~/.kube`` (following a
link the learner put there: ``~/.kube -> /usr/local/bin`` gave the learner
the directory holding ``kai-lab``, which its sudo rule runs as root), the
template wrote through a link at ``~/.kube/config``, and teardown removed
whatever ``~/.kube/config`` led to. learner/home_file.py opens each
directory without following a link and renames over the name.
"""

from __future__ import annotations

import collections
import os
import stat

import pytest

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import home_file
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.read import LearnerFileError

LEARNER = 65534  # nobody: the learner
OTHER = 65533
KUBECONFIG = home_file.LAB_MARK + ' (roles/kai_lab/tasks/learner_access.yml): the learner\'s identity\napiVersion: v1\n'

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: root writes into a learner's home")

Passwd = collections.namedtuple('Passwd', 'pw_uid pw_gid pw_dir')


@pytest.fixture
def home(tmp_path, monkeypatch):
    """The learner's home (its own, in a directory only root can change), and a user 'learner' whose home it is."""
    home = tmp_path / "home" / "learner"
    home.mkdir(parents=True)
    os.chown(str(home), LEARNER, LEARNER)
    home.chmod(0o755)

    def getpwnam(name):
        if name != 'learner':
            raise KeyError(name)
        return Passwd(LEARNER, LEARNER, str(home))
    monkeypatch.setattr(home_file.pwd, 'getpwnam', getpwnam)
    return home


@pytest.fixture
def victim(tmp_path):
    """Root's: a directory holding a file, as /usr/local/bin holds kai-lab, and a root-only file."""
    place = tmp_path / "root-only"
    place.mkdir(mode=0o755)
    (place / "kai-lab").write_text("#!/bin/sh\necho the lab's command\n")
    (place / "kai-lab").chmod(0o755)
    (place / "config").write_text("root's own settings\n")
    (place / "config").chmod(0o600)
    return place


def _state(path):
    """Owner, mode and content of everything at and below path (links not followed)."""
    found = {}
    for where, dirs, files in os.walk(str(path)):
        for name in [''] + dirs + files:
            full = os.path.join(where, name) if name else where
            info = os.lstat(full)
            content = open(full, 'rb').read() if stat.S_ISREG(info.st_mode) else None
            found[full] = (info.st_uid, info.st_gid, info.st_mode, content)
    return found


def _as_learner(path):
    os.lchown(str(path), LEARNER, LEARNER)


def test_a_missing_kube_directory_is_made_the_learners_and_the_file_is_written(home):
    result = home_file.put_file(str(home / ".kube" / "config"), 'learner', KUBECONFIG)
    kube, config = os.lstat(str(home / ".kube")), os.lstat(str(home / ".kube" / "config"))
    assert result == {'changed': True, 'replaced': None}
    assert (kube.st_uid, stat.S_IMODE(kube.st_mode), stat.S_ISDIR(kube.st_mode)) == (LEARNER, 0o700, True)
    assert (config.st_uid, stat.S_IMODE(config.st_mode)) == (LEARNER, 0o600)
    assert (home / ".kube" / "config").read_text() == KUBECONFIG
    # The same again changes nothing.
    assert home_file.put_file(str(home / ".kube" / "config"), 'learner', KUBECONFIG) == {'changed': False,
                                                                                          'replaced': None}


def test_row_1_a_kube_link_to_the_directory_of_kai_lab_is_refused_and_that_directory_is_untouched(home, victim):
    (home / ".kube").symlink_to(victim)
    _as_learner(home / ".kube")
    before = _state(victim)
    with pytest.raises(LearnerFileError) as raised:
        home_file.put_file(str(home / ".kube" / "config"), 'learner', KUBECONFIG)
    assert _state(victim) == before
    words = raised.value.problem
    assert '/.kube is a symbolic link (%s)' % victim in words['en'] and 'rm ' in words['en']
    assert '심볼릭 링크' in words['ko']


def test_a_kube_directory_of_another_user_is_refused(home):
    (home / ".kube").mkdir()
    os.chown(str(home / ".kube"), OTHER, OTHER)
    with pytest.raises(LearnerFileError) as raised:
        home_file.put_file(str(home / ".kube" / "config"), 'learner', KUBECONFIG)
    assert "is not learner's (uid %d owns it)" % OTHER in raised.value.problem['en']
    assert not (home / ".kube" / "config").exists()


@pytest.mark.parametrize('kind', ['symlink', 'hard link'])
def test_a_config_link_to_roots_file_is_replaced_never_written_through(home, victim, kind):
    (home / ".kube").mkdir(mode=0o700)
    _as_learner(home / ".kube")
    config = home / ".kube" / "config"
    if kind == 'symlink':
        config.symlink_to(victim / "config")
        _as_learner(config)
    else:
        # What a learner can do where fs.protected_hardlinks is 0; root plants it here whatever the sysctl says.
        os.link(str(victim / "config"), str(config))
    before = _state(victim)
    result = home_file.put_file(str(config), 'learner', KUBECONFIG)
    assert result == {'changed': True, 'replaced': kind}
    assert _state(victim) == before
    info = os.lstat(str(config))
    assert (stat.S_ISREG(info.st_mode), info.st_nlink, info.st_uid) == (True, 1, LEARNER)
    assert config.read_text() == KUBECONFIG


def test_a_directory_where_the_file_goes_is_refused_naming_it(home):
    (home / ".kube").mkdir(mode=0o700)
    _as_learner(home / ".kube")
    (home / ".kube" / "config").mkdir()
    with pytest.raises(LearnerFileError) as raised:
        home_file.put_file(str(home / ".kube" / "config"), 'learner', KUBECONFIG)
    assert 'is a directory where the lab writes a file' in raised.value.problem['en']


def test_check_mode_writes_nothing(home):
    result = home_file.put_file(str(home / ".kube" / "config"), 'learner', KUBECONFIG, check_mode=True)
    assert result['changed'] is True and not (home / ".kube").exists()


@pytest.mark.parametrize('path', ['/etc/passwd', '{home}/../other/config', '{home}', 'relative/config'])
def test_a_path_outside_the_learners_home_is_refused(home, path):
    with pytest.raises(LearnerFileError) as raised:
        home_file.put_file(path.format(home=home), 'learner', KUBECONFIG)
    assert 'is not a file inside the home' in raised.value.problem['en']


def test_a_user_that_does_not_exist_is_named(home):
    with pytest.raises(LearnerFileError) as raised:
        home_file.put_file(str(home / ".kube" / "config"), 'nobody-here', KUBECONFIG)
    assert raised.value.problem['en'] == 'nobody-here is not a user on this machine'


def test_row_2_teardown_does_not_follow_a_kube_link_to_a_directory_holding_roots_config(home, victim):
    (home / ".kube").symlink_to(victim)
    _as_learner(home / ".kube")
    before = _state(victim)
    result = home_file.remove_file(str(home / ".kube" / "config"), 'learner')
    assert _state(victim) == before and result['changed'] is False
    assert result['kept']['en'].startswith('%s is kept: ' % (home / ".kube" / "config"))
    assert 'symbolic link' in result['kept']['en'] and '남겨 둡니다' in result['kept']['ko']


@pytest.mark.parametrize('plant, kept', [
    ('symlink', 'a symbolic link'),
    ('hard link', 'a hard link'),
    ('roots', "not learner's (uid 0 owns it)"),
    ('learners own', 'does not start with "# gsb.kai_lab"'),
])
def test_teardown_keeps_what_the_lab_did_not_write(home, victim, plant, kept):
    (home / ".kube").mkdir(mode=0o700)
    _as_learner(home / ".kube")
    config = home / ".kube" / "config"
    if plant == 'symlink':
        config.symlink_to(victim / "config")
    elif plant == 'hard link':
        os.link(str(victim / "config"), str(config))
    elif plant == 'roots':
        config.write_text(KUBECONFIG)
    else:
        config.write_text("apiVersion: v1\nkind: Config\n# the learner's own cluster\n")
        _as_learner(config)
    before = _state(victim)
    result = home_file.remove_file(str(config), 'learner')
    assert result['changed'] is False and kept in result['kept']['en'], result
    assert os.path.lexists(str(config)) and _state(victim) == before


def test_teardown_removes_the_file_the_lab_wrote_and_nothing_else(home):
    home_file.put_file(str(home / ".kube" / "config"), 'learner', KUBECONFIG)
    (home / ".kube" / "cache").mkdir()
    done = {'changed': True, 'kept': None, 'pruned': None}
    assert home_file.remove_file(str(home / ".kube" / "config"), 'learner', check_mode=True) == done
    assert (home / ".kube" / "config").exists()
    assert home_file.remove_file(str(home / ".kube" / "config"), 'learner') == done
    assert sorted(os.listdir(str(home / ".kube"))) == ["cache"]
    # Gone already, or never made: nothing to do.
    nothing = {'changed': False, 'kept': None, 'pruned': None}
    assert home_file.remove_file(str(home / ".kube" / "config"), 'learner') == nothing
    assert home_file.remove_file(str(home / "nothing" / "config"), 'learner') == nothing


def _kubectl_cache(kube):
    """What kubectl run as the learner leaves in ~/.kube: its discovery and HTTP caches, the learner's."""
    made = [kube / "cache", kube / "cache" / "discovery", kube / "cache" / "discovery" / "127.0.0.1_6443",
            kube / "cache" / "discovery" / "127.0.0.1_6443" / "scheduling.run.ai", kube / "cache" / "http"]
    for directory in made:
        directory.mkdir(mode=0o750)
        _as_learner(directory)
    files = [made[3] / "servergroups.json", made[4] / "0a1b2c", made[4] / ".diskv-temp"]
    for path in files:
        path.write_text("{}")
        _as_learner(path)
    return made + files


def test_teardown_with_prune_removes_the_kube_directory_holding_only_kubectls_cache(home):
    # The k3s VM's teardown left ~/.kube with 96 entries of kubectl's cache (make test-k3s, 2026-12-07).
    kube = home / ".kube"
    home_file.put_file(str(kube / "config"), 'learner', KUBECONFIG)
    _kubectl_cache(kube)
    before = _state(home)
    result = home_file.remove_file(str(kube / "config"), 'learner', check_mode=True, prune=True)
    assert result == {'changed': True, 'kept': None, 'pruned': str(kube)} and _state(home) == before
    result = home_file.remove_file(str(kube / "config"), 'learner', prune=True)
    assert result == {'changed': True, 'kept': None, 'pruned': str(kube)}
    assert os.listdir(str(home)) == []
    # Again: nothing left to do.
    assert home_file.remove_file(str(kube / "config"), 'learner', prune=True) == {
        'changed': False, 'kept': None, 'pruned': None}


@pytest.mark.parametrize('plant', ['a file of the learner', 'a link in the cache to roots directory',
                                   'a cache entry of roots', 'the learners own kubeconfig'])
def test_prune_keeps_the_directory_unless_only_kubectls_cache_is_left_and_never_follows_a_link(home, victim, plant):
    kube = home / ".kube"
    home_file.put_file(str(kube / "config"), 'learner', KUBECONFIG)
    _kubectl_cache(kube)
    if plant == 'a file of the learner':
        (kube / "notes.txt").write_text("mine\n")
        _as_learner(kube / "notes.txt")
    elif plant == 'a link in the cache to roots directory':
        # A link is removed as a link: root's directory behind it is untouched, the rest goes.
        (kube / "cache" / "http" / "evil").symlink_to(victim)
        _as_learner(kube / "cache" / "http" / "evil")
    elif plant == 'a cache entry of roots':
        (kube / "cache" / "root-made").write_text("x")
    else:
        (kube / "config").unlink()
        (kube / "config").write_text("apiVersion: v1\nkind: Config\n")
        _as_learner(kube / "config")
    before = _state(victim)
    result = home_file.remove_file(str(kube / "config"), 'learner', prune=True)
    assert _state(victim) == before
    if plant == 'a link in the cache to roots directory':
        assert result['pruned'] == str(kube) and not os.path.lexists(str(kube))
    else:
        assert result['pruned'] is None and os.path.isdir(str(kube / "cache")), result


def test_prune_never_removes_the_home_or_a_kube_link(home, victim):
    config = home / "config"
    home_file.put_file(str(config), 'learner', KUBECONFIG)
    assert home_file.remove_file(str(config), 'learner', prune=True)['pruned'] is None and home.is_dir()
    (home / ".kube").symlink_to(victim)
    _as_learner(home / ".kube")
    result = home_file.remove_file(str(home / ".kube" / "config"), 'learner', prune=True)
    assert result['pruned'] is None and result['kept'] and (victim / "config").exists()


def test_the_learners_kubeconfig_template_starts_with_the_mark_teardown_looks_for():
    here = os.path.dirname(os.path.abspath(__file__))
    template = os.path.join(here, '..', '..', 'roles', 'kai_lab', 'templates', 'learner_kubeconfig.yaml.j2')
    with open(template) as handle:
        assert handle.readline().startswith(home_file.LAB_MARK + ' ')
