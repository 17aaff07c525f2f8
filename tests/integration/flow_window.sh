#!/usr/bin/env bash
# Reconstruction in windows (docs/RECONSTRUCTION.md, "Windows") on
# simulated bundles: without loss, windows of 4096 and 1000 flow events
# give flow streams byte-identical to one window holding the whole
# thread; at 20% loss, every event but the recovered ones is identical
# (recovery sees one window), and the recovered ones are there.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sim_lib.sh"
sim_setup

sim_flow_tool
ONE=1073741824

# flow_of DIR WINDOW OUT: DIR reconstructed with WINDOW, its flow/ in OUT
flow_of() {
	"$FT" run "$1" "$2" >"$3.log" 2>&1 || { sed 's/^/# /' "$3.log"; return 1; }
	rm -rf "$3"; cp -r "$1/flow" "$3"
}

# seqs DIR: every thread's flow events, one per line, recovered ones out
seqs() {
	local tid
	for tid in $(ls "$1/flow" | sed -n 's/^tid\([0-9]*\)\.jpb$/\1/p' | sort -n); do
		echo "thread $tid"
		"$FT" seq "$1" flow "$tid" | grep -v ' recovered '
	done
}

dir=$TESTTMP/flow-window
rm -rf "$dir"
"$SIM" scenario -o "$dir" --threads 2 --iters 400 >/dev/null 2>&1
cp -r "$dir" "$dir-truth"
"$SIM" synth "$dir" --cpus 2 --jit-invoke 5 --seed 3 >/dev/null 2>&1
"$JPBPF" decode --no-flow "$dir" >/dev/null 2>&1
if flow_of "$dir" "$ONE" "$dir.one" && flow_of "$dir" 4096 "$dir.4k" &&
	flow_of "$dir" 1000 "$dir.1k"; then
	n=$(sed -n 's/.* events=\([0-9]*\) .*/\1/p' "$dir.one.log")
	t_check "0% loss: more flow events ($n) than several windows" [ "${n:-0}" -gt 8192 ]
	t_check "0% loss: windows of 4096 give the flow of one window (byte-identical)" \
		diff -r "$dir.one" "$dir.4k"
	t_check "0% loss: windows of 1000 too" diff -r "$dir.one" "$dir.1k"
else
	t_fail "0% loss: reconstruct in windows"
fi

lossy=$TESTTMP/flow-window-20
rm -rf "$lossy"; cp -r "$dir-truth" "$lossy"
"$SIM" synth "$lossy" --cpus 2 --jit-invoke 5 --seed 3 --loss 20 >/dev/null 2>&1
"$JPBPF" decode --no-flow "$lossy" >/dev/null 2>&1
if flow_of "$lossy" "$ONE" "$lossy.one" && seqs "$lossy" >"$lossy.one.seq" &&
	flow_of "$lossy" 4096 "$lossy.4k" && seqs "$lossy" >"$lossy.4k.seq"; then
	gaps=$(sed -n 's/.* gaps=\([0-9]*\) .*/\1/p' "$lossy.one.log")
	r1=$(sed -n 's/.* recovered=\([0-9]*\) .*/\1/p' "$lossy.one.log")
	r4=$(sed -n 's/.* recovered=\([0-9]*\) .*/\1/p' "$lossy.4k.log")
	t_check "20% loss: gaps ($gaps) and recovered events in one window ($r1)" \
		sh -c "[ '${gaps:-0}' -gt 0 ] && [ '${r1:-0}' -gt 0 ]"
	t_check "20% loss: windows of 4096 recover too ($r4)" [ "${r4:-0}" -gt 0 ]
	t_check "20% loss: every event but the recovered ones identical ($(wc -l <"$lossy.one.seq") lines)" \
		cmp -s "$lossy.one.seq" "$lossy.4k.seq"
else
	t_fail "20% loss: reconstruct in windows"
fi
t_done
