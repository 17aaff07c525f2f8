#!/usr/bin/env bash
# jpbpf decode on damaged input: PT bits flipped (CRCs fixed so the damage
# reaches libipt), a PT stream cut in the middle, a compiled method's
# metadata missing, no jvm stream, bad usage.  Damage is counted and
# decoding goes on past it; nothing crashes (the sanitizer build) or hangs
# (every run under a timeout).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sim_lib.sh"
. "$(dirname "$0")/decode_lib.sh"
sim_setup
decode_setup

base=$TESTTMP/dmg-base
"$SIM" scenario -o "$base" --threads 4 --iters 200 >/dev/null 2>&1
"$SIM" synth "$base" --cpus 2 --jit-invoke 5 --seed 3 >/dev/null 2>&1

errs() { sed -n 's/^decode errors: \([0-9]*\).*/\1/p' "$1"; }

for seed in 1 2 3; do
	b=$TESTTMP/dmg-flip$seed
	rm -rf "$b"; cp -r "$base" "$b"
	pt_mangle flip "$b/pt/cpu0.jpb" $seed
	pt_mangle flip "$b/pt/cpu1.jpb" $((seed + 10))
	timeout 120 "$JPBPF" decode "$b" >"$b.out" 2>"$b.err"
	rc=$?
	t_check_sh "flipped PT bits (seed $seed): exit 0 within the timeout, no sanitizer report" \
		'[ $rc = 0 ] && ! grep -q Sanitizer "$b.err"'
	t_check_sh "flipped PT bits (seed $seed): decode errors counted and reported as gaps" \
		'[ "$(errs "$b.out")" -gt 0 ] && grep -q decode_error= "$b.out"'
	"$DCHECK" "$b" >"$b.chk" 2>&1
	t_check "flipped PT bits (seed $seed): decoding continued past the damage (>50% decoded)" \
		[ "$(decode_field "$b.chk" decoded)" -gt $(( $(decode_field "$b.chk" truth) / 2 )) ]
done

for seed in 4 5; do
	b=$TESTTMP/dmg-scramble$seed
	rm -rf "$b"; cp -r "$base" "$b"
	pt_mangle scramble "$b/pt/cpu0.jpb" $seed
	timeout 120 "$JPBPF" decode "$b" >"$b.out" 2>"$b.err"
	rc=$?
	t_check_sh "1 in 200 PT bytes random (seed $seed): exit 0 in time, no sanitizer report, errors counted" \
		'[ $rc = 0 ] && ! grep -q Sanitizer "$b.err" && [ "$(errs "$b.out")" -gt 0 ]'
done

b=$TESTTMP/dmg-trunc
rm -rf "$b"; cp -r "$base" "$b"
sz=$(stat -c %s "$b/pt/cpu1.jpb")
truncate -s $((sz * 2 / 3)) "$b/pt/cpu1.jpb"
timeout 120 "$JPBPF" decode "$b" >"$b.out" 2>"$b.err"
rc=$?
t_check_sh "truncated PT stream: exit 0, a warning naming the stream and offset" \
	'[ $rc = 0 ] && grep -Eq "pt/cpu1: record at offset [0-9]+ truncated" "$b.err"'
t_check "truncated PT stream: the damage is a counted error" [ "$(errs "$b.out")" -gt 0 ]

b=$TESTTMP/dmg-nm
rm -rf "$b"; cp -r "$base" "$b"
pt_mangle dropnm "$b/jvm.jpb" 2
timeout 120 "$JPBPF" decode "$b" >"$b.out" 2>"$b.err"
rc=$?
t_check_sh "a compiled method's metadata missing: exit 0, no sanitizer report" \
	'[ $rc = 0 ] && ! grep -q Sanitizer "$b.err"'
t_check_sh "a compiled method's metadata missing: errors counted, gaps reported" \
	'[ "$(errs "$b.out")" -gt 0 ] && grep -q decode_error= "$b.out"'
"$DCHECK" "$b" >"$b.chk" 2>&1
t_check "a compiled method's metadata missing: nothing invented (all decoded events match)" \
	[ "$(decode_field "$b.chk" matched)" = "$(decode_field "$b.chk" decoded)" ]

# decode_mangled NAME FROM MODE FILE ARG: copy bundle FROM to $b
# ($TESTTMP/dmg-NAME), pt_mangle MODE its FILE with ARG, decode it into
# $b.out and $b.err; $rc gets the exit status.
decode_mangled() {
	b=$TESTTMP/dmg-$1
	rm -rf "$b"; cp -r "$2" "$b"
	pt_mangle "$3" "$b/$4" "$5"
	timeout 120 "$JPBPF" decode "$b" >"$b.out" 2>"$b.err"
	rc=$?
}

# One jvm record whose checksum fails: it alone is lost, said so, and the
# metadata after it is read on.
"$JPBPF" decode "$base" >"$TESTTMP/dmg-base.out" 2>&1
nm() { sed -n 's/^image: \([0-9]*\) compiled methods.*/\1/p' "$1"; }
decode_mangled crc "$base" badcrc jvm.jpb 2
t_check_sh "a jvm record's checksum fails: exit 0, a warning naming the stream and offset" \
	'[ $rc = 0 ] && grep -Eq "warning: decode: jvm: record at offset [0-9]+ corrupt \(checksum mismatch\)" "$b.err"'
t_check_sh "a jvm record's checksum fails: one warning, not one from decoding and one from the reconstruction" \
	'[ "$(grep -c "record at offset" "$b.err")" = 1 ] && grep -q "^flow: " "$b.out"'
t_check "a jvm record's checksum fails: counted in the summary" \
	grep -q '^jvm metadata: 1 damaged record lost' "$b.out"
t_check "a jvm record's checksum fails: only that compiled method lost ($(nm "$TESTTMP/dmg-base.out") -> $(nm "$b.out"))" \
	[ "$(nm "$b.out")" = $(( $(nm "$TESTTMP/dmg-base.out") - 1 )) ]

# One AUX data record whose checksum fails: the trace after it decodes,
# behind a gap.  Several records per CPU: a longer scenario.
big=$TESTTMP/dmg-big
"$SIM" scenario -o "$big" --threads 4 --iters 1500 >/dev/null 2>&1
"$SIM" synth "$big" --cpus 2 --jit-invoke 5 --seed 3 >/dev/null 2>&1
decode_mangled crcpt "$big" badcrcpt pt/cpu0.jpb 2
t_check_sh "a PT record's checksum fails: exit 0, a warning naming the stream, offset and the step over" \
	'[ $rc = 0 ] && grep -Eq "pt/cpu0: record at offset [0-9]+ corrupt \(checksum mismatch\) \(1 damaged record stepped over\)" "$b.err"'
t_check "a PT record's checksum fails: info counts it damaged, and the records after it" \
	[ "$("$JPBPF" info --json "$b" 2>/dev/null | python3 -c 'import json,sys
s = json.load(sys.stdin)["streams"]["pt/cpu0"]; print(s["damaged"], s["records"])')" = \
	  "1 $(( $("$JPBPF" info --json "$big" 2>/dev/null | python3 -c 'import json,sys
print(json.load(sys.stdin)["streams"]["pt/cpu0"]["records"])') - 1 ))" ]
t_check_sh "a PT record's checksum fails: an error counted, a gap where it was" \
	'[ "$(errs "$b.out")" -gt 0 ] && grep -q aux_hole= "$b.out"'
"$DCHECK" "$b" >"$b.chk" 2>&1
t_check "a PT record's checksum fails: the records after it decoded (>75% of the truth)" \
	[ "$(decode_field "$b.chk" decoded)" -gt $(( $(decode_field "$b.chk" truth) * 3 / 4 )) ]
# The hole swallowed no switch, but the CPU changes threads after it: the
# switches after a hole are applied (they were not: the thread before the
# hole took the rest of the CPU's trace, 184820 events misattributed).
t_check "a PT record's checksum fails: events after the hole on the right threads, its gap between its neighbours' times" \
	all_placed "$b.chk"
# The time baseline scans no gaps, so the hole's start is not known: its
# gap starts at the run's start (it started at 0, sorted first in its
# thread, and went to every thread the CPU ran before the hole).
"$JPBPF" decode "$b" --attribution=time >"$b.out" 2>&1
"$DCHECK" "$b" >"$b.chk" 2>&1
t_check_sh "a PT record's checksum fails, --attribution=time: the hole's gap between its neighbours' times" \
	'[ "$(decode_field "$b.chk" gap_bounds_bad)" = 0 ] && grep -q "^gaps: 1 aux_hole=1\$" "$b.out"'

# Many switches (20 us slices, an interrupt every ~300 instructions: cpu0
# has 4522 tracing gaps before its 6th AUX record, so the scan has written
# the first 4096 of its table out when the hole is patched) and a hole
# there.  The switches stamped in the hole apply at the run after it, all
# together: by the nearest gap the late ones went to the run's first gaps,
# one more arrival applied at each, and the threads that ran in the hole
# took the trace after it (33 300 of 689 881 events on the wrong thread).
many=$TESTTMP/dmg-many
"$SIM" scenario -o "$many" --threads 4 --iters 1500 >/dev/null 2>&1
"$SIM" synth "$many" --cpus 2 --jit-invoke 5 --quantum-us 20 --irq-every 300 --seed 1 >/dev/null 2>&1
decode_mangled holemany "$many" badcrcpt pt/cpu0.jpb 6
"$DCHECK" "$b" >"$b.chk" 2>&1
t_check_sh "a PT record lost after 4096 gaps and many switches: an aux_hole gap, every event on its thread" \
	'[ $rc = 0 ] && grep -q "aux_hole=" "$b.out" &&
	 [ "$(decode_field "$b.chk" matched)" = "$(decode_field "$b.chk" decoded)" ] &&
	 [ "$(decode_field "$b.chk" decoded)" -gt $(( $(decode_field "$b.chk" truth) * 3 / 4 )) ]'
# ... and each thread's gaps there span its stays on this CPU, not the
# whole hole: three threads ran on cpu1 in between (their gap ended after
# those events).
t_check "a PT record lost after many switches: no gap covers a thread's events on the other CPU" \
	[ "$(decode_field "$b.chk" gap_bounds_bad)" = 0 ]
# The same on cpu1: the hole's gap opens at the next run's start, after
# the switches in it were applied; the thread that lost the trace is the
# one before them (the last arrival got a gap from the hole's start).
decode_mangled holemany1 "$many" badcrcpt pt/cpu1.jpb 6
"$DCHECK" "$b" >"$b.chk" 2>&1
t_check "a PT record of cpu1 lost after many switches: every event on its thread, no gap over another CPU's events" \
	all_placed "$b.chk"

# The first AUX data record damaged: full trace starts at offset 0, so the
# next one follows a hole too (no gap was reported: the first run had
# nothing before it to jump from).
decode_mangled crcpt1 "$big" badcrcpt pt/cpu0.jpb 1
"$DCHECK" "$b" >"$b.chk" 2>&1
t_check_sh "the first PT record's checksum fails: an aux_hole gap, the events after it on their threads" \
	'[ $rc = 0 ] && grep -q "^gaps: 1 aux_hole=1\$" "$b.out" && all_placed "$b.chk"'

# A damaged length field: the reading resumes at the next intact record
# (it took the rest of the stream: 423419 events decoded, not 684322).
decode_mangled lenpt "$big" badlenpt pt/cpu0.jpb 2
"$DCHECK" "$b" >"$b.chk" 2>&1
t_check_sh "a PT record's length field damaged: that record alone lost, an aux_hole gap, the rest on the right threads" \
	'[ $rc = 0 ] && grep -q "^gaps: 1 aux_hole=1\$" "$b.out" && all_placed "$b.chk" &&
	 [ "$(decode_field "$b.chk" decoded)" -gt $(( $(decode_field "$b.chk" truth) * 3 / 4 )) ]'

# Snapshots (flight recorder): one run per snapshot, whose second span
# (split by the ring's end) continues it; the trace between snapshots is
# a hole, and the switches after it apply.
decode_mangled snap "$big" snapshots pt/cpu0.jpb 0
t_check_sh "snapshots: exit 0, one aux_hole gap before each snapshot after the first" \
	'[ $rc = 0 ] && grep -q "^gaps: 2 aux_hole=2\$" "$b.out"'
"$DCHECK" "$b" >"$b.chk" 2>&1
t_check "snapshots: every decoded event on its thread, gaps between their neighbours' times" \
	all_placed "$b.chk"

decode_mangled crcsw "$big" badcrcsw sched.jpb 2
t_check_sh "a switch record's checksum fails: exit 0, a warning naming sched and the offset" \
	'[ $rc = 0 ] && grep -Eq "warning: decode: sched: record at offset [0-9]+ corrupt \(checksum mismatch\) \(1 damaged record stepped over\)" "$b.err"'

# A short recording has two clock pairs, at its start and its end; with
# one lost, the slope through the other is the TSC's rate (meta.json),
# not 1 (then 452738 of 740030 events went to the wrong thread).
for n in 1 2; do
	decode_mangled "crccp$n" "$big" badcrccp sched.jpb $n
	"$DCHECK" "$b" >"$b.chk" 2>&1
	t_check_sh "clock pair $n of 2 damaged: every event decoded on its thread" \
		'[ $rc = 0 ] && all_placed "$b.chk" &&
		 [ "$(decode_field "$b.chk" decoded)" = "$(decode_field "$b.chk" truth)" ]'
done

b=$TESTTMP/dmg-nojvm
rm -rf "$b"; cp -r "$base" "$b"; rm "$b/jvm.jpb"
t_expect_exit 1 "no jvm stream: exit 1" "$JPBPF" decode "$b"
"$JPBPF" decode "$b" 2>"$b.err"
t_check_sh "no jvm stream: one line naming the stream" \
	'[ "$(wc -l <"$b.err")" = 1 ] && grep -q jvm "$b.err"'
t_expect_exit 1 "not a bundle: exit 1" "$JPBPF" decode "$TESTTMP/no-such-dir"
t_expect_exit 2 "no DIR: exit 2" "$JPBPF" decode
t_expect_exit 2 "-j 0: exit 2" "$JPBPF" decode "$base" -j 0
t_expect_exit 2 "unknown option: exit 2" "$JPBPF" decode "$base" --bogus
t_expect_exit 0 "--help: exit 0" "$JPBPF" decode --help
t_done
