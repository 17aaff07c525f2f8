#!/usr/bin/env bash
# jpbpf record in a bad environment or on bad input: clear one-line
# messages, the documented exit codes, and a bundle that says what is
# missing whenever one is written.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/record_lib.sh"
rec_setup
J=$JPBPF # the sanitizer build: these paths must be clean too

# Usage.
t_expect_exit 2 "no -p: usage error" "$J" record --no-pt
t_expect_exit 2 "bad --ringbuf-kb" "$J" record -p 1 --no-pt --ringbuf-kb 3
t_expect_exit 0 "--help" "$J" record --help
t_check "--help documents --no-pt, --cgroup and the default -o" \
	bash -c "'$J' record --help | grep -q -- '--cgroup' && '$J' record --help | grep -q 'jpbpf-PID-YYYYmmdd-HHMMSS'"

# A helper target that context-switches (short sleeps) but is no JVM.
bash -c 'while :; do sleep 0.02; done' &
TPID=$!

# Without --no-pt on a machine without Intel PT: exit 2, PT's reason and
# what still works.
if [ ! -d /sys/bus/event_source/devices/intel_pt ]; then
	t_expect_exit 2 "record without --no-pt and no PT: exit 2" \
		"$J" record -p "$TPID" -d 1 -o "$TESTTMP/e-pt"
	t_check "... names the reason and --no-pt" \
		bash -c "grep -q 'intel_pt' '$TESTTMP/err.$$' && grep -q -- '--no-pt' '$TESTTMP/err.$$'"
	t_check "... and writes no bundle" [ ! -e "$TESTTMP/e-pt" ]
	t_expect_exit 2 "one-shot jpbpf -p without PT: exit 2 first" \
		"$J" -p "$TPID" -d 1 -o "$TESTTMP/e-os"
else
	t_skip "record without --no-pt" "this machine has Intel PT"
	t_skip "PT reason" "this machine has Intel PT"
	t_skip "no bundle" "this machine has Intel PT"
	t_skip "one-shot without PT" "this machine has Intel PT"
fi

# No such process: runtime failure, exit 1.
t_expect_exit 1 "no such pid: exit 1" "$J" record -p 4000000 --no-pt -d 1 -o "$TESTTMP/e-gone"
t_check "... says 'no such process'" grep -q "no such process" "$TESTTMP/err.$$"

# No permission: an unprivileged user gets exit 2 and a clear reason,
# both for root's process and for one of its own.
if id nobody >/dev/null 2>&1; then
	# nobody may not reach the build tree (a clone under /root is 0700).
	nbdir=$(mktemp -d /tmp/jpbpf-nobody.XXXXXX)
	chmod 0755 "$nbdir"
	cp "$JPBPF_PLAIN" "$nbdir/jpbpf"
	t_expect_exit 2 "unprivileged, root's pid: exit 2" \
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$nbdir/jpbpf" record -p "$TPID" --no-pt -d 1 -o /tmp/jpbpf-nobody-$$
	t_check "... says not permitted" grep -q "not permitted" "$TESTTMP/err.$$"
	t_expect_exit 2 "unprivileged, own pid: exit 2" \
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
		bash -c "sleep 3 & exec '$nbdir/jpbpf' record -p \$! --no-pt -d 1 -o /tmp/jpbpf-nobody-$$"
	t_check "... names the missing privilege" grep -q "CAP_BPF" "$TESTTMP/err.$$"
	rm -rf /tmp/jpbpf-nobody-$$ "$nbdir"
else
	for i in 1 2 3 4; do t_skip "unprivileged" "no user nobody"; done
fi

# No BTF: libbpf cannot be pointed at "no BTF" for the running kernel, so
# the BTF path jpbpf checks and hands to libbpf is overridden instead
# (--btf / $JPBPF_BTF), to a missing file and to a file that is not BTF.
t_expect_exit 2 "no BTF (missing file): exit 2" \
	"$J" record -p "$TPID" --no-pt -d 1 --btf "$TESTTMP/none" -o "$TESTTMP/e-btf"
t_check "... says BTF and CONFIG_DEBUG_INFO_BTF" \
	bash -c "grep -q 'BTF' '$TESTTMP/err.$$' && grep -q CONFIG_DEBUG_INFO_BTF '$TESTTMP/err.$$'"
t_expect_exit 2 "no BTF (not a BTF file, \$JPBPF_BTF): exit 2" \
	env JPBPF_BTF=/etc/passwd "$J" record -p "$TPID" --no-pt -d 1 -o "$TESTTMP/e-btf"
t_check "... writes no bundle" [ ! -e "$TESTTMP/e-btf" ]

# A non-JVM pid: scheduling is recorded anyway; USDT and agent absence is
# said on stderr, in NOTE records and in meta.json "missing".
B=$TESTTMP/e-nonjvm
t_expect_exit 0 "non-JVM pid: records anyway, exit 0" \
	"$J" record -p "$TPID" --no-pt -d 1 -o "$B"
t_check "... warns on stderr about USDT" grep -q "warning: .*libjvm.so" "$TESTTMP/err.$$"
t_check "... a NOTE record says so" bash -c "'$RCHECK' notes '$B' | grep -q 'no USDT'"
t_check "... meta.json missing lists usdt" bash -c "grep -q '\"usdt: ' '$B/meta.json'"
t_check "... info: usdt.attached false, sched events > 0" \
	[ "$(rec_json "$B" usdt.attached)" = false -a "$(rec_json "$B" sched.events)" -gt 0 ]
t_check "... bundle reads back undamaged" \
	[ "$(rec_json "$B" streams.sched.truncated_at)" = null ]

# Status line only on a terminal.
script -qec "'$JPBPF_PLAIN' record -p $TPID --no-pt -d 2 -o '$TESTTMP/e-tty'" /dev/null \
	>"$TESTTMP/tty.out" 2>&1
t_check "status line (events, lost, bytes) on a terminal" \
	bash -c "grep -q \$'\rjpbpf: pid $TPID: [0-9]* events, [0-9]* lost, [0-9]* bytes' '$TESTTMP/tty.out'"
# SIGINT (Ctrl-C) and SIGTERM end a recording cleanly.
for sig in INT TERM; do
	B=$TESTTMP/e-sig$sig
	"$J" record -p "$TPID" --no-pt -d 60 -o "$B" 2>/dev/null &
	R=$!
	for i in $(seq 50); do [ -f "$B/meta.json" ] && break; sleep 0.1; done
	sleep 0.5
	kill -"$sig" "$R"
	wait "$R"
	rc=$?
	t_check "SIG$sig: exit 0, stop_reason signal, bundle complete" \
		[ "$rc" = 0 -a "$(rec_meta "$B" record.stop_reason)" = signal -a \
		  "$(rec_json "$B" streams.sched.truncated_at)" = null ]
done
rec_stop "$TPID"

# A pid that exits soon after recording starts (2 s: time for the
# sanitizer build to load BPF on a busy machine): the bundle is finished
# and says why recording stopped.
sleep 2 &
SPID=$!
B=$TESTTMP/e-short
t_expect_exit 0 "target exiting during recording: exit 0" \
	"$J" record -p "$SPID" --no-pt -d 10 -o "$B"
t_check "... stop_reason 'target exited', well before -d" \
	[ "$(rec_meta "$B" record.stop_reason)" = "target exited" ]
t_check "... meta has stop_ns and bpf counts" \
	[ "$(rec_meta "$B" record.stop_ns)" -gt 0 -a "$(rec_meta "$B" bpf.lost)" = 0 ]
wait "$SPID" 2>/dev/null
t_done
