#!/usr/bin/env bash
# The decoder counts HotSpot's locals-zeroing loop at each interpreted
# method entry (DECODER.md, "Entry locals"), on simulated bundles whose
# entries run that loop (docs/SIMULATOR.md): tests/tools/decode_entrylocals
# compares every method_entry's entry_locals with n = max_locals -
# parameter slots from the class files, per thread, in order.  With every
# method interpreted and no loss, the known counts are the truth's, one
# for one; with compiled code, their histogram is that of the entries the
# simulator ran interpreted (sim/entries); with loss or interrupts, counts
# may be missing or unknown (0) but never disagree.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sim_lib.sh"
sim_setup
: "${TOOLS:=$BUILD/asan/tests/tools}"
EL=$TOOLS/decode_entrylocals
t_need_tool "$EL"
jdk=/usr/lib/jvm/java-17-openjdk-amd64
if [ ! -x "$jdk/bin/javac" ] || [ ! -f "$AGENT" ]; then
	t_skip "entry locals on simulated bundles" "no JDK 17 javac or agent not built"
	t_done
	exit 0
fi
cls=$TESTTMP/el-classes
mkdir -p "$cls"
"$jdk/bin/javac" -d "$cls" "$top/tests/workloads/SimLoop.java" \
	"$top/tests/workloads/SimWork.java" 2>/dev/null

f() { sed -n "s/^total.* $2=\([0-9]*\).*/\1/p" "$1"; }

# run WL TRUTH NAME SYNTH-OPTIONS...: synthesise a copy, decode, compare
run() {
	local b=$TESTTMP/el-$3 truth=$2
	rm -rf "$b"; cp -r "$truth" "$b"
	"$SIM" synth "$b" --cpus 2 --seed 3 "${@:4}" >/dev/null 2>&1 &&
		"$JPBPF" decode --no-flow "$b" >"$b.dec" 2>&1 &&
		"$EL" "$b" >"$b.out" 2>&1 || { sed 's/^/# /' "$b.dec" "$b.out"; return 1; }
	sed 's/^/# /' "$b.out" | tail -1
}

for wl in SimLoop SimWork; do
	truth=$TESTTMP/el-$wl-truth
	rm -rf "$truth"
	"$SIM" truth -o "$truth" --agent "$AGENT" -- "$jdk/bin/java" -cp "$cls" "$wl" 200 \
		>/dev/null 2>&1
	if ! run "$wl" "$truth" "$wl-nojit" --no-jit; then
		t_fail "$wl: simulate and decode"
		continue
	fi
	o=$TESTTMP/el-$wl-nojit.out
	T=$(f "$o" truth)
	t_check "$wl: decode's image line: the loop found in both zerolocals entries" \
		grep -q '^image: .*, locals loops in 2 of 2 zerolocals entries$' "$TESTTMP/el-$wl-nojit.dec"
	t_check "$wl, all interpreted, no loss: every entry's count decoded and equal to the truth's, in order ($T)" \
		[ "${T:-0}" -gt 100 -a "$(f "$o" decoded)" = "$T" -a "$(f "$o" known)" = "$T" \
		  -a "$(f "$o" unknown)" = 0 -a "$(f "$o" unmatched)" = 0 -a "$(f "$o" hist_equal)" = 1 ]
	# chunks of one PSB period, two workers: a chunk's end inside a loop
	# may leave that entry unknown, never wrong, and nothing is lost
	b=$TESTTMP/el-$wl-nojit
	if "$JPBPF" decode --no-flow -j 2 --chunk-size 4096 "$b" >"$b.dec4k" 2>&1 &&
		"$EL" "$b" >"$b.out4k" 2>&1; then
		o=$b.out4k
		nch=$(sed -n 's/.*(\([0-9]*\) chunks).*/\1/p' "$b.dec4k")
		t_check "$wl, 4 KiB chunks (${nch:-?}), -j 2: every entry decoded, at most one unknown per chunk, none disagrees" \
			[ "$(f "$o" decoded)" = "$T" -a "$(f "$o" unknown)" -le "${nch:-0}" \
			  -a "$(f "$o" unmatched)" = 0 -a "${nch:-0}" -gt 10 ]
		sed 's/^/# /' "$o" | tail -1
	else
		t_fail "$wl, 4 KiB chunks: decode"
	fi
	if [ $wl = SimLoop ]; then
		t_check "$wl: entries with n = 0 (jle taken) and n = 1 (jg once) both occur" \
			[ "$(f "$o" n0)" -gt 0 -a "$(f "$o" n1)" -gt 0 ]
	else
		t_check "$wl: entries with n >= 2 occur ($(f "$o" nmore))" [ "$(f "$o" nmore)" -gt 0 ]
	fi
	if run "$wl" "$truth" "$wl-jit" --jit-invoke 40 --jit-backedge 400; then
		o=$TESTTMP/el-$wl-jit.out
		t_check "$wl with JIT: interpreted entries counted, none disagrees ($(f "$o" known) of $(f "$o" truth))" \
			[ "$(f "$o" known)" -gt 0 -a "$(f "$o" known)" -lt "$(f "$o" truth)" -a "$(f "$o" unmatched)" = 0 ]
		# the simulator's list of the entries it ran interpreted
		e=$(sed -n 's/^sim entries=\([0-9]*\) entries_hist_equal=\([01]\)$/\1 \2/p' "$o")
		t_check "$wl with JIT: the counts' histogram is that of the interpreted entries (sim/entries: ${e% *})" \
			[ -n "$e" -a "${e% *}" = "$(f "$o" known)" -a "${e#* }" = 1 ]
	else
		t_fail "$wl with JIT: simulate and decode"
	fi
	if run "$wl" "$truth" "$wl-loss" --no-jit --loss 20; then
		o=$TESTTMP/el-$wl-loss.out
		t_check "$wl at 20% loss: counts fall short, none disagrees ($(f "$o" known) of $(f "$o" truth))" \
			[ "$(f "$o" known)" -gt 0 -a "$(f "$o" known)" -lt "$(f "$o" truth)" -a "$(f "$o" unmatched)" = 0 ]
	else
		t_fail "$wl at 20% loss: simulate and decode"
	fi
	if run "$wl" "$truth" "$wl-irq" --no-jit --irq-every 500; then
		o=$TESTTMP/el-$wl-irq.out
		# an interrupt inside the loop leaves that entry's count unknown
		t_check "$wl with interrupts: every entry decoded, unknown where interrupted ($(f "$o" unknown)), none disagrees" \
			[ "$(f "$o" decoded)" = "$(f "$o" truth)" -a "$(f "$o" unknown)" -gt 0 \
			  -a "$(f "$o" unmatched)" = 0 ]
	else
		t_fail "$wl with interrupts: simulate and decode"
	fi
done
t_done
