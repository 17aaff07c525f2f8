#!/usr/bin/env bash
# --cgroup: the kernel filter also follows every task of the target's
# cgroup-v2 cgroup (containers), and only with the option.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/record_lib.sh"
rec_setup

root=$(awk '/ - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
if [ -z "$root" ] || ! mkdir "$root/jpbpf-test-$$" 2>/dev/null; then
	t_skip "--cgroup" "no writable cgroup-v2 hierarchy"
	t_done
	exit 0
fi
CG=$root/jpbpf-test-$$
bash -c 'while :; do sleep 0.02; done' &
A=$!
bash -c 'while :; do sleep 0.03; done' &
O=$!
echo "$A" >"$CG/cgroup.procs" && echo "$O" >"$CG/cgroup.procs"

B=$TESTTMP/cg1
"$JPBPF_PLAIN" record -p "$A" --no-pt --cgroup -d 1 -o "$B" 2>/dev/null
t_check "record --cgroup exits 0" [ $? = 0 ]
t_check "meta: cgroup path and id" \
	[ "$(rec_meta "$B" target.cgroup)" = "/jpbpf-test-$$" -a \
	  "$(rec_meta "$B" target.cgroup_id)" = "$(stat -c %i "$CG")" ]
t_check "the other process of the cgroup is traced" \
	bash -c "'$RCHECK' tids '$B' '$O' | grep -qx '$O'"
t_check "info sched.tids counts both processes' tids" \
	bash -c "rec() { '$JPBPF_PLAIN' info '$B' --json; }; rec | python3 -c 'import json,sys
t = json.load(sys.stdin)[\"sched\"][\"tid_list\"]; sys.exit(not ($A in t and $O in t))'"
B=$TESTTMP/cg2
"$JPBPF_PLAIN" record -p "$A" --no-pt -d 1 -o "$B" 2>/dev/null
t_check "without --cgroup it is not" \
	bash -c "! '$RCHECK' tids '$B' '$O' | grep -q . && '$RCHECK' tids '$B' '$A' | grep -qx '$A'"
kill "$A" "$O"
wait "$A" "$O" 2>/dev/null
# Leftover sleep children leave with their parents; then the cgroup is empty.
for i in $(seq 20); do rmdir "$CG" 2>/dev/null && break; sleep 0.1; done
t_done
