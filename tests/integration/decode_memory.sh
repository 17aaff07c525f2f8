#!/usr/bin/env bash
# Bounded memory: the decoder's peak RSS must not follow the trace size.
# The same simulated workload (4 threads on 2 CPUs) is traced to two
# lengths, about 13x apart in MB of PT, and decoded (decode only) with
# 1 MiB chunks; peak RSS comes from wait4() of the decoder alone
# (tests/tools/bench_rusage).  Before the decoder dropped the PT and gap
# pages it had passed, peak RSS grew by more than the added PT.  No timing
# is asserted.
#
# The plain build is measured, not the sanitizer one: ASan's shadow memory
# and its quarantine of freed blocks would make RSS a figure of the
# sanitizer, not of the decoder.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sim_lib.sh"
sim_setup
RU=$TOOLS/bench_rusage
t_need_tool "$RU"
PLAIN=${JPBPF_PLAIN:-$BUILD/jpbpf}
# Peak RSS at the long trace at most this times that at the short one,
# and its growth at most a chunk and 1 MiB (scan windows, output buffers)
# per worker: what the memory model (docs/DECODER.md) allows; the PT
# added is several times that, so a decoder that holds it fails.
max_ratio=1.5 chunk_kb=1024 per_worker_kb=$((1024 + 1024))

# make NAME ITERS: a bundle of the workload run for ITERS
make_bundle() {
	local b=$TESTTMP/mem-$1
	"$SIM" scenario -o "$b" --threads 4 --iters "$2" >/dev/null 2>&1 &&
		"$SIM" synth "$b" --cpus 2 --quantum-us 500 --jit-invoke 5 --seed 2 >/dev/null 2>&1 ||
		{ echo "Bail out! jpbpf-sim scenario/synth $1"; exit 1; }
	rm -f "$b/truth.jpb" # not read by the decoder; most of the bundle
}

# decode NAME JOBS: decode only; sets pt (MB of PT), rss (KB), events
decode() {
	local b=$TESTTMP/mem-$1 out=$TESTTMP/mem-$1.j$2
	"$RU" "$out.ru" "$PLAIN" decode -j "$2" --no-flow --chunk-size $((chunk_kb * 1024)) "$b" \
		>"$out" 2>"$out.err" || { sed 's/^/# /' "$out.err"; return 1; }
	pt=$(sed -n 's/.*, \([0-9.]*\) MB of PT in.*/\1/p' "$out")
	events=$(sed -n 's/^events: \([0-9]*\).*/\1/p' "$out")
	rss=$(sed -n 's/.*maxrss_kb=\([0-9]*\).*/\1/p' "$out.ru")
	[ -n "$pt" ] && [ -n "$rss" ] && [ "${events:-0}" -gt 0 ]
}

make_bundle short 1500
make_bundle long 24000
for j in 1 2; do
	decode short $j || { t_fail "-j $j: decode of the short trace failed"; continue; }
	pt_s=$pt rss_s=$rss
	decode long $j || { t_fail "-j $j: decode of the long trace failed"; continue; }
	pt_l=$pt rss_l=$rss
	echo "# -j $j: $pt_s MB of PT: peak RSS $rss_s KB; $pt_l MB: $rss_l KB"
	t_check "-j $j: the long trace has at least 8x the PT of the short one ($pt_l vs $pt_s MB)" \
		ge "$pt_l" "$(awk -v s="$pt_s" 'BEGIN { print 8 * s }')"
	t_check "-j $j: peak RSS at the long trace <= $max_ratio x that at the short one ($rss_l vs $rss_s KB)" \
		ge "$(awk -v s="$rss_s" -v r="$max_ratio" 'BEGIN { print r * s }')" "$rss_l"
	added_kb=$(awk -v a="$pt_l" -v b="$pt_s" 'BEGIN { printf "%d", (a - b) * 1024 }')
	bound_kb=$((j * per_worker_kb))
	t_check "-j $j: the PT added ($added_kb KB) is over twice the growth allowed ($bound_kb KB)" \
		[ "$added_kb" -gt $((2 * bound_kb)) ]
	t_check "-j $j: peak RSS grew by at most $bound_kb KB ($j x (chunk + 1 MiB)): $((rss_l - rss_s)) KB" \
		[ $((rss_l - rss_s)) -le "$bound_kb" ]
	rm -rf "$TESTTMP/mem-long/decoded" "$TESTTMP/mem-short/decoded"
done
t_done
