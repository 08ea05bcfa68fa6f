#!/bin/bash
# Stop what k3s left running and release what it held, the way k3s's own
# k3s-killall.sh does: kill every containerd shim of K3S_DATA_DIR with its
# whole process tree (the containers are the shims' children; killing only
# the shim reparents them to PID 1), unmount what k3s and the kubelet
# mounted, delete the pods' cni- network namespaces and k3s's interfaces,
# and drop k3s's firewall chains. Inputs come from the environment, never
# from the script's text: K3S_DATA_DIR (k3s's data-dir) and MOUNTS (the
# mount table, /proc/self/mounts). Prints "changed" when it changed anything.
set -u -o pipefail
changed=0

children() {
  ps -e -o ppid= -o pid= | awk -v parent="$1" '$1 == parent {print $2}'
}

tree() {
  local pid child
  for pid in "$@"; do
    echo "$pid"
    for child in $(children "$pid"); do
      tree "$child"
    done
  done
}

shims() {
  ps -e -o pid= -o args= | awk -v dir="$K3S_DATA_DIR/data/" \
    'index($2, dir) == 1 && $2 ~ /\/bin\/containerd-shim/ {print $1}'
}

pids=$(tree $(shims) | sort -u)
if [ -n "$pids" ]; then
  kill -9 $pids 2>/dev/null
  changed=1
fi

for prefix in /run/k3s "$K3S_DATA_DIR" /var/lib/kubelet/pods /var/lib/kubelet/plugins /run/netns/cni-; do
  for mount in $(awk -v prefix="$prefix" 'index($2, prefix) == 1 {print $2}' "$MOUNTS" | sort -r); do
    umount -l "$mount" && changed=1
  done
done

for netns in $(ip netns list 2>/dev/null | awk '$1 ~ /^cni-/ {print $1}'); do
  ip netns delete "$netns" && changed=1
done

# The pods' veth ends attached to k3s's bridge, then k3s's own interfaces.
for link in $(ip -o link show master cni0 2>/dev/null | awk -F': ' '{sub(/@.*/, "", $2); print $2}'); do
  ip link delete "$link" && changed=1
done
for link in cni0 flannel.1 flannel-v6.1 flannel-wg flannel-wg-v6 kube-ipvs0; do
  if ip link show "$link" >/dev/null 2>&1; then
    ip link delete "$link" && changed=1
  fi
done

for tool in iptables ip6tables; do
  command -v "$tool-save" >/dev/null 2>&1 || continue
  rules=$("$tool-save")
  kept=$(printf '%s\n' "$rules" | grep -v -e KUBE- -e CNI- | grep -iv flannel)
  if [ "$kept" != "$rules" ]; then
    printf '%s\n' "$kept" | "$tool-restore" && changed=1
  fi
done

if [ "$changed" = 1 ]; then echo changed; fi
exit 0
