"""Container images as docker-archive tarballs (the layout `docker save`
writes and containerd's `ctr images import`, k3s's airgap import among them,
reads), written with Python's standard library: no container engine, no
registry.

One archive may hold several images; a layer they share is stored once. Each
layer is an uncompressed tar (a directory's files, or a tar file taken as
it is, such as mmdebstrap's); the whole archive is compressed afterwards.
Written deterministically: the same files give the same bytes.
"""

import hashlib
import io
import json
import os
import stat
import tarfile

# Every timestamp in a layer, a config and the archive (1 Jan 2020): the same
# inputs give the same archive, whatever day they were built.
EPOCH = 1577836800
DEFAULT_PATH = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'


class Layer:
    """One layer: its tar bytes' file and their sha256 (the diff ID)."""

    def __init__(self, path):
        self.path = path
        digest = hashlib.sha256()
        with open(path, 'rb') as handle:
            for block in iter(lambda: handle.read(1 << 20), b''):
                digest.update(block)
        self.digest = digest.hexdigest()
        self.size = os.path.getsize(path)


def _entry(info, owner=(0, 0), mode=None):
    info.uid, info.gid = owner
    info.uname = info.gname = ''
    info.mtime = EPOCH
    if mode is not None and not info.issym():
        info.mode = mode
    return info


def layer_from_files(out, files):
    """A layer of files: files is a list of (path in the image, source path or
    None for a directory, mode, (uid, gid)). Parent directories are added
    (0755, root) where not given. Returns a Layer."""
    entries = {}
    for target, source, mode, owner in files:
        target = target.strip('/')
        parts = target.split('/')
        for depth in range(1, len(parts)):
            parent = '/'.join(parts[:depth])
            entries.setdefault(parent, (None, 0o755, (0, 0)))
        entries[target] = (source, mode, owner)
    with tarfile.open(out, 'w', format=tarfile.PAX_FORMAT) as archive:
        for target in sorted(entries):
            source, mode, owner = entries[target]
            if source is None:
                info = tarfile.TarInfo(target)
                info.type = tarfile.DIRTYPE
                info.mode = mode
                archive.addfile(_entry(info, owner))
                continue
            info = archive.gettarinfo(source, arcname=target)
            if info.isdir() or not info.isreg():
                # A directory, or a link (its target, as it is).
                archive.addfile(_entry(info, owner, mode if info.isdir() else None))
                continue
            with open(source, 'rb') as handle:
                archive.addfile(_entry(info, owner, mode), handle)
    return Layer(out)


def layer_from_tree(out, root, prefix='', owner=(0, 0)):
    """A layer of a directory tree (each file's own mode), under prefix in the image."""
    files = []
    for directory, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(dirs) + sorted(names):
            source = os.path.join(directory, name)
            relative = os.path.relpath(source, root)
            mode = stat.S_IMODE(os.lstat(source).st_mode)
            is_dir = os.path.isdir(source) and not os.path.islink(source)
            files.append((os.path.join(prefix, relative), None if is_dir else source, mode, owner))
    return layer_from_files(out, files)


def image_config(layers, entrypoint=None, cmd=None, user=None, workdir=None, env=None, labels=None,
                 architecture='amd64'):
    """The image's config (JSON bytes) for these layers, as `docker save` writes it."""
    config = {'Env': [DEFAULT_PATH] + list(env or [])}
    if entrypoint:
        config['Entrypoint'] = list(entrypoint)
    if cmd:
        config['Cmd'] = list(cmd)
    if user:
        config['User'] = user
    if workdir:
        config['WorkingDir'] = workdir
    if labels:
        config['Labels'] = dict(labels)
    created = '2020-01-01T00:00:00Z'
    document = {
        'architecture': architecture,
        'os': 'linux',
        'created': created,
        'config': config,
        'rootfs': {'type': 'layers', 'diff_ids': ['sha256:' + layer.digest for layer in layers]},
        'history': [{'created': created, 'created_by': 'gsb.kai_lab tests/k3s_bundle'} for _ in layers],
    }
    return json.dumps(document, sort_keys=True, separators=(',', ':')).encode()


def write_archive(out, images):
    """A docker-archive of images: each a dict with tags (full names, e.g.
    ghcr.io/x/y:v1), layers (Layer list, base first) and the image_config
    keywords. Returns {tag: config digest}."""
    manifest, blobs, written = [], {}, {}
    for image in images:
        options = {key: value for key, value in image.items() if key not in ('tags', 'layers')}
        config = image_config(image['layers'], **options)
        config_digest = hashlib.sha256(config).hexdigest()
        blobs[config_digest + '.json'] = config
        manifest.append({'Config': config_digest + '.json', 'RepoTags': list(image['tags']),
                         'Layers': [layer.digest + '/layer.tar' for layer in image['layers']]})
        for tag in image['tags']:
            written[tag] = 'sha256:' + config_digest
    layers = {}
    for image in images:
        for layer in image['layers']:
            layers[layer.digest] = layer
    with tarfile.open(out, 'w', format=tarfile.PAX_FORMAT) as archive:
        def add_bytes(name, data):
            info = _entry(tarfile.TarInfo(name))
            info.size, info.mode = len(data), 0o644
            archive.addfile(info, io.BytesIO(data))
        for digest in sorted(layers):
            directory = _entry(tarfile.TarInfo(digest))
            directory.type, directory.mode = tarfile.DIRTYPE, 0o755
            archive.addfile(directory)
            info = _entry(tarfile.TarInfo(digest + '/layer.tar'))
            info.size, info.mode = layers[digest].size, 0o644
            with open(layers[digest].path, 'rb') as handle:
                archive.addfile(info, handle)
        for name in sorted(blobs):
            add_bytes(name, blobs[name])
        add_bytes('manifest.json', json.dumps(manifest, sort_keys=True, separators=(',', ':')).encode())
    return written


def read_archive(path):
    """What an archive holds, as containerd's import reads it: [(tags, config dict, [layer names])]."""
    images = []
    with tarfile.open(path) as archive:
        manifest = json.load(archive.extractfile('manifest.json'))
        for entry in manifest:
            config = json.load(archive.extractfile(entry['Config']))
            images.append((entry['RepoTags'], config, entry['Layers']))
    return images
