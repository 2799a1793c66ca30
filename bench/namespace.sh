# Sourced by the benchmarks that need a distant host: one in a network namespace of its own,
# reached over a veth pair with 10.x addresses. Servers and relays run there (`there COMMAND`),
# clients here. No address of this machine but loopback is used, and the origin is not a
# loopback one (a client remembers what it learnt of an origin, never of a loopback one).
#
#   namespace_up TAG SUBNET   sets ns, here (this side) and host (the namespace's address,
#                             10.N.SUBNET.2); needs root and iproute2
#   namespace_down            stops what runs in it and removes it (call it from the EXIT trap)

namespace_up() {
  [ "$(id -u)" = 0 ] || { echo "$0 needs root (ip netns add, a veth pair)" >&2; exit 1; }
  command -v ip >/dev/null || { echo "$0 needs iproute2 (apt-get install iproute2)" >&2; exit 1; }
  ns=uploadmon-$1-$$
  veth=$1-$$
  local net=$(( ($$ % 200) + 20 ))
  here=10.$net.$2.1 host=10.$net.$2.2
  ip netns add "$ns"
  ip link add "$veth" type veth peer name "${veth}p"
  ip link set "${veth}p" netns "$ns"
  ip addr add "$here/24" dev "$veth"
  ip link set "$veth" up
  there ip addr add "$host/24" dev "${veth}p"
  there ip link set "${veth}p" up
  there ip link set lo up
}

namespace_down() {
  [ -n "${ns:-}" ] || return 0
  ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true
  ip link del "$veth" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
}

there() { ip netns exec "$ns" "$@"; }
