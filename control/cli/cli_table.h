/* Text tables as SONiC's `show` commands print them (python tabulate's "simple" format): a header
 * row, a dashed rule under each column, numbers right-aligned, text left-aligned. */
#ifndef RSW_CLI_TABLE_H
#define RSW_CLI_TABLE_H

#include <stdio.h>

struct rsw_cli_table;

/* A table with these column headers (ncols of them, at most 16). */
struct rsw_cli_table *rsw_cli_table_new(unsigned ncols, const char *const *headers);
/* Appends a cell to the current row (a new row starts after ncols cells); printf-style. */
void rsw_cli_table_cell(struct rsw_cli_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Appends an unsigned number cell. */
void rsw_cli_table_num(struct rsw_cli_table *t, unsigned long long v);
/* Prints the table (or `empty` when it has no rows) and frees it. */
void rsw_cli_table_print(struct rsw_cli_table *t, FILE *f, const char *empty);

#endif
