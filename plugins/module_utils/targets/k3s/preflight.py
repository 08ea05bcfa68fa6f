# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The k3s target's preflight: whether a learner VM can take the lab, decided
from its Ansible facts and a few probes (roles/k3s/tasks/preflight.yml), before
anything is installed. Each problem says what to do, in English and Korean.

The supported images are the ones the VM's Python environment is pinned for
(roles/k3s/files/constraints/py<X.Y>.txt); the instructor guide's table (docs/docsite/rst/instructor_guide.rst) is this table
(tests/unit/test_k3s_preflight.py).

Layer: the targets (k3s); may use the cluster client, the readiness gate, this host's processes, the KAI domain, the learner's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import fill

# (distribution fact, distribution_version fact): the Python 3 the image ships.
SUPPORTED_IMAGES = (
    ('Ubuntu', '22.04', '3.10'),
    ('Ubuntu', '24.04', '3.12'),
    ('Debian', '12', '3.11'),
    ('Debian', '13', '3.13'),
)
# uname -m as Ansible reports it -> the architecture k3s, Helm and the wheels are pinned for.
ARCHITECTURES = {'x86_64': 'amd64', 'aarch64': 'arm64'}
# k3s server + KAI + fake-gpu-operator + the lab's pods on one node. A VM of
# 4 GiB reports a MemTotal of 3.7-3.9 GiB (the kernel keeps the rest), hence
# the margin below 4096.
MIN_CPUS = 2
MIN_MEMORY_MB = 3584
# Disk, on the filesystem of k3s's data directory (usually / with /usr/local
# and /opt): what the lab puts there, estimated from its parts (registries are
# not reachable from the build machine; sizes compressed + unpacked, as
# containerd keeps both): k3s's binary, its unpacked data and its airgap image
# archive, kept and imported, ~1.2 GiB; KAI's 8 images ~1.0 GiB (v0.4.7's
# scheduler was 128 MB compressed, kai-scheduler/KAI-Scheduler#118);
# fake-gpu-operator's 5 ~0.5 GiB; ubuntu 22.04 and 24.04 ~0.2 GiB; Helm, the
# Python environment (98 MiB measured for Python 3.11's pinned set) and the
# Debian packages ~0.2 GiB; the cluster's state and logs ~0.5 GiB: ~3.6 GiB,
# 4 with a margin. On top, the filesystem must stay under the kubelet's image
# garbage collection threshold (imageGCHighThresholdPercent, 85 %): above it
# the kubelet deletes images no pod runs yet, which an airgapped VM cannot
# pull again. A stock image on a 10 GiB disk has 8.3 GiB free (issue 36):
# 10 GiB is the disk the guides name (docs follow STOCK_DISK_GIB and
# min_free_gib, tests/unit/test_k3s_preflight.py).
LAB_DISK_GIB = 4
IMAGE_GC_HIGH_PERCENT = 85
STOCK_DISK_GIB = 10
# Without NTP, a clock this close to the control host's still passes (TLS
# certificates, k3s's own certificates and the grader's event times).
MAX_CLOCK_SKEW = 60

CHECKS = ('os', 'python', 'architecture', 'cpus', 'memory', 'disk', 'systemd', 'venv', 'time', 'tools')
# Python's packaging library, which Ansible's pip module and the airgap wheel
# check need on the VM, as the probe names it, and the package that brings it.
PACKAGING = 'packaging'
PACKAGING_PACKAGE = 'python3-packaging'


def _problem(check, en, ko):
    return {'check': check, 'en': en, 'ko': ko}


def _mount_of(path, mounts):
    """The mount that holds path (longest mount point that is a prefix of it)."""
    best = None
    for mount in mounts or []:
        point = mount.get('mount', '')
        if path == point or path.startswith(point.rstrip('/') + '/') or point == '/':
            if best is None or len(point) > len(best.get('mount', '')):
                best = mount
    return best


def _image(facts):
    distribution = facts.get('distribution', '')
    version = str(facts.get('distribution_version', ''))
    major = str(facts.get('distribution_major_version', ''))
    for name, supported, python in SUPPORTED_IMAGES:
        if name == distribution and (version == supported or (name == 'Debian' and major == supported)):
            return name, supported, python
    return None


def _seconds(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def clock_skew(before, vm, after):
    """The VM's clock less the control host's, in seconds, or None when unknown.

    before: the control host's time when the command that read the VM's clock
    was sent; vm: what the VM read (date +%s, whole seconds); after: the
    control host's time once the answer was back. The VM read its clock in
    between, so a reading inside that window (or the second before it, for the
    truncation) is no skew, however long the round trip or the preflight took."""
    before, vm, after = _seconds(before), _seconds(vm), _seconds(after)
    if before is None or vm is None or after is None:
        return None
    if vm + 1 < before:
        return vm + 1 - before
    if vm > after:
        return vm - after
    return 0.0


def min_free_gib(size_bytes):
    """GiB that must be free on a filesystem of size_bytes: the lab's, and the
    share the kubelet keeps free before it deletes images."""
    return LAB_DISK_GIB + (100 - IMAGE_GC_HIGH_PERCENT) / 100.0 * (size_bytes or 0) / 1024.0 ** 3


def supported_table():
    return ', '.join('%s %s (Python %s)' % image for image in SUPPORTED_IMAGES)


def host_packages(missing, tool_packages):
    """The Debian packages that bring what the probe found missing (tools, and packaging)."""
    packages = dict(tool_packages or {}, **{PACKAGING: PACKAGING_PACKAGE})
    return [packages.get(name, name) for name in missing]


def _tools_problem(probes):
    """Airgapped, each host tool (or Python's packaging) the VM lacks that no .deb of
    the airgap directory brings; online, apt installs them (tasks/packages.yml)."""
    missing = list(probes.get('missing') or [])
    if not probes.get('airgap') or not missing:
        return None
    debs = set(probes.get('debs') or [])
    lacking = [(name, package) for name, package in zip(missing, host_packages(missing, probes.get('tool_packages')))
               if package not in debs]
    if not lacking:
        return None
    names = ', '.join('%s (Debian package %s)' % item for item in lacking)
    packages = ' '.join(package for dummy, package in lacking)
    where = probes.get('debs_dir') or '<k3s_airgap_dir>/debs/<os>-<version>'
    return _problem(
        'tools',
        'The VM lacks %s, which this k3s needs on the VM (k3s_host_tools: a k3s without k3s-root) or the airgap '
        'check needs (packaging), and airgap mode has no .deb of them in %s. Preinstall them in the VM image '
        '(`sudo apt-get install %s`), or put their .debs with their dependencies into that directory (`apt-get '
        'download` on a machine of the same release).' % (names, where, packages),
        fill('VM 에 {names:이} 없습니다. 이 k3s (k3s-root 없이 빌드됨, k3s_host_tools) 또는 에어갭 검사(packaging)에 '
             '필요합니다. 에어갭 모드에서 {where} 에 이 패키지의 데비안 패키지 파일이 없습니다. VM 이미지에 미리 '
             '설치하거나 (`sudo apt-get install {packages}`), 의존성과 함께 그 패키지 파일들을 그 디렉터리에 넣으세요.',
             names=names, where=where, packages=packages))


def check(facts, probes, data_dir='/var/lib/rancher/k3s', pythons=None, skip=None):
    """Problems of this VM, [] when it can take the lab.

    facts: ansible_facts (subsets min and hardware). probes: venv_rc and
    venv_stderr (python3 -m venv in a temporary directory), ntp_synchronized
    (timedatectl's NTPSynchronized: 'yes', 'no' or '' when unknown) and
    clock, the VM's clock read between two times of the control host
    (before, vm, after: see clock_skew), or clock_skew (VM clock minus the
    control host's, seconds) directly; missing, the host tools (and
    'packaging', Python's library) the VM lacks, with airgap (bool),
    debs (package names of the airgap directory's .debs for this image),
    debs_dir and tool_packages (tool -> Debian package). pythons: the
    Python versions a pinned set exists for. skip: check names not to make."""
    skip = set(skip or [])
    unknown = skip - set(CHECKS)
    if unknown:
        return [_problem('skip', 'k3s_preflight_skip names no check: %s (checks: %s).'
                         % (', '.join(sorted(unknown)), ', '.join(CHECKS)),
                         'k3s_preflight_skip에 없는 검사 이름이 있습니다: %s (검사: %s).'
                         % (', '.join(sorted(unknown)), ', '.join(CHECKS)))]
    problems = []
    found = '%s %s' % (facts.get('distribution', 'unknown'), facts.get('distribution_version', ''))
    if 'os' not in skip and _image(facts) is None:
        problems.append(_problem(
            'os',
            'This VM runs %s; the lab supports %s. Use one of those cloud images, or set '
            'k3s_preflight_skip: [os] to try this one at your own risk.' % (found.strip(), supported_table()),
            '이 VM은 %s 입니다. 지원하는 이미지는 %s 입니다. 이 중 하나의 클라우드 이미지를 쓰거나, '
            '위험을 감수하고 k3s_preflight_skip: [os] 를 설정하세요.' % (found.strip(), supported_table())))
    python = '.'.join(str(facts.get('python', {}).get('version', {}).get(k, '')) for k in ('major', 'minor'))
    pythons = list(pythons) if pythons is not None else [image[2] for image in SUPPORTED_IMAGES]
    if 'python' not in skip and python not in pythons:
        problems.append(_problem(
            'python',
            'Python %s runs Ansible on this VM; the lab\'s Python environment is pinned for Python %s '
            '(roles/k3s/files/constraints/). Point ansible_python_interpreter at the image\'s own '
            '/usr/bin/python3, or add a pinned set for this Python with tests/k3s_python_constraints.py.'
            % (python or 'unknown', ', '.join(pythons)),
            '이 VM에서 Ansible을 실행하는 Python은 %s 입니다. 랩의 Python 환경은 Python %s 용으로 고정되어 '
            '있습니다(roles/k3s/files/constraints/). ansible_python_interpreter를 이미지 기본 '
            '/usr/bin/python3 으로 지정하거나, tests/k3s_python_constraints.py 로 이 Python용 고정 목록을 '
            '추가하세요.' % (python or '알 수 없음', ', '.join(pythons))))
    machine = facts.get('architecture', '')
    if 'architecture' not in skip and machine not in ARCHITECTURES:
        problems.append(_problem(
            'architecture',
            'This VM is %s; k3s, Helm and the Python wheels are pinned for x86_64 (amd64) and aarch64 '
            '(arm64) only. Use an amd64 or arm64 VM.' % (machine or 'of an unknown architecture'),
            '이 VM의 아키텍처는 %s 입니다. k3s, Helm, Python 휠은 x86_64(amd64)와 aarch64(arm64)용으로만 '
            '고정되어 있습니다. amd64 또는 arm64 VM을 쓰세요.' % (machine or '알 수 없음')))
    cpus = facts.get('processor_vcpus') or facts.get('processor_count') or 0
    if 'cpus' not in skip and int(cpus) < MIN_CPUS:
        problems.append(_problem(
            'cpus',
            'This VM has %s CPU(s); k3s, KAI-Scheduler and fake-gpu-operator need %d at least. '
            'Give the VM %d vCPUs or more.' % (cpus, MIN_CPUS, MIN_CPUS),
            '이 VM의 CPU는 %s개입니다. k3s, KAI-Scheduler, fake-gpu-operator에는 최소 %d개가 필요합니다. '
            'VM에 vCPU를 %d개 이상 주세요.' % (cpus, MIN_CPUS, MIN_CPUS)))
    memory = int(facts.get('memtotal_mb') or 0)
    if 'memory' not in skip and memory < MIN_MEMORY_MB:
        problems.append(_problem(
            'memory',
            'This VM has %d MiB of memory; the lab needs a 4 GiB VM (MemTotal %d MiB at least). '
            'Give the VM 4 GiB of memory or more.' % (memory, MIN_MEMORY_MB),
            '이 VM의 메모리는 %d MiB 입니다. 랩에는 4 GiB VM(MemTotal 최소 %d MiB)이 필요합니다. '
            'VM에 메모리를 4 GiB 이상 주세요.' % (memory, MIN_MEMORY_MB)))
    mount = _mount_of(data_dir, facts.get('mounts'))
    free_gb = (mount or {}).get('size_available', 0) / 1024.0 ** 3
    need_gb = min_free_gib((mount or {}).get('size_total', 0))
    if 'disk' not in skip and free_gb < need_gb:
        where = mount['mount'] if mount else 'no mount found'
        keep = 100 - IMAGE_GC_HIGH_PERCENT
        problems.append(_problem(
            'disk',
            '%.1f GiB are free for %s (%s); the lab needs %.1f GiB free there: %d GiB for k3s and the images, '
            'and %d %% of the filesystem left free (above %d %% used the kubelet deletes images). Grow the disk '
            '(a stock image on a %d GiB disk has enough) or free space there.'
            % (free_gb, data_dir, where, need_gb, LAB_DISK_GIB, keep, IMAGE_GC_HIGH_PERCENT, STOCK_DISK_GIB),
            '%s (%s) 의 여유 공간이 %.1f GiB 입니다. 랩에는 %.1f GiB의 여유 공간이 필요합니다: k3s와 이미지에 '
            '%d GiB, 그리고 파일시스템의 %d %% 여유(%d %% 이상 사용하면 kubelet이 이미지를 지웁니다). 디스크를 '
            '늘리거나(기본 이미지는 %d GiB 디스크면 충분) 공간을 비우세요.'
            % (data_dir, where, free_gb, need_gb, LAB_DISK_GIB, keep, IMAGE_GC_HIGH_PERCENT, STOCK_DISK_GIB)))
    if 'systemd' not in skip and facts.get('service_mgr') != 'systemd':
        problems.append(_problem(
            'systemd',
            'k3s runs as a systemd service; this host runs %s as its init system. Use a VM booted with '
            'systemd (not a container).' % (facts.get('service_mgr') or 'an unknown program'),
            'k3s는 systemd 서비스로 실행됩니다. 이 호스트의 init은 %s 입니다. systemd로 부팅한 VM을 '
            '쓰세요(컨테이너는 안 됩니다).' % (facts.get('service_mgr') or '알 수 없음')))
    if 'venv' not in skip and probes.get('venv_rc') != 0:
        # Debian's venv explains a missing python3-venv in several lines: one line, shortened.
        detail = ' '.join((probes.get('venv_stderr') or '').split()) or 'no output'
        detail = detail if len(detail) <= 240 else detail[:237] + '...'
        problems.append(_problem(
            'venv',
            '`python3 -m venv` fails on this VM (%s). Install python3-venv (Ubuntu 22.04/24.04: '
            '`sudo apt-get install python3-venv`; Debian: the same, python3.X-venv on some images); '
            'airgapped, preinstall it in the image.' % detail,
            '이 VM에서 `python3 -m venv` 가 실패합니다(%s). python3-venv를 설치하세요(`sudo apt-get '
            'install python3-venv`). 에어갭 환경이면 이미지에 미리 설치해 두세요.' % detail))
    ntp = (probes.get('ntp_synchronized') or '').strip()
    clock = probes.get('clock')
    skew = clock_skew(clock.get('before'), clock.get('vm'), clock.get('after')) if isinstance(clock, dict) \
        else probes.get('clock_skew')
    if 'time' not in skip and ntp != 'yes' and (skew is None or abs(float(skew)) > MAX_CLOCK_SKEW):
        off = 'unknown' if skew is None else '%+d s' % int(float(skew))
        problems.append(_problem(
            'time',
            'The VM\'s clock is not synchronised (NTPSynchronized=%s) and is %s off the control host\'s '
            '(at most %d s): TLS downloads and k3s\'s certificates fail on a wrong clock. Enable time '
            'sync (`sudo timedatectl set-ntp true`, or point systemd-timesyncd/chrony at your NTP server).'
            % (ntp or 'unknown', off, MAX_CLOCK_SKEW),
            'VM의 시계가 동기화되지 않았고(NTPSynchronized=%s) 제어 호스트와 %s 차이가 납니다(최대 %d초). '
            '시계가 틀리면 TLS 다운로드와 k3s 인증서가 실패합니다. 시간 동기화를 켜세요(`sudo timedatectl '
            'set-ntp true`, 또는 systemd-timesyncd/chrony에 NTP 서버 지정).'
            % (ntp or '알 수 없음', off, MAX_CLOCK_SKEW)))
    tools = _tools_problem(probes)
    if 'tools' not in skip and tools:
        problems.append(tools)
    return problems
