#!/usr/bin/env bash
# The agent library staged into a target's /tmp (JVM in another mount
# namespace, docs/AGENT.md "The attach protocol") is removed once the JVM
# has answered the load, also when the attach fails; repeated attaches to
# the same JVM still work and reuse the library already loaded.  Two
# targets per JDK: a private /tmp (a container) and the host's /tmp seen
# from another mount namespace (the case that used to leave one copy per
# build in the host's /tmp).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"
agent_setup
agent_setup_attach

# agent_maps PID: "inode path [(deleted)]" of each distinct mapping of a
# staged agent copy in PID.
agent_maps() {
	awk '$6 ~ /\/jpbpf-agent-[^\/]*\.so$/ { print $5, $6, $7 }' \
		"/proc/$1/maps" 2>/dev/null | sort -u
}

# The staged copy's name ends in this library's inode and mtime (hex).
AGENT_ID=$(stat -L -c '%i %Y' "$AGENT" | awk '{ printf "%x-%x", $1, $2 }')

# staged_left PID MODE: the staged copies still reachable in PID's /tmp, by
# the paths its mappings name and by name (in a private /tmp any
# jpbpf-agent-*; in the host's, those of this library, since other runs
# stage theirs there too), temporaries included; one a line.
staged_left() {
	local pid=$1 ino path del
	while read -r ino path del; do
		[ -e "/proc/$pid/root$path" ] && echo "$path (mapped${del:+, $del})"
	done < <(agent_maps "$pid")
	if [ "$2" = private ]; then
		ls -d "/proc/$pid/root/tmp/"jpbpf-agent-* 2>/dev/null
	else
		ls -d "/proc/$pid/root/tmp/"jpbpf-agent-*"$AGENT_ID".so* 2>/dev/null
	fi
}

# check_clean NAME PID MODE WHEN: nothing staged is left in the target.
check_clean() {
	local left
	left=$(staged_left "$2" "$3" | sort -u | tr '\n' ' ')
	t_check "$1: no staged agent left in the target's /tmp $4${left:+ (left: $left)}" \
		[ -z "$left" ]
}

# one_library NAME PID WHEN: every load mapped the same library instance.
one_library() {
	local n
	n=$(agent_maps "$2" | awk '{ print $1 }' | sort -u | wc -l)
	t_check "$1: one agent library mapped $3 ($n)" [ "$n" = 1 ]
}

staged_case() {
	local name="$1 $3 /tmp" java=$2 mode=$3 out=$TESTTMP/staged-$1-$3 rc
	if ! ns_jvm_start "$java" 60 "$mode" "$out"; then
		t_fail "$name: JVM in a pid+mount namespace started"
		kill "$UPID" 2>/dev/null; wait "$UPID"
		return
	fi
	if [ "$mode" = private ]; then
		t_check "$name: target /tmp is private" [ ! -e "/proc/$JPID/root$WL" ]
	else
		t_check "$name: target shares the host's /tmp" [ -e "/proc/$JPID/root$WL" ]
	fi

	# Fails after staging, before the load command is sent.
	"$ATTACH" "$JPID" "$AGENT" "$out.long" 0 "pad=$(printf '%01100d' 0)" \
		>"$out.t0" 2>&1
	rc=$?
	grep -q "1024 bytes" "$out.t0" || rc="$rc, other reason"
	t_check "$name: attach with over-long options fails ($(tail -1 "$out.t0"))" \
		[ "$rc" = 1 ]
	check_clean "$name" "$JPID" "$mode" "after a failed attach"
	[ "$mode" = private ] &&
		t_check "$name: and no empty output directory" \
			[ -z "$(ls -d "/proc/$JPID/root/tmp/"jpbpf-1-* 2>/dev/null)" ]

	"$ATTACH" "$JPID" "$AGENT" "$out" -1 >"$out.t1" 2>&1
	rc=$?
	t_check "$name: attach leaves the agent recording" [ $rc = 0 ] ||
		sed 's/^/# /' "$out.t1"
	t_check "$name: the JVM mapped a staged copy" [ -n "$(agent_maps "$JPID")" ]
	check_clean "$name" "$JPID" "$mode" "after the attach"

	"$ATTACH" "$JPID" "$AGENT" "$out" 0.2 >"$out.t2" 2>&1
	rc=$?
	grep -q "session reused" "$out.jvmerr" || rc="$rc, not reused"
	t_check "$name: second attach (same bundle) reuses the session" \
		[ "$rc" = 0 ]
	one_library "$name" "$JPID" "after the second load"
	check_clean "$name" "$JPID" "$mode" "after the second attach"

	# A load the agent refuses: the JVM answers, the copy goes.
	"$ATTACH" "$JPID" "$AGENT" "$out" -1 >/dev/null 2>&1
	"$ATTACH" "$JPID" "$AGENT" "$out.other" 0 >"$out.t3" 2>&1
	t_check "$name: attach for another bundle refused while recording" [ $? = 1 ]
	check_clean "$name" "$JPID" "$mode" "after a refused attach"
	"$ATTACH" "$JPID" "$AGENT" "$out" 0 >/dev/null 2>&1

	# After the session finished, a new one starts in the same library.
	"$ATTACH" "$JPID" "$AGENT" "$out.again" 0.3 >"$out.t4" 2>&1
	rc=$?
	t_check "$name: attach after a finished session starts a new one" [ $rc = 0 ] ||
		sed 's/^/# /' "$out.t4"
	"$CHECK" summary "$out.again" >"$out.again.sum" 2>/dev/null
	t_check "$name: the new session recorded the interpreter" \
		[ "$(agent_json "$out.again.sum" codelets)" -gt 200 ]
	one_library "$name" "$JPID" "after all the loads"
	check_clean "$name" "$JPID" "$mode" "after all attaches"
	case $1 in
	temurin-25) # HotSpot warns only when dlopen gives a new handle.
		t_check "$name: JDK 25 saw one dynamically loaded library (one warning)" \
			[ "$(grep -c 'loaded dynamically' "$out.jvmerr")" = 1 ] ;;
	esac
	t_check "$name: JVM unharmed by the repeated loads" kill -0 "$JPID"
	kill "$JPID" 2>/dev/null; wait "$UPID" 2>/dev/null
	t_check "$name: no crash report from the JVM" \
		[ -z "$(grep -l 'SIGSEGV\|fatal error' "$out.jvmout" "$out.jvmerr")" ]
}

if ! why=$(unshare --pid --mount --fork --mount-proc true 2>&1); then
	t_skip "staged agent removed from the target's /tmp" \
		"cannot create pid+mount namespaces here: $why"
else
	while read -r name java; do
		staged_case "$name" "$java" private
		staged_case "$name" "$java" shared
	done < <(agent_jdks)
	[ -z "$(agent_jdks)" ] && t_skip "staged agent" "no JDK found"
fi
t_done
