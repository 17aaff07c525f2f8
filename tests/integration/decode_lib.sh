# Helpers for the decode_*.sh suites (sourced after lib.sh and sim_lib.sh).
#   decode_setup          checks that decode_check is built (else bails out)
#   decode_field OUT KEY  the number after KEY= in decode_check's total line
#   decode_exact CHK      every truth bytecode decoded and matched, no other
#   all_placed CHK        every decoded event matched, every gap bounded
#   pt_mangle MODE FILE   damages a stream file in place, keeping it readable
#                         by the bundle library (CRCs recomputed):
#                         flip SEED: flips 3 random bits in each pt_aux_data
#                         scramble SEED: random bytes, 1 in 200 of the PT
#                         dropnm N: (jvm.jpb) removes the Nth jvm_nmethod_load
#   add_maps DIR PATH...  writes DIR/maps.jpb: one mmap record per PATH,
#                         mapped at 0x7f0000000000 + i * 1 GiB
: "${TOOLS:=$BUILD/asan/tests/tools}"
DCHECK=$TOOLS/decode_check

decode_setup() {
	if [ ! -x "$DCHECK" ]; then
		echo "Bail out! $DCHECK not built (make unit-tests)"
		exit 1
	fi
}

decode_field() {
	sed -n "s/^total .*[ ]$2=\([0-9]*\).*/\1/p" "$1" | head -1
}

# decode_exact CHK: decode_check found every truth bytecode decoded, each
# on its thread, in order, and nothing else.
decode_exact() {
	[ "$(decode_field "$1" matched)" = "$(decode_field "$1" truth)" ] &&
		[ "$(decode_field "$1" decoded)" = "$(decode_field "$1" truth)" ]
}

# all_placed CHK: decode_check found every decoded event on its thread and
# every gap between its neighbours' times.
all_placed() {
	[ "$(decode_field "$1" matched)" = "$(decode_field "$1" decoded)" ] &&
		[ "$(decode_field "$1" gap_bounds_bad)" = 0 ]
}

pt_mangle() {
	python3 - "$@" <<'PY'
import random, struct, sys, zlib
mode, path, arg = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = bytearray(open(path, "rb").read())
out, pos, nth = bytearray(d[:16]), 16, 0
rnd = random.Random(arg)
while pos + 24 <= len(d):
    typ, flags, size, t = struct.unpack_from("<HHIQ", d, pos)
    pad = (size + 7) & ~7
    payload = bytearray(d[pos + 24:pos + 24 + size])
    keep = True
    if mode == "flip" and typ == 0x0302:
        n = struct.unpack_from("<I", payload, 24)[0]  # data length
        for _ in range(3):
            k = 28 + rnd.randrange(n)
            payload[k] ^= 1 << rnd.randrange(8)
    if mode == "scramble" and typ == 0x0302:
        n = struct.unpack_from("<I", payload, 24)[0]
        for _ in range(max(1, n // 200)):
            payload[28 + rnd.randrange(n)] = rnd.randrange(256)
    if mode == "snapshots" and typ == 0x0302:
        # flight-recorder shape: AUX records 1-2 are snapshot 1, split by
        # the ring's end (record 2 at ring offset 0), 3 is lost, 4-5 are
        # snapshot 2, 6 lost, 7 on snapshot 3; ARG unused
        nth += 1
        keep = nth not in (3, 6)
        struct.pack_into("<II", payload, 16, 1, {1: 1, 2: 1, 4: 2, 5: 2}.get(nth, 3))
        if nth == 2:
            struct.pack_into("<Q", payload, 8, 0)
    if mode == "dropnm" and typ == 0x0107:
        nth += 1
        keep = nth != arg
    if keep:
        h = bytearray(struct.pack("<HHIQII", typ, flags, size, t, 0, 0))
        crc = zlib.crc32(payload, zlib.crc32(bytes(h)))
        struct.pack_into("<I", h, 16, crc)
        # badcrc: the ARG-th nmethod (jvm), badcrcpt: the ARG-th AUX data
        # record (pt), badcrcsw: the ARG-th switch record, badcrccp: the
        # ARG-th clock pair (sched), each damaged after its CRC was taken
        if (mode, typ) in (("badcrc", 0x0107), ("badcrcpt", 0x0302), ("badcrcsw", 0x0201),
                           ("badcrccp", 0x0207)):
            nth += 1
            if nth == arg and size:
                payload[size // 2] ^= 0x10
        # badlenpt: the ARG-th AUX data record's length field says 1000
        if mode == "badlenpt" and typ == 0x0302:
            nth += 1
            if nth == arg:
                struct.pack_into("<I", h, 4, 1000)
        out += h + payload + bytes(pad - size)
    pos += 24 + pad
open(path, "wb").write(bytes(out))
PY
}

add_maps() {
	python3 - "$@" <<'PY'
import struct, sys, zlib
d, paths = sys.argv[1], sys.argv[2:]
out = bytearray(b"JPBPFSTM" + struct.pack("<HHI", 1, 0, 16))
def s(x):
    b = x.encode()
    return struct.pack("<I", len(b)) + b
for i, p in enumerate(paths):
    start = 0x7f0000000000 + i * (1 << 30)
    pl = struct.pack("<IIQQQQII", 1, 5, start, start + 4096, 0, 0, 0, 0) + s(p) + s("") + s("")
    h = bytearray(struct.pack("<HHIQII", 4, 0, len(pl), 1, 0, 0))
    struct.pack_into("<I", h, 16, zlib.crc32(pl, zlib.crc32(bytes(h))))
    out += h + pl + bytes(((len(pl) + 7) & ~7) - len(pl))
open(d + "/maps.jpb", "wb").write(bytes(out))
PY
}
