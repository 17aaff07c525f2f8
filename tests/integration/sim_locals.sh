#!/usr/bin/env bash
# The simulator's locals-zeroing loop (docs/SIMULATOR.md, "The code
# model") on truths from real JVMs (SimLoop, SimWork; JDK 17 and 25): in
# every pt/cpuN decoded by libipt's block decoder, each interpreted method
# entry runs its jle and exactly n jg, n = max_locals minus the parameter
# slots of the method entered (the k-th entry on a CPU is the k-th of
# sim/entries/cpuN), computed from the bundle's class files by
# tests/tools/sim_locals_check; entries with n = 0 (jle taken) and n = 1
# (one jg, not taken) both occur.  With the JIT (entries through c2i) and
# without.  The check fails when the entry list belongs to another
# schedule.  Methods without a class file get no invented count.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sim_lib.sh"
sim_setup
: "${AGENT:=$BUILD/libjpbpf-agent.so}"
: "${TOOLS:=$BUILD/asan/tests/tools}"
CHECK=$TOOLS/sim_locals_check
t_need_tool "$CHECK"
if [ ! -f "$AGENT" ]; then
	t_skip "real JVM truth" "agent not built ($AGENT)"
	t_done
	exit 0
fi

# field OUT NAME: the number after NAME= in the checker's summary line
field() { sed -n "s/.*\<$2=\([0-9]*\).*/\1/p" "$1" | tail -1; }

# judge NAME DIR: the checker on DIR, every entry right
judge() {
	local out=$2.locals
	"$CHECK" "$2" >"$out" 2>"$out.err"
	local rc=$?
	t_check "$1: every entry's jg count is its method's n (exit $rc)" [ $rc = 0 ]
	[ $rc = 0 ] || sed 's/^/# /' "$out" "$out.err"
	local e n0 n1 n2 n3 unk
	e=$(field "$out" entries) n0=$(field "$out" n0) n1=$(field "$out" n1)
	n2=$(field "$out" n2) n3=$(field "$out" n3plus) unk=$(field "$out" unknown)
	t_check "$1: more than 1000 entries checked (${e:-?})" [ "${e:-0}" -gt 1000 ]
	t_check "$1: entries with n = 0 (${n0:-?}), n = 1 (${n1:-?}) and n >= 2 ($((${n2:-0} + ${n3:-0})))" \
		test "${n0:-0}" -gt 0 -a "${n1:-0}" -gt 0 -a $((${n2:-0} + ${n3:-0})) -gt 0
	local sul
	sul=$(sim_meta "$2" sim.unknown_locals)
	t_check "$1: every entered method has a class file (unknown ${unk:-?}, sim.unknown_locals $sul)" \
		test "${unk:-1}" = 0 -a "$sul" = 0
}

ran=0
for jdk in /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64; do
	[ -x "$jdk/bin/javac" ] || continue
	name=$(basename "$jdk" | cut -d- -f1-2)
	cls=$TESTTMP/siml-$name
	sim_javac_workloads "$jdk" "$cls" || continue
	ran=1
	for wl in SimLoop SimWork; do
		b=$TESTTMP/siml-$name-$wl
		"$SIM" truth -o "$b" --agent "$AGENT" -- "$jdk/bin/java" -cp "$cls" $wl 200 \
			>"$b.stdout" 2>"$b.stderr"
		if ! grep -q '^result ' "$b.stdout"; then
			t_fail "$name/$wl: truth run"; sed 's/^/# /' "$b.stderr"; continue
		fi
		for mode in jit nojit; do
			d=$b-$mode
			rm -rf "$d"; cp -r "$b" "$d"
			if [ $mode = jit ]; then opts="--jit-invoke 40 --jit-backedge 400"
			else opts=--no-jit; fi
			# shellcheck disable=SC2086
			if ! "$SIM" synth "$d" --cpus 2 --seed 5 $opts 2>"$d.synth"; then
				t_fail "$name/$wl/$mode: synth"; sed 's/^/# /' "$d.synth"; continue
			fi
			judge "$name/$wl/$mode" "$d"
		done
		# the JIT run's trace with the interpreter-only run's entry list
		w=$b-wrong
		rm -rf "$w"; cp -r "$b-jit" "$w"
		rm -rf "$w/sim/entries"; cp -r "$b-nojit/sim/entries" "$w/sim/entries"
		"$CHECK" "$w" >"$w.locals" 2>&1
		rc=$?
		bad=$(field "$w.locals" mismatches)
		t_check "$name/$wl: another schedule's entry list fails the check (exit $rc, ${bad:-?} mismatches)" \
			test $rc = 1 -a "${bad:-0}" -gt 0
	done
done
[ $ran = 1 ] || t_skip "real JVM truth" "no JDK with javac"

# A truth whose methods no class file gives: the hand-made scenario, no
# longer marked as such.  No count is guessed: each entry's loop runs
# untraced (no jle, no jg), and libipt still decodes the streams exactly.
u=$TESTTMP/siml-unknown
rm -rf "$u"
"$SIM" scenario -o "$u" --threads 2 --iters 200 >/dev/null 2>&1
jq 'del(.truth_source)' "$u/meta.json" >"$u/meta.new" && mv "$u/meta.new" "$u/meta.json"
if "$SIM" synth "$u" --cpus 2 --seed 3 2>"$u.synth"; then
	"$CHECK" "$u" >"$u.locals" 2>&1
	rc=$? e=$(field "$u.locals" entries) unk=$(field "$u.locals" unknown)
	sul=$(sim_meta "$u" sim.unknown_locals)
	t_check "no class files: every entry's loop is untraced (exit $rc; ${unk:-?} of ${e:-?} unknown, sim.unknown_locals $sul)" \
		test $rc = 0 -a "${e:-0}" -gt 100 -a "${unk:-0}" = "${e:-0}" -a "$sul" = "${e:-0}"
	[ $rc = 0 ] || sed 's/^/# /' "$u.locals"
	t_check "no class files: libipt decodes every CPU's stream exactly" sim_verify "$u" "$u.verify"
else
	t_fail "no class files: synth"; sed 's/^/# /' "$u.synth"
fi
t_done
