// SPDX-License-Identifier: MIT
/* The call-structure exports: format names and dispatch. */
#include "export/calls/export.h"

#include <string.h>

#include "bundle.h"
#include "export/calls/cct_out.h"
#include "export/calls/contexts.h"
#include "export/calls/folded.h"
#include "export/calls/perfetto.h"
#include "export/calls/source.h"
#include "export/calls/trace.h"

static const struct {
	const char *name;
	enum calls_format fmt;
	int (*fn)(const struct calls_src *, const struct calls_opts *, FILE *,
		  char *, size_t);
} formats[] = {
	{ "cct", CALLS_CCT, cct_export },
	{ "calls", CALLS_CALLS, trace_export },
	{ "contexts", CALLS_CONTEXTS, contexts_export },
	{ "folded", CALLS_FOLDED, folded_export },
	{ "perfetto", CALLS_PERFETTO, perfetto_export },
};

enum calls_format calls_format_parse(const char *name)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(name, formats[i].name) == 0)
			return formats[i].fmt;
	return 0;
}

int calls_export(struct jpb_bundle *b, enum calls_format fmt,
		 const struct calls_opts *o, FILE *out, char *errmsg,
		 size_t size)
{
	size_t i = 0;
	while (i < sizeof(formats) / sizeof(formats[0]) && formats[i].fmt != fmt)
		i++;
	if (i == sizeof(formats) / sizeof(formats[0])) {
		snprintf(errmsg, size, "report: format %d not known", (int)fmt);
		return jpb_err_invalid;
	}
	struct calls_src s;
	int rc = calls_src_open(&s, b, o->tid, errmsg, size);
	if (rc)
		return rc;
	s.warn = o->warn;
	rc = formats[i].fn(&s, o, out, errmsg, size);
	if (!rc && (ferror(out) || fflush(out))) {
		snprintf(errmsg, size, "%s: write failed", formats[i].name);
		rc = jpb_err_io;
	}
	calls_src_close(&s);
	return rc;
}
