// SPDX-License-Identifier: MIT
#include "bundle.h"

const char *jpb_errstr(int err)
{
	switch (err) {
	case jpb_ok:
		return "success";
	case jpb_err_internal:
		return "internal error";
	case jpb_err_nomem:
		return "out of memory";
	case jpb_err_io:
		return "input/output error";
	case jpb_err_nospc:
		return "no space left on device";
	case jpb_err_bad_magic:
		return "not a jpbpf stream";
	case jpb_err_bad_version:
		return "unsupported format version";
	case jpb_err_truncated:
		return "truncated";
	case jpb_err_corrupt:
		return "corrupt";
	case jpb_err_eos:
		return "end of stream";
	case jpb_err_invalid:
		return "invalid argument";
	case jpb_err_not_found:
		return "not found";
	case jpb_err_exists:
		return "already exists";
	case jpb_err_bad_meta:
		return "bad meta.json";
	case jpb_err_unknown_type:
		return "unknown record type";
	}
	return "unknown error";
}
