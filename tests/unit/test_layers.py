# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The layers of plugins/module_utils, kept: a package imports only the packages below it.

The allowed directions are written once, in LAYERS; the picture in the lab
author guide ("Where things live") draws the same. Every import of the
collection's module_utils is read from the source (top level or inside a
function), so a lazy import across the wrong direction is caught as well.
"""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODULE_UTILS = ROOT / 'plugins' / 'module_utils'
PREFIX = 'ansible_collections.gsb.kai_lab.plugins.module_utils'

# package -> the packages it may import (besides itself), lowest layers first.
LAYERS = {
    'client': (),                                  # the cluster client: API access, waits, health probes
    'host': (),                                    # this host's processes and own files
    'learner': (),                                 # the learner's files: read, write, YAML, text, the workdir
    'kai': ('client',),                            # the KAI domain: objects, GPUs, profiles, what runs
    'record': ('host', 'kai', 'learner'),          # the grader's record: KAI's proofs kept, and its store
    'steps': ('client', 'kai', 'learner', 'record'),  # the lab's steps, each whole in one module
    'solving': ('client', 'kai', 'learner', 'steps'),
    'grading': ('client', 'kai', 'learner', 'record', 'steps'),
    'gate': ('client', 'host', 'kai'),             # the readiness gate
    'targets': ('client', 'gate', 'host', 'kai', 'learner'),  # sim and k3s, each its own parts
}


def package_of(name):
    """The layer package of a module below module_utils, dotted or as a path ('kai.objects', 'kai/gpu.py' -> 'kai')."""
    return name.replace('/', '.').split('.', 1)[0]


def imports_of(path):
    """The collection's module_utils modules path imports, as dotted paths below module_utils."""
    found = []
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] if node.module != PREFIX else [PREFIX + '.' + a.name for a in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found.extend(name[len(PREFIX) + 1:] for name in names if name.startswith(PREFIX + '.'))
    return found


def wrong_directions(root=MODULE_UTILS):
    """[(file, its package, imported module)] for each import across the wrong direction."""
    wrong = []
    for path in sorted(root.rglob('*.py')):
        own = package_of(path.relative_to(root).as_posix())
        for imported in imports_of(path):
            other = package_of(imported)
            if other != own and other not in LAYERS.get(own, ()):
                wrong.append((path.relative_to(root).as_posix(), own, imported))
    return wrong


def test_every_module_sits_in_a_layer_package():
    loose = sorted(p.name for p in MODULE_UTILS.glob('*.py') if p.name != '__init__.py')
    assert loose == []
    packages = sorted(p.name for p in MODULE_UTILS.iterdir() if p.is_dir() and p.name != '__pycache__')
    assert packages == sorted(LAYERS)


def test_no_layer_imports_a_higher_one():
    assert wrong_directions() == []


def test_the_allowed_directions_have_no_cycle():
    seen, done = set(), set()

    def visit(package, path):
        assert package not in seen or package in done, 'cycle: %s' % ' -> '.join(path + [package])
        if package in done:
            return
        seen.add(package)
        for below in LAYERS[package]:
            visit(below, path + [package])
        done.add(package)

    for package in LAYERS:
        visit(package, [])


@pytest.mark.parametrize('own, imported', [
    ('client', 'grading.session'),          # the client never imports grading
    ('client', 'steps.registry'),           # ... or the steps
    ('kai', 'steps.registry'),              # the KAI domain never imports the steps
    ('steps', 'targets.sim.state'),         # the steps never import a target
    ('learner', 'client.api'),              # the learner's files need no cluster
])
def test_an_import_across_the_wrong_direction_fails(tmp_path, own, imported):
    package, module = imported.rsplit('.', 1)
    (tmp_path / own).mkdir()
    (tmp_path / own / 'planted.py').write_text(
        'def later():\n    from %s.%s import %s\n' % (PREFIX, package, module))
    assert wrong_directions(tmp_path) == [('%s/planted.py' % own, own, package)]


def test_package_init_files_are_empty():
    assert [p for p in MODULE_UTILS.rglob('__init__.py') if p.read_bytes().strip()] == []


def test_no_module_is_over_350_lines():
    long = dict((p.relative_to(MODULE_UTILS).as_posix(), n) for p in MODULE_UTILS.rglob('*.py')
                for n in [len(p.read_text().splitlines())] if n > 350)
    assert long == {}


def test_every_module_says_its_layer():
    silent = [p.relative_to(MODULE_UTILS).as_posix() for p in MODULE_UTILS.rglob('*.py')
              if p.name != '__init__.py' and 'Layer: ' not in (ast.get_docstring(ast.parse(p.read_text())) or '')]
    assert silent == []


def test_every_old_module_name_redirects_to_a_module_that_exists():
    import yaml
    routing = yaml.safe_load((ROOT / 'meta' / 'runtime.yml').read_text())['plugin_routing']['module_utils']
    assert len(routing) >= 33
    for old, entry in routing.items():
        namespace, name, rest = entry['redirect'].split('.', 2)
        assert (namespace, name) == ('gsb', 'kai_lab')
        assert (MODULE_UTILS / (rest.replace('.', '/') + '.py')).is_file(), old
        assert not (MODULE_UTILS / (old + '.py')).exists(), old
