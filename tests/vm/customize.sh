#!/bin/sh
# mmdebstrap's customize hook for the learner VM image (tests/vm/vm.py build):
# what a stock cloud image has without cloud-init. Arguments: the image's root
# directory, the public key to authorise, the sudo user, the host name, the
# directory of the build machine's extra CA certificates.
# This file's content is part of the image's cache key.
set -eu
root=$1 pubkey=$2 user=$3 name=$4 cadir=$5

echo "$name" >"$root/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n' "$name" >"$root/etc/hosts"
printf '/dev/vda\t/\text4\terrors=remount-ro\t0\t1\n' >"$root/etc/fstab"

# DHCP on the first NIC by systemd-networkd; QEMU's user-mode DNS.
mkdir -p "$root/etc/systemd/network"
printf '[Match]\nName=en* eth*\n\n[Network]\nDHCP=yes\n' >"$root/etc/systemd/network/80-dhcp.network"
chroot "$root" systemctl enable systemd-networkd.service >/dev/null 2>&1
rm -f "$root/etc/resolv.conf"
echo 'nameserver 10.0.2.3' >"$root/etc/resolv.conf"

# Apt's daily timers would refresh the lists and lock apt at a random time of
# a test: off, so what a test compares changes only by what the lab does.
chroot "$root" systemctl disable apt-daily.timer apt-daily-upgrade.timer >/dev/null 2>&1 || true

# The sudo user of a cloud image: passwordless sudo, key login only, no root login.
chroot "$root" useradd --create-home --shell /bin/bash --groups sudo "$user"
echo "$user ALL=(ALL) NOPASSWD:ALL" >"$root/etc/sudoers.d/90-cloud-init-users"
chmod 0440 "$root/etc/sudoers.d/90-cloud-init-users"
home=$root/home/$user
install -d -m 0700 "$home/.ssh"
install -m 0600 "$pubkey" "$home/.ssh/authorized_keys"
chroot "$root" chown -R "$user:$user" "/home/$user/.ssh"
mkdir -p "$root/etc/ssh/sshd_config.d"
printf 'PermitRootLogin no\nPasswordAuthentication no\nUseDNS no\n' >"$root/etc/ssh/sshd_config.d/50-kai-lab-vm.conf"

# As a cloud image: systemd makes the machine id at first boot.
: >"$root/etc/machine-id"
rm -f "$root/var/lib/dbus/machine-id"

# The build machine's extra CA certificates (an egress proxy's): without them
# TLS to PyPI fails in the VM as it would on this machine.
if ls "$cadir"/*.crt >/dev/null 2>&1; then
  cp "$cadir"/*.crt "$root/usr/local/share/ca-certificates/"
  chroot "$root" update-ca-certificates >/dev/null 2>&1
fi
