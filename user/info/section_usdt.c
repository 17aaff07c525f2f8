// SPDX-License-Identifier: MIT
/* `jpbpf info` section "usdt": HotSpot code-cache probe events. */
#include <stdlib.h>
#include <string.h>

#include "info.h"
#include "records.h"
#include "records_sched.h"

struct usdt_state {
	int seen;
	uint64_t loads, unloads, cut;
};

static void *usdt_alloc(void)
{
	return calloc(1, sizeof(struct usdt_state));
}

static void usdt_record(void *state, const char *stream,
			const struct jpb_record *rec)
{
	struct usdt_state *s = state;
	struct jpb_rec_usdt_method m;
	if (strcmp(stream, "sched") != 0)
		return;
	s->seen = 1;
	if (rec->type != JPB_REC_USDT_METHOD_LOAD &&
	    rec->type != JPB_REC_USDT_METHOD_UNLOAD)
		return;
	if (rec->type == JPB_REC_USDT_METHOD_LOAD)
		s->loads++;
	else
		s->unloads++;
	if (jpb_rec_decode(jpb_rectype_find(rec->type), rec->payload,
			   rec->size, &m) == 0 && m.flags)
		s->cut++;
}

static json_t *usdt_finish(void *state, json_t *meta)
{
	struct usdt_state *s = state;
	if (!s->seen)
		return NULL;
	json_t *o = json_object();
	json_t *att = json_object_get(json_object_get(meta, "usdt"), "attached");
	json_object_set_new(o, "attached", json_is_boolean(att)
						   ? json_incref(att) : json_null());
	json_object_set_new(o, "compiled_loads", json_integer((json_int_t)s->loads));
	json_object_set_new(o, "compiled_unloads",
			    json_integer((json_int_t)s->unloads));
	json_object_set_new(o, "names_cut", json_integer((json_int_t)s->cut));
	return o;
}

const struct info_section info_section_usdt = {
	.name = "usdt",
	.alloc = usdt_alloc,
	.record = usdt_record,
	.finish = usdt_finish,
	.free = free,
};
