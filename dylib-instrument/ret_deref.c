/* SPDX-License-Identifier: Apache-2.0 */
/* Return-value dereference: parse the hook list's text, apply in the return
 * thunk (ret_deref.h).  The parser is hand-written: the token is a few
 * numbers in a fixed order, written by hooks/hookspec.py. */
#include "ret_deref.h"

#include <stdlib.h>

/* One decimal number, then the expected separator (0 = none required). */
static int number(const char **p, uint64_t max, uint64_t *out)
{
	char *end;
	if (**p < '0' || **p > '9')
		return -1;
	unsigned long long v = strtoull(*p, &end, 10);
	if (end == *p || v > max)
		return -1;
	*p = end;
	*out = v;
	return 0;
}

static int expect(const char **p, char c)
{
	if (**p != c)
		return -1;
	(*p)++;
	return 0;
}

static int valid_size(uint64_t s)
{
	return s == 1 || s == 2 || s == 4 || s == 8;
}

static int parse_cond(const char **p, struct argus_deref_cond *c)
{
	uint64_t off, size, mask, v;
	if (number(p, ARGUS_DEREF_MAX_OFFSET, &off) || expect(p, ':') || number(p, 8, &size) || !valid_size(size) ||
	    expect(p, ':') || number(p, UINT64_MAX, &mask) || expect(p, ':'))
		return -1;
	c->offset = (uint16_t)off;
	c->size = (uint8_t)size;
	c->mask = mask;
	c->nvalues = 0;
	do {
		if (c->nvalues == ARGUS_DEREF_VALUES || number(p, UINT64_MAX, &v))
			return -1;
		c->values[c->nvalues++] = v;
	} while (**p == '.' && (*p)++);
	return 0;
}

static int parse_copy(const char **p, struct argus_deref_copy *c)
{
	uint64_t from, size, to;
	if (number(p, ARGUS_DEREF_MAX_OFFSET, &from) || expect(p, ':') || number(p, 8, &size) || !size ||
	    expect(p, ':') || number(p, 7, &to) || to + size > 8)
		return -1;
	c->from = (uint16_t)from;
	c->size = (uint8_t)size;
	c->to = (uint8_t)to;
	return 0;
}

int argus_ret_deref_parse(const char *text, struct argus_ret_deref *d)
{
	const char *p = text;
	d->nalts = 0;
	do {
		if (d->nalts == ARGUS_DEREF_ALTS)
			return -1;
		struct argus_deref_alt *a = &d->alt[d->nalts++];
		a->nconds = a->ncopies = 0;
		if (*p != ';')   /* no condition: always matches (a last, default alternative) */
			do {
				if (a->nconds == ARGUS_DEREF_CONDS || parse_cond(&p, &a->cond[a->nconds++]))
					return -1;
			} while (*p == ',' && p++);
		if (expect(&p, ';'))
			return -1;
		do {
			if (a->ncopies == ARGUS_DEREF_COPIES || parse_copy(&p, &a->copy[a->ncopies++]))
				return -1;
		} while (*p == ',' && p++);
	} while (*p == '|' && p++);
	return *p ? -1 : 0;
}

/* Byte by byte: no alignment assumed, no call (this runs in the thunk). */
static uint64_t load(const volatile uint8_t *at, unsigned size)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint64_t)at[i] << (8 * i);
	return v;
}

static int holds(const struct argus_deref_cond *c, const volatile uint8_t *rec)
{
	uint64_t v = load(rec + c->offset, c->size) & c->mask;
	for (unsigned i = 0; i < c->nvalues; i++)
		if (v == c->values[i])
			return 1;
	return 0;
}

int argus_ret_deref_apply(const struct argus_ret_deref *d, uint64_t ptr, uint64_t *obj)
{
	const volatile uint8_t *rec = (const volatile uint8_t *)ptr;
	if (!rec)
		return 0;
	for (unsigned i = 0; i < d->nalts; i++) {
		const struct argus_deref_alt *a = &d->alt[i];
		unsigned k = 0;
		while (k < a->nconds && holds(&a->cond[k], rec))
			k++;
		if (k < a->nconds)
			continue;
		uint64_t v = 0;
		for (k = 0; k < a->ncopies; k++)
			v |= load(rec + a->copy[k].from, a->copy[k].size) << (8 * a->copy[k].to);
		*obj = v;
		return 1;
	}
	return 0;
}
