#!/usr/bin/env bash
# A target in its own pid namespace (unshare --pid --mount --fork): the
# recorder traces it by host pid, every host tid in switch records has a
# thread record with its namespace tid, and (with the agent) the agent's
# thread records, which know only namespace tids, map onto host tids.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/record_lib.sh"
rec_setup
: "${AGENT:=$BUILD/libjpbpf-agent.so}"

# Some environments (a chroot, a container without CAP_SYS_ADMIN) cannot
# make the namespaces; that is a missing facility, not a failure.
if ! why=$(unshare --pid --mount --fork --mount-proc true 2>&1); then
	echo "1..0 # SKIP cannot create pid+mount namespaces here: $why"
	exit 0
fi

unshare --pid --mount --fork --mount-proc "$JDK17" -cp "$WL" Handoff 30 8 \
	>/dev/null 2>&1 &
UPID=$!
for i in $(seq 50); do
	JPID=$(pgrep -P "$UPID" | head -1)
	[ -n "$JPID" ] && [ "$(ls /proc/$JPID/task 2>/dev/null | wc -l)" -gt 10 ] && break
	sleep 0.1
done
sleep 0.5
B=$TESTTMP/pidns
agent_opt=(--agent "$AGENT")
[ -f "$AGENT" ] || agent_opt=(--no-agent)
"$JPBPF_PLAIN" record -p "$JPID" --no-pt -d 2 "${agent_opt[@]}" -o "$B" 2>"$TESTTMP/ns.err"
rc=$?
t_check "record of a pid-namespaced JVM (host pid ${JPID:-none}) exits 0" [ "$rc" = 0 ]
[ "$rc" = 0 ] || sed 's/^/# /' "$TESTTMP/ns.err"
t_check "meta: target nspid 1 ($(rec_meta "$B" target.nspid)), host pid $JPID" \
	[ "$(rec_meta "$B" target.nspid)" = 1 -a "$(rec_meta "$B" target.pid)" = "$JPID" ]

"$RCHECK" threads "$B" | awk '$2 != 0 { print $1, $2 }' | sort -u >"$TESTTMP/ns.map"
"$RCHECK" tids "$B" "$JPID" | sort >"$TESTTMP/ns.tids"
unmapped=$(cut -d' ' -f1 "$TESTTMP/ns.map" | sort -u | join -v1 "$TESTTMP/ns.tids" - | head -3)
t_check "every host tid in switch records has a namespace tid${unmapped:+ (not: $unmapped)}" \
	[ -s "$TESTTMP/ns.tids" -a -z "$unmapped" ]
# A thread may exit between the recording and this read: only the threads
# still alive are compared, and at least one must be.
while read -r tid ns; do
	got=$(awk '/^NSpid:/ { print $NF }' "/proc/$JPID/task/$tid/status" 2>/dev/null) || continue
	[ -n "$got" ] || continue
	[ "$got" = "$ns" ] && echo "ok $tid" || echo "wrong $tid:$ns"
done <"$TESTTMP/ns.map" >"$TESTTMP/ns.cmp"
wrong=$(awk '$1 == "wrong" { print $2 }' "$TESTTMP/ns.cmp" | head -3 | tr '\n' ' ')
nok=$(grep -c '^ok ' "$TESTTMP/ns.cmp")
t_check "namespace tids match /proc NSpid ($nok live threads${wrong:+; wrong: $wrong})" \
	[ "$nok" -gt 0 -a -z "$wrong" ]
t_check "namespace tids differ from host tids" \
	bash -c "! awk '\$1 == \$2' '$TESTTMP/ns.map' | grep -q ."

if [ "$(rec_meta "$B" agent.attached)" = true ]; then
	"$RCHECK" threads "$B" jvm | awk '$2 != 0 { print $2 }' | sort -u >"$TESTTMP/ns.jvm"
	nomap=$(awk '{ print $2 }' "$TESTTMP/ns.map" | sort -u | join -v1 "$TESTTMP/ns.jvm" - | head -3)
	t_check "every agent thread (namespace tid) maps to a host tid${nomap:+ (not: $nomap)}" \
		[ -s "$TESTTMP/ns.jvm" -a -z "$nomap" ]
	main=$(rec_json "$B" threads | python3 -c 'import json,sys
print(" ".join("%d:%d" % (t["tid"], t["nstid"]) for t in json.load(sys.stdin) if t["name"] == "handoff-0"))')
	t_check "info threads: Java name handoff-0 with host and namespace tid ($main)" \
		bash -c "[[ '$main' =~ ^[0-9]+:[0-9]+$ ]] && [ '${main%%:*}' != '${main##*:}' ]"
else
	t_skip "agent threads map to host tids" "agent not attached: $(rec_meta "$B" agent.reason)"
	t_skip "info threads with Java names" "agent not attached"
fi
kill -9 "$JPID" 2>/dev/null
wait "$UPID" 2>/dev/null
t_done
