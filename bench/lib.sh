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
#   simloop_sized MB TOL DIR POINTS   a SimLoop bundle of MB (±TOL) of PT
#   rawbench DIR OUT, raw_blocks      libipt's raw decode of DIR: MB, blocks
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
# the simulator's default JIT thresholds).  Its PT is not proportional to
# ROUNDS: JVM start-up adds a fixed part, and once the JIT compiles the
# loop's callees a round writes fewer packets (about 1.7 MB at 4000, 5.5 at
# 40000, 24 at 160000); simloop_sized aims at a size.
simloop_bundle() {
	local rounds=$1 dir=$2 cls=$tmp/simloop-cls
	[ -f "$cls/SimLoop.class" ] || "$JAVAC" --release 17 -d "$cls" "$top/tests/workloads/SimLoop.java" ||
		bench_die "cannot compile SimLoop.java"
	rm -rf "$dir"
	"$SIM" truth -o "$dir" --agent "$AGENT" -- "$JAVA" -cp "$cls" SimLoop "$rounds" >"$tmp/truth.log" 2>&1 ||
		{ cat "$tmp/truth.log" >&2; bench_die "SimLoop $rounds: truth failed"; }
	"$SIM" synth "$dir" --cpus 2 --seed 1 >"$tmp/synth.log" 2>&1 ||
		{ cat "$tmp/synth.log" >&2; bench_die "SimLoop $rounds: synth failed"; }
	# The truth and the simulator's instruction truth are not needed to
	# decode; they are the bulk of the bundle (GB at 100 MB of PT).
	rm -rf "$dir/truth.jpb" "$dir/sim/itruth"
}

# rawbench DIR OUT: libipt's raw block decoder over DIR's PT streams
# (tests/tools/decode_rawbench), its rusage in OUT; prints the PT
# megabytes it decoded (the pt_aux_data payload).
rawbench() {
	bench_time "$2" "$TOOLS/decode_rawbench" "$1" >"$tmp/raw.out" 2>&1 ||
		{ cat "$tmp/raw.out" >&2; bench_die "decode_rawbench $1 failed"; }
	sed -n 's/^libipt raw block decoding: \([0-9.]*\) MB.*/\1/p' "$tmp/raw.out"
}

# raw_blocks: the blocks the last rawbench decoded.  The work of decoding
# follows the blocks, not the bytes: a byte of PT holds more blocks once
# the JIT has compiled the loop (TNT bits rather than interpreter TIPs).
raw_blocks() {
	sed -n 's/^libipt raw block decoding: .*, \([0-9]*\) blocks$/\1/p' "$tmp/raw.out"
}

# simloop_rounds MB POINTS: the SimLoop rounds expected to give MB of PT,
# from POINTS (lines "ROUNDS MB" measured so far): the secant through the
# two points nearest MB (PT per round changes with the run's length, so
# the local slope beats a global one), or proportional to the nearest
# point when the two are too close in MB to give a slope.
simloop_rounds() {
	awk -v t="$1" '
	function d(m) { return m > t ? log(m / t) : log(t / m) }
	$2 > 0 { n++; r[n] = $1; m[n] = $2 }
	END {
		if (!n) exit 1
		a = 0; b = 0
		for (i = 1; i <= n; i++)
			if (!a || d(m[i]) < d(m[a])) { b = a; a = i }
			else if (!b || d(m[i]) < d(m[b])) b = i
		x = r[a] * t / m[a]
		if (b && r[a] != r[b] && (m[a] - m[b]) / (r[a] - r[b]) > 0 &&
		    (m[a] > m[b] ? m[a] / m[b] : m[b] / m[a]) > 1.1) {
			y = r[a] + (t - m[a]) * (r[a] - r[b]) / (m[a] - m[b])
			# Far from both points the secant is a guess; stay
			# within 2x of proportional.
			if (y > x / 2 && y < 2 * x) x = y
		}
		printf "%d", x < 100 ? 100 : x }' "$2"
}

# simloop_sized MB TOL DIR POINTS: a SimLoop bundle in DIR with MB of PT,
# within a fraction TOL.  Each try adds its (rounds, MB) to POINTS and the
# next try corrects from them; tries 1 to 3 aim at TOL/2, tries 4 and 5
# accept TOL, else the figure fails.  PT per round varies from run to run
# (when the JIT compiles the loop depends on the machine's load), so on a
# loaded machine three tries were not always enough.  Sets sized_r and
# sized_mb.
simloop_sized() {
	local target=$1 tol=$2 dir=$3 points=$4 try aim ok
	for try in 1 2 3 4 5; do
		sized_r=$(simloop_rounds "$target" "$points") || bench_die "simloop_sized: no measured point in $points"
		simloop_bundle "$sized_r" "$dir"
		sized_mb=$(rawbench "$dir" "$tmp/ru.sized")
		echo "$sized_r $sized_mb" >>"$points"
		aim=$([ $try -le 3 ] && calc "$tol / 2" || echo "$tol")
		ok=$(awk -v m="$sized_mb" -v t="$target" -v a="$aim" 'BEGIN { print (m >= t * (1 - a) && m <= t * (1 + a)) }')
		echo "$name: try $try: SimLoop $sized_r gave $sized_mb MB of PT (target $target ±$(calc "$aim * 100")%)" >&2
		[ "$ok" = 1 ] && return 0
	done
	bench_die "SimLoop: 5 tries did not give $target MB of PT within ±$(calc "$tol * 100")% (rounds and MB measured: $(tr '\n' ';' <"$points"))"
}
