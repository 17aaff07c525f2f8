// SPDX-License-Identifier: MIT
/* The `java_threads` section of `jpbpf info`: the Java threads the agent
 * named (its `thread` records in the jvm stream), with their Java names,
 * which `report --thread NAME` accepts.  The top-level `threads` list
 * merges these with the kernel's comm names. */
#include <stdlib.h>
#include <string.h>

#include "info.h"
#include "records.h"

struct jt_state {
	json_t *v; /* array of {tid, nstid, name, state} */
};

static void *jt_alloc(void)
{
	struct jt_state *s = calloc(1, sizeof(*s));
	if (s && !(s->v = json_array())) {
		free(s);
		s = NULL;
	}
	return s;
}

static void jt_free(void *p)
{
	struct jt_state *s = p;
	if (s)
		json_decref(s->v);
	free(s);
}

static json_t *find(json_t *v, uint32_t tid, uint32_t nstid)
{
	size_t i;
	json_t *t;
	json_array_foreach(v, i, t) {
		json_int_t a = json_integer_value(json_object_get(t, "tid")),
			   b = json_integer_value(json_object_get(t, "nstid"));
		if ((tid && a == tid) || (!tid && nstid && b == nstid))
			return t;
	}
	t = json_pack("{s:i,s:i,s:s,s:s}", "tid", (int)tid, "nstid", (int)nstid,
		      "name", "", "state", "seen");
	json_array_append_new(v, t);
	return t;
}

static void jt_record(void *p, const char *stream, const struct jpb_record *rec)
{
	struct jt_state *s = p;
	struct jpb_rec_thread th;
	if (rec->type != JPB_REC_THREAD || strcmp(stream, "jvm") ||
	    jpb_rec_decode(jpb_rectype_find(JPB_REC_THREAD), rec->payload,
			   rec->size, &th) || (!th.tid && !th.nstid))
		return;
	json_t *t = find(s->v, th.tid, th.nstid);
	if (th.name.len)
		json_object_set_new(t, "name", json_stringn(th.name.ptr, th.name.len));
	if (th.event == JPB_THREAD_START || th.event == JPB_THREAD_END)
		json_object_set_new(t, "state", json_string(
			th.event == JPB_THREAD_START ? "started" : "ended"));
}

static json_t *jt_finish(void *p, json_t *meta)
{
	struct jt_state *s = p;
	(void)meta;
	return json_array_size(s->v) ? json_incref(s->v) : NULL;
}

const struct info_section info_section_java_threads = {
	"java_threads", jt_alloc, jt_record, jt_finish, jt_free,
};
