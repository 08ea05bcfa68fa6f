#!/usr/bin/env bash
# Usage: tests/in-netns.sh NAME command...   Runs the command in network namespace NAME
# (created on first use: loopback up, a veth pair kept inside the namespace
# with a default route, which kube-apiserver needs). No traffic leaves it.
set -euo pipefail
ns=$1; shift
if ! ip netns list | grep -qw "$ns"; then
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  ip -n "$ns" link add v0 type veth peer name v1
  ip -n "$ns" addr add 192.0.2.1/24 dev v0
  ip -n "$ns" link set v0 up
  ip -n "$ns" link set v1 up
  ip -n "$ns" route add default via 192.0.2.2 dev v0 onlink
fi
exec ip netns exec "$ns" "$@"
