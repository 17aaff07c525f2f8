// SPDX-License-Identifier: MIT
/* jpbpf -p PID: record, decode, then the usual exports, into one bundle. */
#include <stdio.h>

#include "cli.h"

int cmd_oneshot(int argc, char **argv)
{
	/* The one-shot run takes record's options and needs PT; record
	 * checks both and exits 2 with PT's reason when it is missing. */
	char dir[4096] = "";
	int rc = cli_record_main(argc, argv, 1, dir, sizeof(dir));
	if (rc != CLI_OK)
		return rc;
	struct cli_decode_opts o = { 0 };
	rc = cli_decode_dir(dir, &o);
	if (rc == CLI_OK)
		rc = cli_report_set(dir, 0);
	if (rc == CLI_OK)
		fprintf(stderr, "jpbpf: bundle %s (see 'jpbpf info %s')\n",
			dir, dir);
	return rc;
}
