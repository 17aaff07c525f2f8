# Helpers for the agent_*.sh suites (sourced after lib.sh; not a suite).
#   agent_setup        builds agent_check and the workloads into $TESTTMP
#   agent_jdks         prints "NAME JAVA" for each JDK present
#   agent_json FILE KEY  a top-level number or string of a one-line JSON
#   ns_jvm_start JAVA ROUNDS TMP OUT  HotInline in a new pid+mount namespace
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${BUILD:=$top/build}"
: "${AGENT:=$BUILD/libjpbpf-agent.so}"
: "${JPBPF_PLAIN:=$BUILD/jpbpf}"
: "${TOOLS:=$BUILD/asan/tests/tools}"
CHECK=$TOOLS/agent_check
WL=$TESTTMP/workloads

agent_setup() {
	if [ ! -f "$AGENT" ]; then
		echo "Bail out! $AGENT not built"
		exit 1
	fi
	t_need_tool "$CHECK"
	t_workloads "$WL"
}

agent_jdks() {
	local j
	for j in /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64; do
		[ -x "$j/bin/java" ] && echo "$(basename "$j" | cut -d- -f1-2) $j/bin/java"
	done
}

# agent_json FILE KEY: value of "KEY": in a one-line JSON object.
agent_json() {
	python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): v=v[k]
print(v)' "$1" "$2" 2>/dev/null
}

# wait_for FILE SECONDS: poll until FILE exists.
wait_for() {
	local i=0
	while [ ! -e "$1" ] && [ $i -lt $(($2 * 10)) ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -e "$1" ]
}

# The attach helper (links user/attach from libjpbpf.a).
ATTACH=$TOOLS/agent_attach_tool
agent_setup_attach() {
	[ -x "$ATTACH" ] && return 0
	echo "Bail out! $ATTACH not built (make unit-tests)"
	exit 1
}

# jvm_pid PATTERN: the pid of the JVM whose command line starts with
# PATTERN (not a wrapper such as unshare or sh).
jvm_pid() {
	local p i
	for i in $(seq 50); do
		for p in $(pgrep -f "^$1"); do
			grep -q libjvm.so "/proc/$p/maps" 2>/dev/null && { echo "$p"; return 0; }
		done
		sleep 0.1
	done
	return 1
}

# wait_jvm_ready PID: the JVM has started its main class (a few classes
# loaded), so attach finds an initialised VM.
wait_jvm_ready() {
	sleep 0.8
	kill -0 "$1" 2>/dev/null
}

# ns_jvm_start JAVA ROUNDS TMP OUT: starts `JAVA -cp /mnt HotInline ROUNDS`
# in a new pid+mount namespace (its own /proc), with the workloads
# bind-mounted on /mnt and, for TMP=private, a fresh tmpfs on /tmp (a
# container); TMP=shared keeps the host's /tmp.  The JVM's output goes to
# OUT.jvmout and OUT.jvmerr.  Prints nothing; sets UPID (the unshare child
# of this shell, to wait for or kill) and JPID (the JVM's pid as seen from
# here, after it has started its main class).  Returns 1, with JPID empty,
# if no such JVM appeared.  Call it directly, not in $(...), so that UPID
# is a child of the caller's shell.
ns_jvm_start() {
	local java=$1 rounds=$2 tmp=$3 out=$4 tmpfs=""
	[ "$tmp" = private ] && tmpfs="mount -t tmpfs none /tmp &&"
	# /mnt, because the workloads under /tmp vanish behind the tmpfs.
	unshare --pid --mount --fork --mount-proc sh -c \
		"mount --bind '$WL' /mnt && $tmpfs cd /mnt && exec '$java' -cp /mnt HotInline $rounds" \
		>"$out.jvmout" 2>"$out.jvmerr" &
	# shellcheck disable=SC2034 # for the caller
	UPID=$!
	JPID=$(jvm_pid "$java -cp /mnt HotInline $rounds")
	[ -n "$JPID" ] || return 1
	wait_jvm_ready "$JPID"
	return 0
}
