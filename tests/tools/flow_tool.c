// SPDX-License-Identifier: MIT
/* Test driver for reconstruction (the decode command calls it in the
 * product):  flow_tool run DIR [WINDOW]
 *                                    reconstruct DIR's decoded streams
 *                                    (WINDOW: flow_opts.window)
 *            flow_tool dump DIR TID  decoded events and flow side by side */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/flow.h"
#include "records_truth.h"

static int print_flow_event(void *arg, const struct jpb_flow_event *fe)
{
	char **names = arg;
	printf("%s %d %s %u\n", fe->method < (1 << 16) && names[fe->method] ? names[fe->method] : "?",
	       fe->bci, jpb_flow_status_name(fe->status), fe->ncand);
	return 0;
}

/* Print thread TID's truth bytecodes ("T cls name sig bci") or flow events
 * ("F cls name sig bci status ncand"), one per line. */
static int seq(const char *dir, const char *what, unsigned tid)
{
	struct jpb_bundle *b;
	if (jpb_bundle_open(&b, dir))
		return 1;
	int truth = !strcmp(what, "truth");
	char name[64];
	snprintf(name, sizeof(name), "flow/tid%u", tid);
	struct jpb_reader *r;
	static char *names[1 << 16];
	for (int pass = 0; pass < 2; pass++) {
		const char *stream = truth ? "truth" : pass ? name : "flow/methods";
		if (jpb_reader_open(b, stream, &r))
			return 1;
		struct jpb_record rec;
		while (jpb_reader_next(r, &rec) == 0) {
			const struct jpb_rectype *t = jpb_rectype_find(rec.type);
			if (rec.type == JPB_REC_TRUTH_METHOD || rec.type == JPB_REC_FLOW_METHOD) {
				struct jpb_rec_truth_method tm;
				struct jpb_rec_flow_method fm;
				uint32_t id;
				struct jpb_str c, n, sg;
				if (rec.type == JPB_REC_TRUTH_METHOD) {
					jpb_rec_decode(t, rec.payload, rec.size, &tm);
					id = tm.method_id, c = tm.class_sig, n = tm.name, sg = tm.signature;
				} else {
					jpb_rec_decode(t, rec.payload, rec.size, &fm);
					id = fm.index, c = fm.class_sig, n = fm.name, sg = fm.signature;
				}
				if (id < (1 << 16) && asprintf(&names[id], "%.*s.%.*s%.*s", (int)c.len,
						 c.ptr, (int)n.len, n.ptr, (int)sg.len, sg.ptr) < 0)
					return 1;
			} else if (pass && rec.type == JPB_REC_TRUTH_EVENTS) {
				struct jpb_rec_truth_events e;
				jpb_rec_decode(t, rec.payload, rec.size, &e);
				if (e.tid != tid)
					continue;
				for (uint32_t o = 0; o + 8 <= e.events.len; o += 8) {
					struct jpb_truth_event te;
					jpb_truth_event_get(e.events.ptr + o, &te);
					if (te.kind == JPB_TRUTH_BYTECODE)
						printf("%s %d\n", te.method_id < (1 << 16) && names[te.method_id] ? names[te.method_id] : "?", te.bci);
					else if (te.kind != JPB_TRUTH_BYTECODE)
						printf("# kind %d %s %d\n", te.kind, te.method_id < (1 << 16) && names[te.method_id] ? names[te.method_id] : "?", te.bci);
				}
			} else if (pass && jpb_rec_is_flow_events(rec.type)) {
				jpb_flow_events_each(&rec, print_flow_event, names);
			}
		}
		jpb_reader_free(r);
		if (truth) {
			if (pass == 0) continue;
		}
	}
	jpb_bundle_free(b);
	return 0;
}

static int run(const char *dir, unsigned window)
{
	struct flow_opts o = { .window = window };
	struct jpb_bundle *b;
	if (jpb_bundle_open(&b, dir)) {
		fprintf(stderr, "flow_tool: cannot open %s\n", dir);
		return 1;
	}
	struct flow_summary s;
	char msg[512];
	int err = flow_reconstruct_bundle(b, &o, &s, msg, sizeof(msg));
	jpb_bundle_free(b);
	if (err) {
		fprintf(stderr, "flow_tool: %s\n", msg);
		return 1;
	}
	if (msg[0])
		fprintf(stderr, "flow_tool: warning: %s\n", msg);
	printf("threads=%llu events=%llu decoded=%llu certain=%llu chosen=%llu "
	       "recovered=%llu unknown=%llu gaps=%llu resyncs=%llu time_ms=%.1f\n",
	       (unsigned long long)s.threads, (unsigned long long)s.events,
	       (unsigned long long)s.by_status[JPB_FLOW_DECODED],
	       (unsigned long long)s.by_status[JPB_FLOW_CERTAIN],
	       (unsigned long long)s.by_status[JPB_FLOW_CHOSEN],
	       (unsigned long long)s.by_status[JPB_FLOW_RECOVERED],
	       (unsigned long long)s.by_status[JPB_FLOW_UNKNOWN],
	       (unsigned long long)s.gaps, (unsigned long long)s.resyncs,
	       (double)s.time_ns / 1e6);
	flow_summary_print(stdout, &s);
	return 0;
}

/* Print decoded stream NAME's events, one per line. */
static int dec(const char *dir, const char *name)
{
	struct jpb_bundle *b;
	struct jpb_reader *r;
	if (jpb_bundle_open(&b, dir) || jpb_reader_open(b, name, &r))
		return 1;
	struct jpb_record rec;
	while (jpb_reader_next(r, &rec) == 0) {
		struct jpb_rec_decoded_events d;
		if (rec.type != JPB_REC_DECODED_EVENTS ||
		    jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload, rec.size, &d))
			continue;
		struct jpb_cur c = jpb_cur_init(d.events.ptr, d.events.len);
		uint64_t prev = d.first_tsc;
		struct jpb_decoded_event e;
		for (uint32_t k = 0; k < d.count && !jpb_decoded_event_get(&c, &e, &prev); k++) {
			if (e.kind == JPB_DEV_INTERP)
				printf("I %u %llu\n", e.opcode, (unsigned long long)e.tsc);
			else if (e.kind == JPB_DEV_COMPILED)
				printf("C %#llx %d n%u\n", (unsigned long long)e.frames[0].method_id,
				       e.frames[0].bci, e.nframes);
			else if (e.kind == JPB_DEV_TRANSITION)
				printf("T %s %llu\n", jpb_decoded_transition_name(e.what),
				       (unsigned long long)e.arg);
			else
				printf("G %u %llu %llu\n", e.what, (unsigned long long)e.tsc, (unsigned long long)e.end_tsc);
		}
	}
	jpb_reader_free(r);
	jpb_bundle_free(b);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "dec"))
		return dec(argv[2], argv[3]);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "run"))
		return run(argv[2], argc == 4 ? (unsigned)strtoul(argv[3], NULL, 0) : 0);
	if (argc == 5 && !strcmp(argv[1], "seq"))
		return seq(argv[2], argv[3], (unsigned)atoi(argv[4]));
	fprintf(stderr, "usage: flow_tool run DIR [WINDOW] | dec DIR STREAM | seq DIR truth|flow TID\n");
	return 2;
}
