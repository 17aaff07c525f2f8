// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

#include "cli.h"

void cli_err(const char *fmt, ...)
{
	va_list ap;
	fputs("jpbpf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_not_implemented(const char *what)
{
	cli_err("%s: not implemented yet", what);
	return CLI_USAGE;
}

int cli_parse_u64(const char *opt, const char *s, unsigned long long *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-') {
		cli_err("%s: '%s' is not a non-negative integer", opt, s);
		return -1;
	}
	*out = v;
	return 0;
}
