# Helpers for the bench/fig-* harnesses (sourced; not a harness itself:
# bench/run only runs fig-*).  The caller sets `build` (absolute) first.
#   bench_die MSG            fail the figure loudly (stderr, exit 1)
#   bench_tools NAME...      build tests/tools/NAME into $build/tests/tools
#   bench_budget DEFAULT_S   seconds this figure may take ($JPB_BENCH_SECONDS)
#   bench_time OUT CMD...    run CMD, its wall/CPU/peak RSS to OUT
#   ru OUT KEY               a figure from such an OUT (wall_s, user_s, ...)
#   stats V...               "median min max" of numbers
#   now_s                    monotonic seconds (float)
#   bench_tmp                sets $tmp, a scratch directory removed at exit
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
name=$(basename "$0")
java_home=${JAVA_HOME_BENCH:-/usr/lib/jvm/java-17-openjdk-amd64}
JAVA=$java_home/bin/java
JAVAC=$java_home/bin/javac
JPBPF=$build/jpbpf
SIM=$build/jpbpf-sim
AGENT=$build/libjpbpf-agent.so
TOOLS=$build/tests/tools

bench_die() {
	echo "$name: $*" >&2
	exit 1
}

for f in "$JPBPF" "$SIM" "$AGENT"; do
	[ -e "$f" ] || bench_die "$f not built (make all)"
done

# The tools are not part of `make all`; build the missing ones a figure
# needs with the Makefile rule the tests use.
bench_tools() {
	local t targets=()
	for t in "$@"; do
		[ -x "$build/tests/tools/$t" ] || targets+=("$build/tests/tools/$t")
	done
	[ ${#targets[@]} -eq 0 ] && return 0
	make -C "$top" --no-print-directory -s O="$build" "${targets[@]}" >&2 ||
		bench_die "cannot build ${targets[*]}"
}

bench_budget() {
	echo "${JPB_BENCH_SECONDS:-$1}"
}

bench_time() {
	local out=$1
	shift
	"$TOOLS/bench_rusage" "$out" "$@"
}

ru() {
	sed -n "s/.*\<$2=\([0-9.]*\).*/\1/p" "$1"
}

stats() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
		if (!NR) exit 1
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		print m, v[1], v[NR] }'
}

now_s() {
	awk '{ print $1 }' /proc/uptime
}

bench_tmp() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/jpbpf-$name.XXXXXX")
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" EXIT
	trap 'exit 143' TERM INT # so that the EXIT trap runs
}

# calc EXPR: awk arithmetic, e.g. calc "3 / 4"
calc() {
	awk "BEGIN { printf \"%.6g\", $1 }"
}

# simloop_bundle ROUNDS DIR: a simulated bundle of tests/workloads/SimLoop
# run for ROUNDS (a real JDK 17 truth, then `synth --cpus 2 --seed 1` with
# the simulator's default JIT thresholds); its PT grows linearly with
# ROUNDS, about 0.37 MB per 1000.
simloop_bundle() {
	local rounds=$1 dir=$2 cls=$tmp/simloop-cls
	[ -f "$cls/SimLoop.class" ] || "$JAVAC" --release 17 -d "$cls" "$top/tests/workloads/SimLoop.java" ||
		bench_die "cannot compile SimLoop.java"
	rm -rf "$dir"
	"$SIM" truth -o "$dir" --agent "$AGENT" -- "$JAVA" -cp "$cls" SimLoop "$rounds" >"$tmp/truth.log" 2>&1 ||
		{ cat "$tmp/truth.log" >&2; bench_die "SimLoop $rounds: truth failed"; }
	"$SIM" synth "$dir" --cpus 2 --seed 1 >"$tmp/synth.log" 2>&1 ||
		{ cat "$tmp/synth.log" >&2; bench_die "SimLoop $rounds: synth failed"; }
	# The truth is not needed to decode; it is the bulk of the bundle.
	rm -f "$dir/truth.jpb"
}

# rawbench DIR OUT: libipt's raw block decoder over DIR's PT streams
# (tests/tools/decode_rawbench), its rusage in OUT; prints the PT
# megabytes it decoded (the pt_aux_data payload).
rawbench() {
	bench_time "$2" "$TOOLS/decode_rawbench" "$1" >"$tmp/raw.out" 2>&1 ||
		{ cat "$tmp/raw.out" >&2; bench_die "decode_rawbench $1 failed"; }
	sed -n 's/^libipt raw block decoding: \([0-9.]*\) MB.*/\1/p' "$tmp/raw.out"
}
