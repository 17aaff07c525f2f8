// SPDX-License-Identifier: MIT
/* The progress bar (see progress.h). */
#include "progress.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BAR_WIDTH 30
#define REDRAW_NS 100000000ull

struct progress {
	FILE *f;
	char label[32];
	uint64_t t0, last; /* CLOCK_MONOTONIC ns: start, last drawing */
	unsigned draws;
	int drawn_final;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int progress_wanted(FILE *f)
{
	return isatty(fileno(f));
}

struct progress *progress_alloc(FILE *f, const char *label, int enabled)
{
	if (!enabled)
		return NULL;
	struct progress *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->f = f;
	snprintf(p->label, sizeof(p->label), "%s", label);
	p->t0 = now_ns();
	return p;
}

static void draw(struct progress *p, uint64_t done, uint64_t total, uint64_t t)
{
	double frac = total ? (double)done / (double)total : 0;
	if (frac > 1)
		frac = 1;
	char bar[BAR_WIDTH + 1];
	int fill = (int)(frac * BAR_WIDTH);
	memset(bar, '#', (size_t)fill);
	memset(bar + fill, '.', (size_t)(BAR_WIDTH - fill));
	bar[BAR_WIDTH] = 0;
	double el = (double)(t - p->t0) / 1e9;
	char eta[32] = "ETA --:--";
	/* a rate measured over less than half a second says little */
	if (frac > 0 && frac < 1 && el >= 0.5) {
		unsigned s = (unsigned)(el * (1 - frac) / frac + 0.5);
		snprintf(eta, sizeof(eta), "ETA %u:%02u", s / 60, s % 60);
	} else if (frac >= 1) {
		snprintf(eta, sizeof(eta), "%.1f s", el);
	}
	fprintf(p->f, "\r%s [%s] %3d%% %s\033[K", p->label, bar,
		(int)(frac * 100), eta);
	fflush(p->f);
	p->last = t;
	p->draws++;
}

void progress_update(struct progress *p, uint64_t done, uint64_t total)
{
	if (!p)
		return;
	uint64_t t = now_ns();
	int final = total && done >= total;
	if (final ? p->drawn_final : p->draws && t - p->last < REDRAW_NS)
		return;
	p->drawn_final = final;
	draw(p, done, total, t);
}

void progress_cb(void *arg, uint64_t done, uint64_t total)
{
	progress_update(arg, done, total);
}

unsigned progress_draws(const struct progress *p)
{
	return p ? p->draws : 0;
}

void progress_free(struct progress *p)
{
	if (!p)
		return;
	if (p->draws) {
		fputs("\r\033[K", p->f);
		fflush(p->f);
	}
	free(p);
}
