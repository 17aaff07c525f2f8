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

/* jpb_writer_put of the payload HEAD then BODY, without joining them
 * first (a large BODY goes to the kernel from where it lies). */
int jpb_writer_put2(struct jpb_writer *w, uint16_t type, uint64_t time_ns,
		    const void *head, uint32_t hlen, const void *body,
		    uint32_t blen);

#endif /* JPBPF_BUNDLE_INT_H */
