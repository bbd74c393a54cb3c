/*
 * arrow_compare.c — comparing schemas: files of one table, and an append
 * target against the rows being appended, must agree on column names and
 * types (nullability and metadata may differ).
 */
#include <stdio.h>
#include <string.h>

#include "arrow.h"

const char *
arrow_schema_diff(const ArrowSchema *a, const ArrowSchema *b, char *buf, size_t len)
{
	int			i;
	int			n = a->n_fields < b->n_fields ? a->n_fields : b->n_fields;

	for (i = 0; i < n; i++)
	{
		const ArrowField *fa = &a->fields[i];
		const ArrowField *fb = &b->fields[i];
		char		ta[256];
		char		tb[256];

		if (strcmp(fa->name, fb->name) != 0)
		{
			snprintf(buf, len, "column %d is \"%s\" in one and \"%s\" in the other",
					 i + 1, fa->name, fb->name);
			return buf;
		}
		arrow_type_string(fa, ta, sizeof(ta));
		arrow_type_string(fb, tb, sizeof(tb));
		if (strcmp(ta, tb) != 0)
		{
			snprintf(buf, len, "column %d \"%s\" is %s in one and %s in the other",
					 i + 1, fa->name, ta, tb);
			return buf;
		}
	}
	if (a->n_fields != b->n_fields)
	{
		snprintf(buf, len, "one has %d columns, the other %d", a->n_fields, b->n_fields);
		return buf;
	}
	return NULL;
}
