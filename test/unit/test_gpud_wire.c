/*
 * test_gpud_wire.c — the job layout shared by backends and pg_warp_gpud
 * (src/gpud/gpud_wire.c): a job written by gpud_put_program and friends is
 * read back intact, and gpud_job_open refuses every offset, count or
 * version it cannot trust, so the daemon never follows a bad pointer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpud_wire.h"
#include "unit.h"

/* count(*), sum(c0) WHERE c0 > 5 GROUP BY the payload of join 0 (key c1) */
static void
make_program(WarpProgram *p, WarpColumnSpec *cols, WarpNode *nodes, warp_int32 *quals,
			 WarpJoinSpec *joins, WarpGroupKey *keys, WarpAggSpec *aggs)
{
	memset(p, 0, sizeof(*p));
	p->version = WARP_PROGRAM_VERSION;
	memset(cols, 0, sizeof(WarpColumnSpec) * 2);
	cols[0].type = WT_INT4;
	cols[1].type = WT_INT8;
	memset(nodes, 0, sizeof(WarpNode) * 4);
	nodes[0].op = WN_COL;
	nodes[0].type = WT_INT4;
	nodes[0].a = 0;
	nodes[1].op = WN_CONST;
	nodes[1].type = WT_INT4;
	nodes[1].ival = 5;
	nodes[2].op = WN_CMP;
	nodes[2].type = WT_BOOL;
	nodes[2].sub = WARP_CMP_GT;
	nodes[2].a = 0;
	nodes[2].b = 1;
	nodes[3].op = WN_COL;
	nodes[3].type = WT_INT8;
	nodes[3].a = 1;
	quals[0] = 2;
	memset(joins, 0, sizeof(WarpJoinSpec));	/* kind WARP_JOIN_INNER */
	joins[0].key_node = 3;
	joins[0].table = 0;
	memset(keys, 0, sizeof(WarpGroupKey));
	keys[0].kind = WG_DIM;
	keys[0].join = 0;
	memset(aggs, 0, sizeof(WarpAggSpec) * 2);
	aggs[0].kind = WA_COUNT_STAR;
	aggs[0].arg = -1;
	aggs[0].filter = -1;
	aggs[1].kind = WA_SUM_INT;
	aggs[1].type = WT_INT4;
	aggs[1].arg = 0;
	aggs[1].filter = -1;
	p->ncols = 2;
	p->cols = cols;
	p->nnodes = 4;
	p->nodes = nodes;
	p->nquals = 1;
	p->quals = quals;
	p->njoins = 1;
	p->joins = joins;
	p->nkeys = 1;
	p->keys = keys;
	p->naggs = 2;
	p->aggs = aggs;
}

/* lay a job out in arena (NULL: count); returns its end */
static uint64_t
write_job(uint8_t *arena, const WarpProgram *prog)
{
	GpudBuf		b = {arena, WARP_ARENA_JOB_OFF};
	GpudJob		job;
	GpudTable	t;
	GpudFile	f;
	int64_t		keys[3] = {1, 2, 3};
	int32_t		pay[3] = {0, 1, 0};
	int32_t		batches[2] = {0, 1};
	int32_t		fields[2] = {0, 3};
	uint64_t	job_off;

	memset(&job, 0, sizeof(job));
	job.magic = GPUD_MAGIC;
	job.version = GPUD_VERSION;
	job.nfiles = 1;
	job_off = gpud_buf_put(&b, NULL, sizeof(GpudJob));
	gpud_put_program(&b, &job, prog);
	memset(&t, 0, sizeof(t));
	t.nrows = 3;
	t.npayloads = 2;
	t.off_keys = gpud_buf_put(&b, keys, sizeof(keys));
	t.off_payload = gpud_buf_put(&b, pay, sizeof(pay));
	job.off_tables = gpud_buf_put(&b, &t, sizeof(t));
	memset(&f, 0, sizeof(f));
	f.off_path = gpud_buf_put(&b, "/data/fact.arrow", 17);
	f.limit = -1;
	f.nbatches = 2;
	f.off_batches = gpud_buf_put(&b, batches, sizeof(batches));
	f.off_fields = gpud_buf_put(&b, fields, sizeof(fields));
	job.off_files = gpud_buf_put(&b, &f, sizeof(f));
	job.total = b.pos - WARP_ARENA_JOB_OFF;
	if (arena)
		memcpy(arena + job_off, &job, sizeof(job));
	return b.pos;
}

static uint8_t *
fresh_job(uint64_t *size)
{
	WarpColumnSpec cols[2];
	WarpNode	nodes[4];
	warp_int32	quals[1];
	WarpJoinSpec joins[1];
	WarpGroupKey keys[1];
	WarpAggSpec aggs[2];
	WarpProgram p;
	uint8_t    *arena;

	make_program(&p, cols, nodes, quals, joins, keys, aggs);
	*size = write_job(NULL, &p);
	arena = calloc(1, *size);
	write_job(arena, &p);
	return arena;
}

#define JOB(a) ((GpudJob *) ((a) + WARP_ARENA_JOB_OFF))

TEST(job_round_trip)
{
	uint64_t	size;
	uint8_t    *a = fresh_job(&size);
	GpudJob    *job = NULL;
	WarpProgram p;
	const char *bad = gpud_job_open(a, size, WARP_ARENA_JOB_OFF, &job, &p);
	GpudFile   *f;

	CHECK_MSG(bad == NULL, bad ? bad : "");
	CHECK(job == JOB(a));
	if (job == NULL)
	{
		free(a);
		return;
	}
	CHECK(p.ncols == 2 && p.nnodes == 4 && p.naggs == 2 && p.njoins == 1);
	CHECK(p.nodes[2].op == WN_CMP && p.nodes[1].ival == 5);
	CHECK(p.aggs[1].kind == WA_SUM_INT && p.keys[0].kind == WG_DIM);
	/* every array points into the arena */
	CHECK((uint8_t *) p.nodes > a && (uint8_t *) (p.nodes + p.nnodes) <= a + size);
	f = (GpudFile *) (a + job->off_files);
	CHECK(strcmp((char *) a + f->off_path, "/data/fact.arrow") == 0);
	CHECK(((int32_t *) (a + f->off_fields))[1] == 3);
	free(a);
}

/* a corruption of the job must be refused, never followed */
typedef void (*Corrupt) (uint8_t *a, uint64_t size);

static void c_magic(uint8_t *a, uint64_t s) { JOB(a)->magic ^= 1; }
static void c_version(uint8_t *a, uint64_t s) { JOB(a)->version++; }
static void c_prog_version(uint8_t *a, uint64_t s) { JOB(a)->prog.version++; }
static void c_nodes_off(uint8_t *a, uint64_t s) { JOB(a)->off_nodes = s - 8; }
static void c_nodes_huge(uint8_t *a, uint64_t s) { JOB(a)->off_nodes = UINT64_MAX - 16; }
static void c_nnodes(uint8_t *a, uint64_t s) { JOB(a)->prog.nnodes = 1 << 28; }
static void c_nnodes_neg(uint8_t *a, uint64_t s) { JOB(a)->prog.nnodes = -1; }
static void c_nfiles(uint8_t *a, uint64_t s) { JOB(a)->nfiles = 1 << 30; }
static void c_tables(uint8_t *a, uint64_t s) { JOB(a)->off_tables = s; }
static void
c_table_rows(uint8_t *a, uint64_t s)
{
	((GpudTable *) (a + JOB(a)->off_tables))->nrows = INT64_MAX / 4;
}
static void
c_table_payloads(uint8_t *a, uint64_t s)
{
	((GpudTable *) (a + JOB(a)->off_tables))->npayloads = 0;
}
static void
c_path(uint8_t *a, uint64_t s)
{
	GpudFile   *f = (GpudFile *) (a + JOB(a)->off_files);

	f->off_path = s;
}
static void
c_path_unterminated(uint8_t *a, uint64_t s)
{
	GpudFile   *f = (GpudFile *) (a + JOB(a)->off_files);

	/* point the path at the last byte of the arena, which is not NUL */
	a[s - 1] = 'x';
	f->off_path = s - 1;
}
static void
c_batches(uint8_t *a, uint64_t s)
{
	((GpudFile *) (a + JOB(a)->off_files))->nbatches = 1 << 29;
}
static void
c_node_arg(uint8_t *a, uint64_t s)
{
	/* a node naming an argument that does not exist */
	((WarpNode *) (a + JOB(a)->off_nodes))[2].b = 99;
}
static void
c_qual(uint8_t *a, uint64_t s)
{
	((warp_int32 *) (a + JOB(a)->off_quals))[0] = -3;
}

TEST(job_corruptions_are_refused)
{
	static const struct
	{
		const char *name;
		Corrupt		fn;
	}			cases[] = {
		{"magic", c_magic}, {"version", c_version}, {"program version", c_prog_version},
		{"nodes offset", c_nodes_off}, {"nodes offset wraps", c_nodes_huge},
		{"node count", c_nnodes}, {"negative node count", c_nnodes_neg},
		{"file count", c_nfiles}, {"tables offset", c_tables}, {"table rows", c_table_rows},
		{"table payloads", c_table_payloads}, {"path offset", c_path},
		{"unterminated path", c_path_unterminated}, {"batch count", c_batches},
		{"node argument", c_node_arg}, {"qual index", c_qual},
	};
	size_t		i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		uint64_t	size;
		uint8_t    *a = fresh_job(&size);
		GpudJob    *job = NULL;
		WarpProgram p;

		cases[i].fn(a, size);
		CHECK_MSG(gpud_job_open(a, size, WARP_ARENA_JOB_OFF, &job, &p) != NULL, cases[i].name);
		free(a);
	}
}

TEST(job_header_outside_arena)
{
	uint64_t	size;
	uint8_t    *a = fresh_job(&size);
	GpudJob    *job = NULL;
	WarpProgram p;

	CHECK(gpud_job_open(a, sizeof(GpudJob) - 1, 0, &job, &p) != NULL);
	CHECK(gpud_job_open(a, size, size - 4, &job, &p) != NULL);
	CHECK(gpud_at(a, size, size, 1) == NULL);
	CHECK(gpud_at(a, size, 1, UINT64_MAX) == NULL);
	CHECK(gpud_at(a, size, size, 0) != NULL);
	free(a);
}

int
main(void)
{
	RUN(job_round_trip);
	RUN(job_corruptions_are_refused);
	RUN(job_header_outside_arena);
	UNIT_EXIT();
}
