#!/usr/bin/env bash
# A full disk while decoding: decoded/ is not fsynced (derived data), so
# the write errors themselves must reach the user.  decoded/ is put on a
# small tmpfs, sized so that each of the decoder's writes is the first to
# fail in turn: the PT scratch file, the worker's spill file, and
# decoded/tidN (the spill and the PT fit, the output does not).  Each run
# must exit 1 with one line naming the file and the full disk; with room,
# the output is the same bytes as on the ordinary disk.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sim_lib.sh"
sim_setup

b=$TESTTMP/nospc
"$SIM" scenario -o "$b" --threads 2 --iters 400 >/dev/null 2>&1 &&
	"$SIM" synth "$b" --cpus 2 --jit-invoke 5 --seed 4 >/dev/null 2>&1 ||
	{ echo "Bail out! jpbpf-sim scenario/synth"; exit 1; }
rm -f "$b/truth.jpb"
if "$JPBPF" decode -j 1 --no-flow -q "$b" >"$b.out" 2>"$b.err"; then
	t_ok "decode on the ordinary disk"
else
	t_fail "decode on the ordinary disk"; sed 's/^/# /' "$b.err"
fi
cp -r "$b/decoded" "$b.ref"
pt_kb=$(du -sk "$b/pt" | cut -f1)
out_kb=$(du -sk "$b.ref" | cut -f1)

mnt=$b/decoded
rm -rf "$mnt"; mkdir "$mnt"
if ! mount -t tmpfs -o size=64k tmpfs "$mnt" 2>/dev/null; then
	for w in "PT scratch file" "spill file" "decoded/tidN" "room"; do
		t_skip "full disk at the $w" "cannot mount a tmpfs (not root?)"
	done
	t_done; exit 0
fi
umount "$mnt"
trap 'umount "$mnt" 2>/dev/null' EXIT

# full KB WHAT PATTERN: decode with decoded/ on a tmpfs of KB
full() {
	mount -t tmpfs -o size="$1"k tmpfs "$mnt" || { t_fail "$2: mount"; return; }
	"$JPBPF" decode -j 1 --no-flow -q "$b" >"$b.full.out" 2>"$b.full.err"
	local rc=$? lines
	lines=$(wc -l <"$b.full.err")
	if [ $rc = 1 ] && [ "$lines" = 1 ] && grep -qi "$3.*No space left on device" "$b.full.err"; then
		t_ok "full disk at the $2: exit 1, $(cat "$b.full.err")"
	else
		t_fail "full disk at the $2: exit $rc, $lines lines"; sed 's/^/# /' "$b.full.err"
	fi
	umount "$mnt"
}
full $((pt_kb / 2)) "PT scratch file" "PT scratch file in"
# the PT fits, the spill (about the size of the output) does not
full $((pt_kb + out_kb / 2)) "spill file" "spill file .*/ev-0.bin"
# PT and spill fit (they stay until the end), half of the output does not
full $((pt_kb + out_kb + out_kb / 2)) "decoded/tidN" "decoded/tid[0-9]*: \\(write\\|cannot create\\)"

mount -t tmpfs -o size=$((4 * (pt_kb + out_kb)))k tmpfs "$mnt"
if "$JPBPF" decode -j 1 --no-flow -q "$b" >"$b.room.out" 2>"$b.room.err" &&
	diff -r "$b.ref" "$mnt" >/dev/null; then
	t_ok "with room on the tmpfs: exit 0, decoded/ byte-identical"
else
	t_fail "with room on the tmpfs: decode failed or decoded/ differs"; sed 's/^/# /' "$b.room.err"
fi
umount "$mnt"
t_done
