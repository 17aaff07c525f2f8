#!/usr/bin/env bash
# Real programs from Debian packages (tests/workloads/programs/run), the
# two fastest (commons-math3, lucene): a bounded ground-truth window of a
# real JVM (jpbpf-sim truth --from the harness's measured method --max
# 150000 bytecodes), synth at 0% and 20% loss, `jpbpf decode`, `jpbpf eval
# --json`.  Asserted: the window opened at the trigger mid-stack, no
# resync, the loss on target, every decoded event attributed to a thread,
# no decode error, DA above a floor chosen from measurements (0.99; the
# measured figures are printed as TAP comments).  A program whose package
# is not installed is skipped (scripts/install-deps --programs).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/programs_lib.sh"
programs_setup
MAX=150000
FLOOR=0.99
window_ok() {
	jq -e '.window.start == "trigger" and .window.threads_mid_stack >= 1 and
	       .bytecodes > 50000' >/dev/null <<<"$1"
}

# run_loss NAME TRUTH LOSS: synth a copy at LOSS %, decode, evaluate.
run_loss() {
	local name=$1 b=$2.l$3 loss=$3 opt=()
	rm -rf "$b"
	cp -r "$2" "$b"
	[ "$loss" = 0 ] || opt=(--loss "$loss")
	if ! "$SIM" synth "$b" --seed 11 --jit-invoke 200 --jit-backedge 2000 "${opt[@]}" \
		>"$b.synth" 2>&1; then
		t_fail "$name $loss%: synth"; sed 's/^/# /' "$b.synth"; return
	fi
	t_check "$name $loss%: no resync, loss on target ($(printf %.2f "$(sim_meta "$b" sim.lost_pct)")%)" \
		awk -v r="$(sim_meta "$b" sim.resyncs)" -v l="$(sim_meta "$b" sim.lost_pct)" \
		-v t="$loss" 'BEGIN { d = l - t; exit !(r == 0 && d <= 1 && d >= -1) }'
	if ! "$JPBPF" decode "$b" >"$b.dec" 2>&1; then
		t_fail "$name $loss%: jpbpf decode"; sed 's/^/# /' "$b.dec"; return
	fi
	t_check "$name $loss%: decode: every event attributed to a thread, no error" \
		sh -c "grep -qx 'unattributed events: 0' '$b.dec' && grep -q '^decode errors: 0,' '$b.dec'"
	if ! "$JPBPF" eval "$b" --json >"$b.eval" 2>"$b.eval.err"; then
		t_fail "$name $loss%: jpbpf eval"; sed 's/^/# /' "$b.eval.err"; return
	fi
	local da
	da=$(jq -r .overall.DA "$b.eval")
	echo "# $name $loss%: $(grep '^flow:' "$b.dec")"
	echo "# $name $loss%: eval $(jq -c '.overall | {DA, PD, PMD, PR, RA, DA_compiled, DA_interpreted, truth_events}' "$b.eval")"
	t_check "$name $loss%: DA $da >= $FLOOR" ge "$da" "$FLOOR"
}

for name in math3 lucene; do
	programs_args "$name" || continue
	b=$TESTTMP/prog-$name
	start=$(date +%s.%N)
	programs_truth "$name" "$b" $MAX
	t_check "$name: truth run ends with the program's result" grep -q '^result ' "$b.stdout" ||
		sed 's/^/# /' "$b.stderr"
	info=$("$JPBPF" info "$b" --json 2>/dev/null | jq -c '.truth')
	echo "# $name: truth in $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s, $(du -k "$b/truth.jpb" | cut -f1) KiB: $info"
	t_check "$name: the window opened at the trigger, mid-stack, with > 50000 bytecodes" \
		window_ok "$info"
	run_loss "$name" "$b" 0
	run_loss "$name" "$b" 20
done
t_done
