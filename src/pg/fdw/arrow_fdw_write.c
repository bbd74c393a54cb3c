/*
 * arrow_fdw_write.c — INSERT and COPY FROM into writable arrow_fdw tables.
 *
 * A statement appends record batches to the table's file through the Arrow
 * writer (src/arrow), which writes new batches after the old trailer and a
 * new footer at close, so the file's committed prefix stays a complete Arrow
 * file throughout.  Visibility is transactional through the committed-length
 * row (arrow_committed.c): the writer locks it (serializing writers), cuts
 * off whatever an aborted or crashed append left past it, appends, and at
 * the end of the statement stores the new length in the same transaction.
 * If the transaction aborts, the row keeps the old length and the appended
 * bytes are invisible; an ERROR inside the statement also cuts them off at
 * once (the writer is aborted by a memory context callback).
 *
 * A new file gets the Arrow types of DESIGN.md's write-side mapping; an
 * existing file keeps its schema and values are converted to its types.
 * Columns are matched to fields by name; a field without a column gets NULL.
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "datatype/timestamp.h"
#include "executor/executor.h"
#include "foreign/fdwapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"
#include "storage/fd.h"

#include "fdw/arrow_fdw.h"
#include "pg_warp.h"
#include "parquet.h"

typedef struct ColumnWriter
{
	int			attno;			/* 0-based attribute, or -1: field gets NULL */
	Oid			typid;			/* base type of the column */
	const ArrowField *field;
	ArrowBuilder *builder;
	FmgrInfo	outfunc;		/* for Utf8 fields from non-text columns */
	bool		use_outfunc;
} ColumnWriter;

typedef struct ArrowModifyState
{
	char	   *path;
	char	   *relname;
	ArrowWriter *writer;
	int			ncols;
	ColumnWriter *cols;
	MemoryContext row_cxt;
	MemoryContextCallback cb;
	int64		rows;
} ArrowModifyState;

static void
report(const ArrowError *err)
{
	pgwarp_report_arrow_error(ERROR, err);
}

/* ------------------------------------------------------------ new files */

static void
set_field(ArrowField *f, const char *name, ArrowTypeId id, int bit_width, bool is_signed)
{
	memset(f, 0, sizeof(*f));
	f->name = pstrdup(name);
	f->nullable = true;
	f->type.id = id;
	f->type.bit_width = bit_width;
	f->type.is_signed = is_signed;
}

/* DESIGN.md's write-side mapping for a column of a new file. */
static void
field_for_column(ArrowField *f, Form_pg_attribute att)
{
	int32		typmod = att->atttypmod;
	Oid			typid = getBaseTypeAndTypmod(att->atttypid, &typmod);
	const char *name = NameStr(att->attname);

	switch (typid)
	{
		case BOOLOID:
			set_field(f, name, ARROW_TYPE_BOOL, 0, false);
			break;
		case INT2OID:
			set_field(f, name, ARROW_TYPE_INT, 16, true);
			break;
		case INT4OID:
			set_field(f, name, ARROW_TYPE_INT, 32, true);
			break;
		case INT8OID:
			set_field(f, name, ARROW_TYPE_INT, 64, true);
			break;
		case FLOAT4OID:
			set_field(f, name, ARROW_TYPE_FLOAT, 0, false);
			f->type.precision = ARROW_PRECISION_SINGLE;
			break;
		case FLOAT8OID:
			set_field(f, name, ARROW_TYPE_FLOAT, 0, false);
			f->type.precision = ARROW_PRECISION_DOUBLE;
			break;
		case NUMERICOID:
			{
				int			p = 0,
							s = 0;

				if (!pgwarp_numeric_typmod(typmod, &p, &s) || p > 38)
					ereport(ERROR,
							(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
							 errmsg("column \"%s\": a new Arrow file needs numeric(p,s) with p <= 38", name),
							 errhint("Declare the column as numeric(p,s), or as text.")));
				set_field(f, name, ARROW_TYPE_DECIMAL, 128, true);
				f->type.dec_precision = p;
				f->type.dec_scale = s;
			}
			break;
		case BYTEAOID:
			set_field(f, name, ARROW_TYPE_BINARY, 0, false);
			break;
		case UUIDOID:
			set_field(f, name, ARROW_TYPE_FIXED_SIZE_BINARY, 0, false);
			f->type.fixed_size = UUID_LEN;
			break;
		case DATEOID:
			set_field(f, name, ARROW_TYPE_DATE, 0, false);
			f->type.unit = ARROW_DATE_DAY;
			break;
		case TIMEOID:
			set_field(f, name, ARROW_TYPE_TIME, 64, false);
			f->type.unit = ARROW_TIME_MICROSECOND;
			break;
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			set_field(f, name, ARROW_TYPE_TIMESTAMP, 0, false);
			f->type.unit = ARROW_TIME_MICROSECOND;
			if (typid == TIMESTAMPTZOID)
				f->type.timezone = pstrdup("UTC");
			break;
		case INTERVALOID:
			set_field(f, name, ARROW_TYPE_INTERVAL, 0, false);
			f->type.unit = ARROW_INTERVAL_MONTH_DAY_NANO;
			break;
		default:
			if (type_is_array(typid) || get_typtype(typid) == TYPTYPE_COMPOSITE)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("column \"%s\": INSERT into Arrow files does not support arrays or composite types yet", name)));
			/* text, varchar, json, enums, ...: their text form */
			set_field(f, name, ARROW_TYPE_UTF8, 0, false);
			break;
	}
	f->n_metadata = 1;
	f->metadata = palloc(sizeof(ArrowKeyValue));
	f->metadata[0].key = pstrdup("pg_type");
	f->metadata[0].value = format_type_with_typemod(att->atttypid, att->atttypmod);
}

static ArrowSchema *
schema_for_relation(Relation rel)
{
	TupleDesc	td = RelationGetDescr(rel);
	ArrowSchema *s = palloc0(sizeof(ArrowSchema));
	int			a;
	ArrowError	err;

	s->fields = palloc0(sizeof(ArrowField) * Max(td->natts, 1));
	for (a = 0; a < td->natts; a++)
		if (!TupleDescAttr(td, a)->attisdropped)
			field_for_column(&s->fields[s->n_fields++], TupleDescAttr(td, a));
	if (arrow_schema_layout(s, &err) != 0)
		report(&err);
	return s;
}

/* ------------------------------------------------------------ conversion */

static void
write_error(ColumnWriter *c, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("value for Arrow field \"%s\" cannot be stored: %s", c->field->name, what)));
}

/* A value in microseconds into the field's unit (exactly, or ERROR). */
static int64
usec_to_unit(ColumnWriter *c, int64 us, int unit)
{
	int64		v;

	switch (unit)
	{
		case ARROW_TIME_SECOND:
			if (us % USECS_PER_SEC != 0)
				write_error(c, "the file stores whole seconds");
			return us / USECS_PER_SEC;
		case ARROW_TIME_MILLISECOND:
			if (us % 1000 != 0)
				write_error(c, "the file stores milliseconds");
			return us / 1000;
		case ARROW_TIME_MICROSECOND:
			return us;
		default:
			if (__builtin_mul_overflow(us, (int64) 1000, &v))
				write_error(c, "out of the range of nanoseconds");
			return v;
	}
}

/* numeric to a 128-bit unscaled integer at `scale`, exactly, or ERROR */
static __int128
numeric_to_int128(ColumnWriter *c, Datum d, int scale, int precision)
{
	char	   *s = DatumGetCString(DirectFunctionCall1(numeric_out, d));
	bool		neg = false;
	__int128	v = 0;
	int			frac = -1;
	int			digits = 0;
	const char *p = s;

	if (*p == '-')
	{
		neg = true;
		p++;
	}
	if (!isdigit((unsigned char) *p))
		write_error(c, "NaN and infinity do not fit in a decimal");
	for (; *p; p++)
	{
		if (*p == '.')
		{
			frac = 0;
			continue;
		}
		if (frac >= 0)
		{
			if (frac >= scale)
			{
				if (*p != '0')
					write_error(c, "more fractional digits than the decimal's scale");
				continue;
			}
			frac++;
		}
		v = v * 10 + (*p - '0');
		if (v != 0 && ++digits > 38)
			write_error(c, "more than 38 digits");
	}
	for (frac = Max(frac, 0); frac < scale; frac++)
	{
		v *= 10;
		if (v != 0 && ++digits > 38)
			write_error(c, "more than 38 digits");
	}
	if (precision > 0 && digits > precision)
		write_error(c, "more digits than the decimal's precision");
	return neg ? -v : v;
}

static void
append_value(ColumnWriter *c, Datum d)
{
	const ArrowType *t = &c->field->type;
	ArrowBuilder *b = c->builder;
	ArrowError	err;
	int			rc = 0;

	switch (t->id)
	{
		case ARROW_TYPE_INT:
			{
				int64		v;

				switch (c->typid)
				{
					case INT2OID:
						v = DatumGetInt16(d);
						break;
					case INT4OID:
						v = DatumGetInt32(d);
						break;
					default:
						v = DatumGetInt64(d);
						break;
				}
				if (!t->is_signed && t->bit_width == 64)
				{
					if (v < 0)
						write_error(c, "negative value for an unsigned integer");
					rc = arrow_builder_append_uint64(b, (uint64) v, &err);
				}
				else
					rc = arrow_builder_append_int(b, v, &err);
			}
			break;
		case ARROW_TYPE_FLOAT:
			rc = arrow_builder_append_double(b, c->typid == FLOAT4OID ? DatumGetFloat4(d)
											 : DatumGetFloat8(d), &err);
			break;
		case ARROW_TYPE_DECIMAL:
			{
				__int128	v = numeric_to_int128(c, d, t->dec_scale, t->dec_precision);

				rc = arrow_builder_append_decimal(b, (uint64) v, (int64) (v >> 64), &err);
			}
			break;
		case ARROW_TYPE_BOOL:
			rc = arrow_builder_append_bool(b, DatumGetBool(d), &err);
			break;
		case ARROW_TYPE_DATE:
			{
				int64		days = (int64) DatumGetDateADT(d);

				if (DATE_NOT_FINITE(DatumGetDateADT(d)))
					write_error(c, "infinite dates cannot be stored");
				days += POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE;
				rc = arrow_builder_append_int(b, t->unit == ARROW_DATE_DAY ? days
											  : days * 86400000, &err);
			}
			break;
		case ARROW_TYPE_TIME:
			/* the builder refuses 24:00:00, which Arrow times cannot be */
			rc = arrow_builder_append_int(b, usec_to_unit(c, DatumGetTimeADT(d), t->unit), &err);
			break;
		case ARROW_TYPE_TIMESTAMP:
			{
				Timestamp	ts = DatumGetTimestamp(d);
				int64		us;

				if (TIMESTAMP_NOT_FINITE(ts))
					write_error(c, "infinite timestamps cannot be stored");
				if (__builtin_add_overflow(ts, (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY, &us))
					write_error(c, "out of the range of an Arrow timestamp");
				rc = arrow_builder_append_int(b, usec_to_unit(c, us, t->unit), &err);
			}
			break;
		case ARROW_TYPE_INTERVAL:
			{
				Interval   *iv = DatumGetIntervalP(d);
				int64		ns;

				if (t->unit == ARROW_INTERVAL_YEAR_MONTH && (iv->day != 0 || iv->time != 0))
					write_error(c, "the file stores whole months");
				if (t->unit == ARROW_INTERVAL_DAY_TIME && iv->month != 0)
					write_error(c, "the file stores days and milliseconds, not months");
				if (__builtin_mul_overflow(iv->time, (int64) 1000, &ns))
					write_error(c, "out of the range of nanoseconds");
				rc = arrow_builder_append_interval(b, iv->month, iv->day, ns, &err);
			}
			break;
		case ARROW_TYPE_UTF8:
		case ARROW_TYPE_LARGE_UTF8:
			{
				const char *p;
				size_t		len;
				char	   *u;

				if (c->use_outfunc)
				{
					p = OutputFunctionCall(&c->outfunc, d);
					len = strlen(p);
				}
				else
				{
					text	   *txt = DatumGetTextPP(d);

					p = VARDATA_ANY(txt);
					len = VARSIZE_ANY_EXHDR(txt);
				}
				/* Arrow strings are UTF-8 whatever the database encoding */
				u = pg_server_to_any(p, (int) len, PG_UTF8);
				if (u != p)
				{
					p = u;
					len = strlen(u);
				}
				rc = arrow_builder_append_bytes(b, p, len, &err);
			}
			break;
		case ARROW_TYPE_BINARY:
		case ARROW_TYPE_LARGE_BINARY:
		case ARROW_TYPE_FIXED_SIZE_BINARY:
			if (c->typid == UUIDOID)
				rc = arrow_builder_append_bytes(b, DatumGetUUIDP(d)->data, UUID_LEN, &err);
			else
			{
				bytea	   *by = DatumGetByteaPP(d);

				rc = arrow_builder_append_bytes(b, VARDATA_ANY(by), VARSIZE_ANY_EXHDR(by), &err);
			}
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("INSERT into Arrow field \"%s\" of this type is not supported yet",
							c->field->name)));
	}
	if (rc != 0)
		report(&err);
}

/* May column type typid feed field f?  Same rules as reading, in reverse. */
static void
check_column_for_field(ColumnWriter *c, Form_pg_attribute att)
{
	const ArrowField *f = c->field;
	const char *why = arrow_datum_check_type(f, att->atttypid, att->atttypmod);
	char		tbuf[256];

	if (why == NULL)
	{
		switch (f->type.id)
		{
			case ARROW_TYPE_INT:
			case ARROW_TYPE_FLOAT:
			case ARROW_TYPE_DECIMAL:
			case ARROW_TYPE_BOOL:
			case ARROW_TYPE_DATE:
			case ARROW_TYPE_TIME:
			case ARROW_TYPE_TIMESTAMP:
			case ARROW_TYPE_INTERVAL:
			case ARROW_TYPE_UTF8:
			case ARROW_TYPE_LARGE_UTF8:
			case ARROW_TYPE_BINARY:
			case ARROW_TYPE_LARGE_BINARY:
			case ARROW_TYPE_FIXED_SIZE_BINARY:
				if (f->type.id == ARROW_TYPE_INT && c->typid == NUMERICOID)
					why = "numeric values into an integer field are not supported";
				else
					return;
				break;
			default:
				why = "INSERT into this Arrow type is not supported yet";
		}
	}
	ereport(ERROR,
			(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
			 errmsg("column \"%s\" of type %s cannot be written to Arrow field \"%s\" of type %s",
					NameStr(att->attname), format_type_with_typemod(att->atttypid, att->atttypmod),
					f->name, arrow_type_string(f, tbuf, sizeof(tbuf))),
			 errdetail("%s", why)));
}

/* ---------------------------------------------------------------- state */

static void
abort_writer_callback(void *arg)
{
	ArrowModifyState *ms = arg;

	if (ms->writer)
	{
		arrow_writer_abort(ms->writer);
		ms->writer = NULL;
	}
}

/* ERROR if path is a Parquet file: INSERT writes Arrow, and would replace it */
void
arrow_fdw_refuse_parquet(const char *path)
{
	uint8_t		head[PARQUET_MAGIC_LEN];
	int			fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	bool		parquet = false;

	if (fd < 0)
		return;					/* a new file */
	if (read(fd, head, sizeof(head)) == (ssize_t) sizeof(head) &&
		memcmp(head, parquet_magic, sizeof(head)) == 0)
		parquet = true;
	CloseTransientFile(fd);
	if (parquet)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("\"%s\" is a Parquet file: a writable table needs an Arrow file", path),
				 errdetail("arrow_fdw reads Parquet files but writes only Arrow files.")));
}

static ArrowModifyState *
begin_insert(EState *estate, ResultRelInfo *rinfo)
{
	Relation	rel = rinfo->ri_RelationDesc;
	TupleDesc	td = RelationGetDescr(rel);
	ArrowFdwOptions opts;
	ArrowModifyState *ms;
	const ArrowSchema *schema;
	ArrowError	err;
	int64		committed;
	int			i;

	arrow_fdw_get_options(RelationGetRelid(rel), &opts);
	if (!opts.writable)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("foreign table \"%s\" is not writable", RelationGetRelationName(rel)),
				 errhint("Set the table option writable 'true'.")));

	arrow_fdw_refuse_parquet((char *) linitial(opts.files));
	ms = MemoryContextAllocZero(estate->es_query_cxt, sizeof(ArrowModifyState));
	ms->path = pstrdup((char *) linitial(opts.files));
	ms->relname = pstrdup(RelationGetRelationName(rel));
	ms->row_cxt = AllocSetContextCreate(estate->es_query_cxt, "arrow_fdw insert row",
										ALLOCSET_DEFAULT_SIZES);
	ms->cb.func = abort_writer_callback;
	ms->cb.arg = ms;
	MemoryContextRegisterResetCallback(estate->es_query_cxt, &ms->cb);

	committed = arrow_committed_lock(ms->path);
	if (committed == 0)
	{
		/* nothing committed: (re)create the file */
		if (arrow_writer_create(&ms->writer, ms->path, schema_for_relation(rel), true,
								NULL, &err) != 0)
			report(&err);
	}
	else if (arrow_writer_append(&ms->writer, ms->path, NULL, committed, NULL, NULL, &err) != 0)
		report(&err);

	schema = arrow_writer_schema(ms->writer);
	ms->ncols = schema->n_fields;
	ms->cols = MemoryContextAllocZero(estate->es_query_cxt, sizeof(ColumnWriter) * Max(ms->ncols, 1));
	for (i = 0; i < ms->ncols; i++)
	{
		ColumnWriter *c = &ms->cols[i];
		int			a;

		c->field = &schema->fields[i];
		c->builder = arrow_writer_column(ms->writer, i);
		c->attno = -1;
		for (a = 0; a < td->natts; a++)
		{
			Form_pg_attribute att = TupleDescAttr(td, a);
			int32		typmod = att->atttypmod;

			if (att->attisdropped || strcmp(NameStr(att->attname), c->field->name) != 0)
				continue;
			c->attno = a;
			c->typid = getBaseTypeAndTypmod(att->atttypid, &typmod);
			check_column_for_field(c, att);
			if ((c->field->type.id == ARROW_TYPE_UTF8 || c->field->type.id == ARROW_TYPE_LARGE_UTF8) &&
				c->typid != TEXTOID && c->typid != VARCHAROID && c->typid != BPCHAROID)
			{
				Oid			out;
				bool		varlena;

				getTypeOutputInfo(att->atttypid, &out, &varlena);
				fmgr_info_cxt(out, &c->outfunc, estate->es_query_cxt);
				c->use_outfunc = true;
			}
			break;
		}
	}
	return ms;
}

static TupleTableSlot *
insert_row(ArrowModifyState *ms, TupleTableSlot *slot)
{
	MemoryContext old;
	ArrowError	err;
	int			i;

	CHECK_FOR_INTERRUPTS();
	slot_getallattrs(slot);
	MemoryContextReset(ms->row_cxt);
	old = MemoryContextSwitchTo(ms->row_cxt);
	for (i = 0; i < ms->ncols; i++)
	{
		ColumnWriter *c = &ms->cols[i];

		if (c->attno < 0 || slot->tts_isnull[c->attno])
		{
			if (arrow_builder_append_null(c->builder, &err) != 0)
				report(&err);
		}
		else
			append_value(c, slot->tts_values[c->attno]);
	}
	MemoryContextSwitchTo(old);
	if (arrow_writer_end_row(ms->writer, &err) != 0)
		report(&err);
	ms->rows++;
	return slot;
}

static void
end_insert(ArrowModifyState *ms)
{
	ArrowWriter *w = ms->writer;
	ArrowError	err;
	struct stat st;

	if (w == NULL)
		return;
	ms->writer = NULL;
	if (arrow_writer_close(w, &err) != 0)
		report(&err);			/* the transaction aborts; the length stays */
	if (stat(ms->path, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat Arrow file \"%s\": %m", ms->path)));
	arrow_committed_set(ms->path, (int64) st.st_size);
}

/* ------------------------------------------------------------ callbacks */

static int
arrowIsForeignRelUpdatable(Relation rel)
{
	ArrowFdwOptions opts;

	arrow_fdw_get_options(RelationGetRelid(rel), &opts);
	return opts.writable ? (1 << CMD_INSERT) : 0;
}

static List *
arrowPlanForeignModify(PlannerInfo *root, ModifyTable *plan, Index resultRelation,
					   int subplan_index)
{
	if (plan->operation != CMD_INSERT)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("arrow_fdw tables support INSERT only")));
	if (plan->onConflictAction != ONCONFLICT_NONE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("arrow_fdw tables do not support ON CONFLICT")));
	return NIL;
}

static void
arrowBeginForeignModify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
						List *fdw_private, int subplan_index, int eflags)
{
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	rinfo->ri_FdwState = begin_insert(mtstate->ps.state, rinfo);
}

static TupleTableSlot *
arrowExecForeignInsert(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
					   TupleTableSlot *planSlot)
{
	return insert_row(rinfo->ri_FdwState, slot);
}

static void
arrowEndForeignModify(EState *estate, ResultRelInfo *rinfo)
{
	if (rinfo->ri_FdwState)
		end_insert(rinfo->ri_FdwState);
}

static void
arrowBeginForeignInsert(ModifyTableState *mtstate, ResultRelInfo *rinfo)
{
	rinfo->ri_FdwState = begin_insert(mtstate->ps.state, rinfo);
}

static void
arrowEndForeignInsert(EState *estate, ResultRelInfo *rinfo)
{
	if (rinfo->ri_FdwState)
		end_insert(rinfo->ri_FdwState);
}

static void
arrowExplainForeignModify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
						  List *fdw_private, int subplan_index, ExplainState *es)
{
	ArrowModifyState *ms = rinfo->ri_FdwState;

	if (es->analyze && ms)
		ExplainPropertyInteger("Arrow Rows Appended", NULL, ms->rows, es);
}

void
arrow_fdw_write_routines(FdwRoutine *r)
{
	r->IsForeignRelUpdatable = arrowIsForeignRelUpdatable;
	r->PlanForeignModify = arrowPlanForeignModify;
	r->BeginForeignModify = arrowBeginForeignModify;
	r->ExecForeignInsert = arrowExecForeignInsert;
	r->EndForeignModify = arrowEndForeignModify;
	r->BeginForeignInsert = arrowBeginForeignInsert;
	r->EndForeignInsert = arrowEndForeignInsert;
	r->ExplainForeignModify = arrowExplainForeignModify;
}
