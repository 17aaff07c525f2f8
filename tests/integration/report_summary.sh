#!/usr/bin/env bash
# jpbpf report --format summary on a simulated, decoded bundle: its totals
# agree with the flow streams that `jpbpf info` counts, per-thread
# summaries add up to the whole, JSON and -o work, the text has its
# sections, and bad input fails with the documented exit codes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sim_lib.sh"
sim_setup

b=$TESTTMP/report-sum
rm -rf "$b"
"$SIM" scenario -o "$b" --threads 3 --iters 60 >/dev/null 2>&1
"$SIM" synth "$b" --cpus 2 --jit-invoke 5 --seed 2 --loss 10 >/dev/null 2>&1
"$JPBPF" decode "$b" >"$b.dec" 2>&1
t_check "decode with reconstruction" grep -q '^flow: 3 threads' "$b.dec"

"$JPBPF" report "$b" --format summary --json -o "$b.json" 2>"$b.err"
t_check "summary --json -o FILE: exit 0, valid JSON" jq -e .events "$b.json" >/dev/null
total=$(jq .events "$b.json")
info_total=$(jq '.flow.events' <("$JPBPF" info "$b" --json 2>/dev/null))
t_check_sh "summary counts every flow event ($total = info's $info_total)" \
	'[ -n "$total" ] && [ "$total" = "$info_total" ] && [ "$total" -gt 0 ]'
t_check "observed + recovered + unknown = events" \
	[ "$(jq '.observed + .recovered + .unknown' "$b.json")" = "$total" ]
t_check "10% loss: some events are marked recovered ($(jq .recovered "$b.json"))" \
	[ "$(jq .recovered "$b.json")" -gt 0 ]
t_check "methods sorted by events, shares <= 1" \
	jq -e '[.methods[].events] as $e | ($e == ($e | sort | reverse)) and all(.methods[]; .share <= 1)' "$b.json"

sum=0
for s in $(jq -r '.streams | keys[]' <("$JPBPF" info "$b" --json 2>/dev/null) | sed -n 's|^flow/tid\([0-9]*\)$|\1|p'); do
	n=$("$JPBPF" report "$b" --format summary --thread "$s" --json | jq .events)
	sum=$((sum + n))
done
t_check "per-thread summaries add up to the whole ($sum)" [ "$sum" = "$total" ]

"$JPBPF" report "$b" --format summary --top 3 >"$b.txt"
# the hot list: the lines between its column header and the blank line
hot=$(sed -n '/^hot methods by bytecodes/,/^$/p' "$b.txt" | grep -c '^ *[0-9]')
t_check "text: header, exactly 3 hot methods ($hot), time, coverage and loss sections" \
	sh -c "grep -q 'bytecodes in 3 threads' '$b.txt' && [ '$hot' -eq 3 ] &&
	       grep -q '^hot methods by time' '$b.txt' && grep -q '^coverage by class' '$b.txt' &&
	       grep -q '^data loss and recovery' '$b.txt'"
"$JPBPF" report "$b" --format all -q 2>"$b.all.err"
t_check "--format all: exit 0, one file per export in DIR/exports" \
	test -s "$b/exports/summary.txt" -a -s "$b/exports/cct.json" -a \
	-s "$b/exports/calls.jsonl" -a -s "$b/exports/flow.txt" -a \
	-s "$b/exports/folded.txt" -a -s "$b/exports/perfetto.json"
t_check "--format all: the summary equals report --format summary --json" \
	cmp -s "$b/exports/summary.json" "$b.json"
t_check "--format all: JSON exports parse, folded lines are 'stack count'" \
	sh -c "jq -e .traceEvents '$b/exports/perfetto.json' >/dev/null &&
	       jq -e . '$b/exports/cct.json' >/dev/null &&
	       ! grep -vqE '^[^ ].* [0-9]+\$' '$b/exports/folded.txt'"
t_expect_exit 2 "--format all with -o: exit 2" "$JPBPF" report "$b" --format all -o x
t_expect_exit 2 "unknown format: exit 2" "$JPBPF" report "$b" --format nope
t_expect_exit 2 "no --format: exit 2" "$JPBPF" report "$b"
t_expect_exit 1 "unknown thread: exit 1" "$JPBPF" report "$b" --format summary --thread 999999
t_expect_exit 1 "not a bundle: exit 1" "$JPBPF" report /nonexistent --format summary
t_done
