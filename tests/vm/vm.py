#!/usr/bin/env python3
"""One learner VM for the tests: a Debian image built from Debian's packages,
booted with QEMU, reached over SSH as a cloud image's sudo user.

  vm.py check                       can this machine boot the VM? one line; exit 0 or 3
  vm.py build [--release R]         the image (cached, keyed by its build inputs)
  vm.py up [--release R] [--memory MiB] [--cpus N] [--disk SIZE] [--inventory PATH]
  vm.py down                        poweroff, then the process; safe to run twice
  vm.py ssh COMMAND...              a command on the VM as the sudo user
  vm.py snapshot OUT.json           packages, users, sudo rules and files of the VM
  vm.py compare BEFORE.json AFTER.json   the differences; exit 1 when there are any

The image: mmdebstrap --variant=minbase of the release with PACKAGES and
customize.sh (host name, fstab, DHCP by systemd-networkd, QEMU's DNS, the sudo
user with an SSH key made for the image, no root login, an empty machine id,
this machine's extra CA certificates), then mkfs.ext4 -d; the kernel and
initrd are copied out and booted directly (no boot loader, no cloud-init).
Everything lives in ${KAI_LAB_CACHE:-~/.cache/gsb-kai-lab}/vm/: images/ by
release and the hash of their build inputs, run/ for the one VM that runs.

Python's standard library only: molecule-qemu (PyPI) boots a downloaded cloud
image with a cloud-init ISO, which cannot be had here, and chooses no
accelerator; nothing else on PyPI builds an image from Debian's packages.
"""

import argparse
import glob
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(os.environ.get('KAI_LAB_CACHE') or os.path.expanduser('~/.cache/gsb-kai-lab'), 'vm')
RUN = os.path.join(CACHE, 'run')
STATE = os.path.join(RUN, 'vm.json')
RELEASES = {'bookworm': '12', 'trixie': '13'}
# The release make test's VM stage boots unless KAI_LAB_VM_RELEASES says otherwise (tests/molecule.sh).
DEFAULT_RELEASE = 'trixie'
PACKAGES = ['systemd-sysv', 'udev', 'dbus', 'linux-image-amd64', 'initramfs-tools', 'openssh-server', 'sudo',
            'python3', 'python3-venv', 'ca-certificates', 'iproute2', 'netbase', 'kmod']
USER = 'debian'
HOSTNAME = 'kai-lab-vm'
CA_DIR = '/usr/local/share/ca-certificates'
# The image's file system as built; up grows a copy to --disk.
IMAGE_SIZE = '3G'
# Bump when the build steps below change (customize.sh and PACKAGES count by themselves).
BUILD_FORMAT = '1'
# The guide's VM (docs/docsite/rst/instructor_guide.rst): 2 vCPUs, 4 GiB; a stock 10 GiB disk.
DEFAULT_MEMORY = 4096
DEFAULT_CPUS = 2
DEFAULT_DISK = '10G'
BOOT_TIMEOUT = int(os.environ.get('KAI_LAB_VM_BOOT_TIMEOUT', '300'))
SSH_OPTIONS = ['-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR',
               '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes']


class Failed(Exception):
    """A step failed; the message says what and what to do."""


class Refused(Failed):
    """Nothing was started (a VM runs already): nothing to clean up."""


def say(message):
    print('vm: ' + message, flush=True)


def run(argv, log=None, timeout=None):
    """Run argv; output into log (a file object) or captured; raise Failed naming the command."""
    try:
        done = subprocess.run(argv, stdout=log or subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout)
    except FileNotFoundError:
        raise Failed('%s is not installed (tests/system-deps.sh installs it as root)' % argv[0])
    except subprocess.TimeoutExpired:
        raise Failed('%s did not finish within %d s' % (' '.join(argv[:3]), timeout))
    if done.returncode != 0:
        tail = '' if log else ': ' + ' '.join((done.stdout or '').split())[-600:]
        raise Failed('%s exited %d%s' % (' '.join(argv[:3]), done.returncode, tail))
    return done.stdout


# ---------------------------------------------------------------- the image

def ca_files():
    return sorted(glob.glob(os.path.join(CA_DIR, '*.crt')))


def image_key(release):
    digest = hashlib.sha256()
    parts = [BUILD_FORMAT, release, ','.join(PACKAGES), USER, HOSTNAME, IMAGE_SIZE]
    with open(os.path.join(HERE, 'customize.sh'), 'rb') as handle:
        parts.append(handle.read().decode())
    for path in ca_files():
        with open(path, 'rb') as handle:
            parts.append(os.path.basename(path) + '\n' + handle.read().decode(errors='replace'))
    digest.update('\0'.join(parts).encode())
    return digest.hexdigest()[:12]


def image_dir(release):
    return os.path.join(CACHE, 'images', '%s-%s' % (release, image_key(release)))


def mounts_under(path):
    with open('/proc/self/mounts') as handle:
        return [line.split()[1] for line in handle if line.split()[1].startswith(path.rstrip('/') + '/')]


def remove_tree(path):
    """rm -rf that never follows into a mount left under path (a build's /proc or /dev)."""
    if not os.path.lexists(path):
        return
    left = mounts_under(path)
    if left:
        raise Failed('%s still has mounts (%s): unmount them, then remove it' % (path, ', '.join(left)))
    subprocess.run(['rm', '-rf', '--one-file-system', path], check=True)


class Heartbeat:
    """Prints the elapsed seconds of a long step every `every` seconds."""

    def __init__(self, what, every=30):
        self.what, self.every, self.start = what, every, time.monotonic()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True)

    def _beat(self):
        while not self.stop.wait(self.every):
            say('%s: %d s' % (self.what, time.monotonic() - self.start))

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def build(release):
    """The image of release, built once per build inputs; its directory."""
    if release not in RELEASES:
        raise Failed('release %s is not one of %s' % (release, ', '.join(RELEASES)))
    final = image_dir(release)
    if os.path.exists(os.path.join(final, '.complete')):
        say('image %s: reused (%s)' % (release, final))
        return final
    for tool in ('mmdebstrap', 'mkfs.ext4', 'ssh-keygen'):
        if not shutil.which(tool, path=os.environ.get('PATH', '') + ':/usr/sbin:/sbin'):
            raise Failed('%s is not installed (tests/system-deps.sh installs it as root)' % tool)
    if os.geteuid() != 0:
        raise Failed('building the image needs root (mmdebstrap in a chroot, the files owned by root)')
    work = final + '.tmp'
    remove_tree(work)
    os.makedirs(work)
    start = time.monotonic()
    say('image %s: building from Debian\'s packages into %s (about 2 minutes; log %s/build.log)'
        % (release, final, final))
    try:
        with open(os.path.join(work, 'build.log'), 'w') as log:
            run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'kai-lab-vm', '-f',
                 os.path.join(work, 'id_ed25519')], log=log)
            root = os.path.join(work, 'root')
            hook = 'sh %s "$1" %s %s %s %s' % tuple(shlex.quote(part) for part in (
                os.path.join(HERE, 'customize.sh'), os.path.join(work, 'id_ed25519.pub'), USER, HOSTNAME, CA_DIR))
            with Heartbeat('image %s: mmdebstrap' % release):
                run(['mmdebstrap', '--variant=minbase', '--include=' + ','.join(PACKAGES),
                     '--customize-hook=' + hook, release, root], log=log, timeout=1800)
            for pattern, name in (('vmlinuz-*', 'vmlinuz'), ('initrd.img-*', 'initrd.img')):
                found = sorted(glob.glob(os.path.join(root, 'boot', pattern)))
                if not found:
                    raise Failed('the image has no /boot/%s (see %s/build.log)' % (pattern, work))
                shutil.copyfile(found[-1], os.path.join(work, name))
            used = int(run(['du', '-sxm', root]).split()[0])
            run([shutil.which('mkfs.ext4', path=os.environ.get('PATH', '') + ':/usr/sbin:/sbin'), '-q', '-F',
                 '-L', HOSTNAME, '-d', root, os.path.join(work, 'disk.raw'), IMAGE_SIZE], log=log)
            remove_tree(root)
        with open(os.path.join(work, 'image.json'), 'w') as handle:
            json.dump({'release': release, 'key': image_key(release), 'packages': PACKAGES, 'used_mib': used,
                       'build_seconds': round(time.monotonic() - start)}, handle)
        open(os.path.join(work, '.complete'), 'w').close()
        os.rename(work, final)
    except BaseException:
        # The tree (and a half-made disk) goes; build.log stays beside for a look.
        try:
            remove_tree(os.path.join(work, 'root'))
        except Failed as error:
            say(str(error))
        raise
    # Images of this release from older build inputs are of no more use.
    for old in glob.glob(os.path.join(CACHE, 'images', release + '-*')):
        if old != final:
            remove_tree(old)
    say('image %s: built in %d s (%d MiB of files)' % (release, time.monotonic() - start, used))
    return final


# ---------------------------------------------------------------- the VM

def accelerator():
    """(qemu arguments, one line saying which and why)."""
    modules = {name: os.path.exists('/sys/module/' + name) for name in ('kvm_intel', 'kvm_amd', 'kvm_pvm')}
    tcg = ['-accel', 'tcg,thread=multi', '-cpu', 'max']
    if not os.access('/dev/kvm', os.R_OK | os.W_OK):
        return tcg, 'TCG (software emulation): no usable /dev/kvm on this machine; expect 5-15 s per module call'
    if modules['kvm_pvm'] and not (modules['kvm_intel'] or modules['kvm_amd']):
        return tcg, ('TCG (software emulation): /dev/kvm here is PVM (kvm_pvm, no kvm_intel/kvm_amd), under '
                     'which a stock Debian kernel does not boot; expect 5-15 s per module call')
    which = 'kvm_intel' if modules['kvm_intel'] else 'kvm_amd' if modules['kvm_amd'] else 'kvm'
    return ['-accel', 'kvm', '-cpu', 'host'], 'KVM (%s): hardware virtualisation' % which


def free_port():
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def read_state():
    try:
        with open(STATE) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def qemu_alive(state):
    """Whether the state's pid is still this VM's QEMU (not a reused pid)."""
    pid = (state or {}).get('pid')
    if not pid:
        return False
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as handle:
            cmdline = handle.read().decode(errors='replace')
    except OSError:
        return False
    return 'qemu-system' in cmdline and RUN in cmdline


def ssh_argv(state, command, timeout=10):
    return (['ssh'] + SSH_OPTIONS + ['-o', 'ConnectTimeout=%d' % timeout, '-i', state['key'], '-p',
                                     str(state['port']), '%s@127.0.0.1' % state['user'], command])


def size_bytes(size):
    units = {'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40}
    size = str(size).strip().upper().rstrip('B').rstrip('I')
    if size and size[-1] in units:
        return int(float(size[:-1]) * units[size[-1]])
    return int(size)


def inventory_text(state):
    """An Ansible inventory (YAML) of the VM: the sudo user, its key, no host key prompts, pipelining."""
    values = {
        'ansible_host': '127.0.0.1',
        'ansible_port': state['port'],
        'ansible_user': state['user'],
        'ansible_ssh_private_key_file': state['key'],
        'ansible_ssh_common_args': ' '.join(SSH_OPTIONS),
        'ansible_ssh_pipelining': True,
        'ansible_python_interpreter': '/usr/bin/python3',
    }
    lines = ['# Written by tests/vm/vm.py up: the VM that runs now (%s, %d MiB, %s disk); removed by down.'
             % (state['release'], state['memory'], state['disk']), 'all:', '  hosts:', '    %s:' % HOSTNAME]
    lines += ['      %s: %s' % (key, json.dumps(value)) for key, value in values.items()]
    return '\n'.join(lines) + '\n'


def up(release, memory, cpus, disk, inventory, timeout):
    state = read_state()
    if qemu_alive(state):
        raise Refused('a VM runs already (%s, pid %d, SSH on 127.0.0.1:%d): run tests/vm/vm.py down first'
                     % (state['release'], state['pid'], state['port']))
    if os.path.exists(RUN):
        down(quiet=True)
    image = build(release)
    os.makedirs(RUN)
    args, why = accelerator()
    say('accelerator: ' + why)
    disk_path = os.path.join(RUN, 'disk.raw')
    state = {'release': release, 'memory': memory, 'cpus': cpus, 'disk': disk, 'user': USER,
             'key': os.path.join(image, 'id_ed25519'), 'image': image, 'inventory': inventory, 'pid': None,
             'port': None, 'accelerator': why}
    # The state first: down finds and cleans whatever this start leaves, also when interrupted.
    write_state(state)
    start = time.monotonic()
    run(['cp', '--sparse=always', os.path.join(image, 'disk.raw'), disk_path])
    if size_bytes(disk) < os.path.getsize(disk_path):
        raise Failed('--disk %s is smaller than the image (%s)' % (disk, IMAGE_SIZE))
    os.truncate(disk_path, size_bytes(disk))
    sbin = os.environ.get('PATH', '') + ':/usr/sbin:/sbin'
    run([shutil.which('e2fsck', path=sbin) or 'e2fsck', '-fy', disk_path])
    run([shutil.which('resize2fs', path=sbin) or 'resize2fs', disk_path])
    for attempt in range(3):
        state['port'] = free_port()
        argv = ['qemu-system-x86_64', '-name', 'kai-lab-vm-' + release] + args + [
            '-m', str(memory), '-smp', str(cpus), '-kernel', os.path.join(image, 'vmlinuz'),
            '-initrd', os.path.join(image, 'initrd.img'),
            '-append', 'root=/dev/vda rw console=ttyS0 panic=1',
            '-drive', 'file=%s,if=virtio,format=raw' % disk_path,
            '-netdev', 'user,id=net0,hostfwd=tcp:127.0.0.1:%d-:22' % state['port'],
            '-device', 'virtio-net-pci,netdev=net0', '-no-reboot', '-display', 'none', '-monitor', 'none',
            '-serial', 'file:' + os.path.join(RUN, 'serial.log'), '-pidfile', os.path.join(RUN, 'qemu.pid'),
            '-daemonize']
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if done.returncode == 0:
            break
        # Another program took the port between the probe and QEMU: try another.
        if 'hostfwd' not in done.stdout or attempt == 2:
            raise Failed('QEMU did not start: ' + ' '.join(done.stdout.split())[-600:])
    with open(os.path.join(RUN, 'qemu.pid')) as handle:
        state['pid'] = int(handle.read().strip())
    write_state(state)
    say('%s VM started (pid %d, %d MiB, %d vCPUs, %s disk); waiting for SSH on 127.0.0.1:%d, at most %d s'
        % (release, state['pid'], memory, cpus, disk, state['port'], timeout))
    last = 0
    while True:
        elapsed = time.monotonic() - start
        if not qemu_alive(state):
            raise Failed('QEMU exited during boot; the serial console said: ' + serial_tail())
        probe = subprocess.run(ssh_argv(state, 'true', timeout=5), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=30)
        if probe.returncode == 0:
            break
        if elapsed > timeout:
            raise Failed('no SSH on 127.0.0.1:%d within %d s; the serial console said: %s'
                         % (state['port'], timeout, serial_tail()))
        if elapsed - last >= 10:
            last = elapsed
            say('waiting for SSH: %d s (console: %s)' % (elapsed, serial_tail(1)[:100]))
        time.sleep(2)
    state['boot_seconds'] = round(time.monotonic() - start)
    write_state(state)
    if inventory:
        os.makedirs(os.path.dirname(os.path.abspath(inventory)), exist_ok=True)
        with open(inventory, 'w') as handle:
            handle.write(inventory_text(state))
    with open(os.path.join(RUN, 'inventory.yml'), 'w') as handle:
        handle.write(inventory_text(state))
    say('SSH answers after %d s: ssh %s (inventory %s)'
        % (state['boot_seconds'], ' '.join(shlex.quote(a) for a in ssh_argv(state, '')[1:-1]),
           inventory or os.path.join(RUN, 'inventory.yml')))
    return state


def write_state(state):
    with open(STATE + '.tmp', 'w') as handle:
        json.dump(state, handle, indent=1)
    os.replace(STATE + '.tmp', STATE)


def serial_tail(lines=3):
    try:
        with open(os.path.join(RUN, 'serial.log'), errors='replace') as handle:
            text = [' '.join(re.sub(r'\x1b\[[0-9;]*[A-Za-z]', '', line).split())
                    for line in handle.read().splitlines()]
            text = [line for line in text if line]
    except OSError:
        return '(no serial log)'
    return ' | '.join(text[-lines:]) or '(nothing yet)'


def down(quiet=False):
    """Poweroff over SSH, then the process; the run directory and the inventory go. Safe twice."""
    state = read_state()
    if not os.path.exists(RUN):
        if not quiet:
            say('no VM runs')
        return
    if qemu_alive(state):
        pid = state['pid']
        if state.get('port'):
            try:
                subprocess.run(ssh_argv(state, 'sudo systemctl poweroff', timeout=5), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=20)
            except subprocess.TimeoutExpired:
                pass
        deadline = time.monotonic() + 60
        while qemu_alive(state) and time.monotonic() < deadline:
            time.sleep(1)
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            if not qemu_alive(state):
                break
            os.kill(pid, sig)
            deadline = time.monotonic() + wait
            while qemu_alive(state) and time.monotonic() < deadline:
                time.sleep(0.5)
        if qemu_alive(state):
            raise Failed('QEMU (pid %d) did not stop' % pid)
        say('VM stopped (%s, pid %d)' % (state['release'], pid))
    # The console of the last VM stays for a look after a failure.
    if os.path.exists(os.path.join(RUN, 'serial.log')):
        shutil.copyfile(os.path.join(RUN, 'serial.log'), os.path.join(CACHE, 'last-serial.log'))
    if state and state.get('inventory') and os.path.exists(state['inventory']):
        os.remove(state['inventory'])
    remove_tree(RUN)


def ssh(command):
    state = read_state()
    if not qemu_alive(state) or not state.get('port'):
        raise Failed('no VM runs (tests/vm/vm.py up starts one)')
    return subprocess.run(ssh_argv(state, command)).returncode


def check(memory=DEFAULT_MEMORY):
    """Why this machine cannot boot the VM, or None."""
    sbin = os.environ.get('PATH', '') + ':/usr/sbin:/sbin'
    missing = [tool for tool in ('qemu-system-x86_64', 'mmdebstrap', 'mkfs.ext4', 'resize2fs', 'ssh', 'ssh-keygen')
               if not shutil.which(tool, path=sbin)]
    if missing:
        return '%s not installed (tests/system-deps.sh installs them as root)' % ', '.join(missing)
    if os.uname().machine != 'x86_64':
        return 'the VM image is amd64 and this machine is %s' % os.uname().machine
    if os.geteuid() != 0:
        return 'building the image needs root (mmdebstrap in a chroot)'
    with open('/proc/meminfo') as handle:
        available = int(next(line for line in handle if line.startswith('MemAvailable:')).split()[1]) // 1024
    if available < memory + 1024:
        return 'only %d MiB of memory available; the VM needs %d MiB and 1 GiB beside it' % (available, memory)
    os.makedirs(CACHE, exist_ok=True)
    usage = shutil.disk_usage(CACHE)
    if usage.free < 8 << 30:
        return 'only %.1f GiB free in %s; the image and the VM\'s disk need 8 GiB' % (usage.free / (1 << 30), CACHE)
    return None


# ---------------------------------------------------------------- what the VM holds

# Run as root in one SSH command: the packages, the users and groups, the sudo
# rules, and every file under the directories the lab may change (type, mode,
# owner, size and sha256 or link target). Left out: apt's and dpkg's own
# records (the package list stands for them), systemd's and sudo's run-time
# state, which change by themselves.
SNAPSHOT_SCRIPT = r'''
set -u
echo '## packages'
dpkg-query -W -f '${Package}:${Architecture} ${Version} ${db:Status-Abbrev}\n'
echo '## users'
getent passwd
echo '## groups'
getent group
echo '## sudo'
for f in /etc/sudoers /etc/sudoers.d/*; do
  [ -f "$f" ] && grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$f" | sed "s|^|$f: |"
done
echo '## files'
find /etc /var/lib /opt /usr/local /root/.kube /home/*/.kube -xdev \
  \( -path /var/lib/apt -o -path /var/lib/dpkg -o -path /var/lib/systemd -o -path /var/lib/sudo \
     -o -path /var/lib/private -o -path /var/lib/ucf -o -path /etc/ld.so.cache \) -prune \
  -o -printf '%y %m %u:%g %s %p %l\n' 2>/dev/null
echo '## hashes'
find /etc /var/lib /opt /usr/local /root/.kube /home/*/.kube -xdev \
  \( -path /var/lib/apt -o -path /var/lib/dpkg -o -path /var/lib/systemd -o -path /var/lib/sudo \
     -o -path /var/lib/private -o -path /var/lib/ucf -o -path /etc/ld.so.cache \) -prune \
  -o -type f -print0 2>/dev/null | xargs -0 -r sha256sum
'''


def snapshot(out):
    state = read_state()
    if not qemu_alive(state) or not state.get('port'):
        raise Failed('no VM runs (tests/vm/vm.py up starts one)')
    start = time.monotonic()
    done = subprocess.run(ssh_argv(state, 'sudo sh -s'), input=SNAPSHOT_SCRIPT, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=600)
    if done.returncode != 0 or '## hashes' not in done.stdout:
        raise Failed('the snapshot failed (exit %d): %s' % (done.returncode, done.stderr.strip()[-600:]))
    sections, name = {}, None
    for line in done.stdout.splitlines():
        if line.startswith('## '):
            name = line[3:]
            sections[name] = {}
        elif name == 'packages':
            package, rest = line.split(' ', 1)
            sections[name][package] = rest
        elif name in ('users', 'groups'):
            sections[name][line.split(':', 1)[0]] = line
        elif name == 'sudo':
            sections[name][line] = ''
        elif name == 'files':
            kind, mode, owner, size, rest = line.split(' ', 4)
            path, _, target = rest.partition(' ')
            sections[name][path] = '%s %s %s' % (kind, mode, owner) + (
                ' -> ' + target if kind == 'l' else '' if kind == 'd' else ' %s bytes' % size)
        elif name == 'hashes':
            digest, path = line.split('  ', 1)
            if path in sections['files']:
                sections['files'][path] += ' sha256:' + digest[:16]
    sections.pop('hashes', None)
    with open(out, 'w') as handle:
        json.dump(sections, handle, indent=0, sort_keys=True)
    say('snapshot %s: %d packages, %d files (%d s)'
        % (out, len(sections['packages']), len(sections['files']), time.monotonic() - start))
    return sections


def differences(before, after, limit=40):
    """Lines naming what differs; under a directory that came or went, only the directory."""
    lines = []
    for section in sorted(set(before) | set(after)):
        old, new = before.get(section, {}), after.get(section, {})
        added = sorted(set(new) - set(old))
        removed = sorted(set(old) - set(new))
        changed = sorted(key for key in set(old) & set(new) if old[key] != new[key])
        for sign, keys, source in (('+', added, new), ('-', removed, old)):
            shown = []
            for key in keys:
                if section == 'files' and any(key.startswith(top + '/') for top in shown):
                    continue
                shown.append(key)
            for key in shown:
                under = sum(1 for other in keys if other.startswith(key + '/')) if section == 'files' else 0
                lines.append('%s: %s %s %s%s' % (section, sign, key, source[key],
                                                 ' (and %d entries under it)' % under if under else ''))
        lines += ['%s: ~ %s %s -> %s' % (section, key, old[key], new[key]) for key in changed]
    if len(lines) > limit:
        lines = lines[:limit] + ['... and %d more' % (len(lines) - limit)]
    return lines


def load(path):
    with open(path) as handle:
        return json.load(handle)


# ---------------------------------------------------------------- the command line

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    commands = parser.add_subparsers(dest='command', required=True)
    commands.add_parser('check', help='say whether this machine can boot the VM')
    commands.add_parser('default-release', help='print the release booted unless one is named')
    for name in ('build', 'up'):
        sub = commands.add_parser(name)
        sub.add_argument('--release', default=os.environ.get('KAI_LAB_VM_RELEASE') or DEFAULT_RELEASE,
                         choices=sorted(RELEASES))
        if name == 'up':
            sub.add_argument('--memory', type=int, default=DEFAULT_MEMORY, help='MiB (default %(default)s)')
            sub.add_argument('--cpus', type=int, default=DEFAULT_CPUS)
            sub.add_argument('--disk', default=DEFAULT_DISK, help='disk size (default %(default)s)')
            sub.add_argument('--inventory', help='also write the Ansible inventory here')
            sub.add_argument('--timeout', type=int, default=BOOT_TIMEOUT, help='seconds to wait for SSH')
    commands.add_parser('down')
    sub = commands.add_parser('ssh')
    sub.add_argument('words', nargs=argparse.REMAINDER)
    sub = commands.add_parser('snapshot')
    sub.add_argument('out')
    sub = commands.add_parser('compare')
    sub.add_argument('before')
    sub.add_argument('after')
    args = parser.parse_args(argv)

    # Interrupted or killed: stop a VM that up was starting, then leave.
    def interrupted(signum, _frame):
        raise KeyboardInterrupt('signal %d' % signum)
    signal.signal(signal.SIGTERM, interrupted)
    try:
        if args.command == 'check':
            why = check()
            print('VM stage: ' + ('runs (%s)' % accelerator()[1] if why is None else 'cannot run here: ' + why))
            return 0 if why is None else 3
        if args.command == 'default-release':
            print(DEFAULT_RELEASE)
            return 0
        if args.command == 'build':
            build(args.release)
        elif args.command == 'up':
            try:
                up(args.release, args.memory, args.cpus, args.disk, args.inventory, args.timeout)
            except Refused:
                raise
            except BaseException:
                say('stopping the VM that did not come up')
                down(quiet=True)
                raise
        elif args.command == 'down':
            down()
        elif args.command == 'ssh':
            return ssh(' '.join(args.words))
        elif args.command == 'snapshot':
            snapshot(args.out)
        elif args.command == 'compare':
            lines = differences(load(args.before), load(args.after))
            print('\n'.join(lines) if lines else 'no difference')
            return 1 if lines else 0
    except Failed as error:
        say('FAILED: %s' % error)
        return 1
    except KeyboardInterrupt:
        say('interrupted')
        return 130
    return 0


if __name__ == '__main__':
    sys.exit(main())
