#!/usr/bin/env bash
# End to end from a real JVM: `jpbpf-sim truth` runs SimLoop and SimWork
# (tests/workloads) under the agent in ground-truth mode, `synth` turns
# each truth into a hardware-like bundle, libipt decodes every CPU's
# stream exactly, and so does `jpbpf decode` by decode_check, which
# counts apart the bytecodes JVMTI posts no step for (the second of a
# pair HotSpot's interpreter fused, a return lost to a same-location
# step).  Per JDK present.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sim_lib.sh"
. "$(dirname "$0")/decode_lib.sh"
sim_setup
decode_setup
: "${AGENT:=$BUILD/libjpbpf-agent.so}"
if [ ! -f "$AGENT" ]; then
	t_skip "real JVM truth" "agent not built ($AGENT)"
	t_done
	exit 0
fi

# decode_exact NAME DIR: every truth bytecode decoded in order; the other
# decoded events are the deopt's re-executions and bytecodes the truth
# cannot hold.  SimWork has both kinds (IntPipeline$4$1.accept's
# aload_0+getfield pairs compiled, Sink$ChainedInt.end's recursion).
decode_exact() {
	local c=$2.chk
	"$JPBPF" decode "$2" >"$2.dec" 2>&1 || { t_fail "$1: decode"; sed 's/^/# /' "$2.dec"; return; }
	"$DCHECK" "$2" >"$c" 2>&1
	t_check "$1: decode_check exact ($(tail -1 "$c"))" \
		awk -v t="$(decode_field "$c" truth)" -v m="$(decode_field "$c" matched)" \
		    -v d="$(decode_field "$c" decoded)" -v u="$(decode_field "$c" unexplained)" \
		    -v fb="$(decode_field "$c" frames_bad)" -v r="$(decode_field "$c" reexec)" \
		    -v f="$(decode_field "$c" fused)" -v s="$(decode_field "$c" restored)" \
		    'BEGIN { exit !(t > 0 && m == t && u == 0 && fb == 0 && d == m + r + f + s) }'
	case $1 in */SimWork)
		t_check "$1: fused seconds and restored returns decoded" \
			awk -v f="$(decode_field "$c" fused)" -v s="$(decode_field "$c" restored)" \
			    'BEGIN { exit !(f > 0 && s > 0) }' ;;
	esac
}

ran=0
for jdk in /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64; do
	[ -x "$jdk/bin/javac" ] || continue
	name=$(basename "$jdk" | cut -d- -f1-2)
	cls=$TESTTMP/simj-$name
	sim_javac_workloads "$jdk" "$cls" || continue
	ran=1
	for wl in SimLoop SimWork; do
	name=$(basename "$jdk" | cut -d- -f1-2)/$wl
	b=$TESTTMP/simjvm-${name/\//-}
	"$SIM" truth -o "$b" --agent "$AGENT" -- "$jdk/bin/java" -cp "$cls" $wl 200 \
		>"$b.stdout" 2>"$b.stderr"
	t_check "$name: truth run exits 0 with the program's output" grep -q '^result ' "$b.stdout" ||
		sed 's/^/# /' "$b.stderr"
	if ! "$SIM" synth "$b" --cpus 2 --jit-invoke 40 --jit-backedge 400 --seed 5 \
		2>"$b.synth"; then
		t_fail "$name: synth"; sed 's/^/# /' "$b.synth"; continue
	fi
	t_ok "$name: synth"
	nthreads=$(jq -r '.truth.threads // empty' <("$JPBPF" info "$b" --json 2>/dev/null))
	t_check "$name: truth has main and a second thread (${nthreads:-?})" \
		[ "${nthreads:-0}" -ge 2 ]
	t_check "$name: more than 20000 bytecodes in the truth" \
		[ "$(sim_meta "$b" sim.bytecodes)" -gt 20000 ]
	t_check "$name: some methods compiled" [ "$(sim_meta "$b" sim.nmethods)" -gt 0 ]
	t_check "$name: the model agrees with the truth (no resync)" \
		[ "$(sim_meta "$b" sim.resyncs)" = 0 ]
	t_check "$name: the agent's class files are kept" \
		[ "$("$JPBPF" info "$b" 2>/dev/null | awk '$2 == "jvm_class" { print $1 }')" -gt 10 ]
	if sim_verify "$b" "$b.verify"; then
		t_ok "$name: libipt decodes every CPU's stream exactly"
	else
		t_fail "$name: libipt decodes every CPU's stream exactly"
		sed 's/^/# /' "$b.verify" "$b.verify.err"
	fi
	decode_exact "$name" "$b"
	done
done
[ $ran = 1 ] || t_skip "real JVM truth" "no JDK with javac"
t_done
