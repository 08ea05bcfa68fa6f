#!/usr/bin/env python3
"""Build an airgap directory for the k3s target (roles/k3s, k3s_airgap_dir)
from source checkouts, for a test VM: k3s with its data directory, Helm,
KAI-Scheduler's and fake-gpu-operator's binaries, images and charts, the
lab's stand-in images, the VM's Python wheels and the Debian packages k3s
needs on the VM, and a vars file with the sha256 of each.

  build.py --sources DIR [--out DIR] [--vm debian-12] [--pieces NAME ...] [--list]

DIR holds five checkouts (the user fetches them; nothing here clones):

  k3s/                k3s (a release branch or tag of k3s-io/k3s, or a fork of it)
  plugins/            rancher/plugins at the tag k3s's scripts/version.sh names (VERSION_CNIPLUGINS)
  cni-plugin/         flannel-io/cni-plugin at its tag there (VERSION_FLANNEL_PLUGIN)
  kai-scheduler/      kai-scheduler/KAI-Scheduler at a release tag
  fake-gpu-operator/  run-ai/fake-gpu-operator at a release tag

Each says its version and commit by git (a clone at the tag), or, where it
is a `git archive` of one, in a file .source-version beside its files:
"<tag> <commit>" (for example "v0.17.0 f218c69b...").

Everything else comes from the Go module proxy (Go modules), PyPI (the VM's
wheels) and Debian's archive (the stand-in images' root file system, the
VM's .debs); nothing from a release download or a container registry. What
cannot be had that way is left out or stood in for, and bundle.json says
which: k3s-root (so the VM needs Debian's iptables, ipset, conntrack and
ethtool, carried as .debs), the lab's ubuntu images (Debian 12 minbase
stand-ins), fake-gpu-operator's two NVIDIA subcharts (empty stand-ins; the
lab leaves both off), k3s's packaged components the lab turns off (no
CoreDNS, local-path-provisioner, Traefik or metrics-server images).

Each piece is built once per inputs (source trees by content, versions, the
Go version, its own command lines) into
${KAI_LAB_CACHE:-~/.cache/gsb-kai-lab}/k3s-bundle/pieces/ and reused; the
bundle is assembled from them (hard links) into --out (default
k3s-bundle/bundles/<name>/). Every command runs at nice 19. Progress: one
line per piece, and every minute the elapsed time and the last line of its
log (logs in k3s-bundle/logs/).
"""

import argparse
import datetime
import glob
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import image_archive  # noqa: E402  (beside this file)

CACHE = os.path.join(os.environ.get('KAI_LAB_CACHE') or os.path.expanduser('~/.cache/gsb-kai-lab'), 'k3s-bundle')
SOURCES = {
    'k3s': 'k3s (k3s-io/k3s or a fork, at a release branch or tag)',
    'plugins': 'rancher/plugins at the tag k3s names (VERSION_CNIPLUGINS)',
    'cni-plugin': 'flannel-io/cni-plugin at the tag k3s names (VERSION_FLANNEL_PLUGIN)',
    'kai-scheduler': 'kai-scheduler/KAI-Scheduler at a release tag',
    'fake-gpu-operator': 'run-ai/fake-gpu-operator at a release tag',
}
# The VMs a bundle can be built for: the Debian release of the .debs, its
# Python (the wheels), and the machine.
VMS = {'debian-12': {'suite': 'bookworm', 'python': '3.11', 'machine': 'x86_64', 'arch': 'amd64'}}
# k3s's build tags and C flags (scripts/build, linux).
K3S_TAGS = 'ctrd netcgo osusergo providerless urfave_cli_no_docs sqlite_omit_load_extension apparmor seccomp'
K3S_CFLAGS = '-DSQLITE_ENABLE_DBSTAT_VTAB=1 -DSQLITE_USE_ALLOCA=1'
# k3s's data directory links (scripts/package-cli): k3s's own and the CNI plugins.
K3S_LINKS = ['containerd', 'crictl', 'kubectl', 'k3s-agent', 'k3s-server', 'k3s-token', 'k3s-etcd-snapshot',
             'k3s-secrets-encrypt', 'k3s-certificate', 'k3s-completion', 'ctr']
CNI_LINKS = ['bandwidth', 'bridge', 'firewall', 'flannel', 'host-local', 'loopback', 'portmap']

# fake-gpu-operator's images (its Dockerfile: each FROM ubuntu, the lab's
# stand-in here) by name: the binaries they hold (path in the image) and the entrypoint.
FGO_IMAGES = {
    'device-plugin': ({'device-plugin': '/bin/device-plugin', 'nvidia-smi': '/bin/nvidia-smi',
                       'preloader': ['/shared/memory/preloader.so', '/shared/pid/preloader.so']},
                      '/bin/device-plugin'),
    'status-updater': ({'status-updater': '/bin/status-updater'}, '/bin/status-updater'),
    'topology-server': ({'topology-server': '/bin/topology-server'}, '/bin/topology-server'),
    'status-exporter': ({'status-exporter': '/usr/local/bin/status-exporter',
                         'status-exporter-kwok': '/usr/local/bin/status-exporter-kwok'},
                        '/usr/local/bin/status-exporter'),
    'kwok-gpu-device-plugin': ({'kwok-gpu-device-plugin': '/bin/kwok-gpu-device-plugin'},
                               '/bin/kwok-gpu-device-plugin'),
}
# fake-gpu-operator's chart dependencies from NVIDIA's Helm repository (not
# reachable): the lab turns both off, so empty charts of the same name and
# version stand in for them.
STAND_IN_NOTE = 'stand-in built by gsb.kai_lab tests/k3s_bundle'
ZSTD_IMAGES = ['-q', '-T0', '-10']
# Builds for the same inputs give the same files: tar and image times.
EPOCH = image_archive.EPOCH


class Failed(Exception):
    """A piece failed; the message says what and where its log is."""


def say(message):
    print('k3s-bundle: ' + message, flush=True)


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The collection's own facts, one source each: KAI's chart images
# (kai/profiles.py, which imports nothing of the collection), the supported
# images' Python (targets/k3s/preflight.py, the same), the role's Helm version,
# fake-gpu-operator's images and the VM's pinned Python set and wheel platforms.
PROFILES = load_module('kai_profiles', os.path.join(REPO, 'plugins', 'module_utils', 'kai', 'profiles.py'))
K3S_DEFAULTS = yaml.safe_load(open(os.path.join(REPO, 'roles', 'k3s', 'defaults', 'main.yml')))
K3S_VARS = yaml.safe_load(open(os.path.join(REPO, 'roles', 'k3s', 'vars', 'main.yml')))
# What k3s-root (a buildroot release, which downloads its own sources and is
# not built here) gives k3s, that the VM must then have from its own
# packages, and Python's packaging library (the pip module, the airgap
# check): the role's k3s_host_packages, tool -> Debian package.
HOST_TOOLS = dict((tool, package) for tool, package in K3S_VARS['k3s_host_packages'].items() if tool != 'packaging')
VM_PACKAGES = sorted(K3S_VARS['k3s_host_packages'].values())


def human(size):
    for unit in ('B', 'kB', 'MB', 'GB'):
        if size < 1000 or unit == 'GB':
            return '%.0f %s' % (size, unit) if unit in ('B', 'kB') else '%.1f %s' % (size, unit)
        size /= 1000.0


def minutes(seconds):
    return '%dm%02ds' % (seconds // 60, seconds % 60)


def tree_hash(path):
    """sha256 over a tree's files (paths, contents, executable bits, link targets), .git left out."""
    digest = hashlib.sha256()
    for directory, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d != '.git')
        for name in sorted(names):
            full = os.path.join(directory, name)
            relative = os.path.relpath(full, path)
            if os.path.islink(full):
                digest.update(('L %s %s\0' % (relative, os.readlink(full))).encode())
                continue
            mode = os.stat(full).st_mode
            digest.update(('F %s %d\0' % (relative, bool(mode & 0o111))).encode())
            with open(full, 'rb') as handle:
                for block in iter(lambda: handle.read(1 << 20), b''):
                    digest.update(block)
    return digest.hexdigest()


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, 'rb') as handle:
        for block in iter(lambda: handle.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()


def source_version(path):
    """(version, commit) of a checkout: .source-version, else git at an exact tag; (None, None) when neither says."""
    marker = os.path.join(path, '.source-version')
    if os.path.isfile(marker):
        words = open(marker).read().split()
        return (words[0] if words else None), (words[1] if len(words) > 1 else None)
    if os.path.exists(os.path.join(path, '.git')):
        def git(*args):
            done = subprocess.run(['git', '-C', path] + list(args), capture_output=True, text=True)
            return done.stdout.strip() if done.returncode == 0 else None
        return git('describe', '--tags', '--exact-match'), git('rev-parse', 'HEAD')
    return None, None


class Heartbeat:
    """Every `every` seconds: the piece's elapsed time and the last line of its log."""

    def __init__(self, label, log, every=60):
        self.label, self.log, self.every, self.start = label, log, every, time.monotonic()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True)

    def _beat(self):
        while not self.stop.wait(self.every):
            last = ''
            try:
                with open(self.log, 'rb') as handle:
                    handle.seek(max(0, os.path.getsize(self.log) - 4096))
                    lines = [line for line in handle.read().decode('utf-8', 'replace').splitlines() if line.strip()]
                    last = ' '.join(lines[-1].split())[:110] if lines else ''
            except OSError:
                pass
            say('  %s: %s, log %s%s' % (self.label, minutes(time.monotonic() - self.start),
                                        human(os.path.getsize(self.log)) if os.path.exists(self.log) else '0 B',
                                        (': ' + last) if last else ''))

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


class Builder:
    def __init__(self, sources, vm):
        self.sources = {name: os.path.abspath(os.path.join(sources, name)) for name in SOURCES}
        self.vm_name, self.vm = vm, VMS[vm]
        self.pieces = os.path.join(CACHE, 'pieces')
        self.logs = os.path.join(CACHE, 'logs')
        os.makedirs(self.pieces, exist_ok=True)
        os.makedirs(self.logs, exist_ok=True)
        self.built = {}      # piece -> (directory, seconds, reused)
        self.log = None
        self.count, self.total = 0, 0

    # ------------------------------------------------------------ commands

    def run(self, argv, cwd=None, env=None, timeout=7200):
        """argv into the current piece's log; Failed naming the command and the log's tail."""
        with open(self.log, 'a') as log:
            log.write('\n$ %s\n' % ' '.join(argv))
            log.flush()
            try:
                done = subprocess.run(argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=timeout)
            except FileNotFoundError:
                raise Failed('%s is not installed (apt-get install %s)' % (argv[0], argv[0]))
            except subprocess.TimeoutExpired:
                raise Failed('%s did not finish within %d s (log %s)' % (' '.join(argv[:3]), timeout, self.log))
        if done.returncode != 0:
            with open(self.log, errors='replace') as handle:
                tail = [line for line in handle.read().splitlines() if line.strip()][-12:]
            raise Failed('%s exited %d; the end of %s:\n    %s'
                         % (' '.join(argv[:4]), done.returncode, self.log, '\n    '.join(tail)))

    def output(self, argv, cwd=None, env=None):
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise Failed('%s exited %d: %s' % (' '.join(argv[:4]), done.returncode, done.stderr.strip()[-600:]))
        return done.stdout.strip()

    def go_env(self, cgo, **extra):
        env = dict(os.environ, GOTOOLCHAIN='local', GOFLAGS='-buildvcs=false', CGO_ENABLED='1' if cgo else '0')
        env.update(extra)
        return env

    # ------------------------------------------------------------ pieces

    def piece(self, name, inputs, build):
        """The piece's directory: reused when built for these inputs, else built by build(out)."""
        self.count += 1
        key = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:16]
        final = os.path.join(self.pieces, '%s-%s' % (name, key))
        label = '[%d/%d] %s' % (self.count, self.total, name)
        if os.path.exists(os.path.join(final, '.complete')):
            record = json.load(open(os.path.join(final, 'piece.json')))
            say('%s: reused (built %s in %d s)' % (label, record['built'], record['seconds']))
            self.built[name] = (final, record['seconds'], True)
            return final
        self.log = os.path.join(self.logs, '%s.log' % name)
        with open(self.log, 'w') as log:
            log.write('# %s, inputs:\n%s\n' % (name, json.dumps(inputs, indent=1, sort_keys=True)))
        work = final + '.tmp'
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(os.path.join(work, 'out'))
        say('%s: building (log %s)' % (label, self.log))
        start = time.monotonic()
        with Heartbeat(name, self.log):
            build(os.path.join(work, 'out'), work)
        seconds = round(time.monotonic() - start)
        # The build's scratch (copied trees, Go module copies made read-only, files) goes; out/ stays.
        for scratch in glob.glob(os.path.join(work, '*')):
            if os.path.basename(scratch) == 'out':
                continue
            if os.path.isdir(scratch) and not os.path.islink(scratch):
                subprocess.run(['chmod', '-R', 'u+w', scratch], check=False)
                shutil.rmtree(scratch)
            else:
                os.remove(scratch)
        with open(os.path.join(work, 'piece.json'), 'w') as handle:
            json.dump({'name': name, 'inputs': inputs, 'seconds': seconds,
                       'built': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')},
                      handle, indent=1, sort_keys=True)
        open(os.path.join(work, '.complete'), 'w').close()
        shutil.rmtree(final, ignore_errors=True)
        os.rename(work, final)
        # Pieces of this name from other inputs are of no more use (exactly <name>-<key>: k3s-* is not k3s-server-*).
        for old in glob.glob(os.path.join(self.pieces, name + '-*')):
            if old != final and re.match(r'^%s-[0-9a-f]{16}$' % re.escape(name), os.path.basename(old)):
                subprocess.run(['chmod', '-R', 'u+w', old], check=False)
                shutil.rmtree(old, ignore_errors=True)
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(os.path.join(final, 'out'))
                   for f in fs if not os.path.islink(os.path.join(d, f)))
        say('%s: built in %s (%s)' % (label, minutes(seconds), human(size)))
        self.built[name] = (final, seconds, False)
        return final

    def out(self, name, *parts):
        return os.path.join(self.built[name][0], 'out', *parts)

    # ------------------------------------------------------------ the sources

    def check_tools(self):
        """The build's tools from Debian's packages, named with the command that installs them."""
        tools = {'go': 'golang (Go >= 1.24, the go.dev release)', 'gcc': 'gcc', 'zstd': 'zstd', 'tar': 'tar',
                 'mmdebstrap': 'mmdebstrap', 'apt-get': 'apt', 'strip': 'binutils', 'dpkg-deb': 'dpkg'}
        missing = [package for tool, package in tools.items() if not shutil.which(tool)]
        seccomp = subprocess.run(['gcc', '-print-file-name=libseccomp.a'], capture_output=True, text=True)
        if seccomp.returncode != 0 or not os.path.isabs(seccomp.stdout.strip()):
            missing.append('libseccomp-dev')
        if missing:
            raise Failed('missing on this machine: %s (as root: apt-get install --no-install-recommends %s)'
                         % (', '.join(missing), ' '.join(m.split()[0] for m in missing if not m.startswith('golang'))))

    def read_sources(self):
        self.check_tools()
        missing = [name for name, path in self.sources.items() if not os.path.isdir(path)]
        if missing:
            raise Failed('the sources directory lacks %s: it must hold %s'
                         % (', '.join(missing), '; '.join('%s/ (%s)' % item for item in SOURCES.items())))
        self.versions, self.hashes = {}, {}
        start = time.monotonic()
        for name, path in self.sources.items():
            self.versions[name] = source_version(path)
            self.hashes[name] = tree_hash(path)
        k3s = self.sources['k3s']
        version_sh = open(os.path.join(k3s, 'scripts', 'version.sh')).read()
        named = dict(re.findall(r'^(VERSION_CNIPLUGINS|VERSION_FLANNEL_PLUGIN)="([^"]+)"', version_sh, re.M))
        for name, variable in (('plugins', 'VERSION_CNIPLUGINS'), ('cni-plugin', 'VERSION_FLANNEL_PLUGIN')):
            have = self.versions[name][0]
            if have and have != named.get(variable):
                raise Failed('%s/ is %s, but k3s\'s scripts/version.sh names %s=%s: check out that tag'
                             % (name, have, variable, named.get(variable)))
            self.versions[name] = (named.get(variable), self.versions[name][1])
        for name in ('kai-scheduler', 'fake-gpu-operator'):
            if not self.versions[name][0]:
                raise Failed('%s/ does not say its version: a git clone at the release tag, or a file '
                             '%s/.source-version with "<tag> <commit>"' % (name, name))
        if not self.versions['k3s'][1]:
            raise Failed('k3s/ does not say its commit: a git clone, or k3s/.source-version with "<branch or tag> <commit>"')
        go = lambda *args: self.output(['go', 'list', '-mod=readonly', '-m', '-f'] + list(args), cwd=k3s,
                                       env=self.go_env(False))
        self.k3s_modules = {}
        for module in ('k8s.io/kubernetes', 'github.com/containerd/containerd/v2', 'github.com/opencontainers/runc',
                       'sigs.k8s.io/cri-tools', 'github.com/flannel-io/flannel', 'github.com/Mirantis/cri-dockerd',
                       'github.com/cloudnativelabs/kube-router/v2'):
            path, version = go('{{if .Replace}}{{.Replace.Path}} {{.Replace.Version}}{{else}}{{.Path}} {{.Version}}{{end}}',
                               module).split()
            self.k3s_modules[module] = (path, version)
        kubernetes = self.k3s_modules['k8s.io/kubernetes'][1]          # v1.34.3-k3s1
        commit = self.versions['k3s'][1]
        tag = self.versions['k3s'][0]
        # k3s's own rule (scripts/version.sh): a release tag is the version, any other commit
        # is "<Kubernetes version>+k3s-<commit>".
        if tag and re.match(r'^%s[+-]' % re.escape(kubernetes.split('-k3s')[0]), tag):
            self.k3s_version = tag
        else:
            self.k3s_version = '%s+k3s-%s' % (kubernetes.split('-k3s')[0], commit[:8])
        self.go_version = self.output(['go', 'env', 'GOVERSION'], env=self.go_env(False))
        agent = open(os.path.join(k3s, 'pkg', 'cli', 'cmds', 'agent.go')).read()
        pause = re.search(r'Name:\s+"pause-image",.*?Value:\s+"([^"]+)"', agent, re.S).group(1)
        self.pause_image = pause if pause.count('/') > 1 else 'docker.io/' + pause
        self.kai_version = self.versions['kai-scheduler'][0]
        self.fgo_version = self.versions['fake-gpu-operator'][0].lstrip('v')
        self.helm_version = K3S_DEFAULTS['k3s_helm_version']
        say('sources (%.1f s): k3s %s (commit %s), plugins %s, cni-plugin %s, KAI-Scheduler %s, '
            'fake-gpu-operator %s; %s; Helm %s from the Go proxy'
            % (time.monotonic() - start, self.k3s_version, commit[:12], self.versions['plugins'][0],
               self.versions['cni-plugin'][0], self.kai_version, self.fgo_version, self.go_version,
               self.helm_version))

    # ------------------------------------------------------------ k3s

    def copy_k3s(self, work):
        tree = os.path.join(work, 'k3s')
        shutil.copytree(self.sources['k3s'], tree, symlinks=True, ignore=shutil.ignore_patterns('.git'))
        return tree

    def k3s_versionflags(self):
        """scripts/build's VERSIONFLAGS; UpstreamGolang is the Go that builds it (k3s's
        ValidateGolang refuses to start unless they are equal)."""
        commit = self.versions['k3s'][1]
        mods = self.k3s_modules
        ctrd_path, ctrd_version = mods['github.com/containerd/containerd/v2']
        when = '2020-01-01T00:00:00Z'
        flags = [
            'github.com/k3s-io/k3s/pkg/version.Version=' + self.k3s_version,
            'github.com/k3s-io/k3s/pkg/version.GitCommit=' + commit[:8],
            'github.com/k3s-io/k3s/pkg/version.UpstreamGolang=' + self.go_version,
        ]
        for base in ('k8s.io/client-go/pkg', 'k8s.io/component-base'):
            flags += ['%s/version.gitVersion=%s' % (base, self.k3s_version), '%s/version.gitCommit=%s' % (base, commit),
                      '%s/version.gitTreeState=clean' % base, '%s/version.buildDate=%s' % (base, when)]
        flags += [
            'sigs.k8s.io/cri-tools/pkg/version.Version=' + mods['sigs.k8s.io/cri-tools'][1],
            'github.com/containerd/containerd/v2/version.Version=' + ctrd_version,
            'github.com/containerd/containerd/v2/version.Package=' + ctrd_path,
            'github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=' + self.versions['plugins'][0],
            'github.com/containernetworking/plugins/plugins/meta/flannel.Program=flannel',
            'github.com/containernetworking/plugins/plugins/meta/flannel.Version=%s+%s'
            % (self.versions['cni-plugin'][0], mods['github.com/flannel-io/flannel'][1]),
            'github.com/containernetworking/plugins/plugins/meta/flannel.Commit=HEAD',
            'github.com/cloudnativelabs/kube-router/v2/pkg/version.Version=' + mods['github.com/cloudnativelabs/kube-router/v2'][1],
            'github.com/Mirantis/cri-dockerd/cmd/version.Version=' + mods['github.com/Mirantis/cri-dockerd'][1],
            'github.com/Mirantis/cri-dockerd/cmd/version.GitCommit=HEAD',
            'go.etcd.io/etcd/api/v3/version.GitSHA=HEAD',
        ]
        return ' '.join('-X ' + flag for flag in flags)

    def build_k3s_server(self):
        inputs = {'k3s': self.hashes['k3s'], 'version': self.k3s_version, 'go': self.go_version, 'tags': K3S_TAGS,
                  'recipe': 'go build -trimpath ./cmd/server, scripts/build VERSIONFLAGS, manifests embedded'}

        def build(out, work):
            tree = self.copy_k3s(work)
            for manifest in glob.glob(os.path.join(tree, 'manifests', '*')):
                target = os.path.join(tree, 'pkg', 'deploy', 'embed', os.path.basename(manifest))
                (shutil.copytree if os.path.isdir(manifest) else shutil.copy2)(manifest, target)
            env = self.go_env(True, CGO_CFLAGS=K3S_CFLAGS)
            self.run(['go', 'mod', 'download'], cwd=tree, env=env)
            self.run(['go', 'build', '-v', '-trimpath', '-tags', K3S_TAGS, '-ldflags',
                      self.k3s_versionflags() + ' -w -s', '-o', os.path.join(out, 'k3s-server'), './cmd/server'],
                     cwd=tree, env=env)
        return self.piece('k3s-server', inputs, build)

    def build_cni(self):
        inputs = {'plugins': self.hashes['plugins'], 'cni-plugin': self.hashes['cni-plugin'], 'go': self.go_version,
                  'versions': [self.versions['plugins'][0], self.versions['cni-plugin'][0]], 'tags': K3S_TAGS,
                  'recipe': 'GOPATH build of plugins with cni-plugin as plugins/meta/flannel (scripts/build)'}

        def build(out, work):
            gopath = os.path.join(work, 'gopath')
            root = os.path.join(gopath, 'src', 'github.com', 'containernetworking', 'plugins')
            shutil.copytree(self.sources['plugins'], root, symlinks=True, ignore=shutil.ignore_patterns('.git'))
            flannel = os.path.join(root, 'plugins', 'meta', 'flannel')
            shutil.rmtree(flannel, ignore_errors=True)
            shutil.copytree(self.sources['cni-plugin'], flannel, symlinks=True, ignore=shutil.ignore_patterns('.git'))
            for source in glob.glob(os.path.join(flannel, '*.go')):
                text = open(source).read().replace('package main', 'package flannel').replace('func main', 'func Main')
                open(source, 'w').write(text)
            flags = ' '.join('-X github.com/containernetworking/plugins/' + flag for flag in (
                'pkg/utils/buildversion.BuildVersion=' + self.versions['plugins'][0],
                'plugins/meta/flannel.Program=flannel',
                'plugins/meta/flannel.Version=' + self.versions['cni-plugin'][0]))
            self.run(['go', 'build', '-trimpath', '-tags', K3S_TAGS, '-ldflags', flags + ' -w -s',
                      '-o', os.path.join(out, 'cni')], cwd=root,
                     env=self.go_env(False, GO111MODULE='off', GOPATH=gopath, GOFLAGS=''))
        return self.piece('cni', inputs, build)

    def module_dir(self, path, version, cwd):
        listed = json.loads(self.output(['go', 'mod', 'download', '-json', '%s@%s' % (path, version)], cwd=cwd,
                                        env=self.go_env(False, GOFLAGS='-mod=mod')))
        return listed['Dir']

    def build_shim(self):
        path, version = self.k3s_modules['github.com/containerd/containerd/v2']
        tags = K3S_TAGS.replace('netcgo', 'netgo')
        inputs = {'module': '%s@%s' % (path, version), 'go': self.go_version, 'tags': tags,
                  'recipe': 'go build ./cmd/containerd-shim-runc-v2 in the module (scripts/build)'}

        def build(out, work):
            tree = os.path.join(work, 'containerd')
            shutil.copytree(self.module_dir(path, version, work), tree, symlinks=True)
            subprocess.run(['chmod', '-R', 'u+w', tree], check=True)
            flags = '-X github.com/containerd/containerd/v2/version.Version=%s ' \
                    '-X github.com/containerd/containerd/v2/version.Package=%s' % (version, path)
            self.run(['go', 'build', '-trimpath', '-tags', tags, '-ldflags', flags + ' -w -s',
                      '-o', os.path.join(out, 'containerd-shim-runc-v2'), './cmd/containerd-shim-runc-v2'],
                     cwd=tree, env=self.go_env(True, GOFLAGS='-buildvcs=false -mod=mod'))
        return self.piece('containerd-shim', inputs, build)

    def build_runc(self):
        path, version = self.k3s_modules['github.com/opencontainers/runc']
        inputs = {'module': '%s@%s' % (path, version), 'go': self.go_version,
                  'recipe': 'static go build, tags seccomp urfave_cli_no_docs (libseccomp-dev)'}

        def build(out, work):
            tree = os.path.join(work, 'runc')
            shutil.copytree(self.module_dir(path, version, work), tree, symlinks=True)
            subprocess.run(['chmod', '-R', 'u+w', tree], check=True)
            self.run(['go', 'build', '-trimpath', '-tags', 'seccomp urfave_cli_no_docs', '-ldflags',
                      '-X main.version=%s -w -s -extldflags -static' % version.lstrip('v'),
                      '-o', os.path.join(out, 'runc'), '.'],
                     cwd=tree, env=self.go_env(True, GOFLAGS='-buildvcs=false -mod=mod'))
        return self.piece('runc', inputs, build)

    def build_k3s(self):
        """The self-extracting k3s (scripts/package-cli): the data tarball of bin/ embedded in cmd/k3s."""
        parts = {name: self.built[name][0] for name in ('k3s-server', 'cni', 'containerd-shim', 'runc')}
        inputs = {'parts': sorted(os.path.basename(path) for path in parts.values()), 'k3s': self.hashes['k3s'],
                  'version': self.k3s_version, 'go': self.go_version,
                  'recipe': 'scripts/package-cli: links, .sha256sums, .links, zstd -16 --long=25, cmd/k3s static'}

        def build(out, work):
            tree = self.copy_k3s(work)
            binaries = os.path.join(work, 'data', 'bin')
            os.makedirs(binaries)
            os.makedirs(os.path.join(work, 'data', 'etc'))
            for source, name in ((self.out('k3s-server', 'k3s-server'), 'k3s'), (self.out('cni', 'cni'), 'cni'),
                                 (self.out('containerd-shim', 'containerd-shim-runc-v2'), 'containerd-shim-runc-v2'),
                                 (self.out('runc', 'runc'), 'runc')):
                shutil.copy2(source, os.path.join(binaries, name))
            shutil.copy2(os.path.join(tree, 'contrib', 'util', 'check-config.sh'), os.path.join(binaries, 'check-config'))
            for name in K3S_LINKS:
                os.symlink('k3s', os.path.join(binaries, name))
            for name in CNI_LINKS:
                os.symlink('cni', os.path.join(binaries, name))
            with open(os.path.join(binaries, '.sha256sums'), 'w') as sums:
                for name in sorted(os.listdir(binaries)):
                    full = os.path.join(binaries, name)
                    if not name.startswith('.') and os.path.isfile(full) and not os.path.islink(full):
                        sums.write('%s  %s\n' % (file_sha256(full), name))
            with open(os.path.join(binaries, '.links'), 'w') as links:
                for name in sorted(os.listdir(binaries)):
                    if os.path.islink(os.path.join(binaries, name)):
                        links.write('%s %s\n' % (name, os.readlink(os.path.join(binaries, name))))
            tarball = os.path.join(work, 'data-linux.tar')
            self.run(['tar', '--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@%d' % EPOCH,
                      '-cf', tarball, './bin', './etc'], cwd=os.path.join(work, 'data'))
            self.run(['zstd', '-q', '-T0', '-16', '--long=25', '-f', '--rm', tarball, '-o', tarball + '.zst'])
            embed = os.path.join(tree, 'pkg', 'data', 'embed')
            shutil.copy2(tarball + '.zst', os.path.join(embed, file_sha256(tarball + '.zst') + '.tar.zst'))
            flags = '-X github.com/k3s-io/k3s/pkg/version.Version=%s -X github.com/k3s-io/k3s/pkg/version.GitCommit=%s' \
                    % (self.k3s_version, self.versions['k3s'][1][:8])
            self.run(['go', 'build', '-trimpath', '-tags', 'urfave_cli_no_docs', '-ldflags',
                      flags + ' -w -s -extldflags -static', '-o', os.path.join(out, 'k3s'), './cmd/k3s'],
                     cwd=tree, env=self.go_env(False))
        return self.piece('k3s', inputs, build)

    def build_kubectl(self):
        """kubectl for the crd-upgrader image, from k3s's Kubernetes (the server's compiled packages reused)."""
        inputs = {'k3s': self.hashes['k3s'], 'go': self.go_version, 'tags': K3S_TAGS,
                  'recipe': 'go build -trimpath k8s.io/kubernetes/cmd/kubectl, cgo as the server'}

        def build(out, work):
            tree = self.copy_k3s(work)
            self.run(['go', 'build', '-trimpath', '-tags', K3S_TAGS, '-ldflags',
                      '-X k8s.io/component-base/version.gitVersion=%s -w -s' % self.k3s_version,
                      '-o', os.path.join(out, 'kubectl'), 'k8s.io/kubernetes/cmd/kubectl'],
                     cwd=tree, env=self.go_env(True, CGO_CFLAGS=K3S_CFLAGS))
        return self.piece('kubectl', inputs, build)

    def build_pause(self):
        path, version = self.k3s_modules['k8s.io/kubernetes']
        inputs = {'module': '%s@%s' % (path, version), 'gcc': self.output(['gcc', '-dumpfullversion']),
                  'recipe': 'gcc -Os -static build/pause/linux/pause.c'}

        def build(out, work):
            source = os.path.join(self.module_dir(path, version, work), 'build', 'pause', 'linux', 'pause.c')
            self.run(['gcc', '-Os', '-Wall', '-Werror', '-static', '-DVERSION=%s' % version, '-o',
                      os.path.join(out, 'pause'), source])
            self.run(['strip', os.path.join(out, 'pause')])
        return self.piece('pause', inputs, build)

    # ------------------------------------------------------------ KAI, fake-gpu-operator, Helm

    def kai_components(self):
        """The KAI binaries the lab's images need: the chart's images that are Go commands."""
        names = [ref.rsplit('/', 1)[1].split(':')[0] for ref in PROFILES.chart_images(self.kai_version)]
        return [name for name in names if os.path.isdir(os.path.join(self.sources['kai-scheduler'], 'cmd', name))]

    def build_kai(self):
        commit = self.versions['kai-scheduler'][1] or 'unknown'
        components = self.kai_components()
        inputs = {'kai': self.hashes['kai-scheduler'], 'version': self.kai_version, 'commit': commit,
                  'go': self.go_version, 'components': components,
                  'recipe': 'CGO_ENABLED=0 go build -trimpath, build/makefile/golang.mk version stamps'}

        def build(out, work):
            package = 'github.com/kai-scheduler/KAI-scheduler/pkg/scheduler/version'
            module = self.output(['go', 'list', '-m'], cwd=self.sources['kai-scheduler'], env=self.go_env(False))
            package = module + '/pkg/scheduler/version'
            flags = ' '.join('-X %s.%s' % (package, stamp) for stamp in (
                'gitVersion=' + self.kai_version, 'gitCommit=' + commit, 'gitTreeState=clean',
                'buildDate=2020-01-01T00:00:00Z'))
            self.run(['go', 'build', '-v', '-trimpath', '-ldflags', flags + ' -s -w', '-o', out + '/']
                     + ['./cmd/' + name for name in components], cwd=self.sources['kai-scheduler'],
                     env=self.go_env(False))
        return self.piece('kai-scheduler', inputs, build)

    def build_fgo(self):
        binaries = sorted({name for files, _ in FGO_IMAGES.values() for name in files if name != 'preloader'})
        inputs = {'fgo': self.hashes['fake-gpu-operator'], 'version': self.fgo_version, 'go': self.go_version,
                  'binaries': binaries, 'gcc': self.output(['gcc', '-dumpfullversion']),
                  'recipe': 'CGO_ENABLED=0 go build -trimpath; gcc -fPIC -shared cmd/preloader/main.c'}

        def build(out, work):
            tree = self.sources['fake-gpu-operator']
            self.run(['go', 'build', '-v', '-trimpath', '-ldflags', '-s -w', '-o', out + '/']
                     + ['./cmd/' + name for name in binaries], cwd=tree, env=self.go_env(False))
            self.run(['gcc', '-fPIC', '-shared', '-o', os.path.join(out, 'preloader'),
                      os.path.join(tree, 'cmd', 'preloader', 'main.c')])
        return self.piece('fake-gpu-operator', inputs, build)

    def build_helm(self):
        version = self.helm_version
        inputs = {'version': version, 'go': self.go_version, 'recipe': 'go install -trimpath helm.sh/helm/v3/cmd/helm'}

        def build(out, work):
            flags = '-X helm.sh/helm/v3/internal/version.version=%s -X helm.sh/helm/v3/internal/version.gitTreeState=clean' \
                    % version
            self.run(['go', 'install', '-trimpath', '-ldflags', flags + ' -s -w', 'helm.sh/helm/v3/cmd/helm@' + version],
                     cwd=work, env=self.go_env(False, GOBIN=os.path.join(work, 'bin'), GOFLAGS=''))
            staged = os.path.join(work, 'tarball', 'linux-' + self.vm['arch'])
            os.makedirs(staged)
            shutil.copy2(os.path.join(work, 'bin', 'helm'), os.path.join(staged, 'helm'))
            shutil.copy2(os.path.join(work, 'bin', 'helm'), os.path.join(out, 'helm'))
            self.run(['tar', '--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@%d' % EPOCH,
                      '-czf', os.path.join(out, 'helm-%s-linux-%s.tar.gz' % (version, self.vm['arch'])),
                      'linux-' + self.vm['arch']], cwd=os.path.join(work, 'tarball'))
        return self.piece('helm', inputs, build)

    # ------------------------------------------------------------ Debian

    def build_rootfs(self):
        suite = self.vm['suite']
        inputs = {'suite': suite, 'variant': 'minbase', 'include': ['ca-certificates'],
                  'recipe': 'mmdebstrap --format=tar'}

        def build(out, work):
            if os.geteuid() != 0:
                raise Failed('the stand-in images\' root file system needs root (mmdebstrap)')
            env = dict(os.environ, SOURCE_DATE_EPOCH=str(EPOCH))
            self.run(['mmdebstrap', '--variant=minbase', '--include=ca-certificates', '--format=tar', '--quiet',
                      suite, os.path.join(out, 'debian-%s-minbase.tar' % self.vm_name.split('-')[1])], env=env)
        return self.piece('rootfs', inputs, build)

    def build_debs(self):
        """The VM's packages k3s-root would bring (and Python's packaging), with what a Debian minbase
        system lacks of their dependencies: apt resolves them against the stand-ins' root file system's
        dpkg status (a minimal system of the release), so the first of alternative dependencies is taken
        and nothing a VM image has anyway comes along."""
        suite = self.vm['suite']
        inputs = {'suite': suite, 'packages': VM_PACKAGES, 'arch': self.vm['arch'],
                  'rootfs': os.path.basename(self.built['rootfs'][0]),
                  'recipe': 'apt-get install --download-only against the minbase\'s dpkg status, a private apt state'}

        def build(out, work):
            state = os.path.join(work, 'apt')
            for sub in ('lists/partial', 'cache/archives/partial', 'etc/preferences.d', 'etc/apt.conf.d',
                        'etc/sources.list.d'):
                os.makedirs(os.path.join(state, sub))
            with open(os.path.join(state, 'etc', 'sources.list'), 'w') as handle:
                handle.write('deb http://deb.debian.org/debian %s main\n' % suite)
                handle.write('deb http://deb.debian.org/debian %s-updates main\n' % suite)
                handle.write('deb http://deb.debian.org/debian-security %s-security main\n' % suite)
            rootfs_tar = glob.glob(self.out('rootfs', '*.tar'))[0]
            self.run(['tar', '-xf', rootfs_tar, '-C', state, '--strip-components=4', './var/lib/dpkg/status'])
            options = ['-o', 'Dir::State=' + state, '-o', 'Dir::State::status=' + os.path.join(state, 'status'),
                       '-o', 'Dir::Cache=' + os.path.join(state, 'cache'),
                       '-o', 'Dir::Cache::archives=' + os.path.join(state, 'cache', 'archives'),
                       '-o', 'Dir::Etc::SourceList=' + os.path.join(state, 'etc', 'sources.list'),
                       '-o', 'Dir::Etc::SourceParts=' + os.path.join(state, 'etc', 'sources.list.d'),
                       '-o', 'Dir::Etc::Preferences=' + os.path.join(state, 'etc', 'preferences'),
                       '-o', 'Dir::Etc::PreferencesParts=' + os.path.join(state, 'etc', 'preferences.d'),
                       '-o', 'APT::Architecture=' + self.vm['arch'], '-o', 'APT::Architectures=' + self.vm['arch'],
                       '-o', 'Debug::NoLocking=true']
            self.run(['apt-get'] + options + ['update', '-q'])
            self.run(['apt-get'] + options + ['install', '--download-only', '--yes', '--no-install-recommends', '-q']
                     + VM_PACKAGES)
            for deb in glob.glob(os.path.join(state, 'cache', 'archives', '*.deb')):
                shutil.move(deb, out)
        return self.piece('debs', inputs, build)

    def build_wheels(self):
        python = self.vm['python']
        pins = os.path.join(REPO, 'roles', 'k3s', 'files', 'constraints', 'py%s.txt' % python)
        platforms = K3S_VARS['k3s_python_wheel_platforms'][self.vm['machine']]
        inputs = {'python': python, 'pins': file_sha256(pins), 'platforms': platforms,
                  'recipe': 'pip download --only-binary=:all: --no-deps'}

        def build(out, work):
            self.run([sys.executable, '-m', 'pip', 'download', '--quiet', '--disable-pip-version-check',
                      '--only-binary=:all:', '--no-deps', '--python-version', python, '--implementation', 'cp']
                     + ['--platform=' + platform for platform in platforms] + ['-d', out, '-r', pins])
        return self.piece('wheels', inputs, build)

    # ------------------------------------------------------------ images and charts

    def build_images(self):
        kai_refs = PROFILES.chart_images(self.kai_version)
        fgo_refs = [ref for ref in K3S_VARS['k3s_lab_images']['fake_gpu_operator'][self.fgo_version]
                    if '/run-ai/' in ref]
        standins = sorted({ref for refs in (K3S_VARS['k3s_lab_images']['fake_gpu_operator'][self.fgo_version],
                                            K3S_VARS['k3s_lab_images']['lab'],
                                            list(K3S_VARS['k3s_image_local_tags'].values()))
                           for ref in refs if ref.startswith('docker.io/library/ubuntu:')})
        inputs = {'parts': sorted(os.path.basename(self.built[name][0]) for name in
                                  ('kai-scheduler', 'fake-gpu-operator', 'kubectl', 'pause', 'rootfs')),
                  'kai': self.hashes['kai-scheduler'], 'fgo': self.hashes['fake-gpu-operator'],
                  'kai_refs': kai_refs, 'fgo_refs': fgo_refs, 'standins': standins, 'pause': self.pause_image,
                  'writer': file_sha256(os.path.join(HERE, 'image_archive.py')), 'zstd': ZSTD_IMAGES,
                  'recipe': 'docker-archives by image_archive.py: KAI on a distroless-like base, the rest on the minbase'}

        def build(out, work):
            layers = os.path.join(work, 'layers')
            os.makedirs(layers)
            os.makedirs(os.path.join(out, 'images'))
            rootfs_tar = glob.glob(self.out('rootfs', '*.tar'))[0]
            minbase = image_archive.Layer(rootfs_tar)
            release = self.vm_name.replace('-', ' ').title()
            standin = {'org.opencontainers.image.description': '%s; Debian %s minbase (mmdebstrap), not the image '
                       'named' % (STAND_IN_NOTE, release.split()[-1])}
            # KAI's base (its Dockerfile: nvcr.io distroless go): /tmp, a nonroot user, CA certificates (Debian's).
            base = os.path.join(work, 'base')
            os.makedirs(os.path.join(base, 'etc', 'ssl', 'certs'))
            with open(os.path.join(base, 'etc', 'passwd'), 'w') as handle:
                handle.write('root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n')
            with open(os.path.join(base, 'etc', 'group'), 'w') as handle:
                handle.write('root:x:0:\nnonroot:x:65532:\n')
            self.run(['tar', '-xf', rootfs_tar, '-C', os.path.join(base, 'etc', 'ssl', 'certs'), '--strip-components=4',
                      './etc/ssl/certs/ca-certificates.crt'])
            base_layer = image_archive.layer_from_files(os.path.join(layers, 'kai-base.tar'), [
                ('tmp', None, 0o1777, (0, 0)), ('home/nonroot', None, 0o755, (65532, 65532)),
                ('etc/passwd', os.path.join(base, 'etc', 'passwd'), 0o644, (0, 0)),
                ('etc/group', os.path.join(base, 'etc', 'group'), 0o644, (0, 0)),
                ('etc/ssl/certs/ca-certificates.crt', os.path.join(base, 'etc', 'ssl', 'certs', 'ca-certificates.crt'),
                 0o644, (0, 0))])
            kai = self.sources['kai-scheduler']
            notice = os.path.join(kai, 'NOTICE')
            kai_images = []
            for ref in kai_refs:
                name = ref.rsplit('/', 1)[1].split(':')[0]
                if name == 'crd-upgrader':
                    # deployments/crd-upgrader/Dockerfile: alpine, bash, kubectl, the CRDs, apply-crds.sh.
                    files = [('usr/bin/kubectl', self.out('kubectl', 'kubectl'), 0o755, (0, 0)),
                             ('apply-crds.sh', os.path.join(kai, 'deployments', 'crd-upgrader', 'apply-crds.sh'),
                              0o755, (0, 0)), ('NOTICE', notice, 0o644, (0, 0))]
                    crds = os.path.join(kai, 'deployments', 'kai-scheduler', 'crds')
                    for crd in sorted(os.listdir(crds)):
                        if crd.endswith('.yaml'):
                            files.append(('internal-crds/' + crd, os.path.join(crds, crd), 0o644, (0, 0)))
                    layer = image_archive.layer_from_files(os.path.join(layers, 'kai-crd-upgrader.tar'), files)
                    kai_images.append({'tags': [ref], 'layers': [minbase, layer], 'cmd': ['/apply-crds.sh'],
                                       'user': '65532:65532', 'labels': dict(standin, **{
                                           'gsb.kai_lab.stand-in-base': 'alpine:3.20 of KAI\'s Dockerfile'})})
                    continue
                # Dockerfile (prod): /workspace/app 0755 and NOTICE, owned 65532:0, user 65532.
                layer = image_archive.layer_from_files(os.path.join(layers, 'kai-%s.tar' % name), [
                    ('workspace', None, 0o755, (65532, 0)),
                    ('workspace/app', self.out('kai-scheduler', name), 0o755, (65532, 0)),
                    ('workspace/NOTICE', notice, 0o644, (65532, 0))])
                kai_images.append({'tags': [ref], 'layers': [base_layer, layer], 'entrypoint': ['/workspace/app'],
                                   'workdir': '/workspace', 'user': '65532:65532', 'env': ['SERVICE_NAME=' + name]})
            fgo_images = []
            for ref in fgo_refs:
                name = ref.rsplit('/', 1)[1].split(':')[0]
                contents, entrypoint = FGO_IMAGES[name]
                files = []
                for binary, targets in sorted(contents.items()):
                    for target in ([targets] if isinstance(targets, str) else targets):
                        files.append((target, self.out('fake-gpu-operator', binary), 0o755, (0, 0)))
                layer = image_archive.layer_from_files(os.path.join(layers, 'fgo-%s.tar' % name), files)
                fgo_images.append({'tags': [ref], 'layers': [minbase, layer], 'entrypoint': [entrypoint],
                                   'labels': dict(standin, **{'gsb.kai_lab.stand-in-base': 'ubuntu of its Dockerfile'})})
            pause_layer = image_archive.layer_from_files(os.path.join(layers, 'pause.tar'), [
                ('pause', self.out('pause', 'pause'), 0o755, (0, 0))])
            archives = [
                ('k3s-airgap-images-%s.tar' % self.vm['arch'],
                 [{'tags': [self.pause_image], 'layers': [pause_layer], 'entrypoint': ['/pause'], 'user': '65535:65535',
                   'labels': {'org.opencontainers.image.description': '%s; pause from Kubernetes %s\'s '
                              'build/pause/linux/pause.c under the name k3s runs' % (STAND_IN_NOTE,
                                                                                 self.k3s_modules['k8s.io/kubernetes'][1])}}]),
                ('images/kai-scheduler-%s.tar' % self.kai_version, kai_images),
                ('images/fake-gpu-operator-%s.tar' % self.fgo_version, fgo_images),
                ('images/stand-in-ubuntu-debian-%s-minbase.tar' % self.vm_name.split('-')[1],
                 [{'tags': standins, 'layers': [minbase], 'cmd': ['/bin/bash'], 'labels': standin}]),
            ]
            listing = {}
            for name, images in archives:
                tar = os.path.join(out, name)
                written = image_archive.write_archive(tar, images)
                self.run(['zstd'] + ZSTD_IMAGES + ['-f', '--rm', tar, '-o', tar + '.zst'])
                listing[name + '.zst'] = sorted(written)
            with open(os.path.join(out, 'images.json'), 'w') as handle:
                json.dump(listing, handle, indent=1, sort_keys=True)
        return self.piece('images', inputs, build)

    def build_charts(self):
        registry = PROFILES.profile_for(self.kai_version)['chart']['registry']
        fgo_chart = yaml.safe_load(open(os.path.join(self.sources['fake-gpu-operator'], 'deploy', 'fake-gpu-operator',
                                                     'Chart.yaml')))
        standins = [(dep['name'], str(dep['version'])) for dep in fgo_chart.get('dependencies') or []]
        inputs = {'kai': self.hashes['kai-scheduler'], 'kai_version': self.kai_version, 'registry': registry,
                  'fgo': self.hashes['fake-gpu-operator'], 'fgo_version': self.fgo_version, 'standins': standins,
                  'helm': os.path.basename(self.built['helm'][0]),
                  'recipe': 'KAI\'s release workflow: registry into values.yaml, helm package --version --app-version'}

        def build(out, work):
            helm = self.out('helm', 'helm')
            kai = os.path.join(work, 'kai-scheduler')
            shutil.copytree(os.path.join(self.sources['kai-scheduler'], 'deployments', 'kai-scheduler'), kai)
            values = os.path.join(kai, 'values.yaml')
            text = open(values).read()
            if 'registry/local/kai-scheduler' not in text:
                raise Failed('KAI\'s chart values.yaml has no registry/local/kai-scheduler to replace (%s)' % values)
            open(values, 'w').write(text.replace('registry/local/kai-scheduler', registry))
            env = dict(os.environ, HELM_CACHE_HOME=os.path.join(work, 'helm'), HELM_CONFIG_HOME=os.path.join(work, 'helm'),
                       HELM_DATA_HOME=os.path.join(work, 'helm'))
            self.run([helm, 'package', kai, '-d', out, '--version', self.kai_version, '--app-version', self.kai_version],
                     env=env)
            fgo = os.path.join(work, 'fake-gpu-operator')
            shutil.copytree(os.path.join(self.sources['fake-gpu-operator'], 'deploy', 'fake-gpu-operator'), fgo)
            for name, version in standins:
                chart = os.path.join(fgo, 'charts', name)
                os.makedirs(chart)
                with open(os.path.join(chart, 'Chart.yaml'), 'w') as handle:
                    yaml.safe_dump({'apiVersion': 'v2', 'name': name, 'version': version,
                                    'description': 'Empty %s: the lab turns this subchart off' % STAND_IN_NOTE},
                                   handle, sort_keys=False)
            self.run([helm, 'package', fgo, '-d', out, '--version', self.fgo_version, '--app-version', self.fgo_version],
                     env=env)
            with open(os.path.join(out, 'stand-ins.json'), 'w') as handle:
                json.dump(['fake-gpu-operator %s subchart %s %s (empty)' % (self.fgo_version, name, version)
                           for name, version in standins], handle, indent=1)
        return self.piece('charts', inputs, build)

    # ------------------------------------------------------------ the bundle

    def assemble(self, out):
        """The airgap directory (roles/k3s/README.md, Airgap) from the pieces, hard-linked, and its vars file."""
        if os.path.exists(out):
            shutil.rmtree(out)
        arch = self.vm['arch']
        layout = {'k3s': self.out('k3s', 'k3s'),
                  'k3s-airgap-images-%s.tar.zst' % arch: self.out('images', 'k3s-airgap-images-%s.tar.zst' % arch),
                  'helm-%s-linux-%s.tar.gz' % (self.helm_version, arch):
                      self.out('helm', 'helm-%s-linux-%s.tar.gz' % (self.helm_version, arch))}
        for path in glob.glob(self.out('images', 'images', '*.tar.zst')):
            layout['images/' + os.path.basename(path)] = path
        for path in glob.glob(self.out('charts', '*.tgz')):
            layout['charts/' + os.path.basename(path)] = path
        for path in glob.glob(self.out('wheels', '*.whl')):
            layout['wheels/' + os.path.basename(path)] = path
        debs_dir = 'debs/' + self.vm_name
        for path in glob.glob(self.out('debs', '*.deb')):
            layout['%s/%s' % (debs_dir, os.path.basename(path))] = path
        for target, source in sorted(layout.items()):
            os.makedirs(os.path.dirname(os.path.join(out, target)), exist_ok=True)
            try:
                os.link(source, os.path.join(out, target))
            except OSError:
                shutil.copy2(source, os.path.join(out, target))
        sums = {target: file_sha256(os.path.join(out, target)) for target in sorted(layout)}
        with open(os.path.join(out, 'SHA256SUMS'), 'w') as handle:
            handle.writelines('%s  %s\n' % (digest, target) for target, digest in sums.items())
        images = json.load(open(self.out('images', 'images.json')))
        standin_images = [ref for name, refs in images.items() if 'stand-in' in name for ref in refs] \
            + [self.pause_image]
        manifest = {
            'built': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC'),
            'vm': self.vm_name,
            'sources': {name: {'version': version, 'commit': commit, 'tree_sha256': self.hashes[name]}
                        for name, (version, commit) in self.versions.items()},
            'k3s_version': self.k3s_version, 'go': self.go_version, 'helm': self.helm_version,
            'kai_version': self.kai_version, 'fake_gpu_operator_version': self.fgo_version,
            'images': images,
            'stand_ins': {
                'images': standin_images,
                'charts': json.load(open(self.out('charts', 'stand-ins.json'))),
                'bases': 'KAI\'s crd-upgrader and fake-gpu-operator\'s images on the Debian minbase instead of '
                         'alpine and ubuntu; KAI\'s components on a distroless-like base of Debian\'s CA certificates',
            },
            'left_out': {
                'k3s-root': 'a buildroot release (downloads its own sources): the VM needs %s, carried as .debs in %s'
                            % (', '.join(sorted(HOST_TOOLS)), debs_dir),
                'k3s packaged components': 'no CoreDNS, local-path-provisioner, Traefik or metrics-server image: '
                                           'the role disables them (k3s_disable)',
            },
            'pieces': {name: {'seconds': seconds, 'reused': reused, 'directory': path}
                       for name, (path, seconds, reused) in self.built.items()},
            'sha256': sums,
        }
        with open(os.path.join(out, 'bundle.json'), 'w') as handle:
            json.dump(manifest, handle, indent=1, sort_keys=True)
        binary = 'k3s' if arch == 'amd64' else 'k3s-' + arch
        variables = {
            'k3s_airgap_dir': out,
            'k3s_version': self.k3s_version,
            'k3s_checksums': {self.k3s_version: {arch: {binary: sums['k3s'],
                                                        'k3s-airgap-images-%s.tar.zst' % arch:
                                                            sums['k3s-airgap-images-%s.tar.zst' % arch]}}},
            'k3s_helm_version': self.helm_version,
            'k3s_helm_checksums': {self.helm_version: {arch: sums['helm-%s-linux-%s.tar.gz' % (self.helm_version, arch)]}},
            'kai_lab_k3s_kai_version': self.kai_version,
            'fake_gpu_operator_chart_version': self.fgo_version,
            'k3s_airgap_kai_scheduler_chart_sha256': sums['charts/kai-scheduler-%s.tgz' % self.kai_version],
            'k3s_airgap_fake_gpu_operator_chart_sha256': sums['charts/fake-gpu-operator-%s.tgz' % self.fgo_version],
            'k3s_host_tools': sorted(HOST_TOOLS),
        }
        header = [
            '# Written by tests/k3s_bundle/build.py on %s: an airgap directory built here from source,' % manifest['built'],
            '# NOT upstream\'s bytes: k3s %s from %s, KAI-Scheduler %s, fake-gpu-operator %s,'
            % (self.k3s_version, self.versions['k3s'][1][:12], self.kai_version, self.fgo_version),
            '# stand-in images (%s; bundle.json says which and why).' % ', '.join(standin_images),
            '#   ansible-playbook -i INVENTORY playbooks/provision.yml -e @%s' % os.path.join(out, 'bundle-vars.yml'),
            '# k3s_host_tools: this k3s has no k3s-root; the role installs them from %s/ where the VM lacks them.'
            % debs_dir,
        ]
        with open(os.path.join(out, 'bundle-vars.yml'), 'w') as handle:
            handle.write('\n'.join(header) + '\n')
            yaml.safe_dump(variables, handle, sort_keys=False, default_flow_style=False, width=200)
        return manifest

    def build_all(self, out, only=None):
        steps = [('k3s-server', self.build_k3s_server), ('cni', self.build_cni),
                 ('containerd-shim', self.build_shim), ('runc', self.build_runc), ('k3s', self.build_k3s),
                 ('kubectl', self.build_kubectl), ('pause', self.build_pause), ('kai-scheduler', self.build_kai),
                 ('fake-gpu-operator', self.build_fgo), ('helm', self.build_helm), ('rootfs', self.build_rootfs),
                 ('debs', self.build_debs), ('wheels', self.build_wheels), ('images', self.build_images),
                 ('charts', self.build_charts)]
        if only:
            unknown = set(only) - {name for name, _ in steps}
            if unknown:
                raise Failed('no piece %s; pieces: %s' % (', '.join(sorted(unknown)), ', '.join(n for n, _ in steps)))
            steps = [(name, step) for name, step in steps if name in only]
        self.total = len(steps)
        start = time.monotonic()
        for name, step in steps:
            step()
        if only:
            say('built %s in %s' % (', '.join(only), minutes(time.monotonic() - start)))
            return None
        manifest = self.assemble(out)
        size = sum(os.path.getsize(os.path.join(out, target)) for target in manifest['sha256'])
        built = sum(seconds for _, seconds, reused in self.built.values() if not reused)
        say('bundle %s: %s in %d files; this run %s (pieces built %s, the rest reused); all pieces\' build time %s'
            % (out, human(size), len(manifest['sha256']), minutes(time.monotonic() - start), minutes(built),
               minutes(sum(seconds for _, seconds, _ in self.built.values()))))
        say('vars: %s' % os.path.join(out, 'bundle-vars.yml'))
        return manifest


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument('--sources', required=True, help='directory of the five checkouts')
    parser.add_argument('--out', help='the airgap directory to write (default: k3s-bundle/bundles/<name> in the cache)')
    parser.add_argument('--vm', default='debian-12', choices=sorted(VMS), help='the VM image the bundle is for')
    parser.add_argument('--pieces', nargs='+', help='build only these pieces (no bundle)')
    args = parser.parse_args(argv)
    os.nice(19 - os.nice(0))
    try:
        builder = Builder(args.sources, args.vm)
        builder.read_sources()
        out = os.path.abspath(args.out or os.path.join(CACHE, 'bundles', '%s-k3s-%s-kai-%s' % (
            args.vm, builder.k3s_version.replace('+', '_'), builder.kai_version)))
        builder.build_all(out, args.pieces)
    except Failed as error:
        say('FAILED: %s' % error)
        return 1
    except KeyboardInterrupt:
        say('interrupted')
        return 130
    return 0


if __name__ == '__main__':
    sys.exit(main())
