#!/usr/bin/env bash
# Intel PT unavailable (this machine: a VM without intel_pt): `jpbpf
# record` and the one-shot `jpbpf -p` on a real JVM exit 2 with a one-line
# reason that names the cause and what still works, as root and as an
# unprivileged user, and leave no bundle behind.
. "$(dirname "$0")/lib.sh"
PT=/sys/bus/event_source/devices/intel_pt
JAVA=/usr/lib/jvm/java-17-openjdk-amd64/bin

if [ -d "$PT" ]; then
	echo "1..0 # SKIP this machine has Intel PT; see docs/RECORDING.md"
	exit 0
fi
if [ ! -x "$JAVA/java" ] || [ ! -x "$JAVA/javac" ]; then
	echo "1..0 # SKIP no JDK 17 at $JAVA"
	exit 0
fi

# A JVM that just lives for a while.
src=$TESTTMP/ptnopt
mkdir -p "$src"
cat >"$src/PtIdle.java" <<'JAVA'
public class PtIdle {
	public static void main(String[] a) throws Exception {
		Thread.sleep(60_000);
	}
}
JAVA
"$JAVA/javac" -d "$src" "$src/PtIdle.java" || { echo "Bail out! javac"; exit 1; }
"$JAVA/java" -Xshare:auto -cp "$src" PtIdle &
JPID=$!
trap 'kill $JPID 2>/dev/null; wait $JPID 2>/dev/null' EXIT
for _ in $(seq 50); do
	[ "$(ls /proc/$JPID/task 2>/dev/null | wc -l)" -gt 5 ] && break
	sleep 0.1
done
t_check "a real JVM runs (pid $JPID, $(ls /proc/$JPID/task | wc -l) threads)" \
	[ "$(ls /proc/$JPID/task 2>/dev/null | wc -l)" -gt 5 ]

# The reason, on one line, names the missing PMU and what still works.
check_msg() {
	local err=$1
	grep -q "no Intel PT" "$err" &&
		grep -q "/sys/bus/event_source/devices/intel_pt" "$err" &&
		grep -q -- "--no-pt" "$err" &&
		grep -q "decode bundles recorded elsewhere" "$err" &&
		[ "$(grep -c "no Intel PT" "$err")" -eq 1 ]
}

# Nothing that looks like a bundle: no DIR, no default jpbpf-PID-* dir.
no_bundle() {
	local dir=$1 cwd=$2
	[ ! -e "$dir" ] && ! ls -d "$cwd"/jpbpf-* >/dev/null 2>&1
}

J=$(cd "$(dirname "$JPBPF")" && pwd)/$(basename "$JPBPF") # absolute: we cd
work=$TESTTMP/ptnopt-cwd
mkdir -p "$work"
err=$TESTTMP/err.$$

cd "$work" || exit 1
t_expect_exit 2 "record -p JVM without --no-pt: exit 2" \
	"$J" record -p "$JPID" -d 1 -o "$work/b1"
t_check "... says 'no Intel PT', names intel_pt and what still works" check_msg "$err"
t_check "... and leaves no bundle" no_bundle "$work/b1" "$work"

t_expect_exit 2 "record -p JVM, default output: exit 2" \
	"$J" record -p "$JPID" -d 1
t_check "... and creates no jpbpf-PID-* directory" no_bundle "$work/none" "$work"

t_expect_exit 2 "one-shot jpbpf -p JVM: exit 2" \
	"$J" -p "$JPID" -d 1 -o "$work/b2"
t_check "... same reason" check_msg "$err"
t_check "... no bundle" no_bundle "$work/b2" "$work"

# Unprivileged: the hardware is still the first reason (no PT for anyone).
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	nb=/tmp/jpbpf-ptnopt-$$
	mkdir -p "$nb" && chmod 0777 "$nb"
	cd "$nb" || exit 1
	t_expect_exit 2 "as nobody: record -p JVM: exit 2" \
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$J" record -p "$JPID" -d 1 -o "$nb/b3"
	cd "$work" || exit 1
	t_check "... says 'no Intel PT' and what still works" check_msg "$err"
	t_check "... and leaves no bundle" no_bundle "$nb/b3" "$nb"
	rm -rf "$nb"
else
	for i in 1 2 3; do t_skip "unprivileged" "no user nobody or setpriv"; done
fi

t_check "the JVM was left running" kill -0 "$JPID"
t_done
