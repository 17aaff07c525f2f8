#!/usr/bin/env bash
# Thread attribution, `jpbpf decode --attribution=switch|time`, on 4
# threads sharing 2 simulated CPUs with 500 us slices.  The same schedule
# is synthesised with the BPF clock exact and jittered (jitter changes only
# the sched stream's timestamps, not the PT), so decode_attr can score a
# jittered decoding against the exact one event by event.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sim_lib.sh"
. "$(dirname "$0")/decode_lib.sh"
sim_setup
decode_setup
ATTR=$TOOLS/decode_attr

base=$TESTTMP/attr-base
"$SIM" scenario -o "$base" --threads 4 --iters 2000 >/dev/null 2>&1
synth() { # NAME JITTER_NS
	rm -rf "$TESTTMP/attr-$1"; cp -r "$base" "$TESTTMP/attr-$1"
	"$SIM" synth "$TESTTMP/attr-$1" --cpus 2 --quantum-us 500 --jit-invoke 5 \
		--jitter "$2" --seed 7 >/dev/null 2>&1
}
# decode NAME MODE: decoded/ of bundle NAME copied to NAME.MODE
decode() {
	"$JPBPF" decode "$TESTTMP/attr-$1" --no-flow --attribution="$2" >/dev/null 2>&1 &&
		rm -rf "$TESTTMP/attr-$1.$2" &&
		cp -r "$TESTTMP/attr-$1" "$TESTTMP/attr-$1.$2"
}
pct() { sed -n 's/.* pct=\([0-9.]*\).*/\1/p' "$1"; }

synth exact 0
decode exact switch
"$DCHECK" "$TESTTMP/attr-exact" >"$TESTTMP/attr-exact.chk" 2>&1
c=$TESTTMP/attr-exact.chk
t_check "exact clock, switch: every event on the right thread (the reference)" \
	[ "$(decode_field "$c" truth)" -gt 100000 \
	  -a "$(decode_field "$c" matched)" = "$(decode_field "$c" truth)" \
	  -a "$(decode_field "$c" decoded)" = "$(decode_field "$c" truth)" ]
t_expect_exit 0 "decode --attribution=time" decode exact time
"$ATTR" "$TESTTMP/attr-exact.switch" "$TESTTMP/attr-exact.time" >"$TESTTMP/attr-exact.out" 2>&1
echo "# jitter 0 ns, time: $(cat "$TESTTMP/attr-exact.out")"
# A thread migrating right after a fault-free async disable may report the
# bytecode it stood at on both CPUs (time mode has no gaps to tell).
t_check "exact clock, time: as well attributed as switch (>= 99.99% same, none unattributed)" \
	awk -v p="$(pct "$TESTTMP/attr-exact.out")" \
	    -v u="$(sed -n 's/.* unattributed=\([0-9]*\).*/\1/p' "$TESTTMP/attr-exact.out")" \
	    'BEGIN { exit !(p >= 99.99 && u == 0) }'
t_expect_exit 2 "--attribution=bogus is a usage error" \
	"$JPBPF" decode "$TESTTMP/attr-exact" --attribution=bogus

ref=$TESTTMP/attr-exact.switch
for j in 10000 100000; do
	synth "j$j" "$j"
	for m in switch time; do
		decode "j$j" "$m"
		"$ATTR" "$ref" "$TESTTMP/attr-j$j.$m" >"$TESTTMP/attr-j$j.$m.out" 2>&1
		echo "# jitter $j ns, $m: $(cat "$TESTTMP/attr-j$j.$m.out")"
	done
done
o=$TESTTMP/attr-j100000
t_check "jitter 100 us: the scores are real (events decoded, some misplaced by time)" \
	awk -v t="$(pct "$o.time.out")" 'BEGIN { exit !(t > 50 && t < 100) }'
# The default places cuts by PT gaps, IP continuity and idle gaps; the
# baseline by time alone.
t_check "jitter 100 us: switch attributes better than time (by over a point)" \
	awk -v s="$(pct "$o.switch.out")" -v t="$(pct "$o.time.out")" 'BEGIN { exit !(s >= t + 1) }'
o=$TESTTMP/attr-j10000
t_check "jitter 10 us: switch attributes better than time, >= 99.8%" \
	awk -v s="$(pct "$o.switch.out")" -v t="$(pct "$o.time.out")" 'BEGIN { exit !(s > t && s >= 99.8) }'
t_done
