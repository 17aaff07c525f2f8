#!/usr/bin/env bash
# Process lifecycle events of a traced process: child processes are
# reported (sched_fork) but not followed, exec and exit are recorded, and
# recording ends when the target exits.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/record_lib.sh"
rec_setup

# A target that, once the recorder runs (1.5 s: BPF load and USDT probing
# take well under that), forks five children, execs sleep and exits.
bash -c 'sleep 1.5; for i in 1 2 3 4 5; do sleep 0.05; done; exec sleep 0.5' &
T=$!
B=$TESTTMP/life
"$JPBPF_PLAIN" record -p "$T" --no-pt -d 10 -o "$B" 2>"$TESTTMP/life.err"
t_check "record exits 0 when the target exits" [ $? = 0 ]
wait "$T" 2>/dev/null
"$RCHECK" life "$B" >"$TESTTMP/life.txt"
sed 's/^/# /' "$TESTTMP/life.txt" | head -12
children=$(awk -v t="$T" '$1 == "fork" && $3 == t && $5 != t { print $5 }' "$TESTTMP/life.txt")
t_check "five child processes reported by sched_fork ($(echo $children))" \
	[ "$(wc -w <<<"$children")" = 5 ]
followed=$(for c in $children; do "$RCHECK" tids "$B" "$c"; done | head -3)
t_check "child processes are not followed${followed:+ (traced: $followed)}" [ -z "$followed" ]
t_check "the exec is recorded (tid $T, file ends in /sleep)" \
	bash -c "awk -v t='$T' '\$1 == \"exec\" && \$2 == t && \$5 ~ /\\/sleep\$/' '$TESTTMP/life.txt' | grep -q ."
t_check "the exit is recorded with code 0 and the new comm (sleep)" \
	bash -c "awk -v t='$T' '\$1 == \"exit\" && \$2 == t && \$4 == 0 && \$5 == \"sleep\"' '$TESTTMP/life.txt' | grep -q ."
t_check "stop_reason: target exited" [ "$(rec_meta "$B" record.stop_reason)" = "target exited" ]
t_check "switch records of the target after its exec" \
	bash -c "'$RCHECK' tids '$B' '$T' | grep -qx '$T'"
t_done
