/* SONiC-style text tables for `rocesw show` (see cli_table.h). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli_table.h"

#define MAX_COLS 16

struct rsw_cli_table {
	unsigned ncols;
	const char *hdr[MAX_COLS];
	char **cell; /* row-major */
	size_t n, cap;
};

struct rsw_cli_table *rsw_cli_table_new(unsigned ncols, const char *const *headers)
{
	struct rsw_cli_table *t = calloc(1, sizeof(*t));
	if (!t || ncols > MAX_COLS) {
		free(t);
		return NULL;
	}
	t->ncols = ncols;
	memcpy(t->hdr, headers, ncols * sizeof(*headers));
	return t;
}

static void push(struct rsw_cli_table *t, char *s)
{
	if (!t || !s) {
		free(s);
		return;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		char **c = realloc(t->cell, cap * sizeof(*c));
		if (!c) {
			free(s);
			return;
		}
		t->cell = c;
		t->cap = cap;
	}
	t->cell[t->n++] = s;
}

void rsw_cli_table_cell(struct rsw_cli_table *t, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	push(t, s);
}

void rsw_cli_table_num(struct rsw_cli_table *t, unsigned long long v)
{
	rsw_cli_table_cell(t, "%llu", v);
}

/* tabulate aligns a column right when every cell in it is a number: digits (with '/', as
 * "3/4"), or a decimal fraction ("12.50") */
static int numeric(const char *s)
{
	int dots = 0, slash = 0;
	if (!*s)
		return 0;
	for (; *s; s++) {
		dots += *s == '.';
		slash |= *s == '/';
		if ((*s < '0' || *s > '9') && *s != '/' && *s != '.')
			return 0;
	}
	return dots == 0 || (dots == 1 && !slash);
}

/* Columns a cell takes on a terminal: UTF-8 continuation bytes take none ("→" is one). */
static size_t cols(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* s padded to w columns, on the right of them when right. */
static void put(FILE *f, const char *s, size_t w, int right)
{
	size_t n = cols(s);
	if (!right)
		fputs(s, f);
	for (; n < w; n++)
		fputc(' ', f);
	if (right)
		fputs(s, f);
}

void rsw_cli_table_print(struct rsw_cli_table *t, FILE *f, const char *empty)
{
	if (!t)
		return;
	size_t rows = t->n / t->ncols;
	if (!rows) {
		fprintf(f, "%s\n", empty);
	} else {
		size_t w[MAX_COLS];
		int right[MAX_COLS];
		for (unsigned c = 0; c < t->ncols; c++) {
			w[c] = cols(t->hdr[c]);
			right[c] = 1;
			for (size_t r = 0; r < rows; r++) {
				const char *s = t->cell[r * t->ncols + c];
				if (cols(s) > w[c])
					w[c] = cols(s);
				right[c] &= numeric(s);
			}
		}
		for (unsigned c = 0; c < t->ncols; c++) {
			fputs(c ? "  " : "", f);
			put(f, t->hdr[c], w[c], right[c]);
		}
		fputc('\n', f);
		for (unsigned c = 0; c < t->ncols; c++) {
			fputs(c ? "  " : "", f);
			for (size_t i = 0; i < w[c]; i++)
				fputc('-', f);
		}
		fputc('\n', f);
		for (size_t r = 0; r < rows; r++) {
			for (unsigned c = 0; c < t->ncols; c++) {
				fputs(c ? "  " : "", f);
				put(f, t->cell[r * t->ncols + c], w[c], right[c]);
			}
			fputc('\n', f);
		}
	}
	for (size_t i = 0; i < t->n; i++)
		free(t->cell[i]);
	free(t->cell);
	free(t);
}
