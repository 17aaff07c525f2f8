/* SPDX-License-Identifier: MIT */
/* Internal to user/bundle/: shared by its files, not part of the API. */
#ifndef JPBPF_BUNDLE_INT_H
#define JPBPF_BUNDLE_INT_H

#include "bundle.h"

/* Map an errno to a jpb_error code. */
int jpb_errno_code(int errnum);

/* Record the bundle's last error message (printf-style). */
void jpb_bundle_set_err(struct jpb_bundle *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Create the parent directories of PATH, which lies inside the bundle. */
int jpb_mkdirs_for(struct jpb_bundle *b, const char *path);

#endif /* JPBPF_BUNDLE_INT_H */
