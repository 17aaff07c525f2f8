# Helpers for the record_*.sh suites (sourced after lib.sh; not a suite).
#   rec_setup            builds record_check and the workloads into $TESTTMP
#   rec_java JAVA ARGS   starts a JVM in the background; sets JPID
#   rec_json DIR KEY     a value of `jpbpf info DIR --json` (dotted key)
#   rec_meta DIR KEY     a value of DIR/meta.json (dotted key)
#   rec_stop PID         kills a background process of ours and reaps it
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${BUILD:=$top/build}"
: "${JPBPF_PLAIN:=$BUILD/jpbpf}"
: "${TOOLS:=$BUILD/asan/tests/tools}"
RCHECK=$TOOLS/record_check
WL=$TESTTMP/workloads
JDK17=/usr/lib/jvm/java-17-openjdk-amd64/bin/java
JDK25=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java

rec_setup() {
	if [ "$(id -u)" != 0 ]; then
		echo "1..0 # SKIP recording needs root"
		exit 0
	fi
	t_need_tool "$RCHECK"
	t_workloads "$WL"
}

# rec_java JAVA CLASS ARGS...: the JVM's pid in JPID, once it has started
# its main class (its threads exist).
rec_java() {
	local java=$1; shift
	"$java" -Xshare:auto -cp "$WL" "$@" >"$TESTTMP/java.$$.out" 2>&1 &
	JPID=$!
	local i=0
	# Wait for the JVM to map libjvm.so and start threads.
	while [ $i -lt 50 ]; do
		[ "$(ls /proc/$JPID/task 2>/dev/null | wc -l)" -gt 10 ] && break
		sleep 0.1
		i=$((i + 1))
	done
	sleep 0.3
}

_rec_get() {
	python3 -c 'import json,sys
v=json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v=v[int(k)] if isinstance(v,list) else v.get(k) if isinstance(v,dict) else None
print(json.dumps(v) if isinstance(v,(dict,list,bool)) or v is None else v)' "$1"
}

rec_json() { "$JPBPF_PLAIN" info "$1" --json 2>/dev/null | _rec_get "$2"; }
rec_meta() { _rec_get "$2" <"$1/meta.json"; }

rec_stop() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# schedstat_runs PID: "tid timeslices" for every thread of PID.
schedstat_runs() {
	local f
	for f in /proc/$1/task/*/schedstat; do
		local tid=${f#/proc/$1/task/}
		tid=${tid%/schedstat}
		echo "$tid $(cut -d' ' -f3 "$f" 2>/dev/null)"
	done 2>/dev/null
}
