/*
 * ssb_gen.h — Star Schema Benchmark data generator core (pure C, no libpq).
 *
 * Written from the SSB specification (O'Neil, O'Neil, Chen, Revilak, "Star
 * Schema Benchmark", revision 3), with TPC-H's value domains where the SSB
 * paper defers to them.  Five tables: lineorder, customer, supplier, part,
 * date.  Every integer column is int32; every string column is UTF-8 (ASCII).
 *
 * Determinism: every value is a function of (seed, table, unit), where a
 * unit is an order for lineorder (1-7 rows) and a row for the other tables.
 * Each unit has its own counter-based random stream (splitmix64 keyed by the
 * seed, the table and the unit number), so any split of the units into chunks
 * and threads yields the same rows; chunks are written in unit order.
 *
 * Distributions (chosen so that the 13 queries have the paper's
 * selectivities):
 *   - lo_orderdate: orders are spread evenly over the 2,557 days from
 *     1992-01-01 to 1998-12-31: order o gets the day floor(p * 2557 / N),
 *     where p = pi^-1(o - 1) and pi is a keyed pseudo-random permutation of
 *     [0, N) (a Feistel network with cycle walking).  --cluster-by-date
 *     generates the orders in position order p = 0, 1, ... (order key
 *     pi(p) + 1): exactly the same rows, ordered by lo_orderdate.
 *   - lines per order uniform 1-7; lo_custkey, lo_partkey, lo_suppkey
 *     uniform; lo_quantity 1-50, lo_discount 0-10, lo_tax 0-8 uniform;
 *     lo_commitdate = order date + 30..90 days; lo_shippriority 0.
 *   - prices in cents: p_retailprice(k) = 90000 + (k/10 mod 20001) +
 *     100 (k mod 1000) (TPC-H's formula); lo_extendedprice = quantity *
 *     retailprice, lo_revenue = extendedprice * (100 - discount) / 100,
 *     lo_supplycost = 6 * retailprice / 10, lo_ordtotalprice = sum over the
 *     order's lines of extendedprice * (100 + tax) * (100 - discount) / 10000.
 *   - dimension hierarchies are balanced: row k of customer/supplier/part
 *     takes i = pi_T(k - 1) (a keyed permutation of the table's rows) and
 *     nation = i mod 25, city digit = a per-nation permutation of 0-9 at
 *     (i / 25) mod 10; part mfgr = i mod 5, category = (i / 5) mod 5, brand =
 *     a permutation of 1-40 at (i / 25) mod 40.  Every region, nation, city,
 *     mfgr, category and brand then holds as close to 1/5, 1/25, 1/250, 1/5,
 *     1/25, 1/1000 of the rows as the row count allows, even at SF 0.01.
 *
 * Cardinalities: lineorder ~ 6,000,000 x SF rows (1,500,000 x SF orders),
 * customer 30,000 x SF, supplier 2,000 x SF, part 200,000 x floor(1 + log2
 * SF) for SF >= 1 and 200,000 x SF below 1 (linear, as dbgen does for
 * fractional scale factors), date 2,557; counts are rounded to integers.
 */
#ifndef PGWARP_SSB_GEN_H
#define PGWARP_SSB_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum SsbTable
{
	SSB_LINEORDER = 0,
	SSB_CUSTOMER,
	SSB_SUPPLIER,
	SSB_PART,
	SSB_DATE,
	SSB_N_TABLES
} SsbTable;

#define SSB_MAX_COLS 17
#define SSB_N_DAYS 2557			/* 1992-01-01 .. 1998-12-31 */

typedef struct SsbColumn
{
	const char *name;
	int			max_len;		/* 0: int32; else a string of at most max_len
								 * bytes */
	const char *pg_type;		/* "integer" or "character varying(n)" */
} SsbColumn;

typedef struct SsbTableInfo
{
	const char *name;
	int			n_cols;
	const SsbColumn *cols;
	const char *primary_key;	/* column list */
} SsbTableInfo;

extern const SsbTableInfo ssb_tables[SSB_N_TABLES];

/* Keyed pseudo-random permutation of [0, n). */
typedef struct SsbPerm
{
	uint64_t	n;
	int			half_bits;
	uint64_t	mask;
	uint64_t	keys[4];
} SsbPerm;

typedef struct SsbConfig
{
	double		sf;
	uint64_t	seed;
	bool		cluster_by_date;
	int64_t		n_orders;
	int64_t		n_customer;
	int64_t		n_supplier;
	int64_t		n_part;
	uint64_t	key[SSB_N_TABLES];	/* random stream keys */
	SsbPerm		order_perm;
	SsbPerm		cust_perm;
	SsbPerm		supp_perm;
	SsbPerm		part_perm;
	uint8_t		cust_digit[25][10];
	uint8_t		supp_digit[25][10];
	uint8_t		brand_perm[40];
	int32_t		datekey[SSB_N_DAYS + 100];	/* day index -> yyyymmdd */
} SsbConfig;

/* 0, or -1 with a message in errbuf (scale factor out of range). */
int			ssb_config_init(SsbConfig *cfg, double sf, uint64_t seed,
							bool cluster_by_date, char *errbuf, size_t errlen);

/* Units of a table (orders for lineorder, rows otherwise); rows per unit at
 * most (7 for lineorder, else 1). */
int64_t		ssb_table_units(const SsbConfig *cfg, SsbTable t);
int			ssb_rows_per_unit(SsbTable t);

/* A chunk of generated rows, column-wise (Arrow layout: int32 values, or
 * int32 offsets + bytes). */
typedef struct SsbStrCol
{
	int32_t    *offsets;		/* cap_rows + 1 */
	char	   *data;			/* cap_rows * max_len */
} SsbStrCol;

typedef struct SsbChunk
{
	SsbTable	table;
	int			n_cols;
	int64_t		n_rows;
	int64_t		cap_rows;
	int32_t    *ints[SSB_MAX_COLS];
	SsbStrCol	strs[SSB_MAX_COLS];
} SsbChunk;

/* Room for the rows of up to max_units units; -1 if out of memory. */
int			ssb_chunk_init(SsbChunk *c, SsbTable t, int64_t max_units);
void		ssb_chunk_free(SsbChunk *c);

/* Replace the chunk's rows by those of units [u0, u1) (u1 - u0 at most the
 * chunk's max_units). */
void		ssb_generate(const SsbConfig *cfg, SsbTable t, int64_t u0, int64_t u1,
						 SsbChunk *c);

/* Bytes that ssb_format_tbl may write for a chunk (an upper bound). */
size_t		ssb_tbl_bound(const SsbChunk *c);
/* The chunk as dbgen-style text: fields separated by '|', a '|' after the
 * last field too, '\n' after each row.  Returns the bytes written. */
size_t		ssb_format_tbl(const SsbChunk *c, char *out);

/* Feistel permutation (exposed for tests of the core). */
void		ssb_perm_init(SsbPerm *p, uint64_t n, uint64_t key);
uint64_t	ssb_perm_fwd(const SsbPerm *p, uint64_t x);
uint64_t	ssb_perm_inv(const SsbPerm *p, uint64_t y);

#endif							/* PGWARP_SSB_GEN_H */
