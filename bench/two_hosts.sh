#!/usr/bin/env bash
# Two emulated hosts on this machine (docs/lab.md, "Two or three hosts"): a system's two parts,
# each in a network namespace of its own with a private /dev/shm, joined by a veth pair, so
# every message between them crosses the link by UDP (no shared memory, no loopback). Prints
# both parts' summaries. The namespaces and the link are deleted on exit, on Ctrl-C and on
# SIGTERM, with anything still running in them.
#
#   sudo bench/two_hosts.sh <system> [lockstep|realtime] [hil run options for the supervisor's part]
#   sudo bench/two_hosts.sh hexafloat realtime --duration 20
#
# The split is the system's first (HIL_SPLIT=<name> for another) and must have two parts; the
# part without the supervisor starts first. Discovery by static peers (--peers), the domain id
# is ROS_DOMAIN_ID (default 42). The Python that runs `hil` is $PYTHON, else the checkout's
# .venv/bin/python, else python3. Needs root, iproute2 (ip), unshare and mount.
set -euo pipefail

usage() { sed -n '8,9p' "$0" | sed 's/^#  *//' >&2; exit 2; }
[ $# -ge 1 ] || usage
SYSTEM=$1; shift
CLOCK=lockstep
if [ $# -ge 1 ] && { [ "$1" = lockstep ] || [ "$1" = realtime ]; }; then CLOCK=$1; shift; fi

ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${PYTHON:-}" ]; then
    if [ -x "$ROOT/.venv/bin/python" ]; then PYTHON=$ROOT/.venv/bin/python; else PYTHON=python3; fi
fi
[ "$(id -u)" = 0 ] || { echo "two_hosts.sh: network namespaces need root" >&2; exit 2; }
for tool in ip unshare mount; do
    command -v "$tool" >/dev/null || { echo "two_hosts.sh: missing tool: $tool" >&2; exit 2; }
done

# the split's two parts: the one without the supervisor, then the one with it
PARTS=$("$PYTHON" - "$SYSTEM" "${HIL_SPLIT:-}" <<'EOF'
import sys
from hil_nodes.bringup.parts import PartsError, split_of, supervisor_part
from hil_nodes.bringup.system import BringupError, load_system
try:
    split, parts = split_of(load_system(sys.argv[1]), sys.argv[2])
except (BringupError, PartsError) as exc:
    sys.exit(f'two_hosts.sh: {exc}')
if len(parts) != 2:
    sys.exit(f'two_hosts.sh: split {split or "(none)"} of {sys.argv[1]} has {len(parts)} parts, not two '
             '(HIL_SPLIT=<a split of two>)')
home = supervisor_part(parts)
print(split, next(p for p in parts if p != home), home)
EOF
)
read -r SPLIT OTHER SUP <<<"$PARTS"

TAG=$(printf '%04x' $(( $$ % 65536 )))
NET=$(( $$ % 250 + 1 ))
NS_A=hil2h${TAG}a; NS_B=hil2h${TAG}b          # host a: the part without the supervisor; b: with it
DEV_A=hv2h${TAG}a; DEV_B=hv2h${TAG}b
ADDR_A=10.219.$NET.1; ADDR_B=10.219.$NET.2
OUT=$(mktemp -d "${TMPDIR:-/tmp}/two_hosts_XXXXXX")
DOMAIN=${ROS_DOMAIN_ID:-42}
PIDS=()

summaries() {
    for part in "$OTHER" "$SUP"; do
        [ -e "$OUT/$part.out" ] || continue
        echo "=== part $part ($([ "$part" = "$OTHER" ] && echo "$NS_A" || echo "$NS_B")) ==="
        cat "$OUT/$part.out"
        if [ ! -s "$OUT/$part.out" ]; then tail -n 20 "$OUT/$part.err"; fi
    done
}

stop_parts() {     # SIGINT: each `hil run` stops its nodes and prints its summary
    for pid in "${PIDS[@]}"; do kill -INT -- "-$pid" 2>/dev/null || true; done
    for _ in $(seq 150); do
        alive=0
        for pid in "${PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
        [ $alive = 0 ] && break
        sleep 0.1
    done
}

cleanup() {
    trap - EXIT INT TERM
    stop_parts
    for ns in "$NS_A" "$NS_B"; do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
        ip netns del "$ns" 2>/dev/null || true                  # the veth pair goes with them
    done
}
trap cleanup EXIT
trap 'echo "two_hosts.sh: interrupted" >&2; stop_parts; summaries; exit 130' INT TERM

ip netns add "$NS_A"
ip netns add "$NS_B"
ip link add "$DEV_A" netns "$NS_A" type veth peer name "$DEV_B" netns "$NS_B"
for side in A B; do
    ns=NS_$side; dev=DEV_$side; addr=ADDR_$side
    ip -n "${!ns}" addr add "${!addr}/24" dev "${!dev}"
    ip -n "${!ns}" link set "${!dev}" up
    ip -n "${!ns}" link set lo up
done
echo "hosts: $NS_A ($ADDR_A, part $OTHER), $NS_B ($ADDR_B, part $SUP); split $SPLIT, $CLOCK, domain $DOMAIN"
echo "output: $OUT"

# argv on a host, in a mount namespace of its own with a private /dev/shm, in a session of its own
on_host() {
    local ns=$1; shift
    # SIGINT back to its default: a job started with & by a script ignores it, and Python
    # then never raises KeyboardInterrupt (hil run's clean stop and summary)
    env --default-signal=INT setsid ip netns exec "$ns" unshare --mount --propagation private \
        sh -c 'mount -t tmpfs -o size=512m hilshm /dev/shm && exec "$@"' sh "$@" &
    PIDS+=($!)
}

export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
on_host "$NS_A" "$PYTHON" -m hil_nodes.cli.main run "$SYSTEM" --split "$SPLIT" --part "$OTHER" "--$CLOCK" \
    --domain-id "$DOMAIN" --peers "$ADDR_B" >"$OUT/$OTHER.out" 2>"$OUT/$OTHER.err"
on_host "$NS_B" "$PYTHON" -m hil_nodes.cli.main run "$SYSTEM" --split "$SPLIT" --part "$SUP" "--$CLOCK" \
    --domain-id "$DOMAIN" --peers "$ADDR_A" "$@" >"$OUT/$SUP.out" 2>"$OUT/$SUP.err"

status=0
for i in 0 1; do
    code=0
    wait "${PIDS[$i]}" || code=$?
    [ $code -gt $status ] && status=$code
done
summaries
exit $status
