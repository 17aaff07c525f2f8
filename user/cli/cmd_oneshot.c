// SPDX-License-Identifier: MIT
/* jpbpf -p PID: record, decode, then summarise, into one bundle. */
#include "cli.h"

/* cmd_record.c */
int cli_record_main(int argc, char **argv, int oneshot);

int cmd_oneshot(int argc, char **argv)
{
	/* The one-shot run takes record's options and needs PT; record
	 * checks both and exits 2 with PT's reason when it is missing. */
	int rc = cli_record_main(argc, argv, 1);
	if (rc != CLI_OK)
		return rc;
	return cli_not_implemented("decode (the bundle is recorded; run "
				   "'jpbpf info' on it)");
}
