// SPDX-License-Identifier: MIT
/* jpbpf -p PID: record, decode, then summarise, into one bundle. */
#include <string.h>

#include "cli.h"

int cmd_oneshot(int argc, char **argv)
{
	/* The one-shot run takes record's options; record validates them
	 * and, until decoding exists, stops there. */
	argv[0] = "record";
	return cmd_record(argc, argv);
}
