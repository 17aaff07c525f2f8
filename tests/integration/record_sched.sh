#!/usr/bin/env bash
# jpbpf record --no-pt on the 8-thread workload: every sched record is the
# target's, every thread that ran is seen, per-CPU switch sequences are
# consistent, a thread born during the recording is traced, the clock
# calibration is monotonic with a small residual.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/record_lib.sh"
rec_setup

# --- Threads: 8 threads of CPU work and blocking -----------------------
rec_java "$JDK17" Threads 8
# Its 8 workers exist before the recording starts, so they are among the
# threads listed at start: rec_java returns 0.3 s after the JVM has 10
# threads, which left 7 of 8 workers started when the JVM had a quarter
# of a CPU (and without them, 14 threads of 22 on one CPU: under 16).
for i in $(seq 100); do
	[ "$(cat /proc/$JPID/task/*/comm 2>/dev/null | grep -c '^worker-')" = 8 ] && break
	sleep 0.1
done
B=$TESTTMP/sched1
"$JPBPF_PLAIN" record -p "$JPID" --no-pt --no-agent -d 3 -o "$B" \
	>"$TESTTMP/rec.out" 2>"$TESTTMP/rec.err" &
RPID=$!
# Threads that run between two snapshots taken while the recorder runs
# ran during the recording: each must appear in a switch record.
for i in $(seq 50); do [ -f "$B/meta.json" ] && break; sleep 0.1; done
sleep 0.3
schedstat_runs "$JPID" >"$TESTTMP/ss0"
sleep 1.5
schedstat_runs "$JPID" >"$TESTTMP/ss1"
wait "$RPID"; rc=$?
t_check "record exits 0" [ "$rc" = 0 ]
[ "$rc" = 0 ] || sed 's/^/# /' "$TESTTMP/rec.err"
t_check "no status line when stderr is not a terminal" \
	bash -c "! grep -q \$'\r' '$TESTTMP/rec.err'"

V=$("$RCHECK" verify "$B" "$JPID")
echo "# $V"
get() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$V"; }
t_check "switch records were written" [ "$(get switches)" -gt 100 ]
t_check "every switch record involves the target (foreign=0)" [ "$(get foreign)" = 0 ]
t_check "traced bits match the target's side of each switch" [ "$(get badbits)" = 0 ]
if [ "$(get lost)" = 0 ]; then
	t_check "per-CPU switch-in/out sequence consistent" [ "$(get inconsistent)" = 0 ]
	t_check "no thread in on two CPUs at once" [ "$(get double_in)" = 0 ]
else
	t_skip "per-CPU sequence" "$(get lost) events lost"
	t_skip "no thread in on two CPUs" "$(get lost) events lost"
fi

"$RCHECK" tids "$B" "$JPID" | sort -n >"$TESTTMP/seen"
missing=$(join <(sort "$TESTTMP/ss0") <(sort "$TESTTMP/ss1") |
	awk '$3 > $2 { print $1 }' | sort | join -v1 - <(sort "$TESTTMP/seen"))
t_check "every thread that ran during recording is seen${missing:+ (missing: $missing)}" \
	[ -z "$missing" ]
workers=$(join <(sort "$TESTTMP/seen") <(for t in /proc/$JPID/task/*; do
	echo "${t##*/} $(cat "$t/comm" 2>/dev/null)"; done | sort) | grep -c ' worker-')
t_check "all 8 worker threads are in switch records ($workers)" [ "$workers" = 8 ]
info_tids=$(rec_json "$B" sched.tids)
t_check "info sched.tids ($info_tids) = distinct tids in records" \
	[ "$info_tids" = "$(wc -l <"$TESTTMP/seen")" ]
t_check "info sched.cpus > 0 and lost = 0" \
	[ "$(rec_json "$B" sched.cpus)" -ge 1 -a "$(rec_json "$B" sched.lost)" = 0 ]
nthreads=$("$RCHECK" threads "$B" | awk '$3 == 3' | wc -l)
t_check "a thread record for every thread listed at start ($nthreads)" \
	[ "$nthreads" -ge 16 ]
t_check "meta.json: target and stop reason" \
	[ "$(rec_meta "$B" target.pid)" = "$JPID" -a "$(rec_meta "$B" record.stop_reason)" = duration ]

# Clock: pairs every 100 ms, conversion monotonic, residual bounded by
# the read window plus 2 us (docs/CLOCK.md).
pairs=$(rec_json "$B" sched.clock_pairs)
t_check "clock pairs every ~100 ms ($pairs in 3 s)" [ "$pairs" -ge 20 -a "$pairs" -le 40 ]
t_check "TSC->monotonic fit is monotonic" [ "$(rec_meta "$B" clock.tsc_to_mono.monotonic)" = true ]
res=$(rec_meta "$B" clock.tsc_to_mono.max_residual_ns)
win=$(rec_meta "$B" clock.tsc_to_mono.max_window_ns)
echo "# clock residual ${res} ns, widest window ${win} ns"
t_check "clock residual ($res ns) <= window/2 + 2000 ns" \
	awk -v r="$res" -v w="$win" 'BEGIN { exit !(r <= w / 2 + 2000) }'
rec_stop "$JPID"

# --- Handoff: a thread started after recording began is traced ---------
rec_java "$JDK17" Handoff 5 8 1500
B=$TESTTMP/sched2
"$JPBPF_PLAIN" record -p "$JPID" --no-pt --no-agent -d 3 -o "$B" \
	>/dev/null 2>"$TESTTMP/rec2.err"
rc=$?
t_check "record (hand-off workload) exits 0" [ "$rc" = 0 ]
"$RCHECK" threads "$B" >"$TESTTMP/late.thr"
late=$(awk '$4 == "late-starter" { print $1 }' "$TESTTMP/late.thr" | head -1)
echo "# late thread: tid ${late:-none}"
t_check "a thread record names the late thread late-starter" [ -n "$late" ]
t_check "the late thread has a start record (not 'seen')" \
	bash -c "awk '\$1 == \"${late:-x}\" && \$3 == 1' '$TESTTMP/late.thr' | grep -q ."
t_check "the late thread has a fork record" \
	grep -qx "${late:-x}" <("$RCHECK" forks "$B" "$JPID")
t_check "the late thread is in switch records" \
	grep -qx "${late:-x}" <("$RCHECK" tids "$B" "$JPID")
V=$("$RCHECK" verify "$B" "$JPID")
echo "# $V"
t_check "hand-off: foreign=0 inconsistent=0 double_in=0 (or losses reported)" \
	bash -c "grep -q 'foreign=0' <<<'$V' && { grep -q 'inconsistent=0 double_in=0' <<<'$V' || ! grep -q 'lost=0' <<<'$V'; }"
rec_stop "$JPID"
t_done
